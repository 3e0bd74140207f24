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
from dataclasses import dataclass

from kseg.errors import Corrupt, CrcMismatch, InvalidRecord, KsegError, Truncated
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
from kseg.format.legacy_inner import Checked, Regions, Wrapper, inner_check, inner_records, inner_walk
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


class LegacyBatch:
    """A magic-0/1 top-level message: one record when uncompressed, a wrapper when compressed.

    Exposes the same attributes as :class:`kseg.format.v2.V2Batch`, with the
    values Kafka's ``AbstractLegacyRecordBatch`` reports (no producer, no
    leader epoch, ``count`` None).
    """

    __slots__ = ("_cap", "_msg", "_records", "_walked", "_walked_cap")

    def __init__(self, buf: Buffer, position: int) -> None:
        self._msg = _Message(buf, position)
        self._records: list[Record] | None = None
        self._cap = 0  # the read cap ``_records`` were decompressed under: another cap reads again
        self._walked: _Inner | None = None
        self._walked_cap = 0

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
        # Kafka decodes inner keys and values lazily: a bad inner key or value length does not
        # stop it from reporting the base offset (the first pass's refusal is not raised here).
        inner = self._inner(max_decompressed)
        if inner.first_compressed:
            raise _compressed_inner(0, inner.value_start)
        return inner.first if inner.base is None else wrap_int64(inner.base + inner.first)

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
        """The records, as Kafka's deep iterator gives them; a wrapper's are streamed.

        Everything the records could raise is raised here, before the first is handed out (the
        first pass, :mod:`kseg.format.legacy_inner`); the second pass decompresses again and
        builds one record at a time, so a wrapper of millions of messages is never held.
        """
        if self.codec_id == compression.CODEC_NONE:
            return iter(self.records(max_decompressed))
        inner = self._inner(max_decompressed)
        if inner.problem is not None:
            raise inner.problem.with_traceback(None)
        if inner.data is not None:
            return iter(self.records(max_decompressed))
        return _stream_records(self._msg, inner, max_decompressed)

    def records(self, max_decompressed: int = compression.DEFAULT_MAX_DECOMPRESSED) -> list[Record]:
        """All records in a list (a small wrapper's are kept; :meth:`iter_records` streams a large one)."""
        if self._records is None or (self._cap != max_decompressed and self.codec_id != compression.CODEC_NONE):
            if self.codec_id == compression.CODEC_NONE:
                self._records = [_shallow_record(self._msg)]
                self._cap = max_decompressed
                return self._records
            inner = self._inner(max_decompressed)
            if inner.problem is not None:
                raise inner.problem.with_traceback(None)
            records = list(_stream_records(self._msg, inner, max_decompressed))
            if inner.data is None:
                return records  # a large wrapper: not kept
            self._records, self._cap = records, max_decompressed
        return self._records

    def record_count(self, max_decompressed: int = compression.DEFAULT_MAX_DECOMPRESSED) -> int:
        """``len(records())`` without building them: the same errors, the first pass only."""
        if self.codec_id == compression.CODEC_NONE:
            return len(self.records(max_decompressed))
        inner = self._inner(max_decompressed)
        if inner.problem is not None:
            raise inner.problem.with_traceback(None)
        return inner.count

    def check_inner(self, max_decompressed: int = compression.DEFAULT_MAX_DECOMPRESSED) -> Checked:
        """``verify --deep``'s look at every inner message of a wrapper (:func:`legacy_inner.inner_check`),
        streamed; raises what :meth:`records` raises."""
        inner = self._inner(max_decompressed)
        if inner.problem is not None:
            raise inner.problem.with_traceback(None)
        msg = self._msg
        wrapper = Wrapper(msg.magic, inner.base, bool(msg.attributes & TIMESTAMP_TYPE_MASK), msg.timestamp_field)
        total = Checked(0, 0, 0, 0, _INT64_MIN)
        previous: int | None = None
        for buf, _at, regions in _regions(msg, inner, max_decompressed):
            got = inner_check(buf, 0, len(buf), wrapper, total.count, previous, total.largest)
            regions.consumed = got.stop
            if got.count:
                if total.count == 0:
                    total.first = got.first
                total.last = previous = got.last
                total.count += got.count
                total.largest = got.largest
                total.events += got.events
        return total

    def _inner(self, max_decompressed: int) -> _Inner:
        """The first pass over a wrapper under the cap (kept: it is a few numbers)."""
        if self._walked is None or self._walked_cap != max_decompressed:
            self._walked = None
            self._walked = _walk(self._msg, max_decompressed)
            self._walked_cap = max_decompressed
        return self._walked

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


