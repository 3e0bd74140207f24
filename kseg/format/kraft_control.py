"""Values of the KRaft control records that ``kafka-dump-log`` prints as JSON.

A control record's value for the types below is a generated Kafka message,
flexible from version 0, *without* a version prefix, read at schema version 0
(``ControlRecordUtils.deserialize*``).  Flexible encoding: compact arrays and
strings (unsigned varint ``length + 1``), UUIDs as 16 bytes, and a tagged-field
section (unsigned varint count, then tag/size/bytes) at the end of every
struct::

    SnapshotHeaderRecord   Version int16 | LastContainedLogTimestamp int64
    SnapshotFooterRecord   Version int16
    KRaftVersionRecord     Version int16 | KRaftVersion int16
    VotersRecord           Version int16 | Voters []{VoterId int32, VoterDirectoryId uuid,
                             Endpoints []{Name string, Host string, Port uint16},
                             KRaftVersionFeature {MinSupportedVersion int16, MaxSupportedVersion int16}}

The decoders return dicts keyed the way Kafka's generated JSON converters name
fields (schema name, first letter lower-cased), in schema order; UUIDs are
Kafka's base64url text.  Unknown tagged fields are skipped, as the converters
do not print them.  LEADER_CHANGE is not decoded: the dump tool prints only
its type.
"""

from __future__ import annotations

import base64
import struct
from collections.abc import Callable

from kseg.errors import InvalidRecord
from kseg.format.javautf8 import java_utf8

_INT16 = struct.Struct(">h")
_UINT16 = struct.Struct(">H")
_INT32 = struct.Struct(">i")
_INT64 = struct.Struct(">q")


class _Reader:
    """Sequential reader over one message; every overrun raises :class:`InvalidRecord`."""

    def __init__(self, data: bytes, what: str) -> None:
        self.data = data
        self.pos = 0
        self.what = what

    def _take(self, n: int) -> bytes:
        if n < 0 or self.pos + n > len(self.data):
            raise InvalidRecord(
                f"Error reading {self.what}: needed {n} byte(s) at byte {self.pos}, "
                f"only {len(self.data) - self.pos} available",
                field="control.value",
            )
        chunk = self.data[self.pos : self.pos + n]
        self.pos += n
        return chunk

    def fixed(self, fmt: struct.Struct) -> int:
        return fmt.unpack(self._take(fmt.size))[0]

    def uvarint(self) -> int:
        value = shift = 0
        for _ in range(5):
            (b,) = self._take(1)
            value |= (b & 0x7F) << shift
            if b < 0x80:
                return value
            shift += 7
        raise InvalidRecord(f"Error reading {self.what}: varint is too long", field="control.value")

    def string(self) -> str:
        length = self.uvarint() - 1
        if length < 0:
            raise InvalidRecord(f"Error reading {self.what}: non-nullable string was serialized as null", field="control.value")
        return java_utf8(self._take(length))

    def uuid(self) -> str:
        return base64.urlsafe_b64encode(self._take(16)).decode("ascii").rstrip("=")

    def array(self, element: Callable[[_Reader], dict]) -> list[dict]:
        count = self.uvarint() - 1
        if count < 0:
            raise InvalidRecord(f"Error reading {self.what}: non-nullable array was serialized as null", field="control.value")
        return [element(self) for _ in range(count)]

    def tagged_fields(self) -> None:
        for _ in range(self.uvarint()):
            self.uvarint()  # tag
            self._take(self.uvarint())


def _snapshot_header(r: _Reader) -> dict:
    out = {"version": r.fixed(_INT16), "lastContainedLogTimestamp": r.fixed(_INT64)}
    r.tagged_fields()
    return out


def _snapshot_footer(r: _Reader) -> dict:
    out = {"version": r.fixed(_INT16)}
    r.tagged_fields()
    return out


def _kraft_version(r: _Reader) -> dict:
    out = {"version": r.fixed(_INT16), "kRaftVersion": r.fixed(_INT16)}
    r.tagged_fields()
    return out


def _endpoint(r: _Reader) -> dict:
    out = {"name": r.string(), "host": r.string(), "port": r.fixed(_UINT16)}
    r.tagged_fields()
    return out


def _feature(r: _Reader) -> dict:
    out = {"minSupportedVersion": r.fixed(_INT16), "maxSupportedVersion": r.fixed(_INT16)}
    r.tagged_fields()
    return out


def _voter(r: _Reader) -> dict:
    out = {
        "voterId": r.fixed(_INT32),
        "voterDirectoryId": r.uuid(),
        "endpoints": r.array(_endpoint),
        "kRaftVersionFeature": _feature(r),
    }
    r.tagged_fields()
    return out


def _voters(r: _Reader) -> dict:
    out = {"version": r.fixed(_INT16), "voters": r.array(_voter)}
    r.tagged_fields()
    return out


#: control type id -> (label kafka-dump-log prints, decoder)
KRAFT_CONTROL_DECODERS: dict[int, tuple[str, Callable[[_Reader], dict]]] = {
    3: ("SnapshotHeader", _snapshot_header),
    4: ("SnapshotFooter", _snapshot_footer),
    5: ("KRaftVersion", _kraft_version),
    6: ("KRaftVoters", _voters),
}


def decode_kraft_control(type_id: int, value: bytes | None) -> tuple[str, dict]:
    """(label, fields) of a SNAPSHOT_HEADER/FOOTER, KRAFT_VERSION or KRAFT_VOTERS value."""
    label, decoder = KRAFT_CONTROL_DECODERS[type_id]
    if value is None:
        raise InvalidRecord(f"{label} control record has a null value", field="control.value")
    return label, decoder(_Reader(bytes(value), label))
