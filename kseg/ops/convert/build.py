"""Building one output batch of ``kseg convert`` as Kafka's ``MemoryRecordsBuilder`` would.

Pure functions, no state: the arguments of an output batch (:class:`Params`),
a size estimate to cut batches by before encoding, the fast path that only
recompresses a V2 batch's record bytes, and ``overrideLastOffset``.  The
stateful part (packing, splitting, counting) is
:class:`~kseg.ops.convert.batches.Converter`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from kseg.errors import EncodeError, KsegError
from kseg.format import Batch, compression
from kseg.format import v2 as v2_format
from kseg.format.compression import CODEC_NONE
from kseg.format.layout import (
    CODEC_MASK,
    CONTROL_MASK,
    DELETE_HORIZON_MASK,
    LEGACY_ATTRIBUTES_OFFSET,
    LOG_OVERHEAD,
    MAGIC_OFFSET,
    RECORD_BATCH_OVERHEAD,
    RECORD_OVERHEAD_V0,
    RECORD_OVERHEAD_V1,
    TRANSACTIONAL_MASK,
    V2_ATTRIBUTES_OFFSET,
)
from kseg.format.model import CREATE_TIME, LOG_APPEND_TIME, Record, RecordSpec
from kseg.ops.convert.source import BatchSummary, SourceRecords

MAX_OFFSET_DELTA = 0x7FFFFFFF
MAX_RECORD_OVERHEAD_V2 = 21  # DefaultRecord.MAX_RECORD_OVERHEAD
HEADER_OVERHEAD_V2 = 10  # two varint lengths, at most 5 bytes each
LEGACY_ENTRY_OVERHEAD = {0: LOG_OVERHEAD + RECORD_OVERHEAD_V0, 1: LOG_OVERHEAD + RECORD_OVERHEAD_V1}
CODEC_FRAME_ALLOWANCE = 32  # gzip/snappy/lz4/zstd stream headers and trailers, for a first guess
#: bytes a batch (or a V0/V1 wrapper) has before its first record: the start of a group's size
BATCH_OVERHEAD = {
    0: LEGACY_ENTRY_OVERHEAD[0] + CODEC_FRAME_ALLOWANCE,
    1: LEGACY_ENTRY_OVERHEAD[1] + CODEC_FRAME_ALLOWANCE,
    2: RECORD_BATCH_OVERHEAD,
}
SPLIT_MARGIN = 0.95  # aim a little under the limit when cutting by estimated size
_RECOMPRESS_STEP = 1 << 20  # bytes of a records region handed to the compressor at a time
_KEPT_FLAGS = TRANSACTIONAL_MASK | CONTROL_MASK | DELETE_HORIZON_MASK  # what a recompressed batch keeps


@dataclass(frozen=True, slots=True)
class Params:
    """The ``MemoryRecordsBuilder`` arguments of one output batch."""

    codec: int
    timestamp_type: str = CREATE_TIME
    log_append_time: int = -1
    producer_id: int = -1
    producer_epoch: int = -1
    base_sequence: int = -1
    is_transactional: bool = False
    is_control: bool = False
    partition_leader_epoch: int = -1
    delete_horizon_ms: int = -1
    base_offset: int | None = None  # None: the first record's offset
    last_offset: int | None = None  # None: the last record's offset


def output_params(batch: Batch, codec: int, target_magic: int) -> Params:
    """Output batch arguments: a V2 batch kept at V2 keeps everything, other paths timestamps only."""
    log_append = batch.timestamp_type == LOG_APPEND_TIME
    params = Params(
        codec,
        LOG_APPEND_TIME if log_append else CREATE_TIME,
        batch.max_timestamp if log_append else -1,
    )
    if batch.magic < 2 or target_magic < 2:
        return params
    horizon = batch.delete_horizon_ms
    return replace(
        params,
        producer_id=batch.producer_id,
        producer_epoch=batch.producer_epoch,
        base_sequence=batch.base_sequence,
        is_transactional=batch.is_transactional,
        is_control=batch.is_control,
        partition_leader_epoch=batch.partition_leader_epoch,
        delete_horizon_ms=-1 if horizon is None else horizon,
        base_offset=batch.base_offset,
        last_offset=batch.last_offset,
    )


def record_specs(records: Sequence[Record], target_magic: int) -> list[RecordSpec]:
    """The records as builder input; headers only where the target can hold them (magic 2)."""
    if target_magic == 2:
        return [RecordSpec(r.offset, r.timestamp, r.key, r.value, r.headers) for r in records]
    return [RecordSpec(r.offset, r.timestamp, r.key, r.value) for r in records]


def builder_records(batch: v2_format.V2Batch, summary: BatchSummary) -> bool:
    """Whether a V2 batch's record bytes are what ``MemoryRecordsBuilder`` would write for its records.

    Then a codec change only needs the records region recompressed: re-encoding
    each record would give the same bytes.  That holds for CreateTime batches
    (with LogAppendTime the builder writes zero deltas, the source may not)
    whose records have attributes 0 and whose base timestamp is the first
    record's (or the delete horizon).  Kafka always writes minimal varints; a
    foreign writer's longer ones would be kept, and read the same.
    """
    if not summary.count or batch.timestamp_type != CREATE_TIME or batch.is_control:
        return False
    if batch.delete_horizon_ms is None and batch.base_timestamp != summary.first_timestamp:
        return False
    return not summary.any_attributes


def recompress(
    source: SourceRecords, summary: BatchSummary, codec: int, level: int | None, keep: int
) -> bytes | None:
    """The batch with its record bytes kept and only the codec changed (see :func:`builder_records`).

    None when it would be larger than ``keep`` bytes: the region is compressed a
    piece at a time and the output given up once past ``keep``, so a large batch
    costs its decompressed region (in an anonymous map), not a copy of it too.
    """
    batch = source.batch
    assert isinstance(batch, v2_format.V2Batch)
    stored = batch.records_region()
    region: memoryview | compression.OutputBuffer = stored
    if source.core is not None:  # decompressed once already, by the read that summed the records up
        region = source.core.region()
    elif batch.codec_id != CODEC_NONE:
        try:
            region = compression.decompress_buffer(
                batch.codec_id, stored, magic=2, max_size=source.max_decompressed
            )
        except KsegError as err:
            raise err.located(batch.position + RECORD_BATCH_OVERHEAD, "batch.records")
    compressor = compression.compressor(codec, magic=2, level=level)
    parts: list[bytes] = []
    size = RECORD_BATCH_OVERHEAD
    for start in range(0, len(region), _RECOMPRESS_STEP):
        parts.append(compressor.compress(region[start : start + _RECOMPRESS_STEP]))
        size += len(parts[-1])
        if size > keep:
            return None
    parts.append(compressor.flush())
    if size + len(parts[-1]) > keep:
        return None
    return v2_format.assemble_batch(
        b"".join(parts),
        base_offset=batch.base_offset,
        partition_leader_epoch=batch.partition_leader_epoch,
        attributes=codec | (batch.attributes & _KEPT_FLAGS),
        last_offset_delta=batch.last_offset_delta,
        base_timestamp=batch.base_timestamp,
        max_timestamp=summary.max_timestamp,
        producer_id=batch.producer_id,
        producer_epoch=batch.producer_epoch,
        base_sequence=batch.base_sequence,
        records_count=summary.count,
    )


def check_offset_span(specs: Sequence[RecordSpec]) -> None:
    """Refuse a new V2 batch whose offsets reach past ``Integer.MAX_VALUE`` from its base only by wrapping.

    ``MemoryRecordsBuilder.recordWritten`` (kafka-clients) throws "Maximum offset
    delta exceeded" when ``offset - baseOffset > Integer.MAX_VALUE`` in Java long
    arithmetic, for every magic.  Offsets read under a magic-1 wrapper at the top
    of the long range wrap (``AbstractLegacyRecordBatch.DeepRecordsIterator``:
    ``absoluteBaseOffset + entry.offset()``), so -9223372036854775804 may precede
    9223372036854775807: Java's difference wraps to -5 and passes, and the batch
    would store an offset delta of -5.  The magic 0/1 writer
    (:mod:`kseg.format.v0v1_encode`) refuses that span; a converted V2 batch is
    refused the same way, so no magic re-encodes offsets only overflow joins.
    """
    if not specs:
        return
    base = specs[0].offset
    for spec in specs:
        if not -MAX_OFFSET_DELTA - 1 <= spec.offset - base <= MAX_OFFSET_DELTA:
            raise EncodeError(f"Maximum offset delta exceeded, base offset: {base}, last offset: {spec.offset}")


def estimate_size(spec: RecordSpec, magic: int) -> int:
    """An upper bound of a record's uncompressed bytes in ``magic`` (the whole entry for V0/V1)."""
    size = (len(spec.key) if spec.key is not None else 0) + (len(spec.value) if spec.value is not None else 0)
    if magic < 2:
        return LEGACY_ENTRY_OVERHEAD[magic] + size
    for key, value in spec.headers:
        size += HEADER_OVERHEAD_V2 + len(key) + (len(value) if value is not None else 0)
    return MAX_RECORD_OVERHEAD_V2 + 5 + size  # + the header-count varint


