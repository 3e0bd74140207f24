"""Plan what ``kseg recover`` keeps of one segment: Kafka's valid prefix, or every intact batch.

Two modes, both pure (this module reads a buffer and returns data; the files
are written by :mod:`kseg.ops.recover_files`):

* **kafka** (default): exactly what ``LogSegment.recover`` keeps (reference
  §4.2) -- the bytes before the first batch it refuses, computed by
  :func:`kseg.ops.reindex.build_indexes` (the one implementation of that walk).
  Everything after is *cut*; the cut is described (bytes, offsets, intact
  batches inside it, records) but never removed from the input.
* **salvage**: Kafka's prefix, then every intact batch after the damage, found
  by :func:`kseg.format.scan.scan` (whole entry, known magic, CRC verifies).  A
  batch is kept only if Kafka's recovery would accept it *in the output*: its
  last offset fits the segment, its first offset is above every offset kept
  so far (offsets strictly increase), and the producer-state tracking that
  recovery runs does not reject it (an undecodable transaction marker, a
  non-transactional write inside an open transaction).  Each dropped batch
  and each damaged range is a :class:`Loss` with its reason.

Kept batches are copied byte for byte, in file order, never re-encoded: a
batch whose payload is damaged is lost whole (for a compressed batch there is
no other choice -- its records are one compressed stream).

When Kafka's own recovery throws on the input (offsets outside the segment,
offsets going backwards at an index point, impossible transaction state --
:class:`~kseg.ops.reindex.RecoveryFailure`), kafka mode keeps nothing
(``Plan.refused``): Kafka would split, empty or fail to load the segment, and
kseg writes no guess.  Salvage mode keeps what is acceptable.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from dataclasses import dataclass, replace

from kseg.errors import InvalidRecord, KsegError
from kseg.format import Batch, BatchWalk
from kseg.format.layout import MAX_RELATIVE_OFFSET
from kseg.format.scan import BAD_CRC, PARTIAL, Gap, scan
from kseg.format.v0v1 import LegacyBatch
from kseg.format.v2 import V2Batch
from kseg.recovery.indexes import (
    DEFAULT_INDEX_INTERVAL_BYTES,
    STOP_INVALID_RECORD,
    IndexBuild,
    RecoveryFailure,
    build_indexes,
)
from kseg.recovery.producer_state import RecoveryAbort, TxnTracker, track_producer_batch
from kseg.segment import release_pages

KAFKA, SALVAGE = "kafka", "salvage"
RELEASE_EVERY = 16 * 1024 * 1024  # drop mapped pages behind the walk so the resident set stays flat

#: Kinds of region in a segment map (``Plan.regions``).
KEPT = "kept"  # before any loss: what Kafka keeps too
SALVAGED = "salvaged"  # intact batches after a loss (--salvage only)
LOST = "lost"  # not in the output
HOLE = "hole"  # not in the output, and every byte is zero

#: Why bytes are not in the output (``Loss.reason``); kafka mode uses the ``STOP_*`` of reindex.
DAMAGED = "damaged"  # no intact batch covers these bytes (salvage)
NOT_INCREASING = "offsets-not-increasing"  # an intact batch whose offsets do not pass the last kept one
OUT_OF_RANGE = "offset-out-of-range"  # an intact batch whose last offset does not fit the segment
INVALID_RECORD = "invalid-record"  # recovery stops after this batch (an undecodable transaction marker)
RECOVERY_FAILS = "recovery-fails"  # recovery's producer-state tracking would throw on this batch


@dataclass(frozen=True, slots=True)
class Claimed:
    """What a damaged entry's own header says -- unverified: its CRC fails or it is cut short."""

    magic: int
    # V2 base offset; None for a legacy wrapper (its header holds the last offset only)
    first_offset: int | None
    last_offset: int
    records: int | None  # V2 records count; None for legacy
    codec: str


