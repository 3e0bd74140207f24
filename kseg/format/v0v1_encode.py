"""Writing magic 0 and 1: messages and message sets as ``MemoryRecordsBuilder`` builds them.

The layout is the one :mod:`kseg.format.v0v1` reads.  Kept apart from the
reader because only ``convert`` and the tests write legacy data, and because
the builder's refusals (Kafka's own messages, checked against Kafka by
tests/interop) are a rule set of their own.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence

from kseg.errors import EncodeError
from kseg.format import compression
from kseg.format.crc import crc32
from kseg.format.layout import (
    LEGACY_TIMESTAMP,
    LOG_OVERHEAD,
    RECORD_OVERHEAD_V0,
    RECORD_OVERHEAD_V1,
    TIMESTAMP_TYPE_MASK,
)
from kseg.format.model import CREATE_TIME, LOG_APPEND_TIME, NO_TIMESTAMP, RecordSpec
from kseg.format.v0v1 import LENGTH

MESSAGE_START = struct.Struct(">bb")  # magic, attributes: the first bytes the message CRC covers
MESSAGE_CRC = struct.Struct(">I")  # CRC-32 of [magic, end of message)
ENTRY_OVERHEAD = struct.Struct(">qi")  # offset, size: LOG_OVERHEAD in front of each message
MAX_OFFSET_DELTA = 0x7FFFFFFF  # MemoryRecordsBuilder.recordWritten


def encode_message(magic: int, attributes: int, timestamp: int, key: bytes | None, value: bytes | None) -> bytes:
    """One message (crc .. value) as ``LegacyRecord.write`` writes it."""
    if magic not in (0, 1):
        raise EncodeError(f"Invalid magic value {magic}")
    if timestamp < 0 and timestamp != NO_TIMESTAMP:
        raise EncodeError(f"Invalid message timestamp {timestamp}")
    body = bytearray(MESSAGE_START.pack(magic, attributes))
    if magic == 1:
        body += LEGACY_TIMESTAMP.pack(timestamp)
    for part in (key, value):
        if part is None:
            body += LENGTH.pack(-1)
        else:
            body += LENGTH.pack(len(part)) + part
    return MESSAGE_CRC.pack(crc32(bytes(body))) + bytes(body)


def encode_entry(offset: int, message: bytes) -> bytes:
    """Prefix a message with its log overhead (offset, size)."""
    return ENTRY_OVERHEAD.pack(offset, len(message)) + message


def _check_records(
    records: Sequence[RecordSpec], magic: int, codec: int, previous_offset: int | None = None
) -> None:
    """What ``MemoryRecordsBuilder.appendWithOffset`` refuses, whatever the magic, with its messages.

    ``previous_offset``: the last offset of the records before these (fed in pieces).
    """
    if magic not in (0, 1):
        raise EncodeError(f"magic {magic} is not a message-set magic")
    if codec == compression.CODEC_ZSTD:
        raise EncodeError(f"ZStandard compression is not supported for magic {magic}")
    if not records:
        raise EncodeError("a message set needs at least one record")
    for spec in records:
        # Offsets strictly increase, the timestamp is checked (even at magic 0, which drops it), no headers.
        if previous_offset is not None and spec.offset <= previous_offset:
            raise EncodeError(
                f"Illegal offset {spec.offset} following previous offset {previous_offset} "
                "(Offsets must increase monotonically)."
            )
        if spec.timestamp < 0 and spec.timestamp != NO_TIMESTAMP:
            raise EncodeError(f"Invalid negative timestamp {spec.timestamp}")
        if spec.headers:
            raise EncodeError(f"Magic v{magic} does not support record headers")
        previous_offset = spec.offset


def _check_offset_deltas(records: Sequence[RecordSpec], base_offset: int) -> None:
    """``MemoryRecordsBuilder.recordWritten``, whatever the magic."""
    for spec in records:
        if spec.offset - base_offset > MAX_OFFSET_DELTA:
            raise EncodeError(
                f"Maximum offset delta exceeded, base offset: {base_offset}, last offset: {spec.offset}"
            )


def encode_message_set(
    records: Sequence[RecordSpec],
    *,
    magic: int,
    codec: int = compression.CODEC_NONE,
    level: int | None = None,
    timestamp_type: str = CREATE_TIME,
    log_append_time: int = -1,
    base_offset: int | None = None,
) -> bytes:
    """Build what ``MemoryRecordsBuilder`` builds for magic 0/1.

    Uncompressed: one entry per record at its own offset.  Compressed: one
    wrapper whose offset is the last record's offset and whose timestamp
    (magic 1) is the largest record timestamp, or ``log_append_time``; inner
    offsets are relative to ``base_offset`` for magic 1 and absolute for magic 0.
    """
    encoder = MessageSetEncoder(
        magic=magic, codec=codec, level=level, timestamp_type=timestamp_type,
        log_append_time=log_append_time, base_offset=base_offset,
    )
    if not records:
        raise EncodeError("a message set needs at least one record")
    plain = encoder.add(records)
    wrapper, _ = encoder.finish()
    assert wrapper is not None  # nothing is dropped without ``keep``
    return plain + wrapper


class MessageSetEncoder:
    """Magic 0/1 built from records fed in pieces: the bytes :func:`encode_message_set` gives for them all.

    Uncompressed, :meth:`add` returns each piece's entries at once (they stand
    alone); compressed, the inner entries are compressed as they come and
    :meth:`finish` gives the wrapper -- or, past ``keep`` bytes, only its size.
    Every check of :func:`encode_message_set` is made, in its order within each piece.
    """

    def __init__(
        self,
        *,
        magic: int,
        codec: int = compression.CODEC_NONE,
        level: int | None = None,
        timestamp_type: str = CREATE_TIME,
        log_append_time: int = -1,
        base_offset: int | None = None,
        keep: int | None = None,
    ) -> None:
        if magic not in (0, 1):
            raise EncodeError(f"magic {magic} is not a message-set magic")
        if codec == compression.CODEC_ZSTD:
            raise EncodeError(f"ZStandard compression is not supported for magic {magic}")
        self.magic, self.codec, self.level, self.keep = magic, codec, level, keep
        self.log_append = magic > 0 and timestamp_type == LOG_APPEND_TIME
        self.log_append_time = log_append_time
        self.base_offset = base_offset
        self.count = 0
        self.last_offset = 0
        self.max_timestamp = NO_TIMESTAMP
        self._compressor: compression.Compressor | None = None
        self._parts: list[bytes] | None = []
        self._payload_size = 0

    def add(self, records: Sequence[RecordSpec]) -> bytes:
        """Encode the next records; uncompressed, their entries (compressed: b"", see :meth:`finish`)."""
        if not records:
            return b""
        _check_records(records, self.magic, self.codec, self.last_offset if self.count else None)
        if self.base_offset is None:
            self.base_offset = records[0].offset
        base_offset = self.base_offset
        _check_offset_deltas(records, base_offset)
        magic, compressed = self.magic, self.codec != compression.CODEC_NONE
        inner_attributes = TIMESTAMP_TYPE_MASK if self.log_append else 0
        entries = bytearray()
        max_timestamp = self.max_timestamp
        for spec in records:
            timestamp = self.log_append_time if self.log_append else spec.timestamp
            if magic == 0:
                timestamp = NO_TIMESTAMP
            max_timestamp = max(max_timestamp, timestamp)
            inner_offset = spec.offset - base_offset if (magic > 0 and compressed) else spec.offset
            message = encode_message(magic, inner_attributes, timestamp, spec.key, spec.value)
            entries += encode_entry(inner_offset, message)
        self.max_timestamp, self.last_offset = max_timestamp, records[-1].offset
        self.count += len(records)
        if not compressed:
            return bytes(entries)
        if self._compressor is None:
            self._compressor = compression.compressor(self.codec, magic=magic, level=self.level)
        self._kept(self._compressor.compress(entries))
        return b""

    def core_target(self) -> tuple[int, int | None, None, int | None, int, bool, int | None]:
        """The compiled core's arguments for encoding the next records of this set (``convert_encode``)."""
        relative = self.magic > 0 and self.codec != compression.CODEC_NONE
        previous = self.last_offset if self.count else None
        log_append = self.log_append_time if self.log_append else None
        return (self.magic, self.base_offset, None, previous, self.max_timestamp, relative, log_append)

    def add_encoded(
        self, body: bytes, count: int, first: tuple[int, int], last_offset: int, max_timestamp: int
    ) -> bytes:
        """Entries the core encoded with :meth:`core_target`'s arguments: what :meth:`add` returns for those records."""
        if self.base_offset is None:
            self.base_offset = first[0]
        self.max_timestamp, self.last_offset = max_timestamp, last_offset
        self.count += count
        if self.codec == compression.CODEC_NONE:
            return body
        if self._compressor is None:
            self._compressor = compression.compressor(self.codec, magic=self.magic, level=self.level)
        self._kept(self._compressor.compress(body))
        return b""

    def _kept(self, piece: bytes) -> None:
        self._payload_size += len(piece)
        if self._parts is not None:
            if self.keep is not None and self._wrapper_size() > self.keep:
                self._parts = None  # too large to be written: only its size is wanted now
            else:
                self._parts.append(piece)

    def _wrapper_size(self) -> int:
        """The wrapper entry's bytes: log overhead, message overhead (null key) and the compressed value."""
        overhead = RECORD_OVERHEAD_V1 if self.magic == 1 else RECORD_OVERHEAD_V0
        return LOG_OVERHEAD + overhead + self._payload_size

    def finish(self) -> tuple[bytes | None, int]:
        """(the wrapper entry, or None when it passed ``keep``; its size) -- (b"", 0) when uncompressed."""
        if not self.count:
            raise EncodeError("a message set needs at least one record")
        if self._compressor is None:
            return b"", 0
        self._kept(self._compressor.flush())
        size = self._wrapper_size()
        if self._parts is None:
            return None, size
        inner_attributes = TIMESTAMP_TYPE_MASK if self.log_append else 0
        wrapper_timestamp = self.log_append_time if self.log_append else self.max_timestamp
        wrapper = encode_message(self.magic, self.codec | inner_attributes, wrapper_timestamp, None, b"".join(self._parts))
        return encode_entry(self.last_offset, wrapper), size
