"""Make fixtures/broker/: log directories written by a real Apache Kafka 4.3.0 broker, then SIGKILLed.

Only a broker makes these files the way they are in the field: the active segment's indexes still
preallocated (an unclean shutdown never trims them), producer snapshots taken at each roll, a
transaction still open at the kill, a compacted topic after real cleaner passes, ``__cluster_metadata-0``
with a KRaft snapshot and ``__consumer_offsets`` with a group's committed offsets. The broker is
``../shared/kafka`` (Kafka 4.3.0 built from source, ``kafka.sh``), driven through
``tests/broker/kafka_broker.py``; the clients are kafka-python (test extra).

    python tools/make_broker_fixtures.py [OUTDIR]        # default fixtures/broker

Runnable again: the bytes differ from run to run (timestamps, producer ids, cluster id, the cleaner's
timing), the structure does not; fixtures/broker/PROVENANCE.md lists what a run produced, with sha256,
and is rewritten by this script (``--provenance-only`` rewrites only it, from the files in OUTDIR).
After a new run, tests/interop/test_broker_fixtures.py's ``EXPECTED_LOAD`` (what Kafka's loading code
says about these files) must be checked against the new files and updated where they differ.
"""

from __future__ import annotations

import argparse
import hashlib
import shutil
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "broker"))

import kafka_broker as kb  # noqa: E402

OUT_DEFAULT = REPO / "fixtures" / "broker"

# Broker settings beyond kafka.sh's defaults (see PROVENANCE.md for why each is there).
BROKER_SETTINGS: list[tuple[str, str]] = [
    ("offsets.topic.num.partitions", "1"),
    ("transaction.state.log.num.partitions", "1"),
    ("log.index.size.max.bytes", "4096"),  # preallocated .index 4096 / .timeindex 4092 bytes, not 10 MiB
    ("log.initial.task.delay.ms", "1000"),  # the checkpoint tasks start after 1 s, not 30 s
    ("log.flush.offset.checkpoint.interval.ms", "1000"),  # recovery-point checkpoint as a busy broker has it
    ("log.flush.start.offset.checkpoint.interval.ms", "1000"),
    ("replica.high.watermark.checkpoint.interval.ms", "1000"),
    ("log.cleaner.backoff.ms", "500"),
    ("log.cleaner.min.cleanable.ratio", "0.01"),
    ("log.cleaner.dedupe.buffer.size", "2097152"),
    ("metadata.log.max.snapshot.interval.ms", "2000"),  # a KRaft snapshot within seconds
    ("metadata.max.idle.interval.ms", "0"),  # no NoOpRecord every 500 ms: a small metadata log
    ("offsets.topic.segment.bytes", "1048576"),
    ("transaction.state.log.segment.bytes", "1048576"),
    ("broker.session.timeout.ms", "2000"),  # the restart re-registers node 1 without a 9 s wait
    ("broker.heartbeat.interval.ms", "500"),
]

TOPICS = {
    # name: (partitions, topic configs)
    "orders": (2, {"internal.segment.bytes": "1024"}),
    "payments": (1, {"internal.segment.bytes": "4096"}),
    "compacted": (1, {"cleanup.policy": "compact", "internal.segment.bytes": "1024",
                      "min.cleanable.dirty.ratio": "0.01", "min.compaction.lag.ms": "0",
                      "delete.retention.ms": "0", "segment.ms": "600000"}),
}


def _value(tag: str, i: int) -> bytes:
    return f"{tag}-{i:04d}".encode() + b"." * 40