@dataclass(frozen=True, slots=True)
class Run:
    """Consecutive input bytes copied unchanged into the output."""

    start: int
    end: int
    first_offset: int
    last_offset: int  # the highest last offset in the run
    batches: int
    records: int | None  # None when a legacy wrapper could not be counted
    salvaged: bool  # comes after a loss (only --salvage keeps such runs)

    @property
    def size(self) -> int:
        return self.end - self.start


@dataclass(frozen=True, slots=True)
class Loss:
    """Input bytes ``[start, end)`` that are not in the output, and what they held as far as can be told."""

    start: int
    end: int
    reason: str
    detail: str
    batches: int = 0  # intact (CRC-valid) batches lost in this range
    records: int | None = 0  # records in those batches; None when one could not be counted
    damaged_bytes: int = 0  # bytes no intact batch covers
    zero_filled: bool = False  # the damaged bytes are all zero (a hole, a preallocated tail)
    first_offset: int | None = None  # first offset missing from the output because of this range
    last_offset: int | None = None  # last one; None with open_ended
    open_ended: bool = False  # offsets from first_offset on: nothing after the range tells where they end
    claimed: Claimed | None = None  # the header of the damaged entry at ``start``, if it can be read
    salvageable: int = 0  # kafka mode: intact batches in this range that --salvage keeps

    @property
    def size(self) -> int:
        return self.end - self.start

    @property
    def offsets_missing(self) -> bool:
        return self.first_offset is not None


@dataclass(frozen=True, slots=True)
class Region:
    """A stretch of the input for the segment map."""

    start: int
    end: int
    kind: str  # KEPT | SALVAGED | LOST | HOLE


@dataclass(frozen=True, slots=True)
class Plan:
    """What recovery keeps of one segment and what it loses."""

    base_offset: int
    size: int  # input bytes
    mode: str  # KAFKA | SALVAGE
    kafka: IndexBuild  # LogSegment.recover on the input
    runs: tuple[Run, ...]
    losses: tuple[Loss, ...]
    regions: tuple[Region, ...]
    first_offset: int | None  # first offset of the first intact batch of the input
    last_offset: int | None  # last offset of the last intact batch of the input
    intact_batches: int = 0  # CRC-valid batches in the input (kept or not)
    refused: RecoveryFailure | None = None  # kafka mode: Kafka's recovery throws, nothing is kept
    kafka_next_offset: int | None = None  # readNextOffset after Kafka's recovery (None: it throws)

    @property
    def output_size(self) -> int:
        return sum(run.size for run in self.runs)

    @property
    def changed(self) -> bool:
        """Something is cut, dropped or refused: the output is not the input."""
        return bool(self.losses) or self.refused is not None

    @property
    def kept_batches(self) -> int:
        return sum(run.batches for run in self.runs)

    @property
    def kept_records(self) -> int | None:
        return _total(run.records for run in self.runs)

    @property
    def lost_bytes(self) -> int:
        return sum(loss.size for loss in self.losses)

    @property
    def lost_batches(self) -> int:
        return sum(loss.batches for loss in self.losses)

    @property
    def lost_records(self) -> int | None:
        return _total(loss.records for loss in self.losses)

    @property
    def damaged_bytes(self) -> int:
        return sum(loss.damaged_bytes for loss in self.losses)


def _total(counts: Iterator[int | None]) -> int | None:
    total = 0
    for count in counts:
        if count is None:
            return None
        total += count
    return total


# -- facts about one batch -----------------------------------------------------------


def first_offset_of(batch: Batch) -> int:
    """The batch's first offset (a legacy wrapper whose records cannot be read: its last offset)."""
    if batch.magic >= 2:
        return batch.base_offset
    try:
        return batch.base_offset
    except KsegError:
        return batch.last_offset


def records_of(batch: Batch) -> int | None:
    """Records in the batch (V2: the stored count; a legacy wrapper is decompressed); None if unreadable."""
    if batch.magic >= 2:
        return batch.count
    if batch.codec_id == 0:
        return 1
    try:
        return len(batch.records())
    except KsegError:
        return None


