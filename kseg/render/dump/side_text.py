"""kseg's text for the side files Kafka's tool does not dump.

The lines follow its style ("name: value" pairs, a header line like "Log
starting offset: 0"), with Kafka's field names.
"""

from __future__ import annotations

import json

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

CHECKPOINT_LABELS = {
    "leader-epoch-checkpoint": "Leader epoch checkpoint",
    "recovery-point-offset-checkpoint": "Recovery point checkpoint",
    "replication-offset-checkpoint": "High watermark checkpoint",
    "log-start-offset-checkpoint": "Log start offset checkpoint",
    "cleaner-offset-checkpoint": "Cleaner offset checkpoint",
}


def _checkpoint_start_text(e: CheckpointStart) -> str:
    label = CHECKPOINT_LABELS[e.kind]
    if e.empty:
        return f"{label} is empty."
    return f"{label} version: {e.version}, entries: {'none' if e.declared is None else e.declared}"


def _json_value_text(value: object) -> str:
    """A quorum-state value: numbers as they are, anything else as compact JSON (strings quoted)."""
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _clean_shutdown_text(e: CleanShutdownEvent) -> str:
    if e.empty:
        return "Clean shutdown marker (empty)"
    epoch = "none" if e.broker_epoch is None else e.broker_epoch
    return f"Clean shutdown marker version: {e.version}, brokerEpoch: {epoch}"


def side_file_lines(event: SideEvent) -> list[str]:
    """kseg's lines for a side-file event (one, but meta.properties has one per comment and property)."""
    match event:
        case CheckpointStart():
            return [_checkpoint_start_text(event)]
        case LeaderEpochEntry(epoch=epoch, start_offset=start_offset):
            return [f"epoch: {epoch} startOffset: {start_offset}"]
        case OffsetCheckpointEntry(topic=topic, partition=partition, offset=offset):
            return [f"topic: {topic} partition: {partition} offset: {offset}"]
        case PartitionMetadataEvent(version=version, topic_id=topic_id):
            return [f"Partition metadata version: {version}, topicId: {topic_id}"]
        case QuorumStateEvent(data=data):
            return [" ".join(f"{k}: {_json_value_text(v)}" for k, v in data.items())]
        case CleanShutdownEvent():
            return [_clean_shutdown_text(event)]
        case MetaPropertiesEvent(comments=comments, properties=properties):
            return [*comments, *(f"{key}: {value}" for key, value in properties)]


def side_file_text(event: SideEvent) -> str:
    """One line of kseg's text for a side-file event other than meta.properties."""
    return side_file_lines(event)[0]
