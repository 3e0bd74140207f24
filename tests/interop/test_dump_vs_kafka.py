"""``kseg dump`` against Apache Kafka's own reader, on segments Kafka itself wrote.

Kafka's MemoryRecordsBuilder (the oracle, kafka-clients 4.3.0) writes a segment for every magic x codec,
CreateTime and LogAppendTime, transactional batches with COMMIT and ABORT markers, offset gaps, nulls,
headers and payloads that are not valid UTF-8 (and one file with bytes after its last whole batch).  Then:

* text: ``DumpLines.java`` prints what ``DumpLogSegments.dumpLog`` prints, from Kafka's RecordBatch and
  Record objects (``OptionalLong``/``TimestampType`` toString, Java's UTF-8 decoding of keys, payloads and
  header keys); kseg's text must be the same bytes, for plain, deep, data and skip-metadata dumps;
* JSON: every batch field and every record of ``kseg dump --format json --deep-iteration`` must be what
  Kafka's reader reports for the same bytes (the oracle's ``read`` job);
* Java's ``new String(bytes, UTF_8)`` on ~70,000 byte strings (every short combination of the bytes that
  matter, plus random ones) must equal kseg's emulation.

DumpLogSegments itself lives in Kafka's tools jar (4.3; core before), which the harness does not have:
DumpLines follows its templates using only kafka-clients -- ``--java`` those of 4.3.0's Java port
(tools/src/main/java/org/apache/kafka/tools/DumpLogSegments.java), else the Scala tool's of 4.2.  KRaft
control records (SnapshotHeader/Footer, LeaderChange at Version 0 and 1, KRaftVersion, Voters, a COMMIT
marker) are written by MemoryRecords' own factories and printed as printControlRecord does, with
kafka-clients' generated JSON converters (KraftControl.java).
"""

from __future__ import annotations

import itertools
import json
import os
import random
import subprocess
from pathlib import Path

import jars
import pytest
from click.testing import CliRunner
from oracle import find_java, make_batch, make_marker_batch, make_record

from kseg.cli import cli
from kseg.format.jvm_text import java_utf8
from kseg.ops.dump.summaries import JavaHashMapOrder
from kseg.render.dump import decode_payload

HERE = Path(__file__).resolve().parent
TS = 1_700_000_000_000
LOG = "00000000000000000000.log"
ODD = [b"\xed\xa0\x80|", b"ok\xed\xa0", b"\xc3\x28", b"\xf0\x9f\x98", "caf\u00e9 \U0001F600".encode(), b"",
       bytes(range(0, 256, 15))]


def _records(first: int, magic: int, count: int = 3, step: int = 1) -> list[dict]:
    out = []
    for i in range(count):
        offset = first + i * step
        key = None if i == 1 else ODD[(offset + 3) % len(ODD)]
        value = None if i == 2 and magic == 2 else ODD[offset % len(ODD)] + b"#%d" % offset
        headers = [("h\u00e9", ODD[i]), ("", None)] if magic == 2 else []
        out.append(make_record(offset, TS + 10 * i - (5 if i == 1 else 0), key, value, headers))
    return out


def segments() -> dict[str, list[dict]]:
    """name -> the batches Kafka writes into <name>/00000000000000000000.log."""
    cases: dict[str, list[dict]] = {}
    for magic in (0, 1, 2):
        for codec in ("none", "gzip", "snappy", "lz4", "zstd"):
            if codec == "zstd" and magic < 2:
                continue
            types = ("CreateTime",) if magic == 0 else ("CreateTime", "LogAppendTime")
            for ts_type in types:
                batches = [
                    make_batch(_records(base, magic), magic=magic, codec=codec, timestamp_type=ts_type,
                               log_append_time=TS + 99_000, partition_leader_epoch=(7 if magic == 2 else -1))
                    for base in (0, 3)
                ]
                cases[f"m{magic}-{codec}-{ts_type}"] = batches
    common = {"producer_id": 4000, "producer_epoch": 2, "is_transactional": True, "partition_leader_epoch": 1}
    cases["txn"] = [
        make_batch(_records(0, 2), base_sequence=0, **common),
        make_marker_batch("COMMIT", 3, TS + 1, 4000, 2, coordinator_epoch=5, partition_leader_epoch=1),
        make_batch(_records(4, 2), codec="gzip", base_sequence=3, **common),
        make_marker_batch("ABORT", 7, TS + 2, 4000, 2, coordinator_epoch=6, partition_leader_epoch=1),
        make_batch(_records(8, 2), producer_id=5000, producer_epoch=0, base_sequence=2147483646),
    ]
    cases["gaps"] = [make_batch(_records(0, 2, count=4, step=3)), make_batch(_records(20, 2), codec="lz4"),
                     make_batch(_records(40, 1), magic=1, codec="snappy")]
    cases["mixed-tail"] = [make_batch(_records(0, 0), magic=0), make_batch(_records(3, 1), magic=1, codec="gzip"),
                           make_batch(_records(6, 2), codec="zstd")]
    return cases


