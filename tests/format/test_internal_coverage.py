"""The fixtures hold every record kind of Kafka 4.3.0, at every version: a kind missing from them fails here.

The required sets come from kseg's 4.3.0 dispatch tables and schemas (themselves checked against Kafka
4.3.0's message definitions by tests/format/test_schema_transcription.py): the ``CoordinatorRecordType`` of
the group, share and transaction coordinators (kseg/format/internal/coordinator.py), ``MetadataRecordType``
(every ``metadata`` message with an api key, metadata/src/main/resources/common/message/), the
remote-log-metadata records (storage/src/main/resources/message/), and the control record types of
``ControlRecordType`` (clients/src/main/java/org/apache/kafka/common/record/internal/ControlRecordType.java).
A kind counts only where kseg's decoder reads a record of it completely (no problem), so a damaged
record on purpose covers nothing.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

from support import FIXTURES

from kseg.errors import KsegError
from kseg.format import BatchWalk, schemas
from kseg.format.internal import DECODERS, describe_control_record
from kseg.format.internal.coordinator import (
    OFFSETS_RECORD_TYPES,
    SHARE_STATE_RECORD_TYPES,
    TRANSACTION_RECORD_TYPES,
)
from kseg.format.messages.schema import Message

#: topic-directory prefix -> decoder name
TOPICS = {
    "__consumer_offsets": "offsets",
    "__transaction_state": "transaction-log",
    "__share_group_state": "share-group-state",
    "__remote_log_metadata": "remote-log-metadata",
    "__cluster_metadata": "cluster-metadata",
}
#: Where the fixtures that dump and the decoders are tested on live.
ROOTS = (FIXTURES / "internal" / "segments", FIXTURES / "dump", FIXTURES / "dump-kafka", FIXTURES / "real")
#: ControlRecordType of 4.3.0: ABORT 0, COMMIT 1, LEADER_CHANGE 2, SNAPSHOT_HEADER 3, SNAPSHOT_FOOTER 4,
#: KRAFT_VERSION 5, KRAFT_VOTERS 6.
CONTROL_TYPES = range(7)


def _versions(message: Message) -> set[int]:
    return set(range(message.valid.low, message.valid.high + 1))


def _decoder_for(path: Path) -> str | None:
    if path.suffix == ".checkpoint" and path.name[0].isdigit() or path.name == "bootstrap.checkpoint":
        return "cluster-metadata"
    return next((name for prefix, name in TOPICS.items() if path.parent.name.startswith(prefix + "-")), None)


def _segments(roots: tuple[Path, ...]) -> list[Path]:
    return sorted(p for root in roots for p in root.rglob("*")
                  if p.is_file() and (p.suffix in (".log", ".checkpoint")))


def found_kinds(roots: tuple[Path, ...] = ROOTS) -> dict[str, set[tuple[int, ...]]]:
    """Every (record type, version...) tuple that the fixtures hold and kseg decodes cleanly, per family."""
    found: dict[str, set[tuple[int, ...]]] = defaultdict(set)
    for path in _segments(roots):
        decoder = _decoder_for(path)
        data = path.read_bytes()
        try:
            for batch in BatchWalk(data, 0, len(data)):
                for record in batch.iter_records():
                    if batch.is_control:
                        control = describe_control_record(record.key, record.value)
                        if control.problem is None and control.type_id >= 0:
                            version = (control.data or {}).get("version", 0)
                            found["control"].add((control.type_id, version))
                    elif decoder is not None:
                        _note(found, decoder, DECODERS[decoder](record.key, record.value, record.offset))
        except KsegError:  # damaged on purpose (fixtures/dump/corrupt): what was read before still counts
            continue
    return found


def _note(found: dict[str, set[tuple[int, ...]]], decoder: str, decoded) -> None:
    if decoded.problem is not None or decoded.value is None:
        return
    key, value = decoded.key, decoded.value
    if decoder in ("offsets", "share-group-state"):
        found[decoder].add((key["type"], value["version"]))
    elif decoder == "transaction-log":
        found[decoder].add((key["version"], value["version"]))
        found["transaction-state"].add((value["data"]["transactionStatus"],))
    else:
        found[decoder].add((value["apiKey"], value["version"]))
    if decoder == "remote-log-metadata":
        data = value["data"]
        state = data.get("remoteLogSegmentState", data.get("remotePartitionDeleteState"))
        found["remote-log-state"].add((int(value["apiKey"] == 2), state))


def _coordinator_required(family: str, types: dict[int, tuple[str, str]]) -> set[tuple[int, ...]]:
    return {(record_type, version) for record_type, (_, value) in types.items()
            for version in _versions(schemas.get(family, value))}


def required_kinds() -> dict[str, set[tuple[int, ...]]]:
    """Kafka 4.3.0's record kinds, every valid value version of each."""
    metadata = schemas.by_api_key("metadata")
    return {
        "offsets": _coordinator_required("group_coordinator", OFFSETS_RECORD_TYPES),
        "share-group-state": _coordinator_required("share_coordinator", SHARE_STATE_RECORD_TYPES),
        "transaction-log": _coordinator_required("transaction_coordinator", TRANSACTION_RECORD_TYPES),
        # TransactionState of 4.3.0: Empty 0 .. PrepareEpochFence 7
        # (transaction-coordinator/src/main/java/org/apache/kafka/coordinator/transaction/TransactionState.java)
        "transaction-state": {(state,) for state in range(8)},
        "cluster-metadata": {(key, v) for key, message in metadata.items() for v in _versions(message)},
        "remote-log-metadata": {(key, v) for key, message in schemas.by_api_key("storage").items()
                                for v in _versions(message)},
        # (0, RemoteLogSegmentState: COPY_SEGMENT_STARTED 0 .. DELETE_SEGMENT_FINISHED 3) in api keys 0, 1, 3;
        # (1, RemotePartitionDeleteState: DELETE_PARTITION_MARKED 0 .. DELETE_PARTITION_FINISHED 2) in api key 2
        # (storage/api/src/main/java/org/apache/kafka/server/log/remote/storage/RemoteLogSegmentState.java,
        # RemotePartitionDeleteState.java)
        "remote-log-state": {(0, state) for state in range(4)} | {(1, state) for state in range(3)},
        "control": {(t, v) for t in CONTROL_TYPES
                    for v in (_versions(schemas.get("clients", "LeaderChangeMessage")) if t == 2 else {0})},
    }


