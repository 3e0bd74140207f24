"""Random Kafka log directories, written as a Kafka 4.3.0 broker leaves them and then damaged.

The input of the differential test of kseg's loading model against Kafka's own loader
(``tests/interop/test_load_vs_kafka.py``, docs/interop.md).  A log directory is described by a
**recipe**: plain JSON (lists, dicts, numbers, strings), made by :func:`random_recipe` from a seeded
``random.Random`` and turned into files by the steps below.  Nothing in the build is random beyond the
recipe, so a printed recipe rebuilds the same bytes (``load_diff_report --recipe``), and a smaller
recipe (an operation, a partition or a batch dropped) is how a disagreement is minimised: this is the
hypothesis-style shrinking, done on recipes because the JVM run must be one batch.

1. :func:`write_logs` writes each partition's ``.log`` files (kseg's encoder: byte-identical to
   Kafka's ``MemoryRecordsBuilder`` uncompressed and accepted by Kafka compressed, proven by
   tests/interop/test_kseg_writes_kafka_reads.py) and ``partition.metadata``;
2. the harness lets **Kafka** write the rest: ``LoadLogDir --work`` (an unclean start from recovery
   point 0, then ``UnifiedLog.close()``) writes every ``.index``/``.timeindex``/``.txnindex``, the
   producer snapshots and ``leader-epoch-checkpoint`` exactly as a broker does;
3. :func:`finish` writes the three offset checkpoints and ``.kafka_cleanshutdown`` (or not) as the
   broker's stop leaves them, from the offsets Kafka reported in step 2, then applies the recipe's
   damage operators (:data:`PARTITION_OPS`, :data:`LOGDIR_OPS`) and leftovers.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import struct
from pathlib import Path
from typing import Any

from kseg.format import encode_batch
from kseg.format.control import ABORT, COMMIT, encode_control_key, encode_end_txn_marker
from kseg.format.model import RecordSpec

Recipe = dict[str, Any]

TS = 1_700_000_000_000
TOPIC_IDS = ["AAAAAAAAAAAAAAAAAAAAAQ", "3q2-7wAAAAAAAAAAAAAAAA", "b2xk6bP0Tq2xM8Yb0pNQ5w"]
TOPICS = ["t", "orders", "my.topic_x"]
CODECS = ["none", "gzip", "snappy", "lz4", "zstd"]
LEGACY_CODECS = ["none", "gzip", "snappy", "lz4"]
PRODUCERS = [1000, 1001, 1002]

#: Real partitions (``.log`` files of ../shared/corpus/real, PROVENANCE.md there) used as starting material in
#: one partition in ten: a compacted log with an offset gap, two segments; idempotent batches; magic 1 from a
#: 0.10-era broker; a snappy batch; plain topics of a few KB to 45 KB.
REAL_PARTITIONS = [
    "DonaldY_kafka-2.7.1/13bb4a8/kafka-logs/__consumer_offsets-39",
    "NikhilDighe9975_kafka_setup/8639fa4/kafka-logs/__consumer_offsets-10",
    "Niloufar1171_LDI-POC/f56b498/TestTopicPatient-0",
    "xpxwo100_bullShit/3ba36dd/tmp/kafka-logs/foo-0",
    "seanorth_kafka-server/cf46324/kafka-logs/some-topic-0",
    "panic08_kafka-starter-windows/c196394/kafka-logs/test-0",
    "evan-shahrukh_Kafka-Producer-Consumer-system/4ac657b/kafka-logs/user_activity-0",
    "sagarrao1_kafka/9ab82d2/MultiNode/kafka-logs-1/my_topic-3",
]
_REPO = Path(__file__).resolve().parents[1]
CORPUS = Path(os.environ.get("KSEG_SHARED", _REPO.parent / "shared")) / "corpus" / "real"

#: Partition damage operators and their weights in :func:`random_recipe`.
PARTITION_OPS = {
    "tear": 10, "zero": 6, "zero_page": 3, "hole": 4, "flip": 12, "length": 4,
    "index": 8, "timeindex": 6, "txnindex": 2, "snapshot": 6, "epochs": 7, "metadata": 4,
    "swap": 5, "leftover_file": 3,
}
#: Log-directory damage operators.
LOGDIR_OPS = {"checkpoint": 6, "leftover_dir": 3}


# -- recipes ---------------------------------------------------------------------------------------------


def _batch_specs(rng: random.Random, fmt: str, seg: int, nseg: int, state: dict[str, Any]) -> list[dict]:
    """The batches of one segment; ``state`` carries the epoch and the producers across segments."""
    out: list[dict] = []
    count = rng.randint(1, 6) if seg < nseg - 1 else rng.choice([0, 1, 2, 3, 4, 5, 6]) or rng.choice([0, 1])
    for _ in range(count):
        if fmt in ("v0", "v1"):
            magic = int(fmt[1])
        elif fmt == "upgrade" and state["legacy"] and (seg < nseg - 1 or rng.random() < 0.5):
            magic = state["legacy_magic"]
        else:
            magic, state["legacy"] = 2, False
        if rng.random() < 0.15:
            state["epoch"] += rng.randint(1, 3)
        spec: dict[str, Any] = {
            "magic": magic, "codec": rng.choice(CODECS if magic == 2 else LEGACY_CODECS),
            "n": rng.choice([1, 1, 2, 3, 5, 8]), "size": rng.choice([10, 10, 100, 700, 2500]),
            "gap": rng.choice([0] * 9 + [rng.randint(1, 5)]), "vseed": rng.randrange(1 << 30),
            "epoch": state["epoch"] if magic == 2 else -1,
        }
        if magic == 2 and rng.random() < 0.3:
            pid = rng.choice(PRODUCERS)
            open_txn = state["open"].get(pid, False)
            if open_txn and rng.random() < 0.5:
                spec = {"magic": 2, "marker": rng.choice(["COMMIT", "ABORT"]), "pid": pid, "epoch": state["epoch"],
                        "gap": 0, "coordinator_epoch": rng.choice([0, 0, 3])}
                state["open"][pid] = False
            else:
                txn = open_txn or rng.random() < 0.6
                spec.update(pid=pid, seq=state["seq"].get(pid, 0), txn=txn)
                state["seq"][pid] = spec["seq"] + spec["n"]
                state["open"][pid] = txn
        out.append(spec)
    return out


def _random_partition(rng: random.Random, number: int, topic: str) -> dict:
    fmt = rng.choices(["v2", "v1", "v0", "upgrade"], [75, 8, 7, 10])[0]
    nseg = rng.choice([1, 1, 2, 2, 3, 4])
    state: dict[str, Any] = {"epoch": rng.randint(0, 4), "open": {}, "seq": {}, "legacy": True,
                             "legacy_magic": rng.choice([0, 1])}
    segments = [_batch_specs(rng, fmt, s, nseg, state) for s in range(nseg)]
    return {"topic": topic, "partition": number, "first": rng.choice([0, 0, 0, rng.randint(1, 5000)]),
            "segments": segments, "metadata": rng.random() > 0.05,
            "topic_id": TOPIC_IDS[TOPICS.index(topic)], "hw": rng.choice(["end", "end", "none", "mid"]),
            "rp": rng.choice(["end"] * 5 + ["zero", "mid", "none", "beyond"]),
            "lso": rng.choice(["none", "first", "first", "mid", "end", "beyond"]), "ops": []}


def _random_op(rng: random.Random, kinds: dict[str, int]) -> dict:
    op = rng.choices(list(kinds), list(kinds.values()))[0]
    return {"op": op, "seed": rng.randrange(1 << 30)}


def random_recipe(rng: random.Random, name: str) -> Recipe:
    """One log directory: 1-3 partitions, a clean or unclean shutdown, 0-3 damage operators."""
    nparts = rng.choice([1, 1, 1, 2, 3])
    topic = rng.choice(TOPICS)
    parts = [_random_partition(rng, i, topic) for i in range(nparts)]
    if rng.random() < 0.1:  # a real partition beside (or instead of) the generated ones
        real = rng.choice(REAL_PARTITIONS)
        topic, number = real.rsplit("/", 1)[1].rsplit("-", 1)
        parts[-1].update(real=real, topic=topic, partition=int(number), segments=[])
    for part in parts:
        for _ in range(rng.choice([0, 1, 1, 1, 2, 3])):
            part["ops"].append(_random_op(rng, PARTITION_OPS))
    ops = [_random_op(rng, LOGDIR_OPS) for _ in range(rng.choice([0, 0, 0, 0, 1]))]
    return {"name": name, "clean": rng.random() < 0.6, "partitions": parts, "ops": ops}


def describe(recipe: Recipe) -> str:
    """The recipe as one JSON line (what a failure prints; ``load_diff_report --recipe`` replays it)."""
    return json.dumps(recipe, sort_keys=True, separators=(",", ":"))


# -- step 1: the .log files ----------------------------------------------------------------------------


def _values(spec: dict, i: int) -> bytes:
    """Half compressible, half random: codecs get real work and payload flips land in both kinds."""
    r = random.Random(spec["vseed"] * 31 + i)
    size = spec["size"]
    return (b"value-%d-" % i * (size // 16 + 1))[: size // 2] + r.randbytes(size - size // 2)


def encode_spec(spec: dict, offset: int) -> tuple[bytes, int]:
    """The bytes of one batch spec at ``offset``; returns (bytes, next offset)."""
    if "marker" in spec:
        key = encode_control_key(COMMIT if spec["marker"] == "COMMIT" else ABORT)
        record = RecordSpec(offset, TS + offset, key, encode_end_txn_marker(spec.get("coordinator_epoch", 0)))
        data = encode_batch([record], producer_id=spec["pid"], producer_epoch=0, is_transactional=True,
                            is_control=True, partition_leader_epoch=spec["epoch"])
        return data, offset + 1
    records = [RecordSpec(offset + i, TS + offset + i if spec["magic"] else -1, b"k%d" % (offset + i),
                          _values(spec, i)) for i in range(spec["n"])]
    fields: dict[str, Any] = {"magic": spec["magic"], "codec": spec["codec"]}
    if spec["magic"] == 2:
        fields["partition_leader_epoch"] = spec["epoch"]
        if "pid" in spec:
            fields.update(producer_id=spec["pid"], producer_epoch=0, base_sequence=spec["seq"],
                          is_transactional=spec["txn"])
    return encode_batch(records, **fields), offset + spec["n"]


def segment_logs(part: dict) -> list[tuple[int, bytes]]:
    """(base offset, .log bytes) of each segment of a partition recipe."""
    if "real" in part:
        logs = sorted((CORPUS / part["real"]).glob("*.log"))
        if not logs:
            raise FileNotFoundError(f"no real partition at {CORPUS / part['real']} (set KSEG_SHARED)")
        return [(int(log.name[:20]), log.read_bytes()) for log in logs]
    out = []
    offset = part["first"]
    for batches in part["segments"]:
        base = offset
        data = b""
        for spec in batches:
            offset += spec.get("gap", 0)
            encoded, offset = encode_spec(spec, offset)
            data += encoded
        out.append((base, data))
    return out


def seg_name(base: int, suffix: str) -> str:
    return f"{base:020d}{suffix}"


def part_dir(logdir: Path, part: dict) -> Path:
    return logdir / f"{part['topic']}-{part['partition']}"


def write_logs(recipe: Recipe, logdir: Path) -> Path:
    """Step 1: the ``.log`` files and ``partition.metadata`` of every partition."""
    logdir.mkdir(parents=True)
    for part in recipe["partitions"]:
        path = part_dir(logdir, part)
        path.mkdir()
        for base, data in segment_logs(part):
            (path / seg_name(base, ".log")).write_bytes(data)
        if part["metadata"]:
            (path / "partition.metadata").write_text(f"version: 0\ntopic_id: {part['topic_id']}")
    return logdir


# -- step 3: checkpoints, marker, damage ----------------------------------------------------------------


def _checkpoint(entries: list[tuple[str, int, int]]) -> str:
    return f"0\n{len(entries)}\n" + "".join(f"{t} {p} {o}\n" for t, p, o in entries)


def _pick(where: str, first: int, end: int, rng: random.Random) -> int | None:
    if where == "none":
        return None
    return {"end": end, "zero": 0, "first": first, "beyond": end + rng.randint(1, 50),
            "mid": first + (end - first) // 2 if end > first else first}[where]


def finish(recipe: Recipe, logdir: Path, loaded: dict[tuple[str, int], dict]) -> Path:
    """Step 3: what the broker's stop writes, then the damage. ``loaded``: Kafka's step-2 objects."""
    rng = random.Random(describe(recipe))
    files: dict[str, list[tuple[str, int, int]]] = {"rp": [], "lso": [], "hw": []}
    for part in recipe["partitions"]:
        got = loaded[(part["topic"], part["partition"])]
        first, end = got["log_start_offset"], got["log_end_offset"]
        for key in files:
            value = _pick(part[key], first, end, rng)
            if value is not None:
                files[key].append((part["topic"], part["partition"], value))
    for key, name in (("rp", "recovery-point-offset-checkpoint"), ("lso", "log-start-offset-checkpoint"),
                      ("hw", "replication-offset-checkpoint")):
        (logdir / name).write_text(_checkpoint(sorted(files[key])))
    if recipe["clean"]:
        (logdir / ".kafka_cleanshutdown").write_text('{"version":0,"brokerEpoch":5}')
    for part in recipe["partitions"]:
        for op in part["ops"]:
            PARTITION_APPLY[op["op"]](part_dir(logdir, part), random.Random(op["seed"]))
    for op in recipe["ops"]:
        LOGDIR_APPLY[op["op"]](logdir, recipe, random.Random(op["seed"]))
    return logdir


def _logs(path: Path) -> list[Path]:
    return sorted(p for p in path.glob("*.log") if len(p.name) == 24)


def _segment(path: Path, rng: random.Random, suffix: str = ".log") -> Path | None:
    logs = _logs(path)
    if not logs:
        return None
    log = logs[-1] if rng.random() < 0.5 else rng.choice(logs)
    return log.with_suffix(suffix)


def _batch_starts(data: bytes) -> list[tuple[int, int]]:
    """(position, size) of each entry whose length field fits the file."""
    out, pos = [], 0
    while pos + 17 <= len(data):
        size = 12 + struct.unpack_from(">i", data, pos + 8)[0]
        if size < 26 or pos + size > len(data):
            break
        out.append((pos, size))
        pos += size
    return out


def _rewrite(path: Path, change: Any) -> None:
    data = bytearray(path.read_bytes())
    change(data)
    path.write_bytes(bytes(data))


def op_tear(path: Path, rng: random.Random) -> None:
    """A torn tail: the .log cut anywhere (inside a header, inside records, at a batch edge)."""
    log = _segment(path, rng)
    if log is not None and log.stat().st_size:
        size = log.stat().st_size
        starts = _batch_starts(log.read_bytes())
        cut = rng.choice([rng.randrange(size), rng.choice(starts)[0] + rng.randint(1, 16) if starts else 0])
        with log.open("r+b") as f:
            f.truncate(min(cut, size))


def op_zero(path: Path, rng: random.Random) -> None:
    """A zeroed run (lost write): anywhere, any length up to a few hundred bytes."""
    log = _segment(path, rng)
    if log is not None and log.stat().st_size:
        size = log.stat().st_size
        at = rng.randrange(size)
        n = rng.choice([1, 4, 12, 61, 300, size])

        def change(d: bytearray) -> None:
            d[at:at + n] = bytes(len(d[at:at + n]))
        _rewrite(log, change)


def op_zero_page(path: Path, rng: random.Random) -> None:
    """A whole 4 KiB page of zeros (a page the disk never wrote)."""
    log = _segment(path, rng)
    if log is not None and log.stat().st_size:
        pages = (log.stat().st_size + 4095) // 4096
        at = rng.randrange(pages) * 4096

        def change(d: bytearray) -> None:
            d[at:at + 4096] = bytes(len(d[at:at + 4096]))
        _rewrite(log, change)


def op_hole(path: Path, rng: random.Random) -> None:
    """A sparse hole at the end: the file extended with zeros (a crash after the size, before the data)."""
    log = _segment(path, rng)
    if log is not None:
        with log.open("r+b") as f:
            f.truncate(log.stat().st_size + rng.choice([1, 16, 61, 4096, 12000]))


V2_FIELDS = [0, 3, 7, 8, 11, 12, 15, 16, 17, 20, 21, 22, 23, 26, 27, 35, 43, 51, 53, 57, 60]


def op_flip(path: Path, rng: random.Random) -> None:
    """A flipped byte in a batch: a header field (offset, length, epoch, magic, crc, attributes, ...),
    the records or the compressed payload."""
    log = _segment(path, rng)
    if log is None:
        return
    starts = _batch_starts(log.read_bytes())
    if not starts:
        return
    pos, size = rng.choice(starts)
    at = pos + (rng.choice(V2_FIELDS) if rng.random() < 0.5 else rng.randrange(size))
    bit = 1 << rng.randrange(8)

    def change(d: bytearray) -> None:
        if at < len(d):
            d[at] ^= bit
    _rewrite(log, change)


def op_length(path: Path, rng: random.Random) -> None:
    """A batch length field set to a wrong value (too small, too large, negative, past the file)."""
    log = _segment(path, rng)
    if log is None:
        return
    starts = _batch_starts(log.read_bytes())
    if not starts:
        return
    pos, size = rng.choice(starts)
    value = rng.choice([0, 3, 13, 14, size - 13, size + 50, 1 << 30, -5])

    def change(d: bytearray) -> None:
        d[pos + 8:pos + 12] = struct.pack(">i", value)
    _rewrite(log, change)


def _index_damage(file: Path, rng: random.Random, entry: int) -> None:
    kind = rng.choice(["delete", "empty", "odd", "garbage", "zero", "stale", "extra"])
    if kind == "delete":
        file.unlink(missing_ok=True)
    elif kind == "empty":
        file.write_bytes(b"")
    elif kind == "odd":
        data = file.read_bytes() if file.exists() else b""
        file.write_bytes(data + b"\x00" * rng.randint(1, entry - 1))
    elif kind == "garbage":
        file.write_bytes(rng.randbytes(entry * rng.randint(1, 4)))
    elif kind == "zero":
        file.write_bytes(bytes(entry * rng.randint(1, 3)))
    elif kind == "stale":  # an index from a longer, older log: entries past the .log's end
        data = file.read_bytes() if file.exists() else b""
        last = struct.unpack_from(">i", data, len(data) - entry)[0] if len(data) >= entry else 0
        extra = struct.pack(">iI", last + 50, 1 << 20) if entry == 8 else struct.pack(">qi", TS + 10 ** 6, last + 50)
        file.write_bytes(data + extra)
    else:  # an entry whose offset goes backwards
        data = file.read_bytes() if file.exists() else b""
        file.write_bytes(data + (struct.pack(">iI", 0, 0) if entry == 8 else struct.pack(">qi", 0, 0)))


def op_index(path: Path, rng: random.Random) -> None:
    """The .index: missing, empty, odd-sized, garbage, zeroed, stale (past the log) or going backwards."""
    file = _segment(path, rng, ".index")
    if file is not None:
        _index_damage(file, rng, 8)


def op_timeindex(path: Path, rng: random.Random) -> None:
    file = _segment(path, rng, ".timeindex")
    if file is not None:
        _index_damage(file, rng, 12)


def op_txnindex(path: Path, rng: random.Random) -> None:
    """The .txnindex: garbage, odd-sized, or one made up beside a segment that had none."""
    file = _segment(path, rng, ".txnindex")
    if file is not None:
        kind = rng.choice(["garbage", "odd", "delete"])
        if kind == "delete":
            file.unlink(missing_ok=True)
        else:
            old = file.read_bytes() if file.exists() else b""
            file.write_bytes(old + (rng.randbytes(34) if kind == "garbage" else b"\x00" * 5))


def op_snapshot(path: Path, rng: random.Random) -> None:
    """Producer snapshots: all deleted, garbage, truncated, a stray one below/beyond the log, or empty."""
    snaps = sorted(path.glob("*.snapshot"))
    kind = rng.choice(["delete", "garbage", "truncate", "stray", "beyond", "empty"])
    if kind == "delete":
        for s in snaps:
            s.unlink()
    elif kind in ("stray", "beyond"):
        logs = _logs(path)
        base = int(logs[0].name[:20]) if logs else 0
        at = base + rng.randint(1, 3) if kind == "stray" else base + 10 ** 6
        (path / seg_name(at, ".snapshot")).write_bytes(b"\x00\x01" + struct.pack(">I", 0x3A0A3C8A) + b"\x00" * 4)
    elif snaps:
        snap = rng.choice(snaps)
        data = snap.read_bytes()
        snap.write_bytes({"garbage": rng.randbytes(max(10, len(data))), "truncate": data[: rng.randrange(max(1, len(data)))],
                          "empty": b""}[kind])


def op_epochs(path: Path, rng: random.Random) -> None:
    """leader-epoch-checkpoint: missing, empty, bad version, wrong count, an unparsable line, an epoch
    beyond the log end, epochs going backwards."""
    file = path / "leader-epoch-checkpoint"
    lines = file.read_text().splitlines() if file.exists() else ["0", "0"]
    entries = lines[2:]
    kind = rng.choice(["delete", "empty", "version", "count", "unparsable", "beyond", "backwards", "high_epoch"])
    if kind == "delete":
        file.unlink(missing_ok=True)
        return
    if kind == "empty":
        text = ""
    elif kind == "version":
        text = "\n".join(["1", str(len(entries)), *entries]) + "\n"
    elif kind == "count":
        text = "\n".join(["0", str(len(entries) + rng.choice([-1, 1, 2])), *entries]) + "\n"
    elif kind == "unparsable":
        text = "\n".join(["0", str(len(entries) + 1), *entries, "x 12"]) + "\n"
    elif kind == "beyond":
        text = "\n".join(["0", str(len(entries) + 1), *entries, "99 10000000"]) + "\n"
    elif kind == "backwards":
        text = "\n".join(["0", str(len(entries) + 1), *entries, "0 0"]) + "\n"
    else:
        text = "\n".join(["0", "1", "50 0"]) + "\n"
    file.write_text(text)


def op_metadata(path: Path, rng: random.Random) -> None:
    """partition.metadata: missing (the stray rename), empty, malformed, a bad version, a bad topic id."""
    file = path / "partition.metadata"
    kind = rng.choice(["delete", "empty", "malformed", "version", "topic_id"])
    text = {"empty": "", "malformed": "garbage\n", "version": "version: 7\ntopic_id: AAAAAAAAAAAAAAAAAAAAAQ",
            "topic_id": "version: 0\ntopic_id: not-a-uuid"}
    if kind == "delete":
        file.unlink(missing_ok=True)
    else:
        file.write_text(text[kind])


def op_swap(path: Path, rng: random.Random) -> None:
    """An unfinished segment replacement: one segment's bytes, or several segments' concatenated, as
    ``<base>.log.swap`` (compaction / split), with or without the ``.cleaned`` stage; or an index swap."""
    logs = _logs(path)
    if not logs:
        return
    kind = rng.choice(["single", "multi", "multi", "cleaned", "index"])
    i = rng.randrange(len(logs))
    if kind == "multi" and len(logs) >= 2:
        i = min(i, len(logs) - 2)
        covered = logs[i:i + rng.randint(2, len(logs) - i)]
        (logs[i].parent / (logs[i].name + ".swap")).write_bytes(b"".join(p.read_bytes() for p in covered))
    elif kind == "cleaned":
        shutil.copyfile(logs[i], logs[i].parent / (logs[i].name[:20] + ".cleaned"))
    elif kind == "index":
        idx = logs[i].with_suffix(".index")
        if idx.exists():
            shutil.copyfile(idx, idx.parent / (idx.name + ".swap"))
    else:
        data = logs[i].read_bytes()
        (logs[i].parent / (logs[i].name + ".swap")).write_bytes(data[: len(data) - rng.choice([0, 0, 7])])


def op_leftover_file(path: Path, rng: random.Random) -> None:
    """Files an interrupted delete or clean leaves: ``*.deleted``, ``*.cleaned``, ``*.snapshot.deleted``."""
    logs = _logs(path)
    kind = rng.choice(["deleted", "cleaned", "snapshot"])
    base = int(logs[0].name[:20]) - 1 if logs and int(logs[0].name[:20]) > 0 else 0
    if kind == "deleted" and logs:
        shutil.copyfile(logs[0], path / (seg_name(max(0, base - 10), ".log") + ".deleted"))
    elif kind == "cleaned":
        (path / seg_name(base, ".log.cleaned")).write_bytes(b"")
    else:
        (path / seg_name(base, ".snapshot.deleted")).write_bytes(b"")


def op_checkpoint(logdir: Path, recipe: Recipe, rng: random.Random) -> None:
    """An offset checkpoint: missing, wrong count, bad version, an unparsable line, an entry for an absent
    partition, empty."""
    name = rng.choice(["recovery-point-offset-checkpoint", "log-start-offset-checkpoint",
                       "replication-offset-checkpoint"])
    file = logdir / name
    lines = file.read_text().splitlines()
    entries = lines[2:]
    kind = rng.choice(["missing", "count", "version", "unparsable", "absent", "empty"])
    if kind == "missing":
        file.unlink()
        return
    text = {"count": ["0", str(len(entries) + rng.choice([-1, 1])), *entries],
            "version": ["1", str(len(entries)), *entries],
            "unparsable": ["0", str(len(entries) + 1), *entries, "t x 5"],
            "absent": ["0", str(len(entries) + 1), *entries, "gone 3 17"], "empty": []}[kind]
    file.write_text("".join(line + "\n" for line in text))


def op_leftover_dir(logdir: Path, recipe: Recipe, rng: random.Random) -> None:
    """A ``-delete``, ``-stray`` or ``-future`` copy of a partition, or a directory that is no partition."""
    kind = rng.choice(["delete", "stray", "future", "bad"])
    part = rng.choice(recipe["partitions"])
    src = part_dir(logdir, part)
    if kind == "bad":
        (logdir / "lost+found").mkdir(exist_ok=True)
        return
    target = logdir / f"{src.name}.{rng.randbytes(16).hex()}-{kind}"
    shutil.copytree(src, target)


PARTITION_APPLY = {"tear": op_tear, "zero": op_zero, "zero_page": op_zero_page, "hole": op_hole, "flip": op_flip,
                   "length": op_length, "index": op_index, "timeindex": op_timeindex, "txnindex": op_txnindex,
                   "snapshot": op_snapshot, "epochs": op_epochs, "metadata": op_metadata, "swap": op_swap,
                   "leftover_file": op_leftover_file}
LOGDIR_APPLY = {"checkpoint": op_checkpoint, "leftover_dir": op_leftover_dir}
assert set(PARTITION_APPLY) == set(PARTITION_OPS) and set(LOGDIR_APPLY) == set(LOGDIR_OPS)


def shrink_candidates(recipe: Recipe) -> list[Recipe]:
    """Recipes one step smaller: an operator, a partition, a segment or a batch dropped, a batch made
    plain (one record, no codec, no producer).  The minimiser keeps the first that still disagrees
    the same way."""
    out: list[Recipe] = []

    def variant(change: Any) -> None:
        new = json.loads(json.dumps(recipe))
        if change(new) is not False:
            out.append(new)

    for i in range(len(recipe["ops"])):
        variant(lambda r, i=i: r["ops"].pop(i))
    for p, part in enumerate(recipe["partitions"]):
        for i in range(len(part["ops"])):
            variant(lambda r, p=p, i=i: r["partitions"][p]["ops"].pop(i))
    if len(recipe["partitions"]) > 1:
        for p in range(len(recipe["partitions"])):
            variant(lambda r, p=p: r["partitions"].pop(p))
    for p, part in enumerate(recipe["partitions"]):
        if len(part["segments"]) > 1:
            for s in range(len(part["segments"])):
                variant(lambda r, p=p, s=s: r["partitions"][p]["segments"].pop(s))
    for p, part in enumerate(recipe["partitions"]):
        for s, batches in enumerate(part["segments"]):
            for b in range(len(batches)):
                variant(lambda r, p=p, s=s, b=b: r["partitions"][p]["segments"][s].pop(b))
    for p, part in enumerate(recipe["partitions"]):
        for s, batches in enumerate(part["segments"]):
            for b, spec in enumerate(batches):
                if "marker" not in spec and (spec["n"] > 1 or spec["codec"] != "none" or spec["size"] > 10):
                    def plain(r: Recipe, p: int = p, s: int = s, b: int = b) -> None:
                        r["partitions"][p]["segments"][s][b].update(n=1, codec="none", size=10)
                    variant(plain)
    if recipe["clean"]:
        variant(lambda r: r.update(clean=False))
    return out
