"""Magic 0 and 1: messages and message sets (``LegacyRecord``/``AbstractLegacyRecordBatch``).

Each log entry is ``offset int64 | size int32 | message``; the message is::

    crc         uint32   CRC-32 of [magic, end of message)
    magic       int8     0 or 1
    attributes  int8     bits 0-2 codec; bit 3 LogAppendTime (magic 1 only)
    timestamp   int64    magic 1 only
    keyLength   int32    negative = null
    key
    valueLength int32    negative = null
    value

A compressed message set is one *wrapper* message whose value is the
compressed concatenation of complete inner entries.  The wrapper's offset is
the **last** inner offset.  Inner offsets are absolute under a magic-0 wrapper
and relative (0, 1, ...) under a magic-1 wrapper, where
``absolute = wrapper_offset - last_inner_offset + inner_offset`` -- except that
a wrapper offset of 0 means base 0 (some librdkafka versions wrote that).
Each inner message is read with its own magic: real clients put magic-0
messages inside magic-1 wrappers, and Kafka's reader tolerates it.

Under a magic-1 wrapper, magic-1 inner messages take the wrapper's timestamp
type, and with LogAppendTime the wrapper's timestamp too.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator

from kseg.errors import Corrupt, CrcMismatch, InvalidRecord, KsegError, LimitExceeded, Truncated
from kseg.format import compression
from kseg.format.crc import crc32
from kseg.format.layout import (
    CODEC_MASK,
    LEGACY_ATTRIBUTES_OFFSET,
    LEGACY_CRC_OFFSET,
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
    NO_PARTITION_LEADER_EPOCH,
    NO_PRODUCER_EPOCH,
    NO_PRODUCER_ID,
    NO_SEQUENCE,
    NO_TIMESTAMP,
    NO_TIMESTAMP_TYPE,
    Record,
    codec_name,
    wrap_int64,
)

LENGTH = struct.Struct(">i")  # key and value lengths
KEY_SIZE_OFFSET_V0 = 6  # from the start of the message (the crc)
KEY_SIZE_OFFSET_V1 = 14


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


class LegacyBatch:
    """A magic-0/1 top-level message: one record when uncompressed, a wrapper when compressed.

    Exposes the same attributes as :class:`kseg.format.v2.V2Batch`, with the
    values Kafka's ``AbstractLegacyRecordBatch`` reports (no producer, no
    leader epoch, ``count`` None).
    """

    __slots__ = ("_cap", "_msg", "_records")

    def __init__(self, buf: Buffer, position: int) -> None:
        self._msg = _Message(buf, position)
        self._records: list[Record] | None = None
        self._cap = 0  # the read cap ``_records`` were decompressed under: another cap reads again

    # -- header values ------------------------------------------------------------
    @property
    def buf(self) -> Buffer:
        return self._msg.buf

    @property
    def position(self) -> int:
        return self._msg.position

    @property
    def size(self) -> int:
        return self._msg.size

    @property
    def magic(self) -> int:
        return self._msg.magic

    @property
    def crc(self) -> int:
        return self._msg.crc

    @property
    def attributes(self) -> int:
        return self._msg.attributes

    @property
    def codec_id(self) -> int:
        return self._msg.attributes & CODEC_MASK

    @property
    def codec(self) -> str:
        return codec_name(self.codec_id)

    @property
    def timestamp_type(self) -> str:
        if self._msg.magic == 0:
            return NO_TIMESTAMP_TYPE
        return LOG_APPEND_TIME if self._msg.attributes & TIMESTAMP_TYPE_MASK else CREATE_TIME

    @property
    def max_timestamp(self) -> int:
        return NO_TIMESTAMP if self._msg.magic == 0 else self._msg.timestamp_field

    @property
    def last_offset(self) -> int:
        return self._msg.offset

    def stored_value(self) -> bytes | None:
        """The message's value as stored (a wrapper's compressed inner messages); None when null.

        Raises InvalidRecord where a length runs past the message (``key_and_value``).
        """
        return self._msg.key_and_value()[3]

    @property
    def base_offset(self) -> int:
        """``baseOffset()`` under the default read cap; :meth:`first_offset` takes the cap."""
        return self.first_offset()

    def first_offset(self, max_decompressed: int = compression.DEFAULT_MAX_DECOMPRESSED) -> int:
        """``baseOffset()``: the first inner offset, which for a wrapper means decompressing under the cap.

        A wrapper past ``max_decompressed`` raises :class:`~kseg.errors.LimitExceeded`.
        """
        if self.codec_id == compression.CODEC_NONE:
            return self._msg.offset
        try:
            return self.records(max_decompressed)[0].offset
        except LimitExceeded:
            raise
        except KsegError:
            # Kafka decodes inner keys and values lazily: a bad inner key or value
            # length does not stop it from reporting the base offset.
            return _deep_base_offset(self._msg, max_decompressed)

    count = None
    producer_id = NO_PRODUCER_ID
    producer_epoch = NO_PRODUCER_EPOCH
    base_sequence = NO_SEQUENCE
    last_sequence = NO_SEQUENCE
    partition_leader_epoch = NO_PARTITION_LEADER_EPOCH
    is_transactional = False
    is_control = False
    delete_horizon_ms = None
    has_producer_id = False

    def lazy_sizes(self) -> tuple[int | None, int | None]:
        """(keySize, valueSize) as Kafka's lazy ``LegacyRecord`` reads this message: the stored ints, the
        value's at ``keyOffset + max(0, keySize)``; None where ``getInt`` would throw (past the message).

        Unlike :meth:`records` it does not check that the key and value fit: Kafka's dump tool prints these
        two before it slices either (:mod:`kseg.ops.dump.legacy`).
        """
        key_offset = _key_size_offset(self._msg.magic)
        key_size = self._int_in_message(key_offset)
        if key_size is None:
            return None, None
        return key_size, self._int_in_message(key_offset + LENGTH.size + max(0, key_size))

    def _int_in_message(self, offset: int) -> int | None:
        """``buffer.getInt(offset)`` on the message's bytes (from its crc); None past them."""
        start = self._msg.position + LOG_OVERHEAD
        length = min(self._msg.message_size, len(self._msg.buf) - start)
        if offset + LENGTH.size > length:
            return None
        return int(LENGTH.unpack_from(self._msg.buf, start + offset)[0])

    # -- checks -------------------------------------------------------------------
    def compute_crc(self) -> int:
        return self._msg.compute_crc()

    def is_valid(self) -> bool:
        return self._msg.is_valid()

    def ensure_valid(self) -> None:
        """Raise what ``LegacyRecord.ensureValid()`` throws, located at this message."""
        msg = self._msg
        if msg.message_size < RECORD_OVERHEAD_V0:
            raise Corrupt(
                "Record is corrupt (crc could not be retrieved as the record is too small, "
                f"size = {msg.message_size})",
                offset=msg.position + SIZE_OFFSET,
                field="message.size",
            )
        computed = msg.compute_crc()
        if computed != msg.crc:
            raise CrcMismatch(
                f"Record is corrupt (stored crc = {msg.crc}, computed crc = {computed})",
                stored=msg.crc,
                computed=computed,
                offset=msg.position + LEGACY_CRC_OFFSET,
                field="message.crc",
            )

    # -- records --------------------------------------------------------------------
    def iter_records(self, max_decompressed: int = compression.DEFAULT_MAX_DECOMPRESSED) -> Iterator[Record]:
        return iter(self.records(max_decompressed))

    def records(self, max_decompressed: int = compression.DEFAULT_MAX_DECOMPRESSED) -> list[Record]:
        """All records; a wrapper is decompressed whole, as Kafka's deep iterator does."""
        if self._records is None or (self._cap != max_decompressed and self.codec_id != compression.CODEC_NONE):
            if self.codec_id == compression.CODEC_NONE:
                self._records = [_shallow_record(self._msg)]
            else:
                self._records = None
                self._records = _deep_records(self._msg, max_decompressed)
            self._cap = max_decompressed
        return self._records

    def __repr__(self) -> str:
        return f"LegacyBatch(position={self.position}, magic={self.magic}, offset={self.last_offset}, size={self.size})"


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