def claimed_header(buf: bytes | memoryview, gap: Gap) -> Claimed | None:
    """The header of the entry a gap starts with, when one is there to read (bad CRC, cut short)."""
    if gap.reason not in (BAD_CRC, PARTIAL) or gap.start + 17 > len(buf):
        return None
    magic = buf[gap.start + 16]
    try:
        if magic == 2:
            batch = V2Batch(buf, gap.start)
            return Claimed(2, batch.base_offset, batch.last_offset, batch.records_count, batch.codec)
        if magic in (0, 1) and gap.start + 12 + 6 <= len(buf):
            legacy = LegacyBatch(buf, gap.start)
            return Claimed(magic, None, legacy.last_offset, None, legacy.codec)
    except KsegError:
        return None
    return None


# -- the selection ------------------------------------------------------------------


class _Selection:
    """Runs, losses and regions, accumulated as batches are kept or dropped in file order.

    The open run and the open region are kept as plain mutable fields and
    frozen only when they end: this is called once per batch, and a segment
    can hold millions of batches.
    """

    def __init__(self, base_offset: int) -> None:
        self.base_offset = base_offset
        self.runs: list[Run] = []
        self.losses: list[Loss] = []
        self.regions: list[Region] = []
        self.high: int | None = None  # highest last offset kept
        self.lost_any = False
        self.first_seen: int | None = None
        self.last_seen: int | None = None
        self.intact = 0  # batches kept or dropped
        self._run: list | None = None  # [start, end, first, last, batches, records, salvaged]
        self._region_at: list | None = None  # [start, end, kind]
        self._pending: list[int] = []  # indexes of losses whose offset range waits for the next kept batch

    def _next_offset(self) -> int:
        return self.base_offset if self.high is None else self.high + 1

    def _seen(self, first: int, last: int) -> None:
        """Edges of the map: the first and last offsets of the intact batches (out-of-range ones excepted)."""
        if self.first_seen is None:
            self.first_seen = first
        if self.last_seen is None or last > self.last_seen:
            self.last_seen = last

    def _resolve(self, first: int) -> None:
        """The damage before a kept batch held at most the offsets up to the kept batch's first one."""
        for i in self._pending:
            loss = self.losses[i]
            if loss.first_offset is not None and first - 1 >= loss.first_offset:
                self.losses[i] = replace(loss, last_offset=first - 1, open_ended=False)
            else:
                self.losses[i] = replace(loss, first_offset=None, open_ended=False)
        self._pending.clear()

    def _region(self, start: int, end: int, kind: str) -> None:
        region = self._region_at
        if region is not None and region[2] == kind and region[1] == start:
            region[1] = end
            return
        if region is not None:
            self.regions.append(Region(*region))
        self._region_at = [start, end, kind]

    def _close(self) -> None:
        if self._run is not None:
            self.runs.append(Run(*self._run))
            self._run = None

    def keep(self, batch: Batch, first: int, last: int, records: int | None) -> None:
        self.intact += 1
        position = batch.position
        end = position + batch.size
        run = self._run
        if run is not None and run[1] == position:
            run[1] = end
            run[3] = max(run[3], last)
            run[4] += 1
            run[5] = None if run[5] is None or records is None else run[5] + records
        else:
            self._close()
            self._run = [position, end, first, last, 1, records, self.lost_any]
        if self.high is None or last > self.high:
            self.high = last
        self._region(position, end, SALVAGED if self.lost_any else KEPT)
        if self._pending:
            self._resolve(first)
        self._seen(first, last)

    def drop(
        self, batch: Batch, first: int, last: int, records: int | None, reason: str, detail: str
    ) -> None:
        self.intact += 1
        self._close()
        end = batch.position + batch.size
        self.losses.append(Loss(batch.position, end, reason, detail, 1, records, 0, False, first, last))
        self.lost_any = True
        self._region(batch.position, end, LOST)
        if reason != OUT_OF_RANGE:
            self._seen(first, last)
        # a batch dropped for producer state still sits where its offsets belong: damage before it ends there
        if reason not in (OUT_OF_RANGE, NOT_INCREASING):
            self._resolve(first)

    def damage(self, buf: bytes | memoryview, gap: Gap) -> None:
        self._close()
        self.losses.append(
            Loss(
                gap.start,
                gap.end,
                DAMAGED,
                describe_gap(gap),
                0,
                0,
                gap.size,
                gap.zero_filled,
                self._next_offset(),
                None,
                True,
                claimed_header(buf, gap),
            )
        )
        self._pending.append(len(self.losses) - 1)
        self.lost_any = True
        self._region(gap.start, gap.end, HOLE if gap.zero_filled else LOST)

    def finish(self) -> None:
        """Close the last run and region.  Damage with no kept batch after it stays open-ended -- unless
        it is all zeros, which holds no batch (a preallocated or sparse tail): no offsets are known lost."""
        self._close()
        if self._region_at is not None:
            self.regions.append(Region(*self._region_at))
            self._region_at = None
        for i in self._pending:
            if self.losses[i].zero_filled:
                self.losses[i] = replace(self.losses[i], first_offset=None, open_ended=False)
        self._pending.clear()


