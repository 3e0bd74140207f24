"""Reindex from what Kafka's own reader says about each batch.

kafka-clients has no ``LogSegment`` (that lives in the broker), so Kafka's
index code cannot run here.  What *can* run is everything recovery feeds into
the index rules: ``FileRecords.batches()`` (which batches exist, where, how
big), ``batch.ensureValid()`` (where recovery stops), ``lastOffset()`` and
``maxTimestamp()`` (what goes into the entries, shallow for legacy
wrappers).  This test applies the §3.7 rules to Kafka's answers and requires
kseg's rebuild to be byte-identical, on the reindex fixtures and on segments
written by Kafka's own MemoryRecordsBuilder (magic 0, 1 and 2, compressed
wrappers, LogAppendTime, transactions).
"""

from __future__ import annotations

import hashlib
import struct
from pathlib import Path

from oracle import make_batch, make_marker_batch, make_record
from support import FIXTURES

from kseg.recovery.indexes import build_indexes
from kseg.segment import base_offset_from_name

TS = 1_700_000_000_000
INTERVAL = 4096
FIXTURE_LOGS = sorted((FIXTURES / "reindex").rglob("*.log"))


def rules_on_kafka_batches(read: dict, validate: dict, base: int) -> tuple[bytes, bytes, int]:
    """(.index, .timeindex, valid bytes) from §3.7, fed with Kafka's accessors and ensureValid()."""
    refused = {b["position"] for b in validate["batches"] if b["error"] is not None}
    index, timeindex = b"", b""
    max_ts, max_offset, last_ts = -1, -1, -1
    valid = last_indexed = 0
    for batch in read["batches"]:
        if batch["position"] in refused:
            break
        if batch["maxTimestamp"] > max_ts:
            max_ts, max_offset = batch["maxTimestamp"], batch["lastOffset"]
        if valid - last_indexed > INTERVAL:
            index += struct.pack(">ii", batch["lastOffset"] - base, valid)
            if max_ts > last_ts:
                timeindex += struct.pack(">qi", max_ts, max_offset - base)
                last_ts = max_ts
            last_indexed = valid
        valid += batch["sizeInBytes"]
    if max_ts > last_ts:
        timeindex += struct.pack(">qi", max_ts, max_offset - base)
    return index, timeindex, valid


def kafka_written(tmp_path: Path) -> dict[str, list[dict]]:
    """Segments Kafka's MemoryRecordsBuilder writes: each case big enough for several index points."""

    def noise(seed: int, size: int) -> bytes:  # incompressible enough that wrappers stay big
        return b"".join(hashlib.sha256(b"%d-%d" % (seed, j)).digest() for j in range(size // 32))

    def records(first: int, n: int, ts: int, size: int = 900) -> list[dict]:
        return [make_record(first + i, ts + i, b"k%d" % (first + i), noise(first + i, size)) for i in range(n)]

    return {
        "v0.log": [make_batch(records(i, 1, -1), magic=0) for i in range(15)],
        "v1-mixed.log": [
            make_batch(records(0, 4, TS + 50), magic=1, codec="gzip"),
            make_batch(records(4, 5, TS + 10), magic=1),
            make_batch(records(9, 3, TS), magic=1, codec="snappy", timestamp_type="LogAppendTime", log_append_time=TS + 99),
            make_batch(records(12, 6, TS + 60), magic=1, codec="lz4"),
        ],
        "v2-txn.log": [
            make_batch(records(0, 5, TS), producer_id=7, producer_epoch=0, base_sequence=0, is_transactional=True),
            make_batch(records(5, 5, TS + 20), codec="zstd"),
            make_marker_batch("ABORT", 10, TS + 30, producer_id=7, producer_epoch=0),
            make_batch(records(11, 6, TS + 5), timestamp_type="LogAppendTime", log_append_time=TS + 40),
            make_batch(records(17, 6, TS + 40)),
        ],
    }


def test_rebuild_equals_the_rules_applied_to_kafkas_batches(kafka_oracle, tmp_path):
    written = kafka_written(tmp_path)
    jobs = [{"op": "write", "out": tmp_path / name, "batches": batches} for name, batches in written.items()]
    logs = [tmp_path / name for name in written] + FIXTURE_LOGS
    jobs += [job for log in logs for job in ({"op": "read", "in": log}, {"op": "validate", "in": log})]
    results = kafka_oracle.run(jobs)
    assert all(r["ok"] for r in results[: len(written)]), results[: len(written)]
    reads = results[len(written) :]
    assert len(logs) == 9
    for i, log in enumerate(logs):
        read, validate = reads[2 * i], reads[2 * i + 1]
        base = base_offset_from_name(log) or 0
        build = build_indexes(log.read_bytes(), base)
        expected = rules_on_kafka_batches(read, validate, base)
        assert (build.offset_index, build.time_index, build.valid_bytes) == expected, log.name
        if log.parent == tmp_path:
            assert len(build.offset_index) >= 16, f"{log.name}: the case should reach index points"