def _deep_messages(wrapper: _Message, max_decompressed: int) -> tuple[list[_Message], int | None, int]:
    """Decompress a wrapper into its inner messages, as the ``DeepRecordsIterator`` constructor does.

    Returns (inner messages, absolute base offset -- None under a magic-0 wrapper, whose inner
    offsets are absolute --, file position of the wrapper's value).  Inner keys and values are
    not decoded here: Kafka reads them lazily, so ``baseOffset()`` works even when they are bad.
    """
    magic = wrapper.magic
    codec = wrapper.attributes & CODEC_MASK
    where = wrapper.position
    if magic not in (0, 1):
        raise InvalidRecord(f"Invalid wrapper magic found in legacy deep record iterator {magic}", offset=where + MAGIC_OFFSET, field="message.magic")
    if codec == compression.CODEC_ZSTD:
        raise InvalidRecord(
            f"Invalid wrapper compressionType found in legacy deep record iterator {magic}",
            offset=where + LEGACY_ATTRIBUTES_OFFSET,
            field="message.attributes",
        )
    _, _, value_size, value = wrapper.key_and_value()
    if value is None:
        raise InvalidRecord(f"Found invalid compressed record set with null value (magic = {magic})", offset=where, field="message.value")
    value_start = wrapper.end - value_size
    try:
        data = compression.decompress(codec, value, magic=magic, max_size=max_decompressed)
    except KsegError as err:
        raise err.located(value_start, "message.value")
    inner = _inner_messages(data, value_start)
    if not inner:
        raise InvalidRecord("Found invalid compressed record set with no inner records", offset=value_start, field="message.value")
    absolute_base = _absolute_base(wrapper, inner[-1].offset) if magic == 1 else None
    if absolute_base is not None and absolute_base < 0:
        absolute_base = None  # Kafka: ``if (absoluteBaseOffset >= 0)``, else the inner offsets as stored
    return inner, absolute_base, value_start