GAP_WORDS = {
    "bad-size": "a size field below the minimum for its magic",
    "bad-magic": "a magic byte that is not 0, 1 or 2",
    "partial-batch": "an entry that runs past the end of the file",
    "short-tail": "too few bytes for an entry header",
    "bad-crc": "the checksum does not match",
}


def describe_gap(gap: Gap) -> str:
    """Why a gap's first entry was refused, in words."""
    words = GAP_WORDS.get(gap.reason, gap.reason)
    if gap.declared_size is not None and gap.reason in ("bad-size", "partial-batch", "bad-crc"):
        words += f" (size field {gap.declared_size})"
    return words


def _check(
    batch: Batch, first: int, last: int, base_offset: int, high: int | None, tracker: TxnTracker
) -> tuple[str, str] | None:
    """Why Kafka's recovery of the output would refuse ``batch`` after what is kept (None: it accepts it).

    Producer state is updated only for a batch that passes the offset checks,
    as ``LogSegment.recover`` does.
    """
    if not 0 <= last - base_offset <= MAX_RELATIVE_OFFSET:
        return OUT_OF_RANGE, (
            f"last offset {last} does not fit a segment with base offset {base_offset} "
            "(Kafka would split the segment)"
        )
    if high is not None and first <= high:
        return NOT_INCREASING, f"offsets {first}-{last} do not pass {high}, the last offset kept"
    return producer_refusal(batch, tracker)


def producer_refusal(batch: Batch, tracker: TxnTracker) -> tuple[str, str] | None:
    """Run recovery's producer-state step on ``batch``; the reason it would refuse it, if any."""
    if batch.magic < 2 or batch.producer_id < 0:
        return None
    try:
        track_producer_batch(tracker, batch)  # type: ignore[arg-type]
    except InvalidRecord as err:
        return INVALID_RECORD, f"{err.message} (Kafka's recovery stops after this batch)"
    except RecoveryAbort as abort:
        return RECOVERY_FAILS, f"{abort.exception}: {abort.message}"
    return None


def _select(
    buf: bytes | memoryview, base_offset: int, prefix_end: int, tracker: TxnTracker
) -> tuple[_Selection, _PrefixStats]:
    """Kafka's prefix as Kafka keeps it, then every intact batch after it that recovery would accept."""
    sel = _Selection(base_offset)
    stats = _PrefixStats()
    released = 0
    for batch in BatchWalk(buf, 0, prefix_end, strict=False):
        first, last, records = first_offset_of(batch), batch.last_offset, records_of(batch)
        stats.add(first, last, records)
        refusal = producer_refusal(batch, tracker)
        if refusal is None:
            sel.keep(batch, first, last, records)
        else:
            sel.drop(batch, first, last, records, *refusal)
        released = _release_behind(buf, released, batch.position)
    for item in scan(buf, prefix_end):
        if isinstance(item, Gap):
            sel.damage(buf, item)
            released = _release_behind(buf, released, item.start)
            continue
        first, last, records = first_offset_of(item), item.last_offset, records_of(item)
        refusal = _check(item, first, last, base_offset, sel.high, tracker)
        if refusal is None:
            sel.keep(item, first, last, records)
        else:
            sel.drop(item, first, last, records, *refusal)
        released = _release_behind(buf, released, item.position)
    sel.finish()
    return sel, stats