def test_fixtures_hold_every_record_kind_of_kafka_4_3():
    found, required = found_kinds(), required_kinds()
    missing = {family: sorted(kinds - found[family]) for family, kinds in required.items() if kinds - found[family]}
    assert missing == {}


def test_every_control_record_type_is_also_written_by_kafka():
    """kafka-clients 4.3.0 has the control records' classes (MemoryRecords.with*): fixtures/dump-kafka holds
    every type, LeaderChange at both versions, written by them (tests/interop/KraftControl.java)."""
    assert found_kinds((FIXTURES / "dump-kafka",))["control"] == required_kinds()["control"]


def test_the_required_sets_are_kafka_4_3s():
    """Pins the tables the coverage is measured against (a table shrinking would weaken the test above)."""
    required = required_kinds()
    assert {t for t, _ in required["offsets"]} == {*range(9), *range(10, 18), *range(19, 24)}
    assert {t for t, _ in required["cluster-metadata"]} == {*range(6), *range(7, 13), 14, 15, *range(17, 29)}
    assert {t for t, _ in required["remote-log-metadata"]} == {0, 1, 2, 3}
    assert {v for t, v in required["offsets"] if t == 1} == {0, 1, 2, 3, 4}
    assert {v for t, v in required["cluster-metadata"] if t == 0} == {0, 1, 2, 3, 4}
    assert required["transaction-log"] == {(0, 0), (0, 1)}
    assert {(2, 0), (2, 1), (0, 0), (6, 0)} <= required["control"]
