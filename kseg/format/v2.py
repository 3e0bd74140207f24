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

from kseg.errors import Corrupt, CrcMismatch, EncodeError, InvalidRecord, KsegError, Truncated
from kseg.format import compression
from kseg.format.crc import crc32c
from kseg.format.model import (
    codec_name,
    CREATE_TIME,
    LOG_APPEND_TIME,
    NO_SEQUENCE,
    Header,
    Record,
    RecordSpec,
    increment_sequence,
)
from kseg.format.varint import (
    decode_varint,
    decode_varlong,
    encode_varint,
    encode_varlong,
)

MAGIC = 2

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
CRC_OFFSET = struct.calcsize(">qiib")  # 17
ATTRIBUTES_OFFSET = struct.calcsize(">qiibI")  # 21: the CRC covers from here
LOG_OVERHEAD = 12

CODEC_MASK = 0x07
TIMESTAMP_TYPE_MASK = 0x08
TRANSACTIONAL_MASK = 0x10
CONTROL_MASK = 0x20
DELETE_HORIZON_MASK = 0x40


class V2Batch:
    """A magic-2 record batch read in place from a buffer.

    The header is decoded on construction (one ``unpack_from``); records are
    decoded -- and decompressed -- only when :meth:`iter_records` is called.
    ``position`` is the absolute byte position of the batch in ``buf``.
    """

    __slots__ = (
        "buf",
        "position",
        "base_offset",
        "batch_length",
        "partition_leader_epoch",
        "magic",
        "crc",
        "attributes",
        "last_offset_delta",
        "base_timestamp",
        "max_timestamp",
        "producer_id",
        "producer_epoch",
        "base_sequence",
        "records_count",
    )

    def __init__(self, buf: bytes | memoryview, position: int) -> None:
        self.buf = buf
        self.position = position
        header: bytes | memoryview = buf
        at = position
        if position + RECORD_BATCH_OVERHEAD > len(buf):
            # A "batch" shorter than its own header at the end of the data: Kafka
            # cannot load it; we read what is there, zero-padded, and it is never valid.
            header = bytes(buf[position:]).ljust(RECORD_BATCH_OVERHEAD, b"\0")
            at = 0
        (
            self.base_offset,
            self.batch_length,
            self.partition_leader_epoch,
            self.magic,
            self.crc,
            attributes,
            self.last_offset_delta,
            self.base_timestamp,
            self.max_timestamp,
            self.producer_id,
            self.producer_epoch,
            self.base_sequence,
            self.records_count,
        ) = BATCH_HEADER.unpack_from(header, at)
        self.attributes = attributes & 0xFF  # Kafka reads only the low byte

    # -- header-derived values (no record decoding) -------------------------

    @property
    def size(self) -> int:
        """Total bytes of the batch, the 12-byte log overhead included."""
        return LOG_OVERHEAD + self.batch_length

    @property
    def last_offset(self) -> int:
        return self.base_offset + self.last_offset_delta

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
        start = self.position + ATTRIBUTES_OFFSET
        end = min(self.position + self.size, len(self.buf))
        return crc32c(memoryview(self.buf)[start:end]) if end > start else 0

    def is_valid(self) -> bool:
        """``isValid()``: at least the 61-byte overhead and a matching CRC."""
        return self.size >= RECORD_BATCH_OVERHEAD and self.crc == self.compute_crc()

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
        count = self.records_count
        if count < 0:
            raise InvalidRecord(
                f"Found invalid record count {count} in magic v2 batch",
                offset=self.position + BATCH_HEADER.size - 4,
                field="batch.records_count",
            )
        if count == 0:
            return iter(())
        region = self.records_region()
        region_start = self.position + RECORD_BATCH_OVERHEAD
        if self.codec_id == compression.CODEC_NONE:
            return _iter_records(self, region, 0, len(region), region_start, True)
        try:
            data = compression.decompress(self.codec_id, region, magic=MAGIC, max_size=max_decompressed)
        except KsegError as err:
            raise err.located(region_start, "batch.records")
        return _iter_records(self, data, 0, len(data), region_start, False)

    def __repr__(self) -> str:
        return (
            f"V2Batch(position={self.position}, base_offset={self.base_offset}, "
            f"last_offset={self.last_offset}, count={self.records_count}, size={self.size})"
        )


