"""The per-batch core of ``kseg convert``: source batches in, target-format bytes out, in order.

The rules are Kafka's (reference §5), read from ``LogValidator`` (up-conversion
on produce), ``RecordsUtil.downConvert`` (down-conversion on fetch) and
``MemoryRecords.filterTo`` (how the cleaner rewrites a V2 batch):

* Every output batch has the target magic; offsets are never changed.  A V0
  record up-converted gets timestamp -1 (``NO_TIMESTAMP``) and CreateTime;
  legacy data gets no producer (id, epoch, sequence -1) and no leader epoch.
* A LogAppendTime batch stays LogAppendTime with its max timestamp as the
  log-append time (``RecordsUtil.convertRecordBatch``); V0 output has no
  timestamps at all.
* Below magic 2 there are no headers, producers, transactions or control
  batches: :mod:`kseg.ops.convert.target` refuses them or, when allowed,
  counts what is dropped; :mod:`kseg.ops.convert.txn` counts what old
  consumers will see of transactions.  Zstd cannot go below magic 2.
* The codec is the target's, or (``codec=None``) each source batch's own, as
  both of Kafka's paths do by default.  Control batches keep theirs (Kafka never
  compresses markers).
* Batches: a batch already in the target magic and codec that fits the limit
  is copied byte for byte (Kafka's in-place path).  Otherwise a V2 batch or a
  legacy wrapper is rebuilt as one batch, keeping its producer fields, flags,
  leader epoch, delete horizon, base offset and last offset
  (``buildRetainedRecordsInto``'s ``overrideLastOffset``).  Uncompressed legacy
  messages (one record each) are packed into batches of the target, as
  ``LogValidator`` builds one batch per produce request -- never across a
  change of timestamp type or log-append time.  A batch larger than
  ``max_batch_bytes`` is split; each part of an idempotent batch gets the base
  sequence of its first record, so every record keeps its sequence.  A single
  record larger than the limit goes alone into its own batch.

Nothing here touches a file; :mod:`kseg.ops.convert.run` walks segments and writes.
"""

from __future__ import annotations

from collections.abc import Iterator
from itertools import pairwise
from typing import Protocol

from kseg.errors import EncodeError
from kseg.format import Batch
from kseg.format.compression import CODEC_NONE
from kseg.format.model import RecordSpec, codec_name, increment_sequence
from kseg.format.v0v1_encode import MessageSetEncoder
from kseg.format.v2 import V2Batch
from kseg.format.v2_write import BatchEncoder
from kseg.ops.convert.build import (
    BATCH_OVERHEAD,
    MAX_OFFSET_DELTA,
    SPLIT_MARGIN,
    Params,
    builder_records,
    check_offset_span,
    codec_of,
    estimate_size,
    estimate_total,
    output_params,
    recompress,
    record_specs,
    with_last_offset,
)
from kseg.ops.convert.fast import CoreSpecs
from kseg.ops.convert.source import CHUNK, BatchSummary, SourceRecords
from kseg.ops.convert.tally import Tally
from kseg.ops.convert.target import ConvertRefused, Target, codec_for, representable
from kseg.ops.convert.txn import TxnDeliveries


class Specs(Protocol):
    """Builder input read a chunk at a time, as often as needed: a batch's records or a packed group."""

    count: int
    estimated: int  # sum of estimate_size over every spec, in the target magic

    def chunks(self, start: int = 0, stop: int | None = None) -> Iterator[list[RecordSpec]]: ...


class _GroupSpecs:
    """A packed group of uncompressed legacy messages (small: bounded by the limit)."""

    def __init__(self, specs: list[RecordSpec], magic: int) -> None:
        self.specs = specs
        self.count = len(specs)
        self.estimated = sum(estimate_size(spec, magic) for spec in specs)

    def chunks(self, start: int = 0, stop: int | None = None) -> Iterator[list[RecordSpec]]:
        stop = self.count if stop is None else stop
        for at in range(start, stop, CHUNK):
            yield self.specs[at : min(at + CHUNK, stop)]


class _BatchSpecs:
    """A source batch's records as builder input, read from the batch again on every pass."""

    def __init__(self, source: SourceRecords, summary: BatchSummary, magic: int) -> None:
        self.source, self.magic = source, magic
        self.count = summary.count
        self.estimated = estimate_total(summary, magic)

    def chunks(self, start: int = 0, stop: int | None = None) -> Iterator[list[RecordSpec]]:
        for chunk in self.source.chunks(start, stop):
            yield record_specs(chunk, self.magic)


