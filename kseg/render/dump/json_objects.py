"""The JSON object (one output line) of every ``kseg dump`` event but batches and records.

Schemas in docs/dump.md; the batch and record lines, on the hot path, are
written by :mod:`kseg.render.dump.jsonl`.
"""

from __future__ import annotations

from typing import Any

from kseg.ops.dump import (
    BatchEvent,
    BootstrapStart,
    Event,
    FileStart,
    Ignored,
    IndexEntry,
    IndexStatus,
    LogStart,
    Notice,
    Problem,
    ProducerEntryEvent,
    RecordsEvent,
    SnapshotStart,
    Summary,
    TimeIndexEntry,
    TrailingBytes,
    TxnEntry,
)
from kseg.ops.dump.side_events import (
    CheckpointStart,
    CleanShutdownEvent,
    LeaderEpochEntry,
    MetaPropertiesEvent,
    OffsetCheckpointEntry,
    PartitionMetadataEvent,
    QuorumStateEvent,
    SideEvent,
)

JsonObject = dict[str, Any]

SUMMARY_JSON_KEYS = {
    "index_mismatch": ("index_offset", "log_offset"),
    "time_index_mismatch": ("index_timestamp", "log_timestamp"),
    "time_index_out_of_order": ("index_timestamp", "previous_timestamp"),
    "time_index_offset_not_found": ("indexed_offset", "log_offset"),
    "non_consecutive_offsets": ("offset", "next_offset"),
}


def event_objects(event: Event) -> list[JsonObject]:
    """The JSON objects (one per output line) of every event but batches and records."""
    match event:
        case FileStart(path=path, kind=kind):
            return [{"type": "file", "path": path, "kind": kind}]
        case LogStart(path=path, base_offset=base_offset):
            return [{"type": "log_start", "path": path, "base_offset": base_offset}]
        case SnapshotStart(path=path, end_offset=end_offset, epoch=epoch):
            return [{"type": "snapshot_start", "path": path, "end_offset": end_offset, "epoch": epoch}]
        case BootstrapStart(path=path):
            return [{"type": "bootstrap_snapshot", "path": path}]
        case Notice(text=text):
            return [{"type": "notice", "text": text}]
        case TrailingBytes():
            return [{"type": "trailing_bytes", "path": event.path, "name": event.name, "position": event.position,
                     "count": event.count}]
        case IndexStatus(path=path, status=status):
            return [{"type": "index_status", "path": path, "status": status}]
        case IndexEntry(path=path, offset=offset, position=position):
            return [{"type": "index_entry", "path": path, "offset": offset, "position": position}]
        case TimeIndexEntry(path=path, timestamp=timestamp, offset=offset):
            return [{"type": "time_index_entry", "path": path, "timestamp": timestamp, "offset": offset}]
        case TxnEntry():
            return [{"type": "txn_entry", "path": event.path, "version": event.version,
                     "producer_id": event.producer_id, "first_offset": event.first_offset,
                     "last_offset": event.last_offset, "last_stable_offset": event.last_stable_offset}
                    | ({"repeat": event.repeat} if event.repeat > 1 else {})]
        case ProducerEntryEvent():
            return [_producer_object(event)]
        case Ignored(path=path):
            return [{"type": "ignored", "path": path}]
        case Problem(path=path, position=position, message=message):
            return [{"type": "problem", "path": path, "position": position, "message": message}]
        case Summary(kind=kind, path=path, pairs=pairs):
            first, second = SUMMARY_JSON_KEYS[kind]
            return [{"type": kind, "path": path, first: a, second: b} for a, b in pairs]
        case BatchEvent() | RecordsEvent():
            raise TypeError(f"no JSON form for {type(event).__name__}")
        case _:
            return [side_file_object(event)]


def side_file_object(event: SideEvent) -> JsonObject:
    match event:
        case CheckpointStart():
            return {"type": "checkpoint", "path": event.path, "kind": event.kind, "version": event.version,
                    "count": event.declared}
        case LeaderEpochEntry():
            return {"type": "leader_epoch_entry", "path": event.path, "epoch": event.epoch,
                    "start_offset": event.start_offset}
        case OffsetCheckpointEntry():
            return {"type": "offset_checkpoint_entry", "path": event.path, "topic": event.topic,
                    "partition": event.partition, "offset": event.offset}
        case PartitionMetadataEvent():
            return {"type": "partition_metadata", "path": event.path, "version": event.version,
                    "topic_id": event.topic_id}
        case MetaPropertiesEvent():
            return {"type": "meta_properties", "path": event.path, "comments": list(event.comments),
                    "properties": dict(event.properties)}
        case QuorumStateEvent():
            return {"type": "quorum_state", "path": event.path, "data": event.data}
        case CleanShutdownEvent():
            return {"type": "clean_shutdown", "path": event.path, "empty": event.empty,
                    "version": event.version, "broker_epoch": event.broker_epoch}


def _producer_object(event: ProducerEntryEvent) -> JsonObject:
    e = event.entry
    batch = None
    if e.last_offset >= 0:
        batch = {"first_sequence": e.first_sequence, "last_sequence": e.last_sequence, "last_offset": e.last_offset,
                 "offset_delta": e.offset_delta, "timestamp": e.timestamp}
    return {
        "type": "producer_entry",
        "path": event.path,
        "producer_id": e.producer_id,
        "producer_epoch": e.epoch,
        "coordinator_epoch": e.coordinator_epoch,
        "current_txn_first_offset": e.current_txn_first_offset if e.current_txn_first_offset >= 0 else None,
        "last_timestamp": e.timestamp,
        "batch": batch,
    }