def _wait(what: str, predicate, timeout: float = 90.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise TimeoutError(f"gave up waiting for {what} after {timeout} s")
        time.sleep(0.5)


def _cleaned(data: Path) -> bool:
    path = data / "cleaner-offset-checkpoint"
    return path.is_file() and "compacted 0 " in path.read_text()


def _snapshot_taken(data: Path) -> bool:
    return any((data / "__cluster_metadata-0").glob("*.checkpoint"))


def run_broker(work: Path, log: list[str]) -> kb.Broker:
    """Run the scenario on a fresh broker in ``work``; SIGKILL it; return the (stopped) broker."""
    broker = kb.Broker(work / "node")
    broker.format(BROKER_SETTINGS)
    broker.start()
    open_txn = None
    try:
        bs = broker.bootstrap
        for name, (partitions, configs) in TOPICS.items():
            kb.create_topic(bs, name, partitions, configs)
        # orders: idempotent, 10 flushes of 6 records over 2 partitions; 2048-byte segments roll often
        with_producer(bs, lambda p: [kb.send_all(p, "orders", [(i % 2, b"k%d" % i, _value(f"orders-{r}", i))
                                                                 for i in range(6)]) for r in range(10)])
        log.append(STEPS[0])
        # compacted: 12 rounds over the same 5 keys, then a tombstone for k0
        def compacted(p) -> None:
            for r in range(12):  # 5 keys overwritten each round, one key per round that stays
                kb.send_all(p, "compacted", [(0, b"k%d" % i, _value(f"round{r}", i)) for i in range(5)]
                            + [(0, b"u%d" % r, _value("unique", r))])
            kb.send_all(p, "compacted", [(0, b"k0", None)])
            # more rounds after the tombstone so that segments roll past it and the cleaner sees it
            for r in range(12, 16):
                kb.send_all(p, "compacted", [(0, b"k%d" % i, _value(f"round{r}", i)) for i in range(1, 5)])
        with_producer(bs, compacted)
        log.append(STEPS[1])
        _wait("the cleaner to compact compacted-0", lambda: _cleaned(broker.data))
        # payments: one committed and one aborted transaction, idempotent records, then one left open
        for tid, n, end in (("tx-commit", 5, "commit"), ("tx-abort", 4, "abort")):
            txn = kb.producer(bs, transactional_id=tid)
            try:
                txn.init_transactions()
                txn.begin_transaction()
                kb.send_all(txn, "payments", [(0, b"t%d" % i, _value(f"{tid}", i)) for i in range(n)])
                if end == "commit":
                    txn.commit_transaction()
                else:
                    txn.abort_transaction()
            finally:
                txn.close()
        with_producer(bs, lambda p: kb.send_all(p, "payments", [(0, b"p%d" % i, _value("plain", i))
                                                                   for i in range(3)]))
        # a consumer group commits its position on orders (into __consumer_offsets)
        commit_group(bs, "fixture-group", "orders")
        open_txn = kb.producer(bs, transactional_id="tx-open", transaction_timeout_ms=600000)
        open_txn.init_transactions()
        open_txn.begin_transaction()
        kb.send_all(open_txn, "payments", [(0, b"o%d" % i, _value("tx-open", i)) for i in range(3)])
        log.append(STEPS[2])
        _wait("a KRaft snapshot in __cluster_metadata-0", lambda: _snapshot_taken(broker.data))
        time.sleep(2.5)  # let the 1 s checkpoint tasks write the recovery points of the rolled segments
    finally:
        broker.kill()
        if open_txn is not None:
            open_txn.close(timeout=1)
        if broker.root.joinpath("kafka.pid").exists():
            raise RuntimeError("broker still running")
    log.append(STEPS[3])
    return broker


def with_producer(bs: str, body) -> None:
    prod = kb.producer(bs)
    try:
        body(prod)
    finally:
        prod.close()


def commit_group(bs: str, group: str, topic: str) -> None:
    from kafka import KafkaConsumer, TopicPartition
    from kafka.structs import OffsetAndMetadata

    consumer = KafkaConsumer(bootstrap_servers=bs, group_id=group, enable_auto_commit=False)
    try:
        tps = [TopicPartition(topic, p) for p in sorted(consumer.partitions_for_topic(topic) or [])]
        consumer.commit({tp: OffsetAndMetadata(17 + tp.partition, "fixture", -1) for tp in tps})
    finally:
        consumer.close()


def file_table(root: Path) -> list[tuple[str, int, str]]:
    """(path relative to ``root``, size, sha256) of every fixture file, PROVENANCE.md and the script's own
    outputs excluded."""
    rows = []
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        rel = path.relative_to(root).as_posix()
        if rel == "PROVENANCE.md":
            continue
        rows.append((rel, path.stat().st_size, hashlib.sha256(path.read_bytes()).hexdigest()))
    return rows


def _zero_tail(path: Path) -> int:
    """Bytes of ``path`` before its all-zero tail (a preallocated index's entries)."""
    data = path.read_bytes()
    return len(data.rstrip(b"\0"))


def describe(root: Path, rel: str, size: int) -> str:
    """What is special about one file (one table cell of PROVENANCE.md)."""
    path = root / rel
    name = path.name
    state = "SIGKILL" if rel.startswith("unclean-kill/") else "restart + SIGTERM"
    if name.endswith(".deleted"):
        return "left by the cleaner's swap: scheduled for async deletion (file.delete.delay.ms 60 s), Kafka deletes it at load"
    if name.endswith((".index", ".timeindex")) and size in (4096, 4092, 10485760, 10485756):
        return (f"**preallocated** index of the active segment ({state}: never trimmed), entries in the "
                f"first {_zero_tail(path)} bytes, zeros after")
    if name.endswith(".snapshot"):
        return "producer-state snapshot (written at a segment roll or at shutdown)"
    if name.endswith(".checkpoint") and "__cluster_metadata" in rel:
        return "KRaft snapshot (metadata.log.max.snapshot.interval.ms=2000)"
    if name == "00000000000000000000.log" and "payments" in rel:
        return "tx-commit (5 + COMMIT), tx-abort (4 + ABORT), 3 plain, **tx-open: 3 records, no marker**"
    if name.endswith(".log") and "compacted" in rel:
        last = max(p.name for p in path.parent.glob("*.log"))
        return "the active segment" if name == last else "a segment the cleaner rewrote (cleaned, swapped in)"
    if name == ".kafka_cleanshutdown":
        return "the clean-shutdown marker"
    return ""


# What run_broker and main do, in order (PROVENANCE.md's list).
STEPS = [
    "orders: 60 records, idempotent producer, 10 flushes",
    "compacted: 12 rounds x (5 keys + 1 unique key), tombstone k0, 4 rounds x 4 keys",
    "payments: txn tx-commit 5 committed, tx-abort 4 aborted, 3 plain, tx-open 3 left open",
    "SIGKILL",
    "restart on the same log directory (recovery), 3 s, SIGTERM (controlled shutdown)",
]


def write_provenance(out: Path, log: list[str], settings: str) -> None:
    rows = file_table(out)
    lines = [HEAD.format(run="\n".join(f"    {line}" for line in log), settings=settings).rstrip(), "",
             "| file | bytes | sha256 | what is special about it |", "|---|---|---|---|"]
    for rel, size, digest in rows:
        lines.append(f"| `{rel}` | {size} | `{digest}` | {describe(out, rel, size)} |")
    (out / "PROVENANCE.md").write_text("\n".join(lines) + "\n")


HEAD = """# Fixtures written by a real Apache Kafka 4.3.0 broker

Made by `tools/make_broker_fixtures.py` (run again with
`KSEG_SHARED=../shared python tools/make_broker_fixtures.py`; it rewrites this directory and this
file). The broker is `../shared/kafka` (Kafka 4.3.0, commit a9ce3221537b8653448750697915607dc7936cf3,
built from source; `kafka.sh format/start/kill/stop`), one KRaft node (broker+controller, node id 1)
on 127.0.0.1; clients are kafka-python 3.0.12. A new run gives other bytes (timestamps, producer ids,
cluster and topic ids, the cleaner's timing), the same structure.

What the script did, in order:

{run}

- `unclean-kill/` is the log directory (`log.dirs`) right after the **SIGKILL**: no
  `.kafka_cleanshutdown`; every active segment's `.index`/`.timeindex` still **preallocated**
  (4096/4092 bytes with `log.index.size.max.bytes=4096`; `__cluster_metadata-0`'s are **10 MiB**:
  Kafka's KRaft log (`KafkaRaftLog`) takes no index size setting, so they are 10485760/10485756 bytes,
  zeros past the first entries -- git stores them compressed to a few KB); producer snapshots of every
  roll; **transaction `tx-open` open** in `payments-0` (3 records, no marker, timeout 600 s); the
  compacted topic right after cleaner passes, its replaced segments still there as `*.deleted` (pending
  async deletion); `__consumer_offsets-0` with group `fixture-group`'s committed offsets (orders-0 at
  17, orders-1 at 18); `__cluster_metadata-0` with KRaft snapshots (`*.checkpoint`) and
  `quorum-state`; the checkpoint files as the 1 s checkpoint tasks last wrote them
  (`recovery-point-offset-checkpoint` is behind the log ends: the active segments were never flushed).
- `restarted-clean/` is the same directory after the **next start for real**: the broker was started
  again on it (Kafka's log recovery ran), left 3 s, then stopped with SIGTERM (controlled shutdown:
  `.kafka_cleanshutdown` present, indexes trimmed, snapshots at the log ends). The transaction
  `tx-open` is still open (its timeout is 600 s). Compare it with what LoadLogDir and `kseg triage`
  predict for `unclean-kill/` (tests/interop/test_broker_fixtures.py).
- `server.properties` is the broker's configuration (`<WORK>` = the temporary directory of the run).

The tests (`tests/interop/test_broker_fixtures.py`, `tests/broker/test_repair_end_to_end.py`,
`tests/test_fixtures.py`) pin these files: after a new run, update their pinned values (`EXPECTED_LOAD`)
from Kafka's LoadLogDir on the new files.

Broker settings beyond Kafka's defaults (kafka.sh's own, then the script's, which win):

```properties
{settings}
```

Topics: `orders` (2 partitions, `internal.segment.bytes=1024`: many small segments), `payments`
(1 partition), `compacted` (1 partition, `cleanup.policy=compact`, `internal.segment.bytes=1024`,
`min.cleanable.dirty.ratio=0.01`, `min.compaction.lag.ms=0`, `delete.retention.ms=0`).
"""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", nargs="?", type=Path, default=OUT_DEFAULT)
    parser.add_argument("--provenance-only", action="store_true", help="rewrite OUTDIR/PROVENANCE.md only")
    args = parser.parse_args()
    out: Path = args.out
    if args.provenance_only:
        write_provenance(out, STEPS, (out / "server.properties").read_text())
        return 0
    log: list[str] = []
    with tempfile.TemporaryDirectory(prefix="kseg-broker-fixtures-") as tmp:
        broker = run_broker(Path(tmp), log)
        shutil.rmtree(out, ignore_errors=True)
        out.mkdir(parents=True)
        shutil.copytree(broker.data, out / "unclean-kill")
        # the next start, for real: Kafka recovers the killed log directory, then a controlled shutdown
        broker.start()
        try:
            time.sleep(3)
        finally:
            broker.stop()
        log.append(STEPS[4])
        shutil.copytree(broker.data, out / "restarted-clean")
        settings = (broker.root / "server.properties").read_text().replace(str(Path(tmp)), "<WORK>")
    (out / "server.properties").write_text(settings)
    write_provenance(out, log, settings)
    print("\n".join(log))
    return 0


if __name__ == "__main__":
    sys.exit(main())
