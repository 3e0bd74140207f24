"""What ``kseg recover`` keeps of one segment and what it loses: the plan's data, nothing else.

A :class:`Plan` is built by :func:`kseg.recovery.segment_plan.plan_segment`
(Kafka's prefix, or ``--salvage``'s every acceptable intact batch) and read by
the file side (:mod:`kseg.ops.recover.run`) and the report (:mod:`kseg.render.recover`).
The input is described as :class:`Run` s copied unchanged, :class:`Loss` es
with their reason, and :class:`Region` s for the segment map.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from kseg.recovery.indexes import IndexBuild, RecoveryFailure

KAFKA, SALVAGE = "kafka", "salvage"

#: Kinds of region in a segment map (``Plan.regions``).
KEPT = "kept"  # before any loss: what Kafka keeps too
SALVAGED = "salvaged"  # intact batches after a loss (--salvage only)
LOST = "lost"  # not in the output
HOLE = "hole"  # not in the output, and every byte is zero

#: Why bytes are not in the output (``Loss.reason``); kafka mode uses the ``STOP_*`` of
#: :mod:`kseg.recovery.indexes` (where ``LogSegment.recover`` stopped).
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
        return total(run.records for run in self.runs)

    @property
    def lost_bytes(self) -> int:
        return sum(loss.size for loss in self.losses)

    @property
    def lost_batches(self) -> int:
        return sum(loss.batches for loss in self.losses)

    @property
    def lost_records(self) -> int | None:
        return total(loss.records for loss in self.losses)

    @property
    def damaged_bytes(self) -> int:
        return sum(loss.damaged_bytes for loss in self.losses)


def total(counts: Iterable[int | None]) -> int | None:
    """The sum of ``counts``; None when any one is unknown."""
    summed = 0
    for count in counts:
        if count is None:
            return None
        summed += count
    return summed
