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
from kseg.format.layout import LEGACY_TIMESTAMP, TIMESTAMP_TYPE_MASK
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


def _check_records(records: Sequence[RecordSpec], magic: int, codec: int) -> None:
    """What ``MemoryRecordsBuilder.appendWithOffset`` refuses, whatever the magic, with its messages."""
    if magic not in (0, 1):
        raise EncodeError(f"magic {magic} is not a message-set magic")
    if codec == compression.CODEC_ZSTD:
        raise EncodeError(f"ZStandard compression is not supported for magic {magic}")
    if not records:
        raise EncodeError("a message set needs at least one record")
    previous_offset = None
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
    _check_records(records, magic, codec)
    if base_offset is None:
        base_offset = records[0].offset
    _check_offset_deltas(records, base_offset)
    log_append = magic > 0 and timestamp_type == LOG_APPEND_TIME
    inner_attributes = TIMESTAMP_TYPE_MASK if log_append else 0
    entries = bytearray()
    max_timestamp = NO_TIMESTAMP
    for spec in records:
        timestamp = log_append_time if log_append else spec.timestamp
        if magic == 0:
            timestamp = NO_TIMESTAMP
        max_timestamp = max(max_timestamp, timestamp)
        inner_offset = spec.offset - base_offset if (magic > 0 and codec != compression.CODEC_NONE) else spec.offset
        message = encode_message(magic, inner_attributes, timestamp, spec.key, spec.value)
        entries += encode_entry(inner_offset, message)
    if codec == compression.CODEC_NONE:
        return bytes(entries)
    compressed = compression.compress(codec, bytes(entries), magic=magic, level=level)
    wrapper_timestamp = log_append_time if log_append else max_timestamp
    wrapper = encode_message(magic, codec | inner_attributes, wrapper_timestamp, None, compressed)
    return encode_entry(records[-1].offset, wrapper)
