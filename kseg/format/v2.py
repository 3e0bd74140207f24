"""Magic 2: RecordBatch and Record (``DefaultRecordBatch``/``DefaultRecord`` in kafka-clients).

Batch layout, big-endian, offsets from the start of the batch::

     0  baseOffset            int64
     8  batchLength           int32   bytes after this field (total size - 12)
    12  partitionLeaderEpoch  int32   not covered by the CRC
    16  magic                 int8    2
    17  crc                   uint32  CRC-32C of bytes [21, end of batch)
    21  attributes            int16   only the low byte is read:
                                      bits 0-2 codec, 3 LogAppendTime, 4 transactional,
                                      5 control, 6 baseTimestamp holds the delete horizon
    23  lastOffsetDelta       int32
    27  baseTimestamp         int64   first record's timestamp (not the minimum)
    35  maxTimestamp          int64
    43  producerId            int64
    51  producerEpoch         int16
    53  baseSequence          int32
    57  recordsCount          int32
    61  records               compressed as one stream when the codec is not none

Record layout (all varints zigzag)::

    length varint | attributes int8 | timestampDelta varlong | offsetDelta varint |
    keyLength varint | key | valueLength varint | value |
    headersCount varint | (headerKeyLength varint | headerKey | headerValueLength varint | headerValue)*

The CRC leaves out baseOffset, batchLength, partitionLeaderEpoch and magic so
that a broker can rewrite offsets and leader epochs without recomputing it.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator, Sequence
from operator import itemgetter

from kseg.errors import Corrupt, CrcMismatch, EncodeError, InvalidRecord, KsegError, Truncated
from kseg.format import compression
from kseg.format.crc import crc32c
from kseg.format.model import (
    CREATE_TIME,
    INT64_MAX,
    INT64_MIN,
    LOG_APPEND_TIME,
    NO_PRODUCER_EPOCH,
    NO_PRODUCER_ID,
    NO_SEQUENCE,
    NO_TIMESTAMP,
    Header,
    Record,
    RecordSpec,
    codec_name,
    increment_sequence,
    wrap_int32,
    wrap_int64,
)
from kseg.format.varint import decode_varint, decode_varlong, encode_varint, encode_varlong

MAGIC = 2
_new_tuple = tuple.__new__  # builds a Record without the keyword-friendly __new__

BATCH_HEADER = struct.Struct(
    ">q"  # base_offset
    "i"  # batch_length
    "i"  # partition_leader_epoch
    "b"  # magic
    "I"  # crc
    "h"  # attributes
    "i"  # last_offset_delta
    "q"  # base_timestamp
    "q"  # max_timestamp
    "q"  # producer_id
    "h"  # producer_epoch
    "i"  # base_sequence
    "i"  # records_count
)
RECORD_BATCH_OVERHEAD = BATCH_HEADER.size  # 61
_unpack_header = BATCH_HEADER.unpack_from
CRC_OFFSET = struct.calcsize(">qiib")  # 17
ATTRIBUTES_OFFSET = struct.calcsize(">qiibI")  # 21: the CRC covers from here
LOG_OVERHEAD = 12

CODEC_MASK = 0x07
TIMESTAMP_TYPE_MASK = 0x08
TRANSACTIONAL_MASK = 0x10
CONTROL_MASK = 0x20
DELETE_HORIZON_MASK = 0x40


class V2Batch(tuple):
    """A magic-2 record batch read in place from a buffer.

    The header is decoded on construction (one ``unpack_from``); records are
    decoded -- and decompressed -- only when :meth:`iter_records` is called.
    ``position`` is the absolute byte position of the batch in ``buf``.

    It is a tuple of the unpacked header fields plus ``(buf, position, view)``,
    with the fields as C-level properties: the batch-level walk builds one per
    batch and reads a few fields, and this keeps that cost per batch small
    (bench/bench_format.py).  ``view`` is an optional memoryview of ``buf``
    shared by a whole walk, so a CRC check slices without making a new view.
    """

    __slots__ = ()

    def __new__(cls, buf: bytes | memoryview, position: int, view: memoryview | None = None) -> V2Batch:
        if position + RECORD_BATCH_OVERHEAD <= len(buf):
            header = _unpack_header(buf, position)
        else:
            # A "batch" shorter than its own header at the end of the data: Kafka
            # cannot load it; we read what is there, zero-padded, and it is never valid.
            header = _unpack_header(bytes(buf[position:]).ljust(RECORD_BATCH_OVERHEAD, b"\0"), 0)
        return tuple.__new__(cls, header + (buf, position, view))

    base_offset: int = property(itemgetter(0))  # type: ignore[assignment]
    batch_length: int = property(itemgetter(1))  # type: ignore[assignment]
    partition_leader_epoch: int = property(itemgetter(2))  # type: ignore[assignment]
    magic: int = property(itemgetter(3))  # type: ignore[assignment]
    crc: int = property(itemgetter(4))  # type: ignore[assignment]
    raw_attributes: int = property(itemgetter(5))  # type: ignore[assignment]
    last_offset_delta: int = property(itemgetter(6))  # type: ignore[assignment]
    base_timestamp: int = property(itemgetter(7))  # type: ignore[assignment]
    max_timestamp: int = property(itemgetter(8))  # type: ignore[assignment]
    producer_id: int = property(itemgetter(9))  # type: ignore[assignment]
    producer_epoch: int = property(itemgetter(10))  # type: ignore[assignment]
    base_sequence: int = property(itemgetter(11))  # type: ignore[assignment]
    records_count: int = property(itemgetter(12))  # type: ignore[assignment]
    buf: bytes | memoryview = property(itemgetter(13))  # type: ignore[assignment]
    position: int = property(itemgetter(14))  # type: ignore[assignment]

    @property
    def attributes(self) -> int:
        """The attributes Kafka acts on: only the low byte of the int16 is ever read."""
        return self[5] & 0xFF

    @property
    def size(self) -> int:
        """Total bytes of the batch, the 12-byte log overhead included."""
        return LOG_OVERHEAD + self.batch_length

    @property
    def last_offset(self) -> int:
        return wrap_int64(self.base_offset + self.last_offset_delta)  # Java long arithmetic

    @property
    def count(self) -> int:
        """``countOrNull()``: the stored records count."""
        return self.records_count

    @property
    def codec_id(self) -> int:
        return self.attributes & CODEC_MASK

    @property
    def codec(self) -> str:
        return codec_name(self.codec_id)

    @property
    def timestamp_type(self) -> str:
        return LOG_APPEND_TIME if self.attributes & TIMESTAMP_TYPE_MASK else CREATE_TIME

    @property
    def is_transactional(self) -> bool:
        return bool(self.attributes & TRANSACTIONAL_MASK)

    @property
    def is_control(self) -> bool:
        return bool(self.attributes & CONTROL_MASK)

    @property
    def delete_horizon_ms(self) -> int | None:
        """``deleteHorizonMs()``: the base timestamp when attribute bit 6 says it is one."""
        return self.base_timestamp if self.attributes & DELETE_HORIZON_MASK else None

    @property
    def last_sequence(self) -> int:
        if self.base_sequence == NO_SEQUENCE:
            return NO_SEQUENCE
        return increment_sequence(self.base_sequence, self.last_offset_delta)

    @property
    def has_producer_id(self) -> bool:
        return self.producer_id > -1

    # -- checks ---------------------------------------------------------------

    def compute_crc(self) -> int:
        """CRC-32C over [attributes, end of batch), as far as the buffer holds it."""
        position = self[14]
        start = position + ATTRIBUTES_OFFSET
        end = min(position + LOG_OVERHEAD + self[1], len(self[13]))
        if end <= start:
            return 0
        view = self[15]
        if view is None:
            view = memoryview(self[13])
        return crc32c(view[start:end])

    def is_valid(self) -> bool:
        """``isValid()``: at least the 61-byte overhead and a matching CRC."""
        return self[1] >= RECORD_BATCH_OVERHEAD - LOG_OVERHEAD and self[4] == self.compute_crc()

    def ensure_valid(self) -> None:
        """Raise what ``ensureValid()`` throws, located at this batch."""
        if self.size < RECORD_BATCH_OVERHEAD:
            raise Corrupt(
                f"Record batch is corrupt (the size {self.size} is smaller than the minimum "
                f"allowed overhead {RECORD_BATCH_OVERHEAD})",
                offset=self.position,
                field="batch.batch_length",
            )
        computed = self.compute_crc()
        if computed != self.crc:
            raise CrcMismatch(
                f"Record is corrupt (stored crc = {self.crc}, computed crc = {computed})",
                stored=self.crc,
                computed=computed,
                offset=self.position + CRC_OFFSET,
                field="batch.crc",
            )

    # -- records --------------------------------------------------------------

    def records_region(self) -> memoryview:
        """The stored (possibly compressed) record bytes, without copying."""
        start = self.position + RECORD_BATCH_OVERHEAD
        end = self.position + self.size
        if end > len(self.buf):
            raise Truncated(
                f"batch of {self.size} bytes runs past the end of the data", offset=self.position, field="batch"
            )
        return memoryview(self.buf)[start:end]

    def iter_records(self, max_decompressed: int = compression.DEFAULT_MAX_DECOMPRESSED) -> Iterator[Record]:
        """Decode the records, decompressing first; errors are located in the file."""
        if self.batch_length < RECORD_BATCH_OVERHEAD - LOG_OVERHEAD:
            # Kafka reads the count from the batch's own bytes and fails (IndexOutOfBounds)
            # when the batch is shorter than its header; the header fields we read past
            # the batch end belong to whatever follows, so no record can be trusted.
            raise Corrupt(
                f"Record batch is corrupt (the size {self.size} is smaller than the minimum "
                f"allowed overhead {RECORD_BATCH_OVERHEAD})",
                offset=self.position + LOG_OVERHEAD - 4,
                field="batch.batch_length",
            )
        count = self.records_count
        if count < 0:
            raise InvalidRecord(
                f"Found invalid record count {count} in magic v2 batch",
                offset=self.position + BATCH_HEADER.size - 4,
                field="batch.records_count",
            )
        if count == 0:
            return iter(())
        start = self.position + RECORD_BATCH_OVERHEAD
        end = self.position + self.size
        if end > len(self.buf):
            raise Truncated(
                f"batch of {self.size} bytes runs past the end of the data", offset=self.position, field="batch"
            )
        if self.codec_id == compression.CODEC_NONE:
            # Read in place from the file's own buffer: slicing an mmap or bytes
            # gives bytes directly.  A memoryview would hand out views of the
            # file, so that (rare) case reads from one copy of the batch.
            if isinstance(self.buf, memoryview):
                data = bytes(self.buf[start:end])
                return _RecordReader(self, data, 0, end - start, None, shift=start).records()
            return _RecordReader(self, self.buf, start, end, None).records()
        try:
            data = compression.decompress(
                self.codec_id, memoryview(self.buf)[start:end], magic=MAGIC, max_size=max_decompressed
            )
        except KsegError as err:
            raise err.located(start, "batch.records")
        return _RecordReader(self, data, 0, len(data), start).records()

    def __repr__(self) -> str:
        return (
            f"V2Batch(position={self.position}, base_offset={self.base_offset}, "
            f"last_offset={self.last_offset}, count={self.records_count}, size={self.size})"
        )


class _RecordReader:
    """Decodes the records of one batch: ``DefaultRecord.readFrom``, with Kafka's bounds and messages.

    Uncompressed records are read in place (``data`` is the file buffer, the
    region is ``[start, end)``), and, as in Kafka, a record's fields are bounded
    by the end of the batch, not of the record: a wrong length shows as
    "expected to read N bytes ... but instead read M".  Decompressed records
    are read from a stream in Kafka, one record body at a time, so there the
    fields are bounded by the record's own length.

    ``compressed_at`` is None for in-place data (error positions are absolute
    file positions); otherwise it is the file position of the compressed region,
    which errors report, adding where in the decompressed bytes they happened.

    The one-byte varint case is inlined: it is by far the most common and this
    loop is the cost of a full decode (see bench/bench_format.py).
    """

    __slots__ = ("batch", "compressed_at", "data", "end", "shift", "start")

    def __init__(
        self,
        batch: V2Batch,
        data: bytes | memoryview,
        start: int,
        end: int,
        compressed_at: int | None,
        shift: int = 0,
    ) -> None:
        self.shift = shift  # added to in-place error positions when ``data`` is a copy of the region
        self.batch = batch
        self.data = data
        self.start = start
        self.end = end
        self.compressed_at = compressed_at

    def _fail(self, err: KsegError, index: int) -> KsegError:
        err.field = f"record[{index}].{err.field}" if err.field else f"record[{index}]"
        if self.compressed_at is not None:
            if err.offset is not None:
                err.message += f" (at byte {err.offset} of the decompressed records)"
            err.offset = self.compressed_at
        elif err.offset is not None:
            err.offset += self.shift
        return err

    def records(self) -> Iterator[Record]:
        batch = self.batch
        data, pos, end = self.data, self.start, self.end
        in_place = self.compressed_at is None
        log_append = batch.attributes & TIMESTAMP_TYPE_MASK
        timestamp_type = LOG_APPEND_TIME if log_append else CREATE_TIME
        base_offset = batch.base_offset
        base_timestamp = batch.base_timestamp
        max_timestamp = batch.max_timestamp
        base_sequence = batch.base_sequence
        is_control = bool(batch.attributes & CONTROL_MASK)
        # Kafka adds deltas in Java long arithmetic, wrapping past the int64 limits.  The
        # inlined varints below give deltas under 2**13, decode_varint under 2**31: only a
        # base that close to a limit needs the wrap here; long timestamp deltas wrap where read.
        near_limit = not (
            INT64_MIN + 2**31 <= base_offset <= INT64_MAX - 2**31
            and INT64_MIN + 2**13 <= base_timestamp <= INT64_MAX - 2**13
        )
        for index in range(batch.records_count):
            if pos >= end:
                raise self._fail(
                    InvalidRecord("Incorrect declared batch size, premature EOF reached", offset=pos), index
                )
            # -- length (outside Kafka's record try-block: its errors are its own)
            record_start = pos
            b = data[pos]
            if b < 0x80:
                length = (b >> 1) ^ -(b & 1)
                pos += 1
            elif pos + 1 < end and data[pos + 1] < 0x80:
                b = (b & 0x7F) | (data[pos + 1] << 7)
                length = (b >> 1) ^ -(b & 1)
                pos += 2
            else:
                try:
                    length, pos = decode_varint(data, pos, end)
                except KsegError as err:
                    raise self._fail(err, index)
            # A negative length passes Kafka's in-place check ("remaining < length"): the
            # record is then parsed up to the batch end and fails the final size check
            # ("expected to read -N bytes ... but instead read M") unless a field fails
            # first.  From a stream, Kafka cannot allocate the record buffer and reports
            # "premature EOF" (checked against Kafka in tests/interop).
            if length > end - pos or (length < 0 and not in_place):
                if in_place:
                    text = (
                        f"Invalid record size: expected {length} bytes in record payload, "
                        f"but instead the buffer has only {end - pos} remaining bytes."
                    )
                elif length < 0:
                    text = "Incorrect declared batch size, premature EOF reached"
                else:
                    text = f"Invalid record size: expected {length} bytes in record payload, but the record payload reached EOF."
                raise self._fail(InvalidRecord(text, offset=record_start, field="length"), index)
            body_start = pos
            limit = end if in_place else pos + length
            try:
                attributes = data[pos]
                pos += 1
                b = data[pos]
                if b < 0x80:
                    timestamp_delta = (b >> 1) ^ -(b & 1)
                    pos += 1
                elif data[pos + 1] < 0x80:
                    b = (b & 0x7F) | (data[pos + 1] << 7)
                    timestamp_delta = (b >> 1) ^ -(b & 1)
                    pos += 2
                else:
                    timestamp_delta, pos = decode_varlong(data, pos, limit)
                    if not INT64_MIN <= base_timestamp + timestamp_delta <= INT64_MAX:
                        timestamp_delta = wrap_int64(base_timestamp + timestamp_delta) - base_timestamp
                b = data[pos]
                if b < 0x80:
                    offset_delta = (b >> 1) ^ -(b & 1)
                    pos += 1
                elif data[pos + 1] < 0x80:
                    b = (b & 0x7F) | (data[pos + 1] << 7)
                    offset_delta = (b >> 1) ^ -(b & 1)
                    pos += 2
                else:
                    offset_delta, pos = decode_varint(data, pos, limit)
                b = data[pos]
                if b < 0x80:
                    key_size = (b >> 1) ^ -(b & 1)
                    pos += 1
                elif data[pos + 1] < 0x80:
                    b = (b & 0x7F) | (data[pos + 1] << 7)
                    key_size = (b >> 1) ^ -(b & 1)
                    pos += 2
                else:
                    key_size, pos = decode_varint(data, pos, limit)
                if key_size >= 0:
                    if key_size > limit - pos:
                        raise IndexError
                    key = data[pos : pos + key_size]
                    pos += key_size
                else:
                    key = None
                b = data[pos]
                if b < 0x80:
                    value_size = (b >> 1) ^ -(b & 1)
                    pos += 1
                elif data[pos + 1] < 0x80:
                    b = (b & 0x7F) | (data[pos + 1] << 7)
                    value_size = (b >> 1) ^ -(b & 1)
                    pos += 2
                else:
                    value_size, pos = decode_varint(data, pos, limit)
                if value_size >= 0:
                    if value_size > limit - pos:
                        raise IndexError
                    value = data[pos : pos + value_size]
                    pos += value_size
                else:
                    value = None
                b = data[pos]
                if b == 0:
                    headers: tuple[Header, ...] = ()
                    pos += 1
                else:
                    headers, pos = _decode_headers(data, pos, limit)
                if pos > limit:
                    raise IndexError
            except (IndexError, Truncated) as exc:
                # The inlined varint reads may have stepped past the batch end (into the next
                # batch) before the bounds check caught it: report the batch end, not beyond.
                where = min(getattr(exc, "offset", None) or pos, limit)
                err = InvalidRecord("Found invalid record structure", offset=where)
                raise self._fail(err, index) from None
            except InvalidRecord as err:
                if err.message.startswith(("Varint is too long", "Varlong is too long")):
                    err = InvalidRecord(f"Found invalid record structure ({err.message})", offset=err.offset)
                raise self._fail(err, index) from None
            if pos - body_start != length:
                err = InvalidRecord(
                    f"Invalid record size: expected to read {length} bytes in record payload, "
                    f"but instead read {pos - body_start}",
                    offset=record_start,
                    field="length",
                )
                raise self._fail(err, index)
            if base_sequence >= 0:
                if offset_delta >= 0:
                    sequence = base_sequence + offset_delta
                    if sequence > 0x7FFFFFFF:
                        sequence -= 0x80000000
                else:  # only in damaged batches: Kafka's int arithmetic overflows
                    sequence = increment_sequence(base_sequence, offset_delta)
            else:
                sequence = NO_SEQUENCE
            offset = base_offset + offset_delta
            timestamp = max_timestamp if log_append else base_timestamp + timestamp_delta
            if near_limit:
                offset, timestamp = wrap_int64(offset), wrap_int64(timestamp)
            yield _new_tuple(
                Record,
                (
                offset,
                timestamp,
                key,
                value,
                headers,
                sequence,
                attributes,
                key_size,
                value_size,
                MAGIC,
                None,
                None,
                is_control,
                timestamp_type,
                ),
            )
        if pos < end:
            err = InvalidRecord(
                "Incorrect declared batch size, records still remaining in file"
                + ("" if in_place else f" ({end - pos} decompressed bytes left)"),
                offset=pos,
                field="batch.records",
            )
            err = self._fail(err, batch.records_count)
            err.field = "batch.records"
            raise err


def _decode_headers(data: bytes | memoryview, pos: int, end: int) -> tuple[tuple[Header, ...], int]:
    """Headers of one record; count and key-size checks raise Kafka's own messages."""
    count, pos = decode_varint(data, pos, end)
    if count < 0:
        raise InvalidRecord(f"Found invalid number of record headers {count}", offset=pos, field="headers")
    if count > end - pos:
        raise InvalidRecord(
            f"Found invalid number of record headers. {count} is larger than the remaining size of the buffer",
            offset=pos,
            field="headers",
        )
    headers = []
    for i in range(count):
        key_size, pos = decode_varint(data, pos, end)
        if key_size < 0:
            raise InvalidRecord(f"Invalid negative header key size {key_size}", offset=pos, field=f"headers[{i}].key")
        if key_size > end - pos:
            raise IndexError
        key = data[pos : pos + key_size]
        pos += key_size
        value_size, pos = decode_varint(data, pos, end)
        if value_size >= 0:
            if value_size > end - pos:
                raise IndexError
            value = data[pos : pos + value_size]
            pos += value_size
        else:
            value = None
        headers.append((key, value))
    return tuple(headers), pos