def _release_behind(buf: bytes | memoryview, released: int, position: int) -> int:
    """Release mapped pages before ``position`` once enough have been walked (see ``release_pages``)."""
    if position - released < RELEASE_EVERY:
        return released
    return release_pages(buf, released, position)


class _PrefixStats:
    """Offsets and records of the batches Kafka keeps."""

    __slots__ = ("batches", "first", "high", "records")

    def __init__(self) -> None:
        self.batches = 0
        self.records: int | None = 0
        self.first: int | None = None
        self.high: int | None = None

    def add(self, first: int, last: int, records: int | None) -> None:
        self.batches += 1
        self.records = None if self.records is None or records is None else self.records + records
        if self.first is None:
            self.first = first
        if self.high is None or last > self.high:
            self.high = last


# -- the two modes --------------------------------------------------------------------


def plan_segment(
    buf: bytes | memoryview,
    base_offset: int,
    *,
    salvage: bool = False,
    txn: TxnTracker | None = None,
    index_interval_bytes: int = DEFAULT_INDEX_INTERVAL_BYTES,
) -> tuple[Plan, TxnTracker]:
    """What recovery keeps of ``buf``, and the producer state after the output (for the next segment).

    ``txn`` (not modified) is the producer state at this segment's base
    offset, from the earlier segments of the partition.
    """
    start = txn if txn is not None else TxnTracker()
    kafka_tracker, salvage_tracker = copy.deepcopy(start), copy.deepcopy(start)
    kafka = build_indexes(buf, base_offset, index_interval_bytes=index_interval_bytes, txn=kafka_tracker)
    prefix_end = kafka.valid_bytes if kafka.failure is None else 0
    sel, prefix = _select(buf, base_offset, prefix_end, salvage_tracker)
    first_seen, last_seen = sel.first_seen, sel.last_seen
    next_offset = (
        None if kafka.failure is not None else (base_offset if prefix.high is None else prefix.high + 1)
    )
    if salvage:
        plan = Plan(
            base_offset,
            len(buf),
            SALVAGE,
            kafka,
            tuple(sel.runs),
            tuple(sel.losses),
            tuple(sel.regions),
            first_seen,
            last_seen,
            sel.intact,
            kafka_next_offset=next_offset,
        )
        return plan, salvage_tracker
    if kafka.failure is not None:
        plan = Plan(
            base_offset, len(buf), KAFKA, kafka, (), (), (), first_seen, last_seen, sel.intact, kafka.failure
        )
        return plan, start
    return replace(_kafka_plan(buf, kafka, sel, prefix), kafka_next_offset=next_offset), kafka_tracker


def _kafka_plan(buf: bytes | memoryview, kafka: IndexBuild, sel: _Selection, prefix: _PrefixStats) -> Plan:
    """Kafka's prefix as one run, and everything after it as one cut described by the salvage selection."""
    size, valid = len(buf), kafka.valid_bytes
    runs: tuple[Run, ...] = ()
    regions: list[Region] = []
    if valid:
        assert prefix.first is not None and prefix.high is not None
        runs = (Run(0, valid, prefix.first, prefix.high, prefix.batches, prefix.records, False),)
        regions.append(Region(0, valid, KEPT))
    losses: tuple[Loss, ...] = ()
    if valid < size:
        losses = (_cut(buf, kafka, sel, prefix),)
        regions += _cut_regions(sel, valid)
    return Plan(
        kafka.base_offset,
        size,
        KAFKA,
        kafka,
        runs,
        losses,
        tuple(regions),
        sel.first_seen,
        sel.last_seen,
        sel.intact,
    )


