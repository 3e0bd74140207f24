"""``toString()`` of the objects ``RemoteLogMetadataSerde.deserialize`` builds (``--remote-log-metadata-decoder``).

kafka-dump-log prints these records as Java objects, not JSON:
:func:`remote_log_metadata_text` rebuilds that text from the decoded record
(``storage/api/.../RemoteLogSegmentMetadata.java`` and siblings), including
the checks their constructors make, which raise :class:`JavaException`.
"""

from __future__ import annotations

import base64
from typing import Any

from kseg.errors import InvalidRecord

SEGMENT_STATES = {0: "COPY_SEGMENT_STARTED", 1: "COPY_SEGMENT_FINISHED", 2: "DELETE_SEGMENT_STARTED",
                  3: "DELETE_SEGMENT_FINISHED"}
PARTITION_DELETE_STATES = {0: "DELETE_PARTITION_MARKED", 1: "DELETE_PARTITION_STARTED",
                           2: "DELETE_PARTITION_FINISHED"}


class JavaException(InvalidRecord):
    """What a Java constructor would throw; ``kafka_message`` is its ``getMessage()``."""

    def __init__(self, kafka_message: str, explanation: str) -> None:
        super().__init__(explanation, field="value")
        self.kafka_message = kafka_message


def _topic_id_partition(entry: dict[str, Any]) -> str:
    """``TopicIdPartition.toString``: ``<topicId>:<topic>-<partition>``."""
    return f"{entry['id']}:{entry['name']}-{entry['partition']}"


def _custom_metadata(value: str | None) -> str:
    """``Optional<CustomMetadata>.toString``."""
    if value is None:
        return "Optional.empty"
    return f"Optional[CustomMetadata{{{len(base64.b64decode(value))} bytes}}]"


def _leader_epochs(entries: list[dict[str, Any]]) -> str:
    """A ``HashMap`` of the entries (last one wins) copied into a ``TreeMap``, printed ``{k=v, ...}``."""
    if not entries:
        raise JavaException("segmentLeaderEpochs can not be null or empty", "no segment leader epochs")
    epochs = {entry["leaderEpoch"]: entry["offset"] for entry in entries}
    return "{" + ", ".join(f"{k}={epochs[k]}" for k in sorted(epochs)) + "}"


def _state(states: dict[int, str], state_id: int, null_message: str) -> str:
    """``RemoteLogSegmentState.forId`` (null for an unknown id, which the constructor then rejects)."""
    if state_id not in states:
        raise JavaException(null_message, f"unknown state id {state_id}")
    return states[state_id]


def _segment_metadata(data: dict[str, Any]) -> str:
    start, end = data["startOffset"], data["endOffset"]
    if start < 0:
        raise JavaException(
            f"Unexpected start offset = {start}. StartOffset for a remote segment cannot be negative",
            "negative start offset",
        )
    if end < start:
        raise JavaException(
            f"Unexpected end offset = {end}. EndOffset for a remote segment cannot be less than "
            f"startOffset = {start}",
            "end offset before start offset",
        )
    epochs = _leader_epochs(data["segmentLeaderEpochs"])
    state = _state(SEGMENT_STATES, data["remoteLogSegmentState"], "state can not be null")
    segment_id = data["remoteLogSegmentId"]
    return (
        "RemoteLogSegmentMetadata{remoteLogSegmentId="
        f"RemoteLogSegmentId{{topicIdPartition={_topic_id_partition(segment_id['topicIdPartition'])}, "
        f"id={segment_id['id']}}}, startOffset={start}, endOffset={end}, brokerId={data['brokerId']}, "
        f"maxTimestampMs={data['maxTimestampMs']}, eventTimestampMs={data['eventTimestampMs']}, "
        f"segmentLeaderEpochs={epochs}, segmentSizeInBytes={data['segmentSizeInBytes']}, "
        f"customMetadata={_custom_metadata(data.get('customMetadata'))}, state={state}"
    )


def _txn_idx_empty(data: dict[str, Any]) -> str:
    """``, txnIdxEmpty=<bool>`` (tagged field TxnIndexEmpty, default false: RemoteLogSegmentMetadataRecord.json)."""
    return f", txnIdxEmpty={'true' if data.get('txnIndexEmpty', False) else 'false'}"


def _segment_update(data: dict[str, Any]) -> str:
    state = _state(SEGMENT_STATES, data["remoteLogSegmentState"], "state can not be null")
    segment_id = data["remoteLogSegmentId"]
    return (
        "RemoteLogSegmentMetadataUpdate{remoteLogSegmentId="
        f"RemoteLogSegmentId{{topicIdPartition={_topic_id_partition(segment_id['topicIdPartition'])}, "
        f"id={segment_id['id']}}}, customMetadata={_custom_metadata(data.get('customMetadata'))}, "
        f"state={state}, eventTimestampMs={data['eventTimestampMs']}, brokerId={data['brokerId']}}}"
    )


def _partition_delete(data: dict[str, Any]) -> str:
    state = _state(PARTITION_DELETE_STATES, data["remotePartitionDeleteState"], "null")
    return (
        f"RemotePartitionDeleteMetadata{{topicPartition={_topic_id_partition(data['topicIdPartition'])}, "
        f"state={state}, eventTimestampMs={data['eventTimestampMs']}, brokerId={data['brokerId']}}}"
    )


def _segment_snapshot(data: dict[str, Any]) -> str:
    state = _state(SEGMENT_STATES, data["remoteLogSegmentState"], "state can not be null")
    epochs = _leader_epochs(data["segmentLeaderEpochs"])
    return (
        f"RemoteLogSegmentMetadataSnapshot{{segmentId={data['segmentId']}, "
        f"startOffset={data['startOffset']}, "
        f"endOffset={data['endOffset']}, maxTimestampMs={data['maxTimestampMs']}, "
        f"segmentLeaderEpochs={epochs}, segmentSizeInBytes={data['segmentSizeInBytes']}, "
        f"customMetadata={_custom_metadata(data.get('customMetadata'))}, state={state}"
    )


_REMOTE_TEXT = {0: _segment_metadata, 1: _segment_update, 2: _partition_delete, 3: _segment_snapshot}


def remote_log_metadata_text(api_key: int, data: dict[str, Any], *, txn_idx_empty: bool = False) -> str:
    """``RemoteLogMetadataSerde.deserialize(bytes).toString()`` for a decoded record of ``api_key`` 0-3.

    Raises :class:`JavaException` where a constructor would throw (an empty
    leader-epoch list, a negative start offset, an unknown state id, ...).
    ``txn_idx_empty``: Kafka 4.0 added ``, txnIdxEmpty=...`` to the segment and
    snapshot texts (storage/api/.../RemoteLogSegmentMetadata.java and
    storage/.../RemoteLogSegmentMetadataSnapshot.java ``toString``).
    """
    text = _REMOTE_TEXT[api_key](data)
    if api_key in (0, 3):
        text += (_txn_idx_empty(data) if txn_idx_empty else "") + "}"
    return text
