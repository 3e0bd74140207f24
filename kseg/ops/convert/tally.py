"""What ``kseg convert`` counts: batches and records in and out, and what the target could not hold.

The counts are the report's substance (a down-conversion loses data by
design, so every loss is counted); they live apart from the conversion so the
renderer can read them without pulling in the codecs.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

#: How many offsets of oversized records a tally keeps, for the report.
KEEP_OVERSIZED_OFFSETS = 10


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


_SUMMED = (
    "batches_in", "records_in", "bytes_in", "batches_out", "records_out", "bytes_out",
    "copied", "packed", "split", "oversized",
)


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
    magics_in: Counter[int] = field(default_factory=Counter)
    codecs_in: Counter[str] = field(default_factory=Counter)
    codecs_out: Counter[str] = field(default_factory=Counter)
    dropped: Dropped = field(default_factory=Dropped)

    def add(self, other: Tally) -> None:
        for name in _SUMMED:
            setattr(self, name, getattr(self, name) + getattr(other, name))
        room = KEEP_OVERSIZED_OFFSETS - len(self.oversized_offsets)
        self.oversized_offsets.extend(other.oversized_offsets[:room])
        self.magics_in.update(other.magics_in)
        self.codecs_in.update(other.codecs_in)
        self.codecs_out.update(other.codecs_out)
        self.dropped.add(other.dropped)

    def oversized_at(self, offset: int) -> None:
        """Count a record alone in a batch above the limit, keeping the first few offsets."""
        self.oversized += 1
        if len(self.oversized_offsets) < KEEP_OVERSIZED_OFFSETS:
            self.oversized_offsets.append(offset)


__all__ = ["KEEP_OVERSIZED_OFFSETS", "Dropped", "Tally"]