def estimate_total(summary: BatchSummary, magic: int) -> int:
    """``sum(estimate_size(spec, magic))`` over a batch's records, from its summary."""
    if magic < 2:
        return summary.count * LEGACY_ENTRY_OVERHEAD[magic] + summary.key_value_bytes
    headers = summary.headers * HEADER_OVERHEAD_V2 + summary.header_bytes
    return summary.count * (MAX_RECORD_OVERHEAD_V2 + 5) + summary.key_value_bytes + headers


def with_last_offset(batch: bytes, last_offset: int) -> bytes:
    """A V2 batch whose ``lastOffsetDelta`` reaches ``last_offset`` (``overrideLastOffset``), CRC redone."""
    header = v2_format.V2Batch(batch, 0)
    if header.last_offset == last_offset:
        return batch
    return v2_format.assemble_batch(
        batch[RECORD_BATCH_OVERHEAD:],
        base_offset=header.base_offset,
        partition_leader_epoch=header.partition_leader_epoch,
        attributes=header.raw_attributes,
        last_offset_delta=last_offset - header.base_offset,
        base_timestamp=header.base_timestamp,
        max_timestamp=header.max_timestamp,
        producer_id=header.producer_id,
        producer_epoch=header.producer_epoch,
        base_sequence=header.base_sequence,
        records_count=header.records_count,
    )


def codec_of(entry: bytes) -> int:
    """The codec id of an encoded batch or wrapper (the low byte of a V2 batch's int16 attributes)."""
    if entry[MAGIC_OFFSET] == 2:
        return entry[V2_ATTRIBUTES_OFFSET + 1] & CODEC_MASK
    return entry[LEGACY_ATTRIBUTES_OFFSET] & CODEC_MASK


__all__ = [
    "BATCH_OVERHEAD",
    "MAX_OFFSET_DELTA",
    "SPLIT_MARGIN",
    "Params",
    "builder_records",
    "check_offset_span",
    "codec_of",
    "estimate_size",
    "estimate_total",
    "output_params",
    "recompress",
    "record_specs",
    "with_last_offset",
]