@pytest.fixture(scope="module")
def written(kafka_oracle, tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("dump-vs-kafka")
    jobs = []
    for name, batches in segments().items():
        (root / name).mkdir()
        jobs.append({"op": "write", "out": root / name / LOG, "batches": batches})
    results = kafka_oracle.run(jobs)
    assert all(r["ok"] for r in results), [r for r in results if not r["ok"]]
    with open(root / "mixed-tail" / LOG, "ab") as out:  # a partial batch at the end: "Found N invalid bytes"
        out.write(bytes.fromhex("000000000000000a0000003c00000000"))
    return root


@pytest.fixture(scope="module")
def dump_lines(kafka_oracle, tmp_path_factory) -> list[str]:
    """The java command that runs DumpLines (compiled once for the module)."""
    java, javac = find_java()
    jar_paths = [str(p) for p in jars.ensure_jars()]
    classes = tmp_path_factory.mktemp("dumplines-classes")
    subprocess.run([javac, "-nowarn", "-encoding", "UTF-8", "--release", "17", "-cp", os.pathsep.join(jar_paths),
                    "-d", str(classes), str(HERE / "DumpLines.java"), str(HERE / "KraftControl.java")], check=True,
                   capture_output=True)
    return [java, "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-cp", os.pathsep.join([str(classes), *jar_paths]),
            "DumpLines"]


def _kseg(args: list[str], cwd: Path):
    old = os.getcwd()
    os.chdir(cwd)
    try:
        return CliRunner().invoke(cli, ["dump", *args], catch_exceptions=False)
    finally:
        os.chdir(old)


FLAG_SETS = [[], ["--deep-iteration"], ["--print-data-log"], ["--print-data-log", "--skip-record-metadata"],
             ["--deep-iteration", "--skip-record-metadata"]]


#: kseg's --kafka-version -> DumpLines' dialect flag (4.3: the Java port; 4.2: the Scala tool)
DIALECTS = {"4.3": ["--java"], "4.2": []}


@pytest.mark.parametrize("version", sorted(DIALECTS))
@pytest.mark.parametrize("flags", FLAG_SETS, ids=lambda f: " ".join(f) or "batches")
def test_text_is_what_kafkas_reader_prints(flags, version, written, dump_lines, tmp_path):
    files = sorted(f"{p.parent.name}/{p.name}" for p in written.glob(f"*/{LOG}") if p.parent.name != "gaps")
    out, err = tmp_path / "out", tmp_path / "err"
    subprocess.run([*dump_lines, "dump", str(out), str(err), *DIALECTS[version], *flags, *files], check=True,
                   cwd=written, capture_output=True)
    result = _kseg(["--kafka-version", version, *flags, *files], written)
    assert result.exit_code == 0 and err.read_text() == "" and result.stderr == ""
    expected = out.read_text(encoding="utf-8")
    assert result.stdout == expected
    assert "Found 16 invalid bytes at the end of 00000000000000000000.log" in expected
    if flags:
        assert "endTxnMarker: COMMIT coordinatorEpoch: 5" in expected or "--skip-record-metadata" in flags


def test_non_consecutive_offsets_summary_is_kafkas(written, dump_lines, tmp_path):
    out, err = tmp_path / "out", tmp_path / "err"
    for version, flag in DIALECTS.items():
        subprocess.run([*dump_lines, "dump", str(out), str(err), *flag, "--deep-iteration", f"gaps/{LOG}"],
                       check=True, cwd=written, capture_output=True)
        result = _kseg(["--kafka-version", version, "--deep-iteration", f"gaps/{LOG}"], written)
        assert result.stdout == out.read_text(encoding="utf-8")
        assert result.stderr == err.read_text(encoding="utf-8")
        assert result.stderr.startswith(f"Non-consecutive offsets in {written}/gaps/{LOG}\n")
    scala = _kseg(["--kafka-version", "4.2", "--deep-iteration", f"gaps/{LOG}"], written).stderr
    assert scala.endswith("  0 is followed by 3\n")  # newest first, as the Scala tool prepends
    assert "  22 is followed by 40\n" in scala
    java = _kseg(["--deep-iteration", f"gaps/{LOG}"], written).stderr
    assert java.endswith("  22 is followed by 40\n")  # 4.3: a TreeMap, ascending


BATCH_KEYS = {  # kseg JSON key -> Kafka accessor (oracle "read" result)
    "position": "position", "size": "sizeInBytes", "magic": "magic", "base_offset": "baseOffset",
    "last_offset": "lastOffset", "count": "countOrNull", "codec": "compressionType", "timestamp_type": "timestampType",
    "max_timestamp": "maxTimestamp", "crc": "checksum", "valid": "isValid", "producer_id": "producerId",
    "producer_epoch": "producerEpoch", "base_sequence": "baseSequence", "last_sequence": "lastSequence",
    "partition_leader_epoch": "partitionLeaderEpoch", "is_transactional": "isTransactional",
    "is_control": "isControlBatch",
}


@pytest.mark.parametrize("payload", ["utf8", "base64"])
def test_json_fields_are_what_kafkas_reader_reports(payload, written, kafka_oracle):
    names = sorted(segments())
    reads = kafka_oracle.run([{"op": "read", "in": written / name / LOG} for name in names])
    for name, kafka in zip(names, reads):
        result = _kseg(["--format", "json", "--deep-iteration", "--payload", payload, f"{name}/{LOG}"], written)
        ours = [json.loads(line) for line in result.stdout.splitlines()]
        batches = [obj for obj in ours if obj["type"] == "batch"]
        assert len(batches) == len(kafka["batches"]), name
        for mine, theirs in zip(batches, kafka["batches"]):
            assert {k: mine[k] for k in BATCH_KEYS} == {k: theirs[v] for k, v in BATCH_KEYS.items()}, name
            assert len(mine["records"]) == len(theirs["records"]), name
            for record, expected in zip(mine["records"], theirs["records"]):
                assert (record["offset"], record["timestamp"]) == (expected["offset"], expected["timestamp"])
                assert decode_payload(record["key"], payload) == expected["key"]
                assert decode_payload(record["value"], payload) == expected["value"]
                assert [(k, decode_payload(v, payload)) for k, v in record["headers"]] == [
                    (k, v) for k, v in expected["headers"]
                ]
                if "control" in expected:
                    assert record["control_type"] == expected["control"]["type"]
                else:
                    assert "control_type" not in record


def _utf8_cases() -> list[bytes]:
    interesting = [0x41, 0x7F, 0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF, 0xC0, 0xC1, 0xC2, 0xDF, 0xE0, 0xE1, 0xEC, 0xED,
                   0xEE, 0xEF, 0xF0, 0xF1, 0xF3, 0xF4, 0xF5, 0xF7, 0xF8, 0xFF]
    cases = {bytes(t) for n in (1, 2, 3) for t in itertools.product(interesting, repeat=n)}
    cases |= {bytes(t) for t in itertools.product(interesting[::2], repeat=4)}
    rng = random.Random(3)
    likely = [0x80, 0x8F, 0x90, 0xA0, 0xBF, 0xC2, 0xE0, 0xED, 0xEF, 0xF0, 0xF4, 0x41]
    for _ in range(20_000):
        cases.add(bytes(rng.choice(likely) if rng.random() < 0.8 else rng.randrange(256)
                        for _ in range(rng.randint(1, 8))))
    return sorted(cases)


def test_java_string_decoding_matches_the_jvm(dump_lines, tmp_path):
    cases = _utf8_cases()
    (tmp_path / "in").write_text("\n".join(c.hex() for c in cases) + "\n")
    subprocess.run([*dump_lines, "utf8", str(tmp_path / "in"), str(tmp_path / "out")], check=True,
                   capture_output=True)
    java = [bytes.fromhex(line).decode("utf-8") for line in (tmp_path / "out").read_text().splitlines()]
    assert len(java) == len(cases)
    mismatches = [(c.hex(), java_utf8(c), j) for c, j in zip(cases, java) if java_utf8(c) != j]
    assert mismatches == []
    python_differs = sum(c.decode("utf-8", "replace") != j for c, j in zip(cases, java))
    assert python_differs > 100  # why kseg does not simply use errors="replace"


@pytest.mark.parametrize("version", sorted(DIALECTS))
def test_kraft_control_records_are_what_kafka_prints(version, dump_lines, tmp_path):
    """Every KRaft control record type, written by Kafka's MemoryRecords and printed by its JSON converters."""
    folder = tmp_path / "__cluster_metadata-0"
    folder.mkdir()
    subprocess.run([*dump_lines, "kraft", str(folder / LOG)], check=True, capture_output=True)
    out, err = tmp_path / "out", tmp_path / "err"
    subprocess.run([*dump_lines, "dump", str(out), str(err), *DIALECTS[version], "--deep-iteration",
                    f"{folder.name}/{LOG}"], check=True, cwd=tmp_path, capture_output=True)
    result = _kseg(["--kafka-version", version, "--deep-iteration", f"{folder.name}/{LOG}"], tmp_path)
    expected = out.read_text(encoding="utf-8")
    assert err.read_text() == "" and result.stderr == "" and result.exit_code == 0
    assert result.stdout == expected
    for label in ("SnapshotHeader {", "LeaderChange: {", "KRaftVersion {", "KRaftVoters {", "SnapshotFooter {",
                  "endTxnMarker: COMMIT coordinatorEpoch: 9", "endTxnMarker: ABORT coordinatorEpoch: 10"):
        assert label in expected


def test_java_hashmap_order_is_javas(dump_lines, tmp_path):
    """4.3 prints its summaries in java.util.HashMap order: kseg's JavaHashMapOrder against the JVM's, for
    path sets of 1 to 60 keys (several resizes), with repeated puts and equal hashes ("Aa"/"BB")."""
    rng = random.Random(4_3_0)
    groups = [["/var/lib/kafka/Aa-0/x.log", "/var/lib/kafka/BB-0/x.log"]]
    for size in (*range(1, 30), 40, 49, 50, 60, 97):
        keys = [f"/data/kafka-logs/{rng.choice(['orders', 't', '__consumer_offsets'])}-{rng.randrange(64)}/"
                f"{rng.randrange(10**6):020d}.{rng.choice(['log', 'index', 'timeindex'])}" for _ in range(size)]
        groups.append(keys)
        groups.append(keys + keys[: size // 3])  # a put of a key already there can still grow the table
    (tmp_path / "in").write_text("\n\n".join("\n".join(g) for g in groups) + "\n", encoding="utf-8")
    subprocess.run([*dump_lines, "hashmap", str(tmp_path / "in"), str(tmp_path / "out")], check=True,
                   capture_output=True)
    java = [g.split("\n") for g in (tmp_path / "out").read_text(encoding="utf-8").strip("\n").split("\n\n")]
    assert len(java) == len(groups)
    for keys, expected in zip(groups, java, strict=True):
        order = JavaHashMapOrder()
        for key in keys:
            order.put(key)
        assert order.order() == expected


def test_kafka_kraft_fixture_is_what_kafka_writes(dump_lines, tmp_path):
    """fixtures/dump-kafka's KRaft control segment: Kafka's MemoryRecords write exactly these bytes."""
    out = tmp_path / LOG
    subprocess.run([*dump_lines, "kraft", str(out)], check=True, capture_output=True)
    fixture = HERE.parents[1] / "fixtures" / "dump-kafka" / "__cluster_metadata-0" / LOG
    assert out.read_bytes() == fixture.read_bytes()