def _absolute_base(wrapper: _Message, last_inner: int) -> int:
    """The offset inner offset 0 stands for under a magic-1 wrapper (wrapper offset 0 means base 0)."""
    if wrapper.offset == 0:
        return 0
    if wrapper.offset < last_inner:
        raise InvalidRecord(
            f"Found invalid wrapper offset in compressed v1 message set, wrapper offset '{wrapper.offset}' "
            f"is less than the last inner message offset '{last_inner}' and it is not zero.",
            offset=wrapper.position,
            field="message.offset",
        )
    return wrap_int64(wrapper.offset - last_inner)  # Java long arithmetic: it may wrap to a negative base


def _check_inner_uncompressed(msg: _Message, index: int, value_start: int) -> None:
    if msg.attributes & CODEC_MASK:
        raise InvalidRecord(
            "Inner messages must not be compressed", offset=value_start, field=f"inner[{index}].attributes"
        )


def _deep_base_offset(wrapper: _Message, max_decompressed: int) -> int:
    """``baseOffset()`` of a wrapper: the first inner offset, without decoding inner keys and values."""
    inner, absolute_base, value_start = _deep_messages(wrapper, max_decompressed)
    _check_inner_uncompressed(inner[0], 0, value_start)
    return inner[0].offset if absolute_base is None else wrap_int64(absolute_base + inner[0].offset)


def _deep_records(wrapper: _Message, max_decompressed: int) -> list[Record]:
    """Decompress a wrapper and return its inner records with absolute offsets (``DeepRecordsIterator``)."""
    magic = wrapper.magic
    inner, absolute_base, value_start = _deep_messages(wrapper, max_decompressed)
    wrapper_ts = wrapper.timestamp_field if magic != 0 else None
    wrapper_type = None
    if magic != 0:
        wrapper_type = LOG_APPEND_TIME if wrapper.attributes & TIMESTAMP_TYPE_MASK else CREATE_TIME
    records = []
    for i, msg in enumerate(inner):
        _check_inner_uncompressed(msg, i, value_start)
        try:
            if msg.magic == 1 and magic == 1:
                record = _shallow_record(msg, wrapper_ts, wrapper_type)
            else:
                record = _shallow_record(msg)
        except KsegError as err:
            err.message += f" (inner message {i}, at byte {err.offset} of the decompressed value)"
            err.offset = value_start
            raise
        if absolute_base is not None:
            record = record.replace(offset=wrap_int64(absolute_base + record.offset))
        records.append(record)
    return records


def _inner_messages(data: bytes, value_start: int) -> list[_Message]:
    """Split decompressed bytes into entries the way ``DataLogInputStream.nextBatch`` does.

    An entry whose size is below the V0 minimum is corrupt; an entry cut short by
    the end of the stream silently ends the set.
    """
    messages: list[_Message] = []
    pos = 0
    end = len(data)
    while end - pos >= LOG_OVERHEAD:
        (size,) = LENGTH.unpack_from(data, pos + SIZE_OFFSET)
        if size < RECORD_OVERHEAD_V0:
            raise Corrupt(
                f"Record size is less than the minimum record overhead ({RECORD_OVERHEAD_V0})"
                f" (inner entry at byte {pos} of the decompressed value)",
                offset=value_start,
                field=f"inner[{len(messages)}].size",
            )
        if size > end - pos - LOG_OVERHEAD:
            break
        messages.append(_Message(data, pos, pos + LOG_OVERHEAD + size))
        pos += LOG_OVERHEAD + size
    return messages
