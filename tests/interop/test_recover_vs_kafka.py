"""``kseg recover`` against Kafka's own record code (kafka-clients, via the oracle).

* Kafka's prefix: ``LogSegment.recover`` keeps the batches ``FileRecords.batches()`` returns up to the
  first one whose ``ensureValid()`` throws (or where the iterator itself throws).  The oracle's
  ``validate`` job reports exactly those, so the prefix is computed from Kafka's answers and must equal
  the bytes kseg keeps without --salvage.
* Every output kseg writes -- Kafka's prefix and the salvaged segment -- must be accepted whole by
  Kafka's reader: every batch valid, every record valid, no bytes left over.

Inputs: the recover fixtures, and segments written by Kafka's MemoryRecordsBuilder (magic 0, 1, 2, all
codecs, transactions) damaged in each of the ways recovery meets: a flipped bit, a zeroed range, a
garbled length, truncation at random points, a garbage tail.
"""

from __future__ import annotations

import random
from pathlib import Path

from oracle import make_batch, make_marker_batch, make_record
from support import FIXTURES

from kseg.ops.recover.run import recover_path

TS = 1_700_000_000_000
LOG = "00000000000000000000.log"
FIXTURE_LOGS = sorted((FIXTURES / "recover").rglob("*.log"))


def kafka_prefix(validate: dict) -> int:
    """Bytes ``LogSegment.recover`` keeps, from Kafka's own ``ensureValid()`` verdicts."""
    for batch in validate["batches"]:
        if batch["error"] is not None:
            return batch["position"]
    return validate["valid_bytes"]


def kafka_written() -> dict[str, list[dict]]:
    """Segments Kafka's builder writes, several batches each."""

    def records(first: int, n: int, size: int = 300) -> list[dict]:
        rng = random.Random(first)
        return [
            make_record(first + i, TS + first + i, b"k%d" % (first + i), rng.randbytes(size))
            for i in range(n)
        ]

    return {
        "v2-codecs": [
            make_batch(records(0, 4)),
            make_batch(records(4, 4), codec="gzip"),
            make_batch(records(8, 4), codec="snappy"),
            make_batch(records(12, 4), codec="lz4"),
            make_batch(records(16, 4), codec="zstd"),
            make_batch(records(20, 4)),
        ],
        "v2-txn": [
            make_batch(
                records(0, 3), producer_id=7, producer_epoch=0, base_sequence=0, is_transactional=True
            ),
            make_batch(records(3, 3)),
            make_marker_batch("ABORT", 6, TS + 6, producer_id=7, producer_epoch=0),
            make_batch(
                records(7, 3), producer_id=8, producer_epoch=0, base_sequence=0, is_transactional=True
            ),
            make_marker_batch("COMMIT", 10, TS + 10, producer_id=8, producer_epoch=0),
            make_batch(records(11, 3)),
        ],
        "v1-mixed": [
            make_batch(records(0, 3), magic=1, codec="gzip"),
            make_batch(records(3, 1), magic=1),
            make_batch(records(4, 1), magic=1),
            make_batch(records(5, 3), magic=1, codec="lz4"),
            make_batch(records(8, 1), magic=1),
        ],
        "v0": [make_batch(records(i, 1), magic=0) for i in range(6)],
    }


def damaged_variants(name: str, data: bytes, sizes: list[int]) -> dict[str, bytes]:
    """The ways recovery meets damage, applied to a Kafka-written segment with batch ``sizes``."""
    starts = [sum(sizes[:i]) for i in range(len(sizes))]
    third = starts[2]
    rng = random.Random(name)
    out = {}
    flipped = bytearray(data)
    flipped[third + sizes[2] // 2] ^= 0x20
    out["flip"] = bytes(flipped)
    out["zeroed"] = data[:third] + bytes(sizes[2] + sizes[3]) + data[starts[4] :]
    out["garbled-length"] = data[: third + 8] + b"\x7f\xff\x00\x00" + data[third + 12 :]
    out["tiny-length"] = data[: third + 8] + b"\x00\x00\x00\x03" + data[third + 12 :]
    out["garbage-tail"] = data + rng.randbytes(700)
    for i, cut in enumerate(sorted(rng.sample(range(1, len(data)), 6))):
        out[f"cut-{i}"] = data[:cut]
    return {f"{name}-{kind}": value for kind, value in out.items()}


def test_kafka_prefix_and_acceptance_of_every_output(kafka_oracle, tmp_path):
    written = kafka_written()
    jobs = [{"op": "write", "out": tmp_path / f"{name}.bin", "batches": b} for name, b in written.items()]
    results = kafka_oracle.run(jobs)
    assert all(r["ok"] for r in results), results
    inputs: dict[str, Path] = {}
    for (name, _), result in zip(written.items(), results):
        data = (tmp_path / f"{name}.bin").read_bytes()
        assert len(data) == result["size"]
        for case, damaged in damaged_variants(name, data, result["batch_sizes"]).items():
            directory = tmp_path / "in" / case
            directory.mkdir(parents=True)
            (directory / LOG).write_bytes(damaged)
            inputs[case] = directory / LOG
    for log in FIXTURE_LOGS:
        inputs[str(log.relative_to(FIXTURES))] = log
    assert len(inputs) == 4 * 11 + 17

    outputs: list[tuple[str, bool, Path, int]] = []
    for case, log in inputs.items():
        for salvage in (False, True):
            out = tmp_path / "out" / f"{case.replace('/', '_')}-{'salvage' if salvage else 'kafka'}"
            report = recover_path(log, out_dir=out, salvage=salvage)
            [segment] = report.segments
            assert segment.plan.refused is None, case
            outputs.append((case, salvage, out / log.name, segment.plan.output_size))

    checks = [{"op": "validate", "in": log} for log in inputs.values()]
    checks += [{"op": "validate", "in": path} for _, _, path, _ in outputs]
    verdicts = kafka_oracle.run(checks)
    assert all(v["ok"] for v in verdicts), [v for v in verdicts if not v["ok"]][:3]
    on_inputs, on_outputs = verdicts[: len(inputs)], verdicts[len(inputs) :]

    kept = {(case, salvage): size for case, salvage, _, size in outputs}
    for (case, log), verdict in zip(inputs.items(), on_inputs):
        assert kept[(case, False)] == kafka_prefix(verdict), case
        assert kept[(case, True)] >= kept[(case, False)], case
    for (case, salvage, path, size), verdict in zip(outputs, on_outputs):
        assert verdict["file_size"] == size == path.stat().st_size, (case, salvage)
        assert verdict["all_valid"], (case, salvage, verdict["error"], verdict["batches"][:2])
    salvaged_more = [case for case in inputs if kept[(case, True)] > kept[(case, False)]]
    assert len(salvaged_more) >= 4 * 4, (
        salvaged_more
    )  # flip, zeroed and both lengths, for each written segment
