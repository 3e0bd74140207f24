"""What ``kseg recover`` keeps of one segment: Kafka's valid prefix, or every intact batch.

Two modes, both pure (a buffer in, a :class:`~kseg.recovery.plan.Plan` out;
the files are written by :mod:`kseg.ops.recover.run`):

* **kafka** (default): exactly what ``LogSegment.recover`` keeps -- the bytes
  before the first batch it refuses, computed by
  :func:`kseg.recovery.indexes.build_indexes` (the one implementation of that
  walk).  Everything after is *cut*; the cut is described (bytes, offsets,
  intact batches inside it, records) but never removed from the input.
* **salvage**: Kafka's prefix, then every intact batch after the damage that
  Kafka's recovery would accept in the output (:mod:`kseg.recovery.salvage`).

Kept batches are copied byte for byte, in file order, never re-encoded: a
batch whose payload is damaged is lost whole (for a compressed batch there is
no other choice -- its records are one compressed stream).

When Kafka's own recovery throws on the input (offsets outside the segment,
offsets going backwards at an index point, impossible transaction state --
:class:`~kseg.recovery.indexes.RecoveryFailure`), kafka mode keeps nothing
(``Plan.refused``): what the broker then does (the segment emptied, the load
refusing the split and the broker stopping) is the loading model's answer
(:mod:`kseg.recovery.loading`), and kseg writes no guess.  Salvage mode keeps what is acceptable.
"""

from __future__ import annotations

import copy
from dataclasses import replace

from kseg.format.layout import Buffer
from kseg.recovery.indexes import DEFAULT_INDEX_INTERVAL_BYTES, IndexBuild, build_indexes
from kseg.recovery.plan import DAMAGED, HOLE, KAFKA, KEPT, LOST, SALVAGE, Loss, Plan, Region, Run, total
from kseg.recovery.producer_state import TxnTracker
from kseg.recovery.salvage import PrefixStats, Selection, select_batches
from kseg.recovery.stops import STOP_PARTIAL, STOP_SHORT_TAIL


def plan_segment(
    buf: Buffer,
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
    sel, prefix = select_batches(buf, base_offset, prefix_end, salvage_tracker)
    # readNextOffset after Kafka's recovery: one past the last offset it keeps (None: it throws)
    next_offset = (
        None if kafka.failure is not None else (base_offset if prefix.high is None else prefix.high + 1)
    )
    if salvage:
        return _salvage_plan(buf, kafka, sel, next_offset), salvage_tracker
    if kafka.failure is not None:
        refused = Plan(
            base_offset,
            len(buf),
            KAFKA,
            kafka,
            (),
            (),
            (),
            sel.first_seen,
            sel.last_seen,
            sel.intact,
            kafka.failure,
        )
        return refused, start
    return replace(_kafka_plan(buf, kafka, sel, prefix), kafka_next_offset=next_offset), kafka_tracker


def _salvage_plan(buf: Buffer, kafka: IndexBuild, sel: Selection, next_offset: int | None) -> Plan:
    """Every batch the selection kept, every loss it found."""
    return Plan(
        kafka.base_offset,
        len(buf),
        SALVAGE,
        kafka,
        tuple(sel.runs),
        tuple(sel.losses),
        tuple(sel.regions),
        sel.first_seen,
        sel.last_seen,
        sel.intact,
        kafka_next_offset=next_offset,
    )


def _kafka_plan(buf: Buffer, kafka: IndexBuild, sel: Selection, prefix: PrefixStats) -> Plan:
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


def _cut(buf: Buffer, kafka: IndexBuild, sel: Selection, prefix: PrefixStats) -> Loss:
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
        total(iter([records for *_, records in intact])),
        sum(loss.damaged_bytes for loss in damage),
        bool(damage) and all(loss.zero_filled for loss in damage),
        first_missing,
        last_missing,
        open_ended,
        claimed,
        salvageable,
    )


def _cut_regions(sel: Selection, valid: int) -> list[Region]:
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
    if kafka.stop not in (STOP_SHORT_TAIL, STOP_PARTIAL):
        return False
    after = [loss for loss in plan.losses if loss.end > kafka.valid_bytes]
    if not after or any(run.end > kafka.valid_bytes for run in plan.runs):
        return False
    if any(loss.batches or loss.zero_filled for loss in after):
        return False
    return kafka.stop == STOP_SHORT_TAIL or after[0].claimed is not None