# -- writing ---------------------------------------------------------------------


def encode_record(offset_delta: int, timestamp_delta: int, spec: RecordSpec) -> bytes:
    """Bytes of one record as ``DefaultRecord.writeTo`` writes them (attributes 0)."""
    body = bytearray(b"\x00")
    body += encode_varlong(timestamp_delta)
    body += encode_varint(offset_delta)
    _append_sized(body, spec.key)
    _append_sized(body, spec.value)
    body += encode_varint(len(spec.headers))
    for key, value in spec.headers:
        if key is None:
            raise EncodeError("Invalid null header key found in headers")
        _append_sized(body, key.encode("utf-8") if isinstance(key, str) else bytes(key))
        _append_sized(body, value)
    return encode_varint(len(body)) + bytes(body)


def _append_sized(out: bytearray, data: bytes | None) -> None:
    if data is None:
        out += encode_varint(-1)
    else:
        out += encode_varint(len(data))
        out += data


def offset_delta_of(offset: int, base_offset: int) -> int:
    """``(int) (offset - baseOffset)``, refused above Integer.MAX_VALUE as ``recordWritten`` does."""
    delta = wrap_int64(offset - base_offset)
    if delta > 0x7FFFFFFF:
        raise EncodeError(f"Maximum offset delta exceeded, base offset: {base_offset}, last offset: {offset}")
    return wrap_int32(delta)


