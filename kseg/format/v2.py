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

This module reads batches (:class:`V2Batch`; the layout constants live in
:mod:`kseg.format.layout`).  Records are read by the one record scanner,
:mod:`kseg.format.records`, with :mod:`kseg.format.v2_validate` -- the
validating reader, Kafka's messages -- where the scanner says no; batches are
written by :mod:`kseg.format.v2_write`, re-exported here.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from itertools import chain, repeat
from mmap import mmap
from operator import itemgetter

from kseg.errors import Corrupt, CrcMismatch, InvalidRecord, KsegError, Truncated
from kseg.format import compression
from kseg.format.crc import crc32c
from kseg.format.layout import (
    BATCH_HEADER,
    CODEC_MASK,
    CONTROL_MASK,
    DELETE_HORIZON_MASK,
    LOG_OVERHEAD,
    MIN_V2_BATCH_LENGTH,
    RECORD_BATCH_OVERHEAD,
    TIMESTAMP_TYPE_MASK,
    TRANSACTIONAL_MASK,
    V2_ATTRIBUTES_OFFSET,
    V2_CRC_OFFSET,
)
from kseg.format.model import (
    CREATE_TIME,
    LOG_APPEND_TIME,
    NO_SEQUENCE,
    Record,
    codec_name,
    increment_sequence,
    wrap_int64,
)
from kseg.format.records import (
    ATTRIBUTES,
    KEY_LENGTH,
    MAGIC,
    RECORD_STRIDE,
    VALUE_LENGTH,
    Buffer,
    RecordScan,
    scan_records,
    scan_some_records,
)
from kseg.format.v2_validate import RecordValidator, header_cap
from kseg.format.v2_write import (  # noqa: F401 - re-exported: writing is part of this module's API
    assemble_batch,
    check_producer_state,
    check_timestamp,
    encode_batch,
    encode_record,
    offset_delta_of,
)
from kseg.format.varint import Readable

