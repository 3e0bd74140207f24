"""The pure core of ``kseg convert``: source batches in, target-format bytes out, in order.

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
  batches.  Control batches and transactional batches are refused unless
  ``drop_control`` (Kafka's fetch path drops markers, so aborted records reach
  old consumers as ordinary records); headers are refused unless
  ``drop_headers``.  Zstd cannot go below magic 2: Kafka's message is kept.
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

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from kseg.errors import EncodeError, KsegError, Refused
from kseg.format import Batch, compression, encode_batch
from kseg.format import v2 as v2_format
from kseg.format.compression import CODEC_NONE, CODEC_ZSTD
from kseg.format.control import ABORT, COMMIT, decode_control_key
from kseg.format.model import CREATE_TIME, LOG_APPEND_TIME, Record, RecordSpec, codec_name, increment_sequence

#: ``LogConfig.DEFAULT_MAX_MESSAGE_BYTES`` (max.message.bytes): 1 MiB + the 12-byte log overhead.
DEFAULT_MAX_BATCH_BYTES = 1024 * 1024 + 12
MAX_OFFSET_DELTA = 0x7FFFFFFF
MAX_RECORD_OVERHEAD_V2 = 21  # DefaultRecord.MAX_RECORD_OVERHEAD
HEADER_OVERHEAD_V2 = 10  # two varint lengths, at most 5 bytes each
LEGACY_ENTRY_OVERHEAD = {0: 12 + 14, 1: 12 + 22}  # log overhead + LegacyRecord.RECORD_OVERHEAD_V0/V1
CODEC_FRAME_ALLOWANCE = 32  # gzip/snappy/lz4/zstd stream headers and trailers, for a first guess
#: bytes a batch (or a V0/V1 wrapper) has before its first record: the start of a group's size
BATCH_OVERHEAD = {
    0: LEGACY_ENTRY_OVERHEAD[0] + CODEC_FRAME_ALLOWANCE,
    1: LEGACY_ENTRY_OVERHEAD[1] + CODEC_FRAME_ALLOWANCE,
    2: v2_format.RECORD_BATCH_OVERHEAD,
}
SPLIT_MARGIN = 0.95  # aim a little under the limit when cutting by estimated size
KEEP_OVERSIZED_OFFSETS = 10

ZSTD_DOWN_CONVERSION = "Down-conversion of zstandard-compressed batches is not supported"


class ConvertRefused(Refused):
    """Input the target format cannot hold, or options Kafka refuses: nothing is written."""


@dataclass(frozen=True, slots=True)
class Target:
    """What to convert to, and what may be dropped on the way."""

    magic: int
    codec: int | None = None  # None: each batch keeps its own codec
    level: int | None = None
    max_batch_bytes: int = DEFAULT_MAX_BATCH_BYTES
    drop_control: bool = False
    drop_headers: bool = False


@dataclass(slots=True)
class Dropped:
    """What the target format could not hold (only ever non-zero below magic 2)."""

    control_batches: int = 0
    control_records: int = 0
    transactional_batches: int = 0  # their records are kept, the transactional flag is not
    transactional_records: int = 0
    header_records: int = 0  # records whose headers were dropped
    headers: int = 0
    producer_batches: int = 0  # batches whose producer id, epoch and sequence were dropped
    timestamps: int = 0  # records whose timestamp was dropped (magic 0)
    partition_leader_epochs: int = 0  # batches whose leader epoch was dropped
    delete_horizons: int = 0  # batches whose delete horizon was dropped
    empty_batches: int = 0  # V2 batches with no records (kept by the cleaner for producer state)

    def add(self, other: Dropped) -> None:
        for name in self.__dataclass_fields__:
            setattr(self, name, getattr(self, name) + getattr(other, name))

    def as_dict(self) -> dict[str, int]:
        return {name: getattr(self, name) for name in self.__dataclass_fields__}


@dataclass(slots=True)
class Tally:
    """Counts for one segment (or, added up, for a run)."""

    batches_in: int = 0
    records_in: int = 0
    bytes_in: int = 0  # bytes of the batches read (skipped damage not included)
    batches_out: int = 0
    records_out: int = 0
    bytes_out: int = 0
    copied: int = 0  # batches copied byte for byte
    packed: int = 0  # uncompressed legacy messages packed into larger batches
    split: int = 0  # source batches (or packed groups) split to fit the limit
    oversized: int = 0  # records alone in a batch above the limit
    oversized_offsets: list[int] = field(default_factory=list)  # the first few of them
    magics_in: Counter = field(default_factory=Counter)
    codecs_in: Counter = field(default_factory=Counter)
    codecs_out: Counter = field(default_factory=Counter)
    dropped: Dropped = field(default_factory=Dropped)

    def add(self, other: Tally) -> None:
        for name in ("batches_in", "records_in", "bytes_in", "batches_out", "records_out", "bytes_out",
                     "copied", "packed", "split", "oversized"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        room = KEEP_OVERSIZED_OFFSETS - len(self.oversized_offsets)
        self.oversized_offsets.extend(other.oversized_offsets[:room])
        self.magics_in.update(other.magics_in)
        self.codecs_in.update(other.codecs_in)
        self.codecs_out.update(other.codecs_out)
        self.dropped.add(other.dropped)


@dataclass(slots=True)
class TxnDeliveries:
    """What becomes of transactional records once their markers are gone (down-conversion).

    Counts converted transactional records per producer until that producer's
    next COMMIT or ABORT marker; records of an aborted transaction are then
    delivered to old consumers as ordinary records -- exactly what Kafka's
    down-conversion does.  Carried across the segments of a partition.
    """

    open_records: dict[int, int] = field(default_factory=dict)  # producer id -> records since its last marker
    aborted: int = 0
    committed: int = 0

    @property
    def undecided(self) -> int:
        """Transactional records whose marker is not in the converted data."""
        return sum(self.open_records.values())

    def observe(self, batch: Batch, records: Sequence[Record]) -> None:
        if batch.is_control:
            kind = _marker_kind(records)
            if kind in (ABORT, COMMIT):
                finished = self.open_records.pop(batch.producer_id, 0)
                if kind == ABORT:
                    self.aborted += finished
                else:
                    self.committed += finished
        elif batch.is_transactional and records:
            self.open_records[batch.producer_id] = self.open_records.get(batch.producer_id, 0) + len(records)


def _marker_kind(records: Sequence[Record]) -> int | None:
    """ABORT or COMMIT for an end-transaction marker; None for other control records."""
    if not records:
        return None
    try:
        return decode_control_key(records[0].key).type_id
    except KsegError:
        return None


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


def builder_records(batch: Batch, records: Sequence[Record]) -> bool:
    """Whether a V2 batch's record bytes are what ``MemoryRecordsBuilder`` would write for its records.

    Then a codec change only needs the records region recompressed: re-encoding
    each record would give the same bytes.  That holds for CreateTime batches
    (with LogAppendTime the builder writes zero deltas, the source may not)
    whose records have attributes 0 and whose base timestamp is the first
    record's (or the delete horizon).  Kafka always writes minimal varints; a
    foreign writer's longer ones would be kept, and read the same.
    """
    if not records or batch.timestamp_type != CREATE_TIME or batch.is_control:
        return False
    if batch.delete_horizon_ms is None and batch.base_timestamp != records[0].timestamp:
        return False
    return not any(r.attributes for r in records)


def estimate_size(spec: RecordSpec, magic: int) -> int:
    """An upper bound of a record's uncompressed bytes in ``magic`` (the whole entry for V0/V1)."""
    size = (len(spec.key) if spec.key is not None else 0) + (len(spec.value) if spec.value is not None else 0)
    if magic < 2:
        return LEGACY_ENTRY_OVERHEAD[magic] + size
    for key, value in spec.headers:
        size += HEADER_OVERHEAD_V2 + len(key) + (len(value) if value is not None else 0)
    return MAX_RECORD_OVERHEAD_V2 + 5 + size  # + the header-count varint