def _cut(buf: bytes | memoryview, kafka: IndexBuild, sel: _Selection, prefix: _PrefixStats) -> Loss:
    """The bytes Kafka cuts: one range from its stop to the end, with the intact batches inside counted.

    The offsets lost run from the one after Kafka's last kept offset to the
    last offset of the last intact batch in the cut; when damage that is not
    all zeros comes after the last intact batch, nothing tells where they end
    (open-ended).  Zero-filled damage holds no batch, so it adds no offsets.
    """
    valid = kafka.valid_bytes
    after = [loss for loss in sel.losses if loss.start >= valid]
    damage = [loss for loss in after if loss.reason == DAMAGED]
    intact = [
        (loss.end, loss.last_offset, loss.batches, loss.records) for loss in after if loss.reason != DAMAGED
    ]
    intact += [(run.end, run.last_offset, run.batches, run.records) for run in sel.runs if run.start >= valid]
    salvageable = sum(run.batches for run in sel.runs if run.start >= valid)
    last_intact_end = max((end for end, *_ in intact), default=-1)
    open_ended = any(loss.end > last_intact_end and not loss.zero_filled for loss in damage)
    first_missing: int | None = kafka.base_offset if prefix.high is None else prefix.high + 1
    last_missing = (
        None if open_ended else max((last for _, last, *_ in intact if last is not None), default=None)
    )
    if not open_ended and (last_missing is None or first_missing is None or last_missing < first_missing):
        first_missing, last_missing = None, None
    claimed = damage[0].claimed if damage and damage[0].start == valid else None
    return Loss(
        valid,
        len(buf),
        kafka.stop,
        kafka.stop_detail or kafka.stop,
        sum(batches for *_, batches, _ in intact),
        _total(iter([records for *_, records in intact])),
        sum(loss.damaged_bytes for loss in damage),
        bool(damage) and all(loss.zero_filled for loss in damage),
        first_missing,
        last_missing,
        open_ended,
        claimed,
        salvageable,
    )


def _cut_regions(sel: _Selection, valid: int) -> list[Region]:
    """Map regions of the cut: lost, except zero-filled damage (holes)."""
    out: list[Region] = []
    for region in sel.regions:
        if region.end <= valid:
            continue
        kind = HOLE if region.kind == HOLE else LOST
        start = max(region.start, valid)
        if out and out[-1].kind == kind and out[-1].end == start:
            out[-1] = Region(out[-1].start, region.end, kind)
        else:
            out.append(Region(start, region.end, kind))
    return out


def is_torn_tail(plan: Plan) -> bool:
    """Kafka cuts only a partially written last entry: what a crash during an append leaves.

    Kafka's cut (in either mode) holds no intact batch and no zeros, and is
    either a few trailing bytes or one entry with a readable header (known
    magic) that runs past the end of the file.
    """
    kafka = plan.kafka
    if kafka.failure is not None or not 0 < kafka.valid_bytes < plan.size:
        return False
    if kafka.stop not in ("short-tail", "partial-batch"):
        return False
    after = [loss for loss in plan.losses if loss.end > kafka.valid_bytes]
    if not after or any(run.end > kafka.valid_bytes for run in plan.runs):
        return False
    if any(loss.batches or loss.zero_filled for loss in after):
        return False
    return kafka.stop == "short-tail" or after[0].claimed is not None


__all__ = [
    "DAMAGED",
    "HOLE",
    "INVALID_RECORD",
    "KAFKA",
    "KEPT",
    "LOST",
    "NOT_INCREASING",
    "OUT_OF_RANGE",
    "RECOVERY_FAILS",
    "SALVAGE",
    "SALVAGED",
    "STOP_INVALID_RECORD",
    "Claimed",
    "Loss",
    "Plan",
    "Region",
    "Run",
    "is_torn_tail",
    "plan_segment",
]
