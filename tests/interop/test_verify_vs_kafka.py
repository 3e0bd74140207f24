"""``kseg verify`` against Apache Kafka's own record code.

* Every segment Kafka's ``MemoryRecordsBuilder`` writes -- every magic x codec, both timestamp types,
  headers, idempotent and transactional batches with COMMIT/ABORT markers -- verifies clean, at
  batch level and with ``--deep``.
* Damaged copies: every batch Kafka's ``isValid()`` rejects is flagged by kseg at the same byte
  position, kseg flags no batch Kafka accepts, and where Kafka's reader stops on a torn tail kseg
  reports the partial batch.

One JVM writes all the files, one reads all the damaged copies.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from oracle import make_batch, make_marker_batch, make_record

from kseg.ops.verify import verify_paths

TS = 1_700_000_000_000
CODECS = {0: ("none", "gzip", "snappy", "lz4"), 1: ("none", "gzip", "snappy", "lz4"),
          2: ("none", "gzip", "snappy", "lz4", "zstd")}


def _records(first: int, n: int, headers: bool) -> list[dict]:
    return [
        make_record(first + i, TS + (i * 7) % 5, b"key-%d" % i if i % 3 else None, b"value-%d" % i * (1 + i % 4),
                    [("h", b"x"), ("n", None)] if headers and i % 2 else [])
        for i in range(n)
    ]


def _cases() -> dict[str, list[dict]]:
    cases: dict[str, list[dict]] = {}
    for magic, codecs in CODECS.items():
        for codec in codecs:
            for ts_type in ("CreateTime", "LogAppendTime") if magic else ("CreateTime",):
                batches = [
                    make_batch(_records(10 * k, 4 + k, magic == 2), magic=magic, codec=codec, timestamp_type=ts_type,
                               log_append_time=TS + 999, partition_leader_epoch=k if magic == 2 else -1)
                    for k in range(4)
                ]
                cases[f"v{magic}-{codec}-{ts_type}"] = batches
    txn = []
    for k, kind in enumerate(("COMMIT", "ABORT", "COMMIT")):
        first = 10 * k
        txn.append(make_batch(_records(first, 3, True), producer_id=40 + k, producer_epoch=1, base_sequence=0,
                              is_transactional=True, codec="lz4"))
        txn.append(make_marker_batch(kind, first + 3, TS + 5, 40 + k, 1, coordinator_epoch=2))
    cases["v2-transactions"] = txn
    cases["v2-idempotent"] = [
        make_batch(_records(5 * k, 5, False), producer_id=9, producer_epoch=0, base_sequence=5 * k, codec="zstd")
        for k in range(3)
    ]
    return cases


CASES = _cases()


@pytest.fixture(scope="module")
def written(kafka_oracle, tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("kafka-written")
    paths = {name: root / f"{name}.log" for name in CASES}
    results = kafka_oracle.run([{"op": "write", "out": paths[name], "batches": CASES[name]} for name in CASES])
    for name, result in zip(CASES, results):
        assert result["ok"], (name, result)
    return paths


def test_every_kafka_written_segment_verifies_clean(written):
    assert len(written) == 4 + 4 * 2 + 5 * 2 + 2  # v0 x 4 codecs, v1 x 4 x 2 timestamp types, v2 x 5 x 2, +2
    for deep in (False, True):
        result = verify_paths(list(written.values()), deep=deep, jobs=1)
        assert list(result.findings()) == [], deep
        assert result.exit_code(strict=True) == 0
    assert verify_paths(list(written.values()), deep=True).summary().records == sum(
        len(b.get("records", [])) + (1 if b.get("end_txn_marker") else 0) for batches in CASES.values() for b in batches
    )


def _damaged_copies(written: dict[str, Path], root: Path) -> dict[Path, str]:
    """One bit flipped in the middle of each batch, and torn tails, of every written file."""
    copies: dict[Path, str] = {}
    for name, path in written.items():
        data = path.read_bytes()
        clean = verify_paths([path], jobs=1)
        assert clean.exit_code() == 0
        positions = _batch_positions(data)
        for k, (pos, size) in enumerate(positions):
            damaged = bytearray(data)
            damaged[pos + size // 2 + 9] ^= 0x04
            copy = root / f"{name}.flip{k}.log"
            copy.write_bytes(bytes(damaged))
            copies[copy] = name
        last_pos, last_size = positions[-1]
        for cut in (last_pos + 5, last_pos + last_size // 2, len(data) - 1):
            copy = root / f"{name}.cut{cut}.log"
            copy.write_bytes(data[:cut])
            copies[copy] = name
    return copies


def _batch_positions(data: bytes) -> list[tuple[int, int]]:
    out, pos = [], 0
    while pos < len(data):
        size = 12 + int.from_bytes(data[pos + 8 : pos + 12], "big")
        out.append((pos, size))
        pos += size
    return out


def test_kseg_flags_exactly_the_batches_kafka_rejects(written, kafka_oracle, tmp_path):
    copies = _damaged_copies(written, tmp_path)
    reads = kafka_oracle.run([{"op": "read", "in": path} for path in copies])
    checked = 0
    for (path, _name), kafka in zip(copies.items(), reads):
        assert kafka["ok"], kafka
        rejected = {b["position"] for b in kafka["batches"] if not b["isValid"]}
        result = verify_paths([path], jobs=1)
        errors = [f for f in result.findings() if f.severity == "error"]
        crc_positions = {f.position for f in errors if f.kind == "crc"}
        assert crc_positions == rejected, path.name
        if kafka["valid_bytes"] < kafka["file_size"]:
            # Kafka's reader stopped on a torn tail: kseg reports the partial batch there
            assert [(f.kind, f.position) for f in errors if f.kind == "partial-batch"] == [
                ("partial-batch", kafka["valid_bytes"])], path.name
        assert {f.kind for f in errors} <= {"crc", "partial-batch"}, path.name
        assert result.exit_code() == 1
        checked += 1
    assert checked == len(copies) > 100