def _iter_records(
    batch: V2Batch,
    data: bytes | memoryview,
    pos: int,
    end: int,
    region_start: int,
    in_place: bool,
) -> Iterator[Record]:
    """Yield ``batch.records_count`` records from ``data[pos:end]``.

    ``in_place`` says whether ``data`` is the file itself (uncompressed), in
    which case error positions are absolute file positions; for decompressed
    data they are the start of the compressed region, and the message says
    where in the decompressed stream the problem is.
    """
    log_append = batch.attributes & TIMESTAMP_TYPE_MASK
    timestamp_type = LOG_APPEND_TIME if log_append else CREATE_TIME
    base_offset = batch.base_offset
    base_timestamp = batch.base_timestamp
    max_timestamp = batch.max_timestamp
    base_sequence = batch.base_sequence
    is_control = bool(batch.attributes & CONTROL_MASK)
    for index in range(batch.records_count):
        if pos >= end:
            where = pos + region_start if in_place else region_start
            raise InvalidRecord(
                "Incorrect declared batch size, premature EOF reached"
                + ("" if in_place else f" (after {pos} decompressed bytes)"),
                offset=where,
                field=f"record[{index}]",
            )
        try:
            record, pos = _decode_record(data, pos, end)
        except KsegError as err:
            err.field = f"record[{index}].{err.field}" if err.field else f"record[{index}]"
            if in_place:  # positions in ``data`` are relative to the records region
                err.offset = region_start + (err.offset or 0)
                raise
            err.message += f" (at byte {err.offset} of the decompressed records)" if err.offset is not None else ""
            err.offset = region_start
            raise
        offset_delta = record.offset
        record.offset = base_offset + offset_delta
        record.timestamp = max_timestamp if log_append else base_timestamp + record.timestamp
        record.timestamp_type = timestamp_type
        if base_sequence >= 0:
            record.sequence = increment_sequence(base_sequence, offset_delta)
        record.is_control = is_control
        yield record
    if pos < end:
        raise InvalidRecord(
            "Incorrect declared batch size, records still remaining in file"
            + ("" if in_place else f" ({end - pos} decompressed bytes left)"),
            offset=pos + region_start if in_place else region_start,
            field="batch.records",
        )


def _decode_record(data: bytes | memoryview, pos: int, end: int) -> tuple[Record, int]:
    """Decode one record at ``pos``; offset and timestamp are left as deltas for the caller."""
    start = pos
    length, pos = decode_varint(data, pos, end)
    body_start = pos
    if length < 0 or length > end - pos:
        raise InvalidRecord(
            f"Invalid record size: expected {length} bytes in record payload, "
            f"but instead the buffer has only {end - pos} remaining bytes.",
            offset=start,
            field="length",
        )
    body_end = pos + length
    try:
        attributes = data[pos]
        pos += 1
        timestamp_delta, pos = decode_varlong(data, pos, body_end)
        offset_delta, pos = decode_varint(data, pos, body_end)
        key_size, pos = decode_varint(data, pos, body_end)
        key, pos = _read_sized(data, pos, key_size, body_end, "key")
        value_size, pos = decode_varint(data, pos, body_end)
        value, pos = _read_sized(data, pos, value_size, body_end, "value")
        headers, pos = _decode_headers(data, pos, body_end)
    except Truncated as err:
        raise InvalidRecord("Found invalid record structure", offset=err.offset, field=err.field)
    except IndexError:
        raise InvalidRecord("Found invalid record structure", offset=pos, field="record")
    if pos != body_end:
        raise InvalidRecord(
            f"Invalid record size: expected to read {length} bytes in record payload, "
            f"but instead read {pos - body_start}",
            offset=start,
            field="length",
        )
    record = Record(
        offset_delta,
        timestamp_delta,
        key,
        value,
        headers,
        NO_SEQUENCE,
        attributes,
        key_size,
        value_size,
    )
    return record, pos


def _read_sized(data: bytes | memoryview, pos: int, size: int, end: int, field: str) -> tuple[bytes | None, int]:
    """Read ``size`` bytes (negative = null) that must fit before ``end``."""
    if size < 0:
        return None, pos
    if size > end - pos:
        raise Truncated(f"{field} of {size} bytes runs past the record end", offset=pos, field=field)
    return bytes(data[pos : pos + size]), pos + size


def _decode_headers(data: bytes | memoryview, pos: int, end: int) -> tuple[tuple[Header, ...], int]:
    count, pos = decode_varint(data, pos, end)
    if count < 0:
        raise InvalidRecord(f"Found invalid number of record headers {count}", offset=pos, field="headers")
    if count == 0:
        return (), pos
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
        key, pos = _read_sized(data, pos, key_size, end, f"headers[{i}].key")
        value_size, pos = decode_varint(data, pos, end)
        value, pos = _read_sized(data, pos, value_size, end, f"headers[{i}].value")
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
    base_timestamp = records[0].timestamp if delete_horizon_ms is None else delete_horizon_ms
    if base_timestamp < 0 and base_timestamp != -1:
        raise EncodeError(f"Invalid message timestamp {base_timestamp}")
    body = bytearray()
    max_timestamp = -1
    last_offset = base_offset
    for spec in records:
        if spec.offset < last_offset and body:
            raise EncodeError(
                f"Illegal offset {spec.offset} following previous offset {last_offset} (Offsets must increase monotonically)."
            )
        body += encode_record(spec.offset - base_offset, spec.timestamp - base_timestamp, spec)
        last_offset = spec.offset
        max_timestamp = max(max_timestamp, spec.timestamp)
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
        last_offset_delta=last_offset - base_offset,
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
