"""Reading a segment for ``kseg convert``: its batches with their records, or the damage among them.

Input is read only through :class:`~kseg.segment.MappedFile` (read-only, the
access time left alone, pages released behind the walk).  Batches come from
the one walker, :class:`~kseg.format.walk.BatchWalk`; damage stops the
conversion with an error located in the file, unless ``skip_corrupt`` asks
for :func:`kseg.format.scan.scan`, which resynchronises past it.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from kseg.errors import Corrupt, KsegError, Truncated
from kseg.format import BAD_SIZE, END_OF_DATA, PARTIAL_BATCH, Batch, BatchWalk, WalkEnd
from kseg.format.layout import LOG_OVERHEAD, MIN_RECORD_OVERHEAD, SIZE_OFFSET
from kseg.format.model import Record
from kseg.format.scan import Gap, scan
from kseg.segment import MappedFile

SKIP_HINT = "; --skip-corrupt skips damaged bytes and converts the rest"


@dataclass(frozen=True, slots=True)
class Skipped:
    """Input bytes ``[start, end)`` left out with ``--skip-corrupt``, and why."""

    start: int
    end: int
    reason: str

    @property
    def size(self) -> int:
        return self.end - self.start


def iter_source(source: MappedFile, skip_corrupt: bool) -> Iterator[tuple[Batch, list[Record]] | Skipped]:
    """Batches with their decoded records, in file order.

    Damage raises (a :class:`~kseg.errors.KsegError` at its position); with
    ``skip_corrupt`` it is yielded as :class:`Skipped` and the walk goes on.
    """
    if skip_corrupt:
        yield from _salvage(source)
        return
    walk = BatchWalk(source.buf, strict=False)
    release = source.release
    for batch in walk:
        try:
            batch.ensure_valid()
            records = list(batch.iter_records())
        except KsegError as err:
            err.message += f" in the batch at byte {batch.position}{SKIP_HINT}"
            raise
        yield batch, records
        release(batch.position)
    assert walk.end is not None
    if walk.end.reason != END_OF_DATA:
        tail = _tail_error(walk.end)
        tail.message += SKIP_HINT
        raise tail


def _salvage(source: MappedFile) -> Iterator[tuple[Batch, list[Record]] | Skipped]:
    release = source.release
    for item in scan(source.buf):
        if isinstance(item, Gap):
            yield Skipped(item.start, item.end, item.reason)
            continue
        try:
            records = list(item.iter_records())
        except KsegError as err:
            yield Skipped(item.position, item.position + item.size, f"records: {err.message}")
            continue
        yield item, records
        release(item.position)


def _tail_error(end: WalkEnd) -> KsegError:
    """What is wrong with the bytes where the walk stopped (a partial write, a zero-filled tail...)."""
    if end.reason == BAD_SIZE:
        return Corrupt(
            f"Found record size {end.declared_size} smaller than minimum record overhead ({MIN_RECORD_OVERHEAD})",
            offset=end.position + SIZE_OFFSET,
            field="batch.size",
        )
    if end.reason == PARTIAL_BATCH:
        return Truncated(
            f"the last batch declares {LOG_OVERHEAD + (end.declared_size or 0)} bytes but only {end.remaining} "
            "remain (a partial write)",
            offset=end.position,
            field="batch",
        )
    return Truncated(
        f"{end.remaining} bytes at the end are too few to hold a batch", offset=end.position, field="batch"
    )


def first_base_offset(source: MappedFile) -> int:
    """The base offset of the first batch Kafka would read (0 when there is none)."""
    for batch in BatchWalk(source.buf, strict=False):
        return batch.base_offset
    return 0


__all__ = ["SKIP_HINT", "Skipped", "first_base_offset", "iter_source"]
