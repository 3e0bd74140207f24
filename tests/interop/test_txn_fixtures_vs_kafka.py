"""fixtures/txn against Kafka 4.3.0's own classes: rebuilt byte for byte, and read the same by both.

1. ``fixtures/txn/make_fixtures.py`` rebuilds the log directory with kafka-clients' ``MemoryRecordsBuilder``
   (data batches with producer ids, epochs and the transactional flag; ``EndTransactionMarker`` control
   batches): every file must be byte-identical to the committed one, so the committed fixtures are what
   Kafka writes for these inputs.
2. What ``kseg txn`` replays from each batch -- base and last offset, producer id and epoch, sequences,
   max timestamp, the transactional and control flags, and each marker's type and coordinator epoch -- is
   what Kafka's ``FileRecords`` reader reports for the same files (``ProducerAppendInfo.append`` reads
   exactly these accessors).
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

from support import FIXTURES

from kseg.format.control import decode_control_key, decode_end_txn_marker
from kseg.segment import open_segment

TXN = FIXTURES / "txn"


def _generator():
    spec = importlib.util.spec_from_file_location("txn_make_fixtures", TXN / "make_fixtures.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_generator_rebuilds_every_committed_file_byte_for_byte(kafka_oracle, tmp_path):
    made = _generator().build(kafka_oracle, tmp_path)
    committed = {str(p.relative_to(TXN / "logs")): p.read_bytes() for p in (TXN / "logs").rglob("*") if p.is_file()}
    assert sorted(made) == sorted(committed)
    assert [name for name in made if made[name] != committed[name]] == []


def _kseg_view(log: Path) -> list[dict]:
    out = []
    with open_segment(log) as seg:
        for b in seg.iter_batches():
            view = {"baseOffset": b.base_offset, "lastOffset": b.last_offset, "maxTimestamp": b.max_timestamp,
                    "producerId": b.producer_id, "producerEpoch": b.producer_epoch,
                    "baseSequence": b.base_sequence, "lastSequence": b.last_sequence,
                    "isTransactional": b.is_transactional, "isControlBatch": b.is_control}
            if b.is_control:
                record = next(iter(b.iter_records()))
                key = decode_control_key(record.key)
                view["marker"] = (key.name, decode_end_txn_marker(record.value).coordinator_epoch)
            out.append(view)
    return out


def _kafka_view(result: dict) -> list[dict]:
    keys = ("baseOffset", "lastOffset", "maxTimestamp", "producerId", "producerEpoch", "baseSequence",
            "lastSequence", "isTransactional", "isControlBatch")
    out = []
    for batch in result["batches"]:
        view = {k: batch[k] for k in keys}
        if batch["isControlBatch"]:
            control = batch["records"][0]["control"]
            view["marker"] = (control["type"], control["coordinatorEpoch"])
        out.append(view)
    return out


def test_kseg_reads_the_producer_fields_kafka_reads(kafka_oracle):
    logs = sorted((TXN / "logs").rglob("*.log"))
    results = kafka_oracle.run([{"op": "read", "in": log} for log in logs])
    for log, result in zip(logs, results, strict=True):
        assert result["ok"] and result["error"] is None, (log, result)
        assert _kseg_view(log) == _kafka_view(result), log
    markers = [v["marker"] for log in logs for v in _kseg_view(log) if "marker" in v]
    assert sorted(set(markers)) == [("ABORT", 0), ("ABORT", 1), ("ABORT", 2), ("ABORT", 3),
                                    ("COMMIT", 0), ("COMMIT", 1), ("COMMIT", 2), ("COMMIT", 3)]
