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
    encoder = BatchEncoder(
        base_offset=base_offset, codec=codec, level=level, timestamp_type=timestamp_type,
        log_append_time=log_append_time, producer_id=producer_id, producer_epoch=producer_epoch,
        base_sequence=base_sequence, is_transactional=is_transactional, is_control=is_control,
        partition_leader_epoch=partition_leader_epoch, delete_horizon_ms=delete_horizon_ms,
    )
    encoder.add(records)
    data, _ = encoder.finish()
    assert data is not None  # nothing is dropped without ``keep``
    return data


#: Encoded records are handed to the compressor in pieces of about this size.
_FEED_BYTES = 1 << 20


class BatchEncoder:
    """One magic-2 batch built from records fed in pieces: the bytes :func:`encode_batch` gives for them all.

    For batches too large to hold as records (``kseg convert`` reads a batch a
    part at a time): the records region is compressed as it is encoded, and with
    ``keep`` the compressed bytes are kept only while the batch stays within
    ``keep`` bytes -- past it :meth:`finish` gives only the size, so measuring a
    batch too large to write costs no memory.  Every check of :func:`encode_batch`
    is made, in its order within each piece.
    """

    def __init__(
        self,
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
        keep: int | None = None,
    ) -> None:
        if timestamp_type not in (CREATE_TIME, LOG_APPEND_TIME):
            raise EncodeError(f"magic 2 has no timestamp type {timestamp_type!r}")
        if delete_horizon_ms is not None and delete_horizon_ms < 0:
            delete_horizon_ms = None  # hasDeleteHorizonMs(): only a horizon >= 0 is written
        self.base_offset = base_offset
        self.codec, self.level, self.keep = codec, level, keep
        self.timestamp_type, self.log_append_time = timestamp_type, log_append_time
        self.producer = (producer_id, producer_epoch, base_sequence, is_transactional, is_control)
        self.partition_leader_epoch = partition_leader_epoch
        self.delete_horizon_ms = delete_horizon_ms
        self.base_timestamp = 0
        self.count = 0
        self.last_offset = 0
        self.max_timestamp = -1
        self._pending = bytearray()
        self._compressor: compression.Compressor | None = None
        self._parts: list[bytes] | None = []
        self._payload_size = 0

    def add(self, records: Sequence[RecordSpec]) -> None:
        """Encode the next records (offsets still increasing from the last piece's)."""
        if not records:
            return
        if self.count == 0:
            if self.base_offset is None:
                self.base_offset = records[0].offset
            horizon = self.delete_horizon_ms
            self.base_timestamp = records[0].timestamp if horizon is None else horizon
            self.last_offset = self.base_offset
        base_offset, base_timestamp = self.base_offset, self.base_timestamp
        assert base_offset is not None
        body, last_offset, max_timestamp, count = self._pending, self.last_offset, self.max_timestamp, self.count
        for spec in records:
            # MemoryRecordsBuilder.appendWithOffset checks every record, in this order:
            # offsets strictly increase (a repeated offset is refused too), then the timestamp.
            if count and spec.offset <= last_offset:
                raise EncodeError(
                    f"Illegal offset {spec.offset} following previous offset {last_offset} "
                    "(Offsets must increase monotonically)."
                )
            check_timestamp(spec.timestamp)
            # Java arithmetic: (int) (offset - baseOffset) and timestamp - baseTimestamp, both wrapping.
            offset_delta = offset_delta_of(spec.offset, base_offset)
            body += encode_record(offset_delta, wrap_int64(spec.timestamp - base_timestamp), spec)
            last_offset = spec.offset
            max_timestamp = max(max_timestamp, spec.timestamp)
            count += 1
        self.last_offset, self.max_timestamp, self.count = last_offset, max_timestamp, count
        if len(body) >= _FEED_BYTES:
            self._feed()

    def core_target(self) -> tuple[int, int | None, int | None, int | None, int, bool, None]:
        """The compiled core's arguments for encoding the next records of this batch (``convert_encode``).

        Before the first records the bases are this batch's own or, when None, the first record's.
        """
        if not self.count:
            return (MAGIC, self.base_offset, self.delete_horizon_ms, None, self.max_timestamp, False, None)
        return (MAGIC, self.base_offset, self.base_timestamp, self.last_offset, self.max_timestamp, False, None)

    def add_encoded(self, body: bytes, count: int, first: tuple[int, int], last_offset: int, max_timestamp: int) -> bytes:
        """Records the core encoded with :meth:`core_target`'s arguments (``first``: the first one's offset, timestamp).

        The same state :meth:`add` leaves for those records; the core made :meth:`add`'s checks.
        """
        if self.count == 0:
            if self.base_offset is None:
                self.base_offset = first[0]
            horizon = self.delete_horizon_ms
            self.base_timestamp = first[1] if horizon is None else horizon
        self._pending += body
        self.last_offset, self.max_timestamp, self.count = last_offset, max_timestamp, self.count + count
        if len(self._pending) >= _FEED_BYTES:
            self._feed()
        return b""

    def _feed(self) -> None:
        if self._compressor is None:
            self._compressor = compression.compressor(self.codec, magic=MAGIC, level=self.level)
        self._kept(self._compressor.compress(self._pending))
        self._pending.clear()

    def _kept(self, piece: bytes) -> None:
        self._payload_size += len(piece)
        if self._parts is not None:
            if self.keep is not None and RECORD_BATCH_OVERHEAD + self._payload_size > self.keep:
                self._parts = None  # too large to be written: only its size is wanted now
            else:
                self._parts.append(piece)

    def finish(self) -> tuple[bytes | None, int]:
        """(the batch, or None when it passed ``keep``; its size in bytes)."""
        if not self.count:
            raise EncodeError("a record batch needs at least one record")
        check_producer_state(*self.producer)
        self._feed()
        assert self._compressor is not None
        self._kept(self._compressor.flush())
        size = RECORD_BATCH_OVERHEAD + self._payload_size
        if self._parts is None:
            return None, size
        max_timestamp = self.log_append_time if self.timestamp_type == LOG_APPEND_TIME else self.max_timestamp
        producer_id, producer_epoch, base_sequence, is_transactional, is_control = self.producer
        assert self.base_offset is not None
        batch = assemble_batch(
            b"".join(self._parts),
            base_offset=self.base_offset,
            partition_leader_epoch=self.partition_leader_epoch,
            attributes=_attributes(self.codec, self.timestamp_type, is_transactional, is_control, self.delete_horizon_ms),
            last_offset_delta=wrap_int32(wrap_int64(self.last_offset - self.base_offset)),
            base_timestamp=self.base_timestamp,
            max_timestamp=max_timestamp,
            producer_id=producer_id,
            producer_epoch=producer_epoch,
            base_sequence=base_sequence,
            records_count=self.count,
        )
        return batch, size


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