def check_timestamp(timestamp: int) -> None:
    """Refuse a record timestamp Kafka's builder refuses: negative and not NO_TIMESTAMP (-1)."""
    if timestamp < 0 and timestamp != NO_TIMESTAMP:
        raise EncodeError(f"Invalid negative timestamp {timestamp}")


def check_producer_state(
    producer_id: int, producer_epoch: int, base_sequence: int, is_transactional: bool, is_control: bool
) -> None:
    """``MemoryRecordsBuilder.validateProducerState``: producer fields Kafka never writes.

    A transactional batch needs a producer id; a batch with a producer id needs an
    epoch other than -1 and, unless it is a control batch, a sequence >= 0.
    """
    if is_transactional and producer_id == NO_PRODUCER_ID:
        raise EncodeError("Cannot write transactional messages without a valid producer ID")
    if producer_id != NO_PRODUCER_ID:
        if producer_epoch == NO_PRODUCER_EPOCH:
            raise EncodeError("Invalid negative producer epoch")
        if base_sequence < 0 and not is_control:
            raise EncodeError("Invalid negative sequence number used")


def encode_batch(
    records: Sequence[RecordSpec],
    *,
    base_offset: int | None = None,
    codec: int = compression.CODEC_NONE,
    level: int | None = None,
    timestamp_type: str = CREATE_TIME,
    log_append_time: int = -1,
    producer_id: int = -1,
    producer_epoch: int = -1,
    base_sequence: int = -1,
    is_transactional: bool = False,
    is_control: bool = False,
    partition_leader_epoch: int = -1,
    delete_horizon_ms: int | None = None,
) -> bytes:
    """Build one magic-2 batch exactly as ``MemoryRecordsBuilder`` would.

    ``base_offset`` defaults to the first record's offset; each record's offset
    and timestamp become deltas from the batch base offset and the *first*
    record's timestamp (or the delete horizon).  ``maxTimestamp`` is the largest
    record timestamp, or ``log_append_time`` for LogAppendTime batches.
    """
    if not records:
        raise EncodeError("a record batch needs at least one record")
    if timestamp_type not in (CREATE_TIME, LOG_APPEND_TIME):
        raise EncodeError(f"magic 2 has no timestamp type {timestamp_type!r}")
    if base_offset is None:
        base_offset = records[0].offset
    if delete_horizon_ms is not None and delete_horizon_ms < 0:
        delete_horizon_ms = None  # hasDeleteHorizonMs(): only a horizon >= 0 is written
    base_timestamp = records[0].timestamp if delete_horizon_ms is None else delete_horizon_ms
    body = bytearray()
    max_timestamp = -1
    last_offset = base_offset
    for index, spec in enumerate(records):
        # MemoryRecordsBuilder.appendWithOffset checks every record, in this order:
        # offsets strictly increase (a repeated offset is refused too), then the timestamp.
        if index and spec.offset <= last_offset:
            raise EncodeError(
                f"Illegal offset {spec.offset} following previous offset {last_offset} (Offsets must increase monotonically)."
            )
        check_timestamp(spec.timestamp)
        # Java arithmetic: (int) (offset - baseOffset) and timestamp - baseTimestamp, both wrapping.
        offset_delta = offset_delta_of(spec.offset, base_offset)
        body += encode_record(offset_delta, wrap_int64(spec.timestamp - base_timestamp), spec)
        last_offset = spec.offset
        max_timestamp = max(max_timestamp, spec.timestamp)
    check_producer_state(producer_id, producer_epoch, base_sequence, is_transactional, is_control)
    if timestamp_type == LOG_APPEND_TIME:
        max_timestamp = log_append_time
    payload = bytes(body)
    if codec != compression.CODEC_NONE:
        payload = compression.compress(codec, payload, magic=MAGIC, level=level)
    attributes = codec & CODEC_MASK
    if timestamp_type == LOG_APPEND_TIME:
        attributes |= TIMESTAMP_TYPE_MASK
    if is_transactional:
        attributes |= TRANSACTIONAL_MASK
    if is_control:
        attributes |= CONTROL_MASK
    if delete_horizon_ms is not None:
        attributes |= DELETE_HORIZON_MASK
    return assemble_batch(
        payload,
        base_offset=base_offset,
        partition_leader_epoch=partition_leader_epoch,
        attributes=attributes,
        last_offset_delta=wrap_int32(wrap_int64(last_offset - base_offset)),
        base_timestamp=base_timestamp,
        max_timestamp=max_timestamp,
        producer_id=producer_id,
        producer_epoch=producer_epoch,
        base_sequence=base_sequence,
        records_count=len(records),
    )


def assemble_batch(
    records_region: bytes,
    *,
    base_offset: int,
    partition_leader_epoch: int,
    attributes: int,
    last_offset_delta: int,
    base_timestamp: int,
    max_timestamp: int,
    producer_id: int,
    producer_epoch: int,
    base_sequence: int,
    records_count: int,
) -> bytes:
    """Put a header (with its CRC-32C) in front of an already encoded records region."""
    header = bytearray(
        BATCH_HEADER.pack(
            base_offset,
            RECORD_BATCH_OVERHEAD - LOG_OVERHEAD + len(records_region),
            partition_leader_epoch,
            MAGIC,
            0,
            attributes,
            last_offset_delta,
            base_timestamp,
            max_timestamp,
            producer_id,
            producer_epoch,
            base_sequence,
            records_count,
        )
    )
    crc = crc32c(bytes(header[ATTRIBUTES_OFFSET:]) + records_region)
    struct.pack_into(">I", header, CRC_OFFSET, crc)
    return bytes(header) + records_region