@dataclass(frozen=True, slots=True)
class _Inner:
    """The first pass over a wrapper (``DeepRecordsIterator``'s constructor): ``count`` inner messages,
    the first and last offsets as stored, ``base`` (what inner offset 0 stands for under a magic-1
    wrapper; None: offsets as stored), where the value starts in the file, whether the first inner
    message has codec bits, the first refusal its records would raise, and the decompressed bytes
    when they are few (:data:`_KEEP`: read again from them, not decompressed again)."""

    count: int
    first: int
    last: int
    base: int | None
    value_start: int
    first_compressed: bool
    problem: KsegError | None
    data: bytes | None


#: A wrapper decompressing to at most this many bytes is kept decompressed (and its records listed)
#: between the two passes; a larger one is decompressed again, so nothing of it is held.
_KEEP = 1 << 20


def _value(wrapper: _Message) -> tuple[int, bytes, int]:
    """(codec, compressed value, its file position) of a wrapper, after the checks the
    ``DeepRecordsIterator`` constructor makes before it decompresses."""
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
    return codec, value, wrapper.end - value_size


def _chunks(wrapper: _Message, max_decompressed: int) -> Iterator[bytes | memoryview]:
    """A wrapper's decompressed value a piece at a time, codec errors located at the value."""
    codec, value, value_start = _value(wrapper)
    try:
        yield from compression.decompress_chunks(codec, value, magic=wrapper.magic, max_size=max_decompressed)
    except KsegError as err:
        raise err.located(value_start, "message.value") from None


def _walk(wrapper: _Message, max_decompressed: int) -> _Inner:
    """Decompress a wrapper once, walking its inner entries as they come (:func:`inner_walk`).

    The errors and their order are those of reading it whole: the wrapper's own, the codec's (which
    win over a bad entry seen before them: the stream is read to its end), an entry size below the
    V0 minimum, no entries, the magic-1 wrapper offset; the first record refusal is kept, not raised.
    """
    value_start = _value(wrapper)[2]
    kept: list[bytes] | None = []
    kept_size = 0
    count = first = last = 0
    first_compressed = False
    corrupt: KsegError | None = None
    problem: KsegError | None = None
    regions = Regions(_chunks(wrapper, max_decompressed))
    for buf, at in regions:
        if kept is not None:
            kept_size = len(buf) + at
            kept = None if kept_size > _KEEP else kept
        if corrupt is not None:
            regions.consumed = len(buf)  # read on for a codec error, keeping nothing
            continue
        walked = inner_walk(buf, 0, len(buf))
        if walked.count and not count:
            first, first_compressed = walked.first, walked.first_compressed
        if problem is None and walked.record_problem is not None:
            problem = _refusal(buf, walked.record_problem, count + walked.record_index, at, value_start)
        if walked.count:
            last = walked.last
        count += walked.count
        if walked.size_problem is not None:
            corrupt = Corrupt(
                f"Record size is less than the minimum record overhead ({RECORD_OVERHEAD_V0})"
                f" (inner entry at byte {at + walked.size_problem} of the decompressed value)",
                offset=value_start,
                field=f"inner[{count}].size",
            )
            regions.consumed = len(buf)
            continue
        if kept is not None:
            kept.append(bytes(buf[: walked.stop]))
        regions.consumed = walked.stop
    if corrupt is not None:
        raise corrupt
    if not count:
        raise InvalidRecord("Found invalid compressed record set with no inner records", offset=value_start, field="message.value")
    base = _absolute_base(wrapper, last) if wrapper.magic == 1 else None
    if base is not None and base < 0:
        base = None  # Kafka: ``if (absoluteBaseOffset >= 0)``, else the inner offsets as stored
    data = b"".join(kept) if kept is not None else None
    return _Inner(count, first, last, base, value_start, first_compressed, problem, data)