class Converter:
    """Turns source batches, fed in log order, into target bytes; holds the group being packed.

    :meth:`feed` yields the output chunks that are ready (a packed group is
    held back until something ends it); :meth:`finish` returns the rest.
    Refusals raise :class:`~kseg.ops.convert.target.ConvertRefused` located at
    the source batch.
    """

    def __init__(self, target: Target, tally: Tally, txn: TxnDeliveries) -> None:
        self.target = target
        self.limit = target.max_message_bytes
        self.tally = tally
        self.txn = txn
        self._group: list[RecordSpec] = []
        self._group_params: Params | None = None
        self._group_size = 0
        self._group_position = 0  # where the group's first message is, for a refusal

    # -- entry points -------------------------------------------------------------
    def feed(self, batch: Batch, source: SourceRecords, summary: BatchSummary) -> Iterator[bytes]:
        """Convert one source batch (its records read once already: ``summary``)."""
        target = self.target
        self._count_in(batch, summary.count)
        if batch.magic > 2:
            raise ConvertRefused(
                f"magic {batch.magic} is not one of Kafka's record formats",
                offset=batch.position,
                field="batch.magic",
            )
        if batch.magic == 2:
            self.txn.observe(batch, summary.count, summary.first_key)
        if target.magic < 2 and not representable(target, self.tally.dropped, batch, summary):
            return
        codec = codec_for(target, batch)
        if batch.magic == 2 and batch.count == 0:  # an empty batch, kept for producer state: only at magic 2
            yield from self._flush()
            yield self._copy(batch, 0)
            return
        if self._unchanged(batch, codec):
            yield from self._flush()
            yield self._copy(batch, summary.count)
            return
        plain_legacy = batch.magic < 2 and batch.codec_id == CODEC_NONE
        if plain_legacy and (target.magic == 2 or codec != CODEC_NONE):
            yield from self._pack(batch, source, codec)
            return
        yield from self._flush()
        # a V2Batch here has magic 2 (greater magics were refused above)
        if isinstance(batch, V2Batch) and target.magic == 2 and builder_records(batch, summary):
            data = recompress(source, summary, codec, target.level, self.limit)
            if data is not None:
                yield self._emit(data, summary.first_offset, summary.count)
                return
        specs: Specs = _BatchSpecs(source, summary, target.magic)
        if source.core is not None:
            specs = CoreSpecs(source, summary, target.magic, source.core)
        yield from self._rebuild(specs, output_params(batch, codec, target.magic), batch.position)

    def finish(self) -> list[bytes]:
        """Whatever is still being packed."""
        return list(self._flush())

    def _unchanged(self, batch: Batch, codec: int) -> bool:
        """Already in the target magic and codec and within the limit: copied (Kafka's in-place path).

        An explicit ``--level`` asks for recompression, so batches of that codec are rebuilt.
        """
        target = self.target
        if batch.magic != target.magic or codec != batch.codec_id or batch.size > self.limit:
            return False
        return target.level is None or codec != target.codec or batch.is_control

    def _count_in(self, batch: Batch, records: int) -> None:
        tally = self.tally
        tally.batches_in += 1
        tally.records_in += records
        tally.bytes_in += batch.size
        tally.magics_in[batch.magic] += 1
        tally.codecs_in[batch.codec] += 1

    # -- building -------------------------------------------------------------------
    def _copy(self, batch: Batch, records: int) -> bytes:
        tally = self.tally
        tally.copied += 1
        tally.batches_out += 1
        tally.records_out += records
        tally.codecs_out[batch.codec] += 1
        return bytes(batch.buf[batch.position : batch.position + batch.size])

    def _pack(self, batch: Batch, source: SourceRecords, codec: int) -> Iterator[bytes]:
        """Add an uncompressed legacy message to the group, ending the group first when it must."""
        magic = self.target.magic
        params = output_params(batch, codec, magic)
        for spec in record_specs(source.all(), magic):
            size = estimate_size(spec, magic)
            if self._group and (
                params != self._group_params
                or self._group_size + size > self.limit
                or spec.offset - self._group[0].offset > MAX_OFFSET_DELTA
            ):
                yield from self._flush()
            if not self._group:
                self._group_size = BATCH_OVERHEAD[magic]
                self._group_position = batch.position
            self._group.append(spec)
            self._group_params = params
            self._group_size += size
            self.tally.packed += 1

    def _flush(self) -> Iterator[bytes]:
        if not self._group:
            return iter(())
        group, params = self._group, self._group_params
        self._group, self._group_params, self._group_size = [], None, 0
        assert params is not None
        return self._rebuild(_GroupSpecs(group, self.target.magic), params, self._group_position)

    def _rebuild(self, specs: Specs, params: Params, position: int) -> Iterator[bytes]:
        """Encode ``specs`` as one batch, or as several when one would pass the limit."""
        try:
            if self.target.magic < 2 and params.codec == CODEC_NONE:
                yield from self._plain_messages(specs, params)
                return
            whole, size, first = self._encode(specs, params, 0, specs.count)
            if whole is not None:
                yield self._emit(whole, first, specs.count)
                return
            self.tally.split += 1
            yield from self._split(specs, params, size)
        except EncodeError as err:
            raise ConvertRefused(
                f"Kafka's builder refuses this data in magic {self.target.magic}: {err.message}",
                offset=position,
                field="batch",
            ) from None

    def _plain_messages(self, specs: Specs, params: Params) -> Iterator[bytes]:
        """Uncompressed V0/V1: one message per record; a record above the limit is oversized."""
        magic = self.target.magic
        encoder = MessageSetEncoder(
            magic=magic, codec=CODEC_NONE, timestamp_type=params.timestamp_type, log_append_time=params.log_append_time
        )
        oversized: list[int] = []
        if isinstance(specs, CoreSpecs) and specs.largest_estimate() <= self.limit:
            yield from specs.plain_entries(encoder)  # no record can be oversized
        else:
            for chunk in specs.chunks():
                yield encoder.add(chunk)
                oversized += (spec.offset for spec in chunk if estimate_size(spec, magic) > self.limit)
        encoder.finish()
        for offset in oversized:
            self.tally.oversized_at(offset)
        self.tally.batches_out += specs.count
        self.tally.records_out += specs.count
        self.tally.codecs_out[codec_name(CODEC_NONE)] += specs.count

    def _encoder(self, params: Params, first: RecordSpec, whole: bool, keep: int | None) -> BatchEncoder | MessageSetEncoder:
        """The builder of one batch starting at ``first``: a part of a split V2 batch keeps each record's sequence."""
        magic = self.target.magic
        if magic < 2:
            return MessageSetEncoder(
                magic=magic, codec=params.codec, level=self._level(params), timestamp_type=params.timestamp_type,
                log_append_time=params.log_append_time, keep=keep,
            )
        base_offset, base_sequence = params.base_offset, params.base_sequence
        if params.base_offset is not None and not whole:  # a later part of a V2 batch rebuilt at V2
            base_offset = first.offset
            if params.base_sequence >= 0:
                base_sequence = increment_sequence(params.base_sequence, first.offset - params.base_offset)
        return BatchEncoder(
            base_offset=base_offset,
            codec=params.codec,
            level=self._level(params),
            timestamp_type=params.timestamp_type,
            log_append_time=params.log_append_time,
            producer_id=params.producer_id,
            producer_epoch=params.producer_epoch,
            base_sequence=base_sequence,
            is_transactional=params.is_transactional,
            is_control=params.is_control,
            partition_leader_epoch=params.partition_leader_epoch,
            delete_horizon_ms=params.delete_horizon_ms,
            keep=keep,
        )

    def _level(self, params: Params) -> int | None:
        return self.target.level if params.codec == self.target.codec else None

    def _encode(self, specs: Specs, params: Params, start: int, end: int) -> tuple[bytes | None, int, int]:
        """(bytes or None past the limit, size, first offset) of one batch of ``specs[start:end]``.

        A single record is kept whatever its size (it goes alone into its own batch).
        """
        keep = None if end - start == 1 else self.limit
        if isinstance(specs, CoreSpecs):
            first = specs.first(start)
            if first is not None:
                encoder = self._encoder(params, RecordSpec(*first, None, None), start == 0, keep)
                if specs.encode_into(encoder, start, end):
                    return self._finished(encoder, params, end == specs.count, first[0])
        part = _Part(self, params, start == 0, keep)
        for chunk in specs.chunks(start, end):
            part.add(chunk)
        return part.finish(last=end == specs.count)

    def _split(self, specs: Specs, params: Params, whole_size: int) -> Iterator[bytes]:
        """Cut by estimated size (scaled by the codec's observed ratio), then halve any part still too big.

        The cut points are those of a greedy pass over every record's estimated
        size; each part is encoded as the records are read (one more read).
        """
        magic = self.target.magic
        ratio = whole_size / max(1, specs.estimated)
        budget = max(1, int(self.limit * SPLIT_MARGIN / ratio))
        cuts = specs.cuts(budget) if isinstance(specs, CoreSpecs) else None
        if cuts is not None:
            bounds = [0, *cuts, specs.count]
            for low, high in pairwise(bounds):
                yield from self._settle_core(specs, params, low, high)
            return
        start, running, index = 0, 0, 0
        part = _Part(self, params, True, self.limit)
        for chunk in specs.chunks():
            taken = 0
            for i, spec in enumerate(chunk):
                size = estimate_size(spec, magic)
                if index + i > start and running + size > budget:
                    part.add(chunk[taken:i])
                    yield from self._settle(specs, params, part, start, index + i)
                    part = _Part(self, params, False, self.limit)
                    start, running, taken = index + i, 0, i
                running += size
            part.add(chunk[taken:])
            index += len(chunk)
        yield from self._settle(specs, params, part, start, specs.count)

    def _settle(self, specs: Specs, params: Params, part: _Part, start: int, end: int) -> Iterator[bytes]:
        """Emit a part that fits (or holds one record); halve one that does not.

        A part of at most :data:`CHUNK` records was kept as it was read; a larger
        one is read again (from the batch: only when the codec's ratio misled the cut).
        """
        data, _, first = part.finish(last=end == specs.count)
        if data is None and part.held is not None:
            specs = _Held(specs, part.held, start)
        if data is None and end - start == 1:
            data, _, first = self._encode(specs, params, start, end)
        if data is not None:
            yield self._emit(data, first, end - start)
            return
        yield from self._fit(specs, params, start, end)

    def _settle_core(self, specs: Specs, params: Params, start: int, end: int) -> Iterator[bytes]:
        """A part cut by the core: what :meth:`_settle` gives for it (the same encodings, in one pass)."""
        data, _, first = self._encode(specs, params, start, end)
        if data is not None:
            yield self._emit(data, first, end - start)
        else:
            yield from self._fit(specs, params, start, end)

    def _finished(
        self, encoder: BatchEncoder | MessageSetEncoder, params: Params, last: bool, first_offset: int
    ) -> tuple[bytes | None, int, int]:
        """(bytes, or None past ``keep``; size; first offset); the last part of a V2 batch keeps its last offset."""
        data, size = encoder.finish()
        last_offset = params.last_offset
        if data is not None and last and last_offset is not None and self.target.magic == 2:
            data = with_last_offset(data, last_offset)
        return data, size, first_offset

    def _fit(self, specs: Specs, params: Params, start: int, end: int) -> Iterator[bytes]:
        middle = (start + end) // 2
        for low, high in ((start, middle), (middle, end)):
            data, _, first = self._encode(specs, params, low, high)
            if data is not None:
                yield self._emit(data, first, high - low)
            else:
                yield from self._fit(specs, params, low, high)

    def _emit(self, data: bytes, first_offset: int, records: int) -> bytes:
        """Count one output batch of ``records`` records; above the limit it can only hold one record."""
        if len(data) > self.limit:
            self.tally.oversized_at(first_offset)
        self.tally.batches_out += 1
        self.tally.records_out += records
        self.tally.codecs_out[codec_name(codec_of(data))] += 1
        return data