_new_tuple = tuple.__new__  # builds a Record without the keyword-friendly __new__
#: Batches with more records or bytes than this are decoded a part at a time (memory stays flat).
_PART_RECORDS = 4096
_PART_BYTES = 1 << 20
_unpack_header = BATCH_HEADER.unpack_from


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

    def __new__(cls, buf: Readable, position: int, view: memoryview | None = None) -> V2Batch:
        if position + RECORD_BATCH_OVERHEAD <= len(buf):
            header = _unpack_header(buf, position)
        else:
            # A "batch" shorter than its own header at the end of the data: Kafka
            # cannot load it; we read what is there, zero-padded, and it is never valid.
            header = _unpack_header(bytes(buf[position:]).ljust(RECORD_BATCH_OVERHEAD, b"\0"), 0)
        return tuple.__new__(cls, header + (buf, position, view))  # noqa: RUF005 - twice as fast as unpacking

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
    buf: Readable = property(itemgetter(13))  # type: ignore[assignment]
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
    def count(self) -> int:  # type: ignore[override]  # Kafka's countOrNull(), named as on every batch
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
        start = position + V2_ATTRIBUTES_OFFSET
        end = min(position + LOG_OVERHEAD + self[1], len(self[13]))
        if end <= start:
            return 0
        view = self[15]
        if view is None:
            view = memoryview(self[13])
        return crc32c(view[start:end])

    def is_valid(self) -> bool:
        """``isValid()``: at least the 61-byte overhead and a matching CRC."""
        return self[1] >= MIN_V2_BATCH_LENGTH and self[4] == self.compute_crc()

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
                offset=self.position + V2_CRC_OFFSET,
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
        """Decode the records, decompressing first; errors are located in the file.

        Well-formed records come from the scanner (:mod:`kseg.format.records`)
        in one pass; when it says no, the validating reader
        (:mod:`kseg.format.v2_validate`) yields what Kafka's iterator yields
        and raises what it throws, where it throws it.
        """
        count = self._checked_count()
        if count == 0:
            return iter(())
        data, start, end, compressed_at, shift = self._records_bytes(max_decompressed)
        cap = header_cap(max_decompressed)
        if count > _PART_RECORDS or end - start > _PART_BYTES:
            return chain.from_iterable(self._record_parts(data, start, end, compressed_at, shift, cap))
        scan = scan_records(data, start, end, count, self[0], self[7])
        if scan is not None:
            return iter(self._records_of(scan))
        return RecordValidator(self, data, start, end, compressed_at, shift, max_headers=cap).records()

    def _record_parts(
        self, data: Buffer, pos: int, end: int, compressed_at: int | None, shift: int, cap: int
    ) -> Iterator[Iterable[Record]]:
        """The records of a large batch a part at a time, so that memory holds one part, not the batch.

        Parts hold about ``_PART_BYTES`` of records; where the scanner stops, the
        validating reader goes on from that record (and raises what Kafka throws).
        """
        count, index, size = self[12], 0, min(64, _PART_RECORDS)
        while index < count:
            scanned = scan_some_records(data, pos, end, min(size, count - index), self[0], self[7])
            if scanned is None:
                break
            scan, after = scanned
            yield self._records_of(scan)
            index += scan.count
            size = max(1, min(_PART_RECORDS, _PART_BYTES * scan.count // max(1, after - pos)))
            pos = after
        if index < count or pos != end:
            yield RecordValidator(self, data, pos, end, compressed_at, shift, first=index, max_headers=cap).records()

    def scan(self, max_decompressed: int = compression.DEFAULT_MAX_DECOMPRESSED) -> RecordScan | None:
        """The records as columns (:class:`~kseg.format.records.RecordScan`) when every one is well-formed.

        None for anything else -- a short batch, a negative count, a batch
        past the end of the data, a codec error, a damaged record: then
        :meth:`iter_records` says what Kafka says about it.
        """
        if self[1] < MIN_V2_BATCH_LENGTH or self[12] < 0:
            return None
        if self[12] == 0:
            return RecordScan(b"", [], [], self[0], self[7])
        try:
            data, start, end, _, _ = self._records_bytes(max_decompressed)
        except (KsegError, MemoryError):
            return None
        return scan_records(data, start, end, self[12], self[0], self[7])

    def _checked_count(self) -> int:
        """The records count, after the checks Kafka's iterator makes before its first record."""
        if self.batch_length < MIN_V2_BATCH_LENGTH:
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
                offset=self.position + RECORD_BATCH_OVERHEAD - 4,
                field="batch.records_count",
            )
        return count

    def _records_bytes(self, max_decompressed: int) -> tuple[Buffer, int, int, int | None, int]:
        """(data, start, end, compressed_at, shift): the records region, decompressed when it is compressed.

        Uncompressed records are read in place from the file's own buffer:
        slicing an mmap or bytes gives bytes directly.  A memoryview would hand
        out views of the file, so that (rare) case -- or any other buffer -- reads
        from one copy of the batch, ``shift`` bytes into the file.  ``compressed_at`` is where the
        compressed region starts (None when read in place).
        """
        start = self.position + RECORD_BATCH_OVERHEAD
        end = self.position + self.size
        buf = self.buf
        if end > len(buf):
            raise Truncated(
                f"batch of {self.size} bytes runs past the end of the data", offset=self.position, field="batch"
            )
        codec_id = self[5] & CODEC_MASK
        if codec_id == compression.CODEC_NONE:
            if isinstance(buf, (bytes, mmap)):
                return buf, start, end, None, 0
            return bytes(buf[start:end]), 0, end - start, None, start
        try:
            data = compression.decompress_buffer(codec_id, memoryview(buf)[start:end], magic=MAGIC, max_size=max_decompressed)
        except KsegError as err:
            raise err.located(start, "batch.records")
        return data, 0, len(data), start, 0

    def records_from(self, scan: RecordScan) -> list[Record]:
        """The records of a :meth:`scan` of this batch, as :meth:`iter_records` hands them out (no second scan)."""
        return self._records_of(scan)

    def _records_of(self, scan: RecordScan) -> list[Record]:
        """Record tuples from the scanner's columns, built column by column at C speed."""
        attributes = self[5] & 0xFF
        if attributes & TIMESTAMP_TYPE_MASK:
            timestamps: Iterator[int] | list[int] = repeat(self[8])
            timestamp_type = LOG_APPEND_TIME
        else:
            timestamps = scan.timestamps()
            timestamp_type = CREATE_TIME
        fields = scan.fields
        columns = zip(
            scan.offsets(), timestamps, scan.keys(), scan.values(), scan.headers(), scan.sequences(self[11]),
            fields[ATTRIBUTES::RECORD_STRIDE], fields[KEY_LENGTH::RECORD_STRIDE], fields[VALUE_LENGTH::RECORD_STRIDE],
            repeat(MAGIC), repeat(None), repeat(None), repeat(bool(attributes & CONTROL_MASK)), repeat(timestamp_type),
        )
        return list(map(_new_tuple, repeat(Record), columns))

    def __repr__(self) -> str:
        return (
            f"V2Batch(position={self.position}, base_offset={self.base_offset}, "
            f"last_offset={self.last_offset}, count={self.records_count}, size={self.size})"
        )
