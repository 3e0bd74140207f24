"""Writing magic-2 batches as Kafka's ``MemoryRecordsBuilder`` does (the layout is in :mod:`kseg.format.v2`).

:func:`encode_batch` checks what Kafka's builder checks, in its order, and
refuses the same things with its messages (tests/interop); :func:`assemble_batch`
puts a header and its CRC-32C in front of an already encoded records region
(convert rewrites batches with it).
"""

from __future__ import annotations

import struct
from collections.abc import Sequence

from kseg.errors import EncodeError
from kseg.format import compression
from kseg.format.crc import crc32c
from kseg.format.layout import (
    BATCH_HEADER,
    CODEC_MASK,
    CONTROL_MASK,
    DELETE_HORIZON_MASK,
    LOG_OVERHEAD,
    RECORD_BATCH_OVERHEAD,
    TIMESTAMP_TYPE_MASK,
    TRANSACTIONAL_MASK,
    V2_ATTRIBUTES_OFFSET,
    V2_CRC_OFFSET,
)
from kseg.format.model import (
    CREATE_TIME,
    LOG_APPEND_TIME,
    NO_PRODUCER_EPOCH,
    NO_PRODUCER_ID,
    NO_TIMESTAMP,
    RecordSpec,
    wrap_int32,
    wrap_int64,
)
from kseg.format.records import MAGIC
from kseg.format.varint import encode_varint, encode_varlong

_CRC = struct.Struct(">I")


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
    body, last_offset, max_timestamp = _encode_records(records, base_offset, base_timestamp)
    check_producer_state(producer_id, producer_epoch, base_sequence, is_transactional, is_control)
    if timestamp_type == LOG_APPEND_TIME:
        max_timestamp = log_append_time
    payload = bytes(body)
    if codec != compression.CODEC_NONE:
        payload = compression.compress(codec, payload, magic=MAGIC, level=level)
    attributes = _attributes(codec, timestamp_type, is_transactional, is_control, delete_horizon_ms)
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


def _encode_records(
    records: Sequence[RecordSpec], base_offset: int, base_timestamp: int
) -> tuple[bytearray, int, int]:
    """The records region, uncompressed; with the last offset and the largest timestamp."""
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
    return body, last_offset, max_timestamp


def _attributes(
    codec: int, timestamp_type: str, is_transactional: bool, is_control: bool, delete_horizon_ms: int | None
) -> int:
    """The attribute bits ``MemoryRecordsBuilder`` writes."""
    attributes = codec & CODEC_MASK
    if timestamp_type == LOG_APPEND_TIME:
        attributes |= TIMESTAMP_TYPE_MASK
    if is_transactional:
        attributes |= TRANSACTIONAL_MASK
    if is_control:
        attributes |= CONTROL_MASK
    if delete_horizon_ms is not None:
        attributes |= DELETE_HORIZON_MASK
    return attributes


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
    crc = crc32c(bytes(header[V2_ATTRIBUTES_OFFSET:]) + records_region)
    _CRC.pack_into(header, V2_CRC_OFFSET, crc)
    return bytes(header) + records_region