class _Held:
    """``specs`` with the records ``[start, start + len(held))`` already in memory: read from there."""

    def __init__(self, specs: Specs, held: list[RecordSpec], start: int) -> None:
        self.specs, self.held, self.start = specs, held, start
        self.count, self.estimated = specs.count, specs.estimated

    def chunks(self, start: int = 0, stop: int | None = None) -> Iterator[list[RecordSpec]]:
        stop = self.count if stop is None else stop
        if not self.start <= start <= stop <= self.start + len(self.held):
            yield from self.specs.chunks(start, stop)
            return
        for at in range(start, stop, CHUNK):
            yield self.held[at - self.start : min(at + CHUNK, stop) - self.start]


class _Part:
    """One output batch being encoded a chunk at a time (the whole batch, or a part of a split one)."""

    def __init__(self, converter: Converter, params: Params, whole: bool, keep: int | None) -> None:
        self.converter, self.params, self.whole, self.keep = converter, params, whole, keep
        self.encoder: BatchEncoder | MessageSetEncoder | None = None
        self.first: RecordSpec | None = None
        self.held: list[RecordSpec] | None = []  # the part's records while they are few (CHUNK at most)

    def add(self, chunk: list[RecordSpec]) -> None:
        if not chunk:
            return
        if self.first is None:
            self.first = chunk[0]
            self.encoder = self.converter._encoder(self.params, chunk[0], self.whole, self.keep)
        if self.params.base_offset is None and self.converter.target.magic == 2:
            check_offset_span([self.first, *chunk])
        assert self.encoder is not None
        self.encoder.add(chunk)
        if self.held is not None:
            self.held = self.held + chunk if len(self.held) + len(chunk) <= CHUNK else None

    def finish(self, *, last: bool) -> tuple[bytes | None, int, int]:
        """(bytes, or None past ``keep``; size; first offset); the last part of a V2 batch keeps its last offset."""
        assert self.encoder is not None and self.first is not None
        return self.converter._finished(self.encoder, self.params, last, self.first.offset)


__all__ = ["Converter"]
