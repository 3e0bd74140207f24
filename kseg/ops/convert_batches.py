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
  batches: :mod:`kseg.ops.convert_target` refuses them or, when allowed,
  counts what is dropped; :mod:`kseg.ops.convert_txn` counts what old
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

Nothing here touches a file; :mod:`kseg.ops.convert` walks segments and writes.
"""

from __future__ import annotations

from collections.abc import Sequence

from kseg.errors import EncodeError
from kseg.format import Batch, encode_batch
from kseg.format.compression import CODEC_NONE
from kseg.format.model import Record, RecordSpec, codec_name, increment_sequence
from kseg.format.v2 import V2Batch
from kseg.ops.convert_build import (
    BATCH_OVERHEAD,
    MAX_OFFSET_DELTA,
    SPLIT_MARGIN,
    Params,
    builder_records,
    check_offset_span,
    codec_of,
    estimate_size,
    output_params,
    recompress,
    record_specs,
    with_last_offset,
)
from kseg.ops.convert_tally import Tally
from kseg.ops.convert_target import ConvertRefused, Target, codec_for, representable
from kseg.ops.convert_txn import TxnDeliveries


class Converter:
    """Turns source batches, fed in log order, into target bytes; holds the group being packed.

    :meth:`feed` returns the output chunks that are ready (a packed group is
    held back until something ends it); :meth:`finish` returns the rest.
    Refusals raise :class:`~kseg.ops.convert_target.ConvertRefused` located at
    the source batch.
    """

    def __init__(self, target: Target, tally: Tally, txn: TxnDeliveries) -> None:
        self.target = target
        self.tally = tally
        self.txn = txn
        self._group: list[RecordSpec] = []
        self._group_params: Params | None = None
        self._group_size = 0
        self._group_position = 0  # where the group's first message is, for a refusal

    # -- entry points -------------------------------------------------------------
    def feed(self, batch: Batch, records: Sequence[Record]) -> list[bytes]:
        """Convert one source batch (its records already decoded and checked)."""
        target = self.target
        self._count_in(batch, records)
        if batch.magic > 2:
            raise ConvertRefused(
                f"magic {batch.magic} is not one of Kafka's record formats",
                offset=batch.position,
                field="batch.magic",
            )
        if batch.magic == 2:
            self.txn.observe(batch, records)
        if target.magic < 2 and not representable(target, self.tally.dropped, batch, records):
            return []
        codec = codec_for(target, batch)
        if batch.magic == 2 and batch.count == 0:  # an empty batch, kept for producer state: only at magic 2
            return [*self._flush(), self._copy(batch, 0)]
        if self._unchanged(batch, codec):
            return [*self._flush(), self._copy(batch, len(records))]
        plain_legacy = batch.magic < 2 and batch.codec_id == CODEC_NONE
        if plain_legacy and (target.magic == 2 or codec != CODEC_NONE):
            return self._pack(batch, records, codec)
        out = self._flush()
        # a V2Batch here has magic 2 (greater magics were refused above)
        if isinstance(batch, V2Batch) and target.magic == 2 and builder_records(batch, records):
            data = recompress(batch, records, codec, target.level)
            if len(data) <= target.max_batch_bytes:
                return [*out, self._emit(data, records[0].offset, len(records))]
        specs = record_specs(records, target.magic)
        return out + self._rebuild(specs, output_params(batch, codec, target.magic), batch.position)

    def finish(self) -> list[bytes]:
        """Whatever is still being packed."""
        return self._flush()

    def _unchanged(self, batch: Batch, codec: int) -> bool:
        """Already in the target magic and codec and within the limit: copied (Kafka's in-place path).

        An explicit ``--level`` asks for recompression, so batches of that codec are rebuilt.
        """
        target = self.target
        if batch.magic != target.magic or codec != batch.codec_id or batch.size > target.max_batch_bytes:
            return False
        return target.level is None or codec != target.codec or batch.is_control

    def _count_in(self, batch: Batch, records: Sequence[Record]) -> None:
        tally = self.tally
        tally.batches_in += 1
        tally.records_in += len(records)
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

    def _pack(self, batch: Batch, records: Sequence[Record], codec: int) -> list[bytes]:
        """Add an uncompressed legacy message to the group, ending the group first when it must."""
        magic = self.target.magic
        params = output_params(batch, codec, magic)
        out: list[bytes] = []
        for spec in record_specs(records, magic):
            size = estimate_size(spec, magic)
            if self._group and (
                params != self._group_params
                or self._group_size + size > self.target.max_batch_bytes
                or spec.offset - self._group[0].offset > MAX_OFFSET_DELTA
            ):
                out += self._flush()
            if not self._group:
                self._group_size = BATCH_OVERHEAD[magic]
                self._group_position = batch.position
            self._group.append(spec)
            self._group_params = params
            self._group_size += size
            self.tally.packed += 1
        return out

    def _flush(self) -> list[bytes]:
        if not self._group:
            return []
        group, params = self._group, self._group_params
        self._group, self._group_params, self._group_size = [], None, 0
        assert params is not None
        return self._rebuild(group, params, self._group_position)

    def _rebuild(self, specs: list[RecordSpec], params: Params, position: int) -> list[bytes]:
        """Encode ``specs`` as one batch, or as several when one would pass the limit."""
        try:
            if self.target.magic < 2 and params.codec == CODEC_NONE:
                return self._plain_messages(specs, params)
            whole = self._encode(specs, params, 0, len(specs))
            if len(whole) <= self.target.max_batch_bytes or len(specs) == 1:
                return [self._emit(whole, specs[0].offset, len(specs))]
            self.tally.split += 1
            return self._split(specs, params, len(whole))
        except EncodeError as err:
            raise ConvertRefused(
                f"Kafka's builder refuses this data in magic {self.target.magic}: {err.message}",
                offset=position,
                field="batch",
            ) from None

    def _plain_messages(self, specs: list[RecordSpec], params: Params) -> list[bytes]:
        """Uncompressed V0/V1: one message per record; a record above the limit is oversized."""
        data = encode_batch(
            specs,
            magic=self.target.magic,
            codec=CODEC_NONE,
            timestamp_type=params.timestamp_type,
            log_append_time=params.log_append_time,
        )
        for spec in specs:
            if estimate_size(spec, self.target.magic) > self.target.max_batch_bytes:
                self.tally.oversized_at(spec.offset)
        self.tally.batches_out += len(specs)
        self.tally.records_out += len(specs)
        self.tally.codecs_out[codec_name(CODEC_NONE)] += len(specs)
        return [data]

    def _encode(self, specs: list[RecordSpec], params: Params, start: int, end: int) -> bytes:
        """One batch of ``specs[start:end]``: a part of a split V2 batch keeps each record's sequence."""
        part = specs[start:end]
        base_offset, base_sequence, last_offset = params.base_offset, params.base_sequence, params.last_offset
        if params.base_offset is not None:  # a V2 batch rebuilt at V2
            if start > 0:
                base_offset = part[0].offset
                if params.base_sequence >= 0:
                    shift = part[0].offset - params.base_offset
                    base_sequence = increment_sequence(params.base_sequence, shift)
            if end < len(specs):
                last_offset = None
        elif self.target.magic == 2:
            check_offset_span(part)
        data = encode_batch(
            part,
            magic=self.target.magic,
            codec=params.codec,
            level=self.target.level if params.codec == self.target.codec else None,
            timestamp_type=params.timestamp_type,
            log_append_time=params.log_append_time,
            base_offset=base_offset,
            producer_id=params.producer_id,
            producer_epoch=params.producer_epoch,
            base_sequence=base_sequence,
            is_transactional=params.is_transactional,
            is_control=params.is_control,
            partition_leader_epoch=params.partition_leader_epoch,
            delete_horizon_ms=params.delete_horizon_ms,
        )
        if last_offset is not None and self.target.magic == 2:
            data = with_last_offset(data, last_offset)
        return data

    def _split(self, specs: list[RecordSpec], params: Params, whole_size: int) -> list[bytes]:
        """Cut by estimated size (scaled by the codec's observed ratio), then halve any part still too big."""
        sizes = [estimate_size(s, self.target.magic) for s in specs]
        ratio = whole_size / max(1, sum(sizes))
        budget = max(1, int(self.target.max_batch_bytes * SPLIT_MARGIN / ratio))
        out: list[bytes] = []
        start, running = 0, 0
        for i, size in enumerate(sizes):
            if i > start and running + size > budget:
                out += self._fit(specs, params, start, i)
                start, running = i, 0
            running += size
        out += self._fit(specs, params, start, len(specs))
        return out

    def _fit(self, specs: list[RecordSpec], params: Params, start: int, end: int) -> list[bytes]:
        data = self._encode(specs, params, start, end)
        if len(data) <= self.target.max_batch_bytes or end - start == 1:
            return [self._emit(data, specs[start].offset, end - start)]
        middle = (start + end) // 2
        return self._fit(specs, params, start, middle) + self._fit(specs, params, middle, end)

    def _emit(self, data: bytes, first_offset: int, records: int) -> bytes:
        """Count one output batch of ``records`` records; above the limit it can only hold one record."""
        if len(data) > self.target.max_batch_bytes:
            self.tally.oversized_at(first_offset)
        self.tally.batches_out += 1
        self.tally.records_out += records
        self.tally.codecs_out[codec_name(codec_of(data))] += 1
        return data


__all__ = ["Converter"]
