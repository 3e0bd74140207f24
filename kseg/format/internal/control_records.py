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
from kseg.format.messages import decode_message, default_value, kafka_json
from kseg.format.messages.defaults import differs_from_default
from kseg.format.messages.schema import Field

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


def _at_version(fields: tuple[Field, ...], data: dict[str, Any], version: int) -> dict[str, Any]:
    """A struct read at version 0, as the JSON converter writes it at ``version``: fields of that version
    in schema order (a field v0 lacks at its default), tagged ones only when not at their default."""
    out: dict[str, Any] = {}
    for fld in fields:
        if version not in fld.versions:
            continue
        value = data.get(fld.json_name, default_value(fld, version))
        if version in fld.tagged and not differs_from_default(fld, value, version):
            continue
        if fld.fields and isinstance(value, dict):
            value = _at_version(fld.fields, value, version)
        elif fld.fields and isinstance(value, list):
            value = [_at_version(fld.fields, item, version) if isinstance(item, dict) else item for item in value]
        out[fld.json_name] = value
    return out


def control_json_text(type_id: int, data: dict[str, Any]) -> str:
    """A KRaft control value's JSON as kafka-dump-log prints it: ``ControlRecordUtils`` reads it at
    version 0, ``printControlRecord`` writes it at the version in its ``Version`` field
    (``XJsonConverter.write(x, x.version())``): a LeaderChange with Version 1 shows each voter's
    ``voterDirectoryId`` at its default."""
    message_name, _ = KRAFT_CONTROL[type_id]
    version = data.get("version", 0)
    if not isinstance(version, int) or version < 0:
        return kafka_json(data)
    return kafka_json(_at_version(schemas.get("clients", message_name).fields, data, version))


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
            text = f"{label} {control_json_text(type_id, data)}" if label else f"controlType: {name}({type_id})"
            return ControlRecord(type_id, name, text, data)
    except KsegError as err:
        return ControlRecord(type_id, name, f"controlType: {name}({type_id})", None, err.message)
    return ControlRecord(type_id, name, f"controlType: {name}({control_key.raw_type})", None)