def _refusal(buf: Buffer, pos: int, index: int, at: int, value_start: int) -> KsegError | None:
    """The error kseg's reader raises for inner message ``index`` at ``pos`` of ``buf`` (stream byte
    ``at + pos``): codec bits, or a key or value running past the message."""
    (size,) = LENGTH.unpack_from(buf, pos + SIZE_OFFSET)
    msg = _Message(buf, pos, pos + LOG_OVERHEAD + size)
    if msg.attributes & CODEC_MASK:
        return _compressed_inner(index, value_start)
    try:
        _shallow_record(msg)
    except KsegError as err:
        where = None if err.offset is None else err.offset + at
        err.message += f" (inner message {index}, at byte {where} of the decompressed value)"
        err.offset = value_start
        return err
    return None  # pragma: no cover - inner_walk refuses only what _shallow_record refuses


def _compressed_inner(index: int, value_start: int) -> InvalidRecord:
    return InvalidRecord("Inner messages must not be compressed", offset=value_start, field=f"inner[{index}].attributes")


def _regions(
    wrapper: _Message, inner: _Inner, max_decompressed: int
) -> Iterator[tuple[Buffer, int, Regions]]:
    """The second pass's buffers of whole entries (a small wrapper's kept bytes, or decompressed
    again), each with its stream position and the :class:`Regions` to tell where the walk stopped."""
    regions = Regions(iter(()) if inner.data is not None else _chunks(wrapper, max_decompressed))
    if inner.data is not None:
        yield inner.data, 0, regions
        return
    for buf, at in regions:
        yield buf, at, regions


def _stream_records(wrapper: _Message, inner: _Inner, max_decompressed: int) -> Iterator[Record]:
    """A wrapper's inner records with absolute offsets (``DeepRecordsIterator``), one at a time.

    The compiled core builds them a run at a time (:func:`legacy_inner.inner_records`); a message it
    leaves (an inner magic other than 0 and 1) and the pure-Python path read here, one by one.
    """
    magic = wrapper.magic
    wrapper_ts = wrapper.timestamp_field if magic != 0 else None
    wrapper_type = None
    if magic != 0:
        wrapper_type = LOG_APPEND_TIME if wrapper.attributes & TIMESTAMP_TYPE_MASK else CREATE_TIME
    base = inner.base
    runs = Wrapper(magic, base, wrapper_type == LOG_APPEND_TIME, wrapper.timestamp_field)
    for buf, _at, regions in _regions(wrapper, inner, max_decompressed):
        pos, end = 0, len(buf)
        while end - pos >= LOG_OVERHEAD:
            run = inner_records(buf, pos, end, runs)
            if run:
                pos, records = run
                regions.consumed = pos
                yield from records
                continue
            (size,) = LENGTH.unpack_from(buf, pos + SIZE_OFFSET)
            if size < RECORD_OVERHEAD_V0 or size > end - pos - LOG_OVERHEAD:
                break
            msg = _Message(buf, pos, pos + LOG_OVERHEAD + size)
            pos = msg.end
            if msg.magic == 1 and magic == 1:
                record = _shallow_record(msg, wrapper_ts, wrapper_type)
            else:
                record = _shallow_record(msg)
            if base is not None:
                record = record.replace(offset=wrap_int64(base + record.offset))
            regions.consumed = pos
            yield record
        regions.consumed = pos


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
