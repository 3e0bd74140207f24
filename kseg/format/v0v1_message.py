"""One V0/V1 message (``LegacyRecord``): its fields, its key and value read with every length
checked, and the record it makes (``_shallow_record``).  Shared by :mod:`kseg.format.v0v1` (a
top-level message) and :mod:`kseg.format.v0v1_deep` (a wrapper's inner messages); the layout is
in :mod:`kseg.format.v0v1`'s docstring.
"""

from __future__ import annotations

import struct

from kseg.errors import Corrupt, InvalidRecord, Truncated
from kseg.format.crc import crc32
from kseg.format.layout import (
    LEGACY_HEADER,
    LEGACY_TIMESTAMP,
    LEGACY_TIMESTAMP_OFFSET,
    LOG_OVERHEAD,
    MAGIC_OFFSET,
    RECORD_OVERHEAD_V0,
    SIZE_OFFSET,
    TIMESTAMP_TYPE_MASK,
    Buffer,
)
from kseg.format.model import (
    CREATE_TIME,
    LOG_APPEND_TIME,
    NO_SEQUENCE,
    NO_TIMESTAMP,
    NO_TIMESTAMP_TYPE,
    Record,
)

LENGTH = struct.Struct(">i")  # key and value lengths
KEY_SIZE_OFFSET_V0 = 6  # from the start of the message (the crc)
KEY_SIZE_OFFSET_V1 = 14
_INT64_MIN = -(1 << 63)


def _key_size_offset(magic: int) -> int:
    """Kafka reads every magic other than 0 with the V1 layout."""
    return KEY_SIZE_OFFSET_V0 if magic == 0 else KEY_SIZE_OFFSET_V1


class _Message:
    """The fields of one legacy message located at ``position`` (its log entry start) in ``buf``."""

    __slots__ = ("attributes", "buf", "crc", "magic", "message_size", "offset", "position", "timestamp_field")

    def __init__(self, buf: Buffer, position: int, limit: int | None = None) -> None:
        limit = len(buf) if limit is None else limit
        if position + LEGACY_HEADER.size > limit:
            raise Truncated("message header runs past the end of the data", offset=position, field="message")
        self.buf = buf
        self.position = position
        self.offset, self.message_size, self.crc, self.magic, attributes = LEGACY_HEADER.unpack_from(
            buf, position
        )
        self.attributes = attributes & 0xFF
        self.timestamp_field = NO_TIMESTAMP
        if self.magic != 0 and position + LEGACY_TIMESTAMP_OFFSET + LEGACY_TIMESTAMP.size <= limit:
            (self.timestamp_field,) = LEGACY_TIMESTAMP.unpack_from(buf, position + LEGACY_TIMESTAMP_OFFSET)

    @property
    def size(self) -> int:
        return LOG_OVERHEAD + self.message_size

    @property
    def end(self) -> int:
        return self.position + self.size

    def compute_crc(self) -> int:
        start = self.position + MAGIC_OFFSET
        end = min(self.end, len(self.buf))
        return crc32(memoryview(self.buf)[start:end]) if end > start else 0

    def is_valid(self) -> bool:
        return self.message_size >= RECORD_OVERHEAD_V0 and self.crc == self.compute_crc()

    def key_and_value(self) -> tuple[int, bytes | None, int, bytes | None]:
        """(key_size, key, value_size, value), bounds-checked against the message end."""
        end = min(self.end, len(self.buf))
        pos = self.position + LOG_OVERHEAD + _key_size_offset(self.magic)
        key_size, key, pos = _read_sized(self.buf, pos, end, "message.key")
        value_size, value, _ = _read_sized(self.buf, pos, end, "message.value")
        return key_size, key, value_size, value


def _read_sized(buf: Buffer, pos: int, end: int, field: str) -> tuple[int, bytes | None, int]:
    if pos + LENGTH.size > end:
        raise InvalidRecord(f"{field} length runs past the end of the message", offset=pos, field=field)
    (size,) = LENGTH.unpack_from(buf, pos)
    pos += LENGTH.size
    if size < 0:
        return size, None, pos
    if size > end - pos:
        raise InvalidRecord(
            f"{field} of {size} bytes runs past the end of the message ({end - pos} bytes left)",
            offset=pos - LENGTH.size,
            field=field,
        )
    return size, bytes(buf[pos : pos + size]), pos + size


def _shallow_record(msg: _Message, timestamp: int | None = None, timestamp_type: str | None = None) -> Record:
    """A message as a record; ``timestamp``/``timestamp_type`` override it under a magic-1 wrapper."""
    if msg.message_size < RECORD_OVERHEAD_V0:
        raise Corrupt(
            f"Record size is less than the minimum record overhead ({RECORD_OVERHEAD_V0})",
            offset=msg.position + SIZE_OFFSET,
            field="message.size",
        )
    key_size, key, value_size, value = msg.key_and_value()
    if msg.magic == 0:
        ts, ts_type = NO_TIMESTAMP, NO_TIMESTAMP_TYPE
    else:
        own_type = LOG_APPEND_TIME if msg.attributes & TIMESTAMP_TYPE_MASK else CREATE_TIME
        ts_type = timestamp_type or own_type
        ts = timestamp if (timestamp is not None and ts_type == LOG_APPEND_TIME) else msg.timestamp_field
    return Record(
        msg.offset,
        ts,
        key,
        value,
        (),
        NO_SEQUENCE,
        msg.attributes,
        key_size,
        value_size,
        msg.magic,
        msg.crc,
        msg.is_valid(),
        False,
        ts_type,
    )
