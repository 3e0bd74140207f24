"""fixtures/txn: the files are those PROVENANCE.md lists, and their internal-topic records follow the schemas.

kafka-clients carries no class for ``__transaction_state`` or ``__consumer_offsets`` records, so the
generator writes their keys and values field by field; here every record is decoded through kseg's
transcription of Kafka's message schemas (transaction-coordinator's TransactionLogKey/Value.json,
group-coordinator's OffsetCommitKey/Value.json) and each field is checked, with no bytes left over.
Java is not needed: tests/interop/test_txn_fixtures_vs_kafka.py rebuilds the ``.log`` files with Kafka's classes.
"""

from __future__ import annotations

import hashlib
import re

from support import FIXTURES

from kseg.format import schemas
from kseg.format.internal import VERSION_PREFIX
from kseg.format.messages import decode_message
from kseg.format.snapshot import read_snapshot
from kseg.segment import open_segment

TXN = FIXTURES / "txn"
T0 = 1_700_000_000_000


def test_files_match_their_provenance():
    doc = (TXN / "PROVENANCE.md").read_text()
    rows = re.findall(r"^\| `(logs/[^`]+)` \| (\d+) \| `([0-9a-f]{64})` \|", doc, re.MULTILINE)
    on_disk = {str(p.relative_to(TXN)) for p in (TXN / "logs").rglob("*") if p.is_file()}
    assert {name for name, _, _ in rows} == on_disk and len(rows) == 16
    for name, size, digest in rows:
        data = (TXN / name).read_bytes()
        assert (len(data), hashlib.sha256(data).hexdigest()) == (int(size), digest), name


def _records(relative: str) -> list[tuple[int, bytes | None, bytes | None]]:
    with open_segment(TXN / "logs" / relative) as seg:
        return [(r.offset, r.key, r.value) for b in seg.iter_batches() if not b.is_control for r in b.iter_records()]


def _decode(family: str, name: str, data: bytes) -> tuple[int, dict]:
    """(version prefix, fields) of a whole message; asserts nothing is left over."""
    version = VERSION_PREFIX.unpack_from(data)[0]
    schema = schemas.get(family, name)
    decoded, end = decode_message(schema, 0 if name.endswith("Key") else version, data, VERSION_PREFIX.size)
    assert end == len(data), (name, end, len(data))
    return version, decoded


def test_transaction_state_records_follow_the_transaction_log_schema():
    found = []
    for offset, key, value in _records("__transaction_state-0/00000000000000000000.log"):
        assert key is not None and value is not None
        key_version, key_data = _decode("transaction_coordinator", "TransactionLogKey", key)
        value_version, v = _decode("transaction_coordinator", "TransactionLogValue", value)
        partitions = [(g["topic"], g["partitionIds"]) for g in v["transactionPartitions"]]
        found.append((offset, key_version, key_data["transactionalId"], value_version, v["producerId"],
                      v["producerEpoch"], v["transactionTimeoutMs"], v["transactionStatus"], partitions,
                      v["transactionLastUpdateTimestampMs"], v["transactionStartTimestampMs"]))
    # TransactionState ids: 1 Ongoing, 4 CompleteCommit, 5 CompleteAbort (TransactionState.java)
    assert found == [
        (0, 0, "orders-committer", 0, 3001, 2, 60000, 1, [("orders", [1])], T0, T0),
        (1, 0, "orders-writer", 0, 3000, 0, 60000, 1, [("orders", [0])], T0, T0),
        (2, 0, "orders-committer", 0, 3001, 2, 60000, 4, [], T0 + 500, T0),
        (3, 0, "fencer", 0, 5001, 1, 60000, 5, [], T0 + 100, T0),
    ]


def test_consumer_offsets_records_follow_the_offset_commit_schema():
    found = []
    for offset, key, value in _records("__consumer_offsets-0/00000000000000000000.log"):
        assert key is not None and value is not None
        record_type = VERSION_PREFIX.unpack_from(key)[0]
        schema = schemas.get("group_coordinator", "OffsetCommitKey")
        # Kafka 4.3.0 reads every coordinator key at its version-0 layout (the prefix is the record type:
        # OffsetCommitKey.json "validVersions": "0"; types 0 and 1 share it)
        k, end = decode_message(schema, 0, key, VERSION_PREFIX.size)
        assert end == len(key)
        version, v = _decode("group_coordinator", "OffsetCommitValue", value)
        found.append((offset, record_type, k["group"], k["topic"], k["partition"], version, v["offset"],
                      v["leaderEpoch"], v["metadata"], v["commitTimestamp"]))
    assert found == [
        (0, 1, "billing", "orders", 0, 3, 0, -1, "", T0 + 10),
        (1, 1, "billing", "orders", 1, 3, 0, -1, "", T0 + 10),
        (2, 1, "audit", "orders", 1, 3, 10, -1, "", T0 + 10),
        (3, 1, "etl", "orders", 0, 3, 4, -1, "", T0 + 20),
        (5, 1, "etl", "payments", 0, 3, 8, -1, "", T0 + 30),
    ]


def test_snapshots_hold_the_entries_provenance_describes():
    def entries(relative: str) -> list[tuple[int, ...]]:
        snap = read_snapshot((TXN / "logs" / relative).read_bytes())
        assert snap.crc_ok
        return [(e.producer_id, e.epoch, e.last_sequence, e.last_offset, e.offset_delta, e.timestamp,
                 e.coordinator_epoch, e.current_txn_first_offset) for e in snap.entries]

    assert entries("events-0/00000000000000000004.snapshot") == [
        (4000, 0, 1, 1, 1, T0, -1, 0), (4001, 0, 1, 3, 1, T0 + 1, -1, 2)]
    assert entries("events-0/00000000000000000007.snapshot") == [
        (4000, 0, 3, 5, 1, T0 + 3, 1, -1), (4001, 0, 1, 3, 1, T0 + 1, -1, 2)]
    assert entries("snapdiff-0/00000000000000000003.snapshot") == [(6000, 0, 1, 1, 1, T0, -1, 0)]
