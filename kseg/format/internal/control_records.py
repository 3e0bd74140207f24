"""Control records as kafka-dump-log prints them: transaction markers and KRaft control records.

Kafka never hands control batches to the topic decoders; ``dumpLog`` prints
their records itself, which :func:`describe_control_record` reproduces.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kseg.errors import KsegError
from kseg.format import schemas
from kseg.format.control import ABORT, COMMIT, decode_control_key, decode_end_txn_marker
from kseg.format.messages import decode_message, kafka_json

#: Control types whose value is a generated message, and the label kafka-dump-log prints before its JSON.
KRAFT_CONTROL = {
    2: ("LeaderChangeMessage", None),  # printed as "controlType: LEADER_CHANGE(2)"
    3: ("SnapshotHeaderRecord", "SnapshotHeader"),
    4: ("SnapshotFooterRecord", "SnapshotFooter"),
    5: ("KRaftVersionRecord", "KRaftVersion"),
    6: ("VotersRecord", "KRaftVoters"),
}


@dataclass(frozen=True, slots=True)
class ControlRecord:
    """A control record: the text kafka-dump-log appends to its record line, and the structured form."""

    type_id: int  # -1 for a type Kafka does not know
    name: str  # "COMMIT", "SNAPSHOT_HEADER", ... or "UNKNOWN"
    text: str  # e.g. "endTxnMarker: COMMIT coordinatorEpoch: 5", "SnapshotHeader {...}"
    data: dict[str, Any] | None
    problem: str | None = None  # why the value could not be read (kafka-dump-log would stop)

    def as_json(self) -> dict[str, Any]:
        return {"controlType": self.name, "typeId": self.type_id, "data": self.data, "problem": self.problem}


def decode_kraft_control_value(type_id: int, value: bytes | None) -> dict[str, Any]:
    """A KRaft control value (types 2-6) in its JSON converter's shape (``ControlRecordUtils``: read at v0).

    kafka-dump-log writes the JSON at the version in the record's ``Version``
    field; every field of these schemas exists from version 0, so the output is the same.
    """
    message_name, _ = KRAFT_CONTROL[type_id]
    decoded, _ = decode_message(schemas.get("clients", message_name), 0, value or b"")
    return decoded


def describe_control_record(key: bytes | None, value: bytes | None) -> ControlRecord:
    """What kafka-dump-log prints for a control record (``dumpLog``), after ``headerKeys: [...]``."""
    try:
        control_key = decode_control_key(key)
    except KsegError as err:
        return ControlRecord(-1, "UNKNOWN", f"controlType: ? ({err.message})", None, err.message)
    type_id, name = control_key.type_id, control_key.name
    try:
        if type_id in (ABORT, COMMIT):
            marker = decode_end_txn_marker(value)
            data = {"version": marker.version, "coordinatorEpoch": marker.coordinator_epoch}
            text = f"endTxnMarker: {name} coordinatorEpoch: {marker.coordinator_epoch}"
            return ControlRecord(type_id, name, text, data)
        if type_id in KRAFT_CONTROL:
            data = decode_kraft_control_value(type_id, value)
            label = KRAFT_CONTROL[type_id][1]
            text = f"{label} {kafka_json(data)}" if label else f"controlType: {name}({type_id})"
            return ControlRecord(type_id, name, text, data)
    except KsegError as err:
        return ControlRecord(type_id, name, f"controlType: {name}({type_id})", None, err.message)
    return ControlRecord(type_id, name, f"controlType: {name}({control_key.raw_type})", None)