def with_last_offset(batch: bytes, last_offset: int) -> bytes:
    """A V2 batch whose ``lastOffsetDelta`` reaches ``last_offset`` (``overrideLastOffset``), CRC redone."""
    header = v2_format.V2Batch(batch, 0)
    if header.last_offset == last_offset:
        return batch
    return v2_format.assemble_batch(
        batch[v2_format.RECORD_BATCH_OVERHEAD :],
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


def check_target(target: Target) -> None:
    """Refuse what Kafka's builder refuses whatever the data: zstd below magic 2, a bad level."""
    if target.magic not in (0, 1, 2):
        raise ConvertRefused(f"Invalid magic value {target.magic}: Kafka's formats are 0, 1 and 2")
    if target.codec == CODEC_ZSTD and target.magic < 2:
        raise ConvertRefused(f"ZStandard compression is not supported for magic {target.magic}")
    if target.max_batch_bytes < 1:
        raise ConvertRefused(f"--max-batch-bytes must be positive (got {target.max_batch_bytes})")
    if target.level is not None:
        if target.codec is None:
            raise ConvertRefused("--level needs --compression (each codec has its own levels)")
        try:
            probe = [RecordSpec(0, -1, None, b"")]
            encode_batch(probe, magic=target.magic, codec=target.codec, level=target.level)
        except EncodeError as err:
            raise ConvertRefused(err.message) from None


class Converter:
    """Turns source batches, fed in log order, into target bytes; holds the group being packed.

    :meth:`feed` returns the output chunks that are ready (a packed group is
    held back until something ends it); :meth:`finish` returns the rest.
    Refusals raise :class:`ConvertRefused` located at the source batch.
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
        self._count_in(batch, records)
        if batch.magic > 2:
            raise ConvertRefused(
                f"magic {batch.magic} is not one of Kafka's record formats",
                offset=batch.position,
                field="batch.magic",
            )
        if batch.magic == 2:
            self.txn.observe(batch, records)
        if self.target.magic < 2 and not self._representable(batch, records):
            return []
        codec = self._codec_for(batch)
        if batch.magic == 2 and batch.count == 0:  # an empty batch, kept for producer state: only at magic 2
            return self._flush() + [self._copy(batch, 0)]
        if self._unchanged(batch, codec):
            return self._flush() + [self._copy(batch, len(records))]
        plain_legacy = batch.magic < 2 and batch.codec_id == CODEC_NONE
        if plain_legacy and (self.target.magic == 2 or codec != CODEC_NONE):
            return self._pack(batch, records, codec)
        out = self._flush()
        if batch.magic == 2 and self.target.magic == 2 and builder_records(batch, records):
            data = self._recompress(batch, records, codec)
            if len(data) <= self.target.max_batch_bytes:
                return out + [self._emit(data, records[0].offset, len(records))]
        return out + self._rebuild(self._specs(batch, records), self._params(batch, codec), batch.position)

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
        return self.target.level is None or codec != self.target.codec or batch.is_control

    # -- what the target can hold -----------------------------------------------------
    def _count_in(self, batch: Batch, records: Sequence[Record]) -> None:
        tally = self.tally
        tally.batches_in += 1
        tally.records_in += len(records)
        tally.bytes_in += batch.size
        tally.magics_in[batch.magic] += 1
        tally.codecs_in[batch.codec] += 1

    def _representable(self, batch: Batch, records: Sequence[Record]) -> bool:
        """Below magic 2: refuse, or count what is lost (``RecordsUtil.downConvert``).

        Returns False when the whole batch is dropped.
        """
        magic, dropped = self.target.magic, self.tally.dropped
        if batch.is_control:
            if not self.target.drop_control:
                raise ConvertRefused(
                    f"control batch ({len(records)} records) cannot be represented in magic {magic}; "
                    "--drop-control drops control batches as Kafka's down-conversion does",
                    offset=batch.position,
                    field="batch.attributes",
                )
            dropped.control_batches += 1
            dropped.control_records += len(records)
            return False
        if batch.is_transactional:
            if not self.target.drop_control:
                raise ConvertRefused(
                    f"transactional batch (producer {batch.producer_id}) cannot be represented "
                    f"in magic {magic}: "
                    "its records would reach consumers as ordinary records even if the transaction aborted; "
                    "--drop-control converts it anyway, as Kafka's down-conversion does",
                    offset=batch.position,
                    field="batch.attributes",
                )
            dropped.transactional_batches += 1
            dropped.transactional_records += len(records)
        if batch.magic == 2 and batch.count == 0:
            dropped.empty_batches += 1
            return False
        self._count_headers(batch, records)
        dropped.producer_batches += batch.producer_id >= 0
        dropped.partition_leader_epochs += batch.magic == 2 and batch.partition_leader_epoch != -1
        dropped.delete_horizons += batch.delete_horizon_ms is not None
        if magic == 0:
            dropped.timestamps += sum(1 for r in records if r.timestamp != -1)
        return True

    def _count_headers(self, batch: Batch, records: Sequence[Record]) -> None:
        with_headers = [r for r in records if r.headers]
        if not with_headers:
            return
        if not self.target.drop_headers:
            first = with_headers[0]
            raise ConvertRefused(
                f"record at offset {first.offset} has {len(first.headers)} header(s) and magic "
                f"{self.target.magic} cannot hold headers "
                f"({len(with_headers)} such record(s) in this batch); "
                "--drop-headers drops them",
                offset=batch.position,
                field="record.headers",
            )
        self.tally.dropped.header_records += len(with_headers)
        self.tally.dropped.headers += sum(len(r.headers) for r in with_headers)

    def _codec_for(self, batch: Batch) -> int:
        if batch.is_control:
            return batch.codec_id  # Kafka never (re)compresses control batches
        codec = self.target.codec if self.target.codec is not None else batch.codec_id
        if codec == CODEC_ZSTD and self.target.magic < 2:
            raise ConvertRefused(
                f"{ZSTD_DOWN_CONVERSION} (magic {self.target.magic}); "
                "choose another codec with --compression",
                offset=batch.position,
                field="batch.attributes",
            )
        return codec

    # -- building -------------------------------------------------------------------
    def _params(self, batch: Batch, codec: int) -> Params:
        """Output batch arguments: a V2 batch kept at V2 keeps everything, other paths timestamps only."""
        log_append = batch.timestamp_type == LOG_APPEND_TIME
        params = Params(
            codec,
            LOG_APPEND_TIME if log_append else CREATE_TIME,
            batch.max_timestamp if log_append else -1,
        )
        if batch.magic < 2 or self.target.magic < 2:
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

    def _recompress(self, batch: v2_format.V2Batch, records: Sequence[Record], codec: int) -> bytes:
        """The batch with its record bytes kept and only the codec changed (see :func:`builder_records`)."""
        region: bytes | memoryview = batch.records_region()
        if batch.codec_id != CODEC_NONE:
            try:
                region = compression.decompress(batch.codec_id, region, magic=2)
            except KsegError as err:
                raise err.located(batch.position + v2_format.RECORD_BATCH_OVERHEAD, "batch.records")
        if codec != CODEC_NONE:
            region = compression.compress(codec, region, magic=2, level=self.target.level)
        flags = v2_format.TRANSACTIONAL_MASK | v2_format.CONTROL_MASK | v2_format.DELETE_HORIZON_MASK
        attributes = codec | (batch.attributes & flags)
        return v2_format.assemble_batch(
            bytes(region),
            base_offset=batch.base_offset,
            partition_leader_epoch=batch.partition_leader_epoch,
            attributes=attributes,
            last_offset_delta=batch.last_offset_delta,
            base_timestamp=batch.base_timestamp,
            max_timestamp=max(r.timestamp for r in records),
            producer_id=batch.producer_id,
            producer_epoch=batch.producer_epoch,
            base_sequence=batch.base_sequence,
            records_count=len(records),
        )

    def _specs(self, batch: Batch, records: Sequence[Record]) -> list[RecordSpec]:
        keep_headers = self.target.magic == 2
        if keep_headers:
            return [RecordSpec(r.offset, r.timestamp, r.key, r.value, r.headers) for r in records]
        return [RecordSpec(r.offset, r.timestamp, r.key, r.value) for r in records]

    def _copy(self, batch: Batch, records: int) -> bytes:
        tally = self.tally
        tally.copied += 1
        tally.batches_out += 1
        tally.records_out += records
        tally.codecs_out[batch.codec] += 1
        return bytes(batch.buf[batch.position : batch.position + batch.size])

    def _pack(self, batch: Batch, records: Sequence[Record], codec: int) -> list[bytes]:
        """Add an uncompressed legacy message to the group, ending the group first when it must."""
        params = self._params(batch, codec)
        out: list[bytes] = []
        for spec in self._specs(batch, records):
            size = estimate_size(spec, self.target.magic)
            if self._group and (
                params != self._group_params
                or self._group_size + size > self.target.max_batch_bytes
                or spec.offset - self._group[0].offset > MAX_OFFSET_DELTA
            ):
                out += self._flush()
            if not self._group:
                self._group_size = BATCH_OVERHEAD[self.target.magic]
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
                self._oversized(spec.offset)
        self.tally.batches_out += len(specs)
        self.tally.records_out += len(specs)
        self.tally.codecs_out[codec_name(CODEC_NONE)] += len(specs)
        return [data]

    def _encode(self, specs: list[RecordSpec], params: Params, start: int, end: int) -> bytes:
        """One batch of ``specs[start:end]``: a part of a split V2 batch keeps each record's sequence."""
        part = specs[start:end]
        base_offset, base_sequence, last_offset = params.base_offset, params.base_sequence, params.last_offset
        if base_offset is not None:  # a V2 batch rebuilt at V2
            if start > 0:
                base_offset = part[0].offset
                if params.base_sequence >= 0:
                    shift = part[0].offset - params.base_offset
                    base_sequence = increment_sequence(params.base_sequence, shift)
            if end < len(specs):
                last_offset = None
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
            self._oversized(first_offset)
        self.tally.batches_out += 1
        self.tally.records_out += records
        self.tally.codecs_out[codec_name(_codec_of(data))] += 1
        return data

    def _oversized(self, offset: int) -> None:
        self.tally.oversized += 1
        if len(self.tally.oversized_offsets) < KEEP_OVERSIZED_OFFSETS:
            self.tally.oversized_offsets.append(offset)


def _codec_of(entry: bytes) -> int:
    """The codec id of an encoded batch or wrapper (attributes: byte 21 in V2, byte 17 in V0/V1)."""
    magic = entry[16]
    return (entry[22] if magic == 2 else entry[17]) & 0x07


__all__ = [
    "DEFAULT_MAX_BATCH_BYTES",
    "ConvertRefused",
    "Converter",
    "Dropped",
    "Params",
    "Tally",
    "Target",
    "TxnDeliveries",
    "check_target",
    "estimate_size",
    "with_last_offset",
]
