"""Control records: the records of a V2 batch with the control attribute bit set.

Key (``ControlRecordType``)::

    version  int16   current 0; a negative version is invalid, higher ones are read as 0
    type     int16   0 ABORT, 1 COMMIT, 2 LEADER_CHANGE, 3 SNAPSHOT_HEADER,
                     4 SNAPSHOT_FOOTER, 5 KRAFT_VERSION, 6 KRAFT_VOTERS; others UNKNOWN (-1)

Value of ABORT/COMMIT (``EndTransactionMarker``)::

    version            int16   current 0
    coordinator_epoch  int32

The KRaft types carry generated messages (decoded by the internal-topic
decoders, not here).
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

from kseg.errors import InvalidRecord

CONTROL_KEY = struct.Struct(
    ">h"  # version
    "h"  # type
)
END_TXN_MARKER = struct.Struct(
    ">h"  # version
    "i"  # coordinator_epoch
)

ABORT, COMMIT = 0, 1
CONTROL_TYPE_NAMES = {
    0: "ABORT",
    1: "COMMIT",
    2: "LEADER_CHANGE",
    3: "SNAPSHOT_HEADER",
    4: "SNAPSHOT_FOOTER",
    5: "KRAFT_VERSION",
    6: "KRAFT_VOTERS",
}
UNKNOWN_CONTROL_TYPE = -1


@dataclass(frozen=True, slots=True)
class ControlKey:
    """A parsed control-record key; ``type_id`` is -1 (UNKNOWN) for ids Kafka does not know."""

    version: int
    type_id: int
    raw_type: int

    @property
    def name(self) -> str:
        return CONTROL_TYPE_NAMES.get(self.type_id, "UNKNOWN")


@dataclass(frozen=True, slots=True)
class EndTxnMarker:
    """The value of a COMMIT or ABORT control record."""

    version: int
    coordinator_epoch: int


def decode_control_key(key: bytes | None) -> ControlKey:
    """Parse a control key as ``ControlRecordType.parse`` does."""
    size = 0 if key is None else len(key)
    if key is None or size < CONTROL_KEY.size:
        raise InvalidRecord(
            "Invalid value size found for control record key. "
            f"Must have at least {CONTROL_KEY.size} bytes, but found only {size}",
            field="control.key",
        )
    version, raw_type = CONTROL_KEY.unpack_from(key)
    if version < 0:
        raise InvalidRecord(f"Invalid version found for control record: {version}. May indicate data corruption", field="control.key.version")
    type_id = raw_type if raw_type in CONTROL_TYPE_NAMES else UNKNOWN_CONTROL_TYPE
    return ControlKey(version, type_id, raw_type)


def decode_end_txn_marker(value: bytes | None) -> EndTxnMarker:
    """Parse an ABORT/COMMIT value as ``EndTransactionMarker.deserializeValue`` does."""
    size = 0 if value is None else len(value)
    if value is None or size < END_TXN_MARKER.size:
        raise InvalidRecord(
            "Invalid value size found for end transaction marker. "
            f"Must have at least {END_TXN_MARKER.size} bytes, but found only {size}",
            field="control.value",
        )
    version, coordinator_epoch = END_TXN_MARKER.unpack_from(value)
    if version < 0:
        raise InvalidRecord(f"Invalid version found for end transaction marker: {version}. May indicate data corruption", field="control.value.version")
    return EndTxnMarker(version, coordinator_epoch)


def encode_control_key(type_id: int, version: int = 0) -> bytes:
    """Key bytes of a control record."""
    return CONTROL_KEY.pack(version, type_id)


def encode_end_txn_marker(coordinator_epoch: int, version: int = 0) -> bytes:
    """Value bytes of a COMMIT/ABORT control record."""
    return END_TXN_MARKER.pack(version, coordinator_epoch)
