"""Reading a segment for ``kseg convert``: its batches with their records, or the damage among them.

Input is read only through :class:`~kseg.segment.MappedFile` (read-only, the
access time left alone, pages released behind the walk).  Batches come from
the one walker, :class:`~kseg.format.walk.BatchWalk`; damage stops the
conversion with an error located in the file, unless ``skip_corrupt`` asks
for :func:`kseg.format.scan.scan`, which resynchronises past it.

A batch's records are never held at once (one gzip batch may hold ten
million: docs/cli.md, memory): :class:`SourceRecords` reads them again whenever the conversion
needs them, :data:`CHUNK` records at a time, under the decompression cap
(``--max-batch-bytes``), and a first read -- which also decides whether the
batch can be read at all -- sums up in a :class:`BatchSummary` what the
conversion needs to know of them all.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from itertools import chain, islice
from operator import itemgetter

from kseg.errors import Corrupt, KsegError, Truncated
from kseg.format import BAD_SIZE, END_OF_DATA, PARTIAL_BATCH, Batch, BatchWalk, WalkEnd
from kseg.format.compression import DEFAULT_MAX_DECOMPRESSED
from kseg.format.convert_core import CoreRecords, open_records
from kseg.format.layout import LOG_OVERHEAD, MIN_RECORD_OVERHEAD, SIZE_OFFSET
from kseg.format.model import Record
from kseg.format.scan import Gap, scan
from kseg.segment import MappedFile

#: Records read, converted and encoded at a time.
CHUNK = 4096
_TIMESTAMP, _KEY, _VALUE, _HEADERS, _ATTRIBUTES = itemgetter(1), itemgetter(2), itemgetter(3), itemgetter(4), itemgetter(6)


class SourceRecords:
    """One batch's records, read (and decompressed) again on every pass, :data:`CHUNK` at a time."""

    __slots__ = ("batch", "core", "max_decompressed")

    def __init__(self, batch: Batch, max_decompressed: int = DEFAULT_MAX_DECOMPRESSED) -> None:
        self.batch = batch
        self.max_decompressed = max_decompressed
        #: The records as the compiled core reads them (:func:`summarize` sets it when the core takes the batch).
        self.core: CoreRecords | None = None

    def chunks(self, start: int = 0, stop: int | None = None) -> Iterator[list[Record]]:
        """Records ``[start, stop)`` in lists of at most :data:`CHUNK` (the ones before ``start`` are read, not kept)."""
        records = islice(self.batch.iter_records(self.max_decompressed), start, stop)
        while chunk := list(islice(records, CHUNK)):
            yield chunk

    def all(self) -> list[Record]:
        """Every record at once: only for batches known to be small (an uncompressed legacy message)."""
        return list(chain.from_iterable(self.chunks()))


@dataclass(slots=True)
class BatchSummary:
    """What the conversion needs to know of all of a batch's records, summed up a chunk at a time."""

    count: int = 0
    first_offset: int = 0
    first_timestamp: int = 0
    first_key: bytes | None = None
    max_timestamp: int = -1
    any_attributes: bool = False  # a record with attributes other than 0
    timestamps_set: int = 0  # records whose timestamp is not -1
    key_value_bytes: int = 0  # keys and values, null ones counted as 0
    header_records: int = 0  # records with at least one header
    headers: int = 0
    header_bytes: int = 0  # header keys and values (null values counted as 0)
    first_with_headers: tuple[int, int] | None = None  # (offset, header count) of the first such record

    def add(self, chunk: list[Record]) -> None:
        if not chunk:
            return
        if not self.count:
            first = chunk[0]
            self.first_offset, self.first_timestamp, self.first_key = first[0], first[1], first[2]
        self.count += len(chunk)
        timestamps = list(map(_TIMESTAMP, chunk))
        self.timestamps_set += len(timestamps) - timestamps.count(-1)
        timestamps.append(self.max_timestamp)
        self.max_timestamp = max(timestamps)
        self.any_attributes = self.any_attributes or any(map(_ATTRIBUTES, chunk))
        self.key_value_bytes += sum(map(len, filter(None, map(_KEY, chunk))))
        self.key_value_bytes += sum(map(len, filter(None, map(_VALUE, chunk))))
        with_headers = list(filter(_HEADERS, chunk))
        if with_headers:
            if self.first_with_headers is None:
                self.first_with_headers = (with_headers[0][0], len(with_headers[0][4]))
            self.header_records += len(with_headers)
            for record in with_headers:
                headers = record[4]
                self.headers += len(headers)
                self.header_bytes += sum(len(key) + (len(value) if value is not None else 0) for key, value in headers)


def summarize(source: SourceRecords) -> BatchSummary:
    """Read every record of the batch once (raising what a damaged one raises) and sum them up.

    With the compiled core the records are summed up there (:mod:`kseg.format.convert_core`)
    and kept, decompressed, in ``source.core`` for re-encoding; Python reads whatever it declines.
    """
    core = open_records(source.batch, source.max_decompressed)
    if core is not None:
        source.core = core
        return _core_summary(core)
    summary = BatchSummary()
    for chunk in source.chunks():
        summary.add(chunk)
    return summary

def _core_summary(core: CoreRecords) -> BatchSummary:
    """The core's sums as a :class:`BatchSummary` (the same values :meth:`BatchSummary.add` gives)."""
    (count, first_offset, first_timestamp, _, _, max_timestamp, any_attributes, timestamps_set, key_value_bytes,
     header_records, headers, header_bytes, with_headers_offset, with_headers_count, _) = core.summary
    return BatchSummary(
        count, first_offset, first_timestamp, core.first_key(), max_timestamp, bool(any_attributes), timestamps_set,
        key_value_bytes, header_records, headers, header_bytes,
        None if with_headers_count < 0 else (with_headers_offset, with_headers_count),
    )


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


Item = tuple[Batch, SourceRecords, BatchSummary]


def iter_source(
    source: MappedFile, skip_corrupt: bool, max_decompressed: int = DEFAULT_MAX_DECOMPRESSED
) -> Iterator[Item | Skipped]:
    """Batches with their records (to be read) and their summary, in file order.

    Every record is read once here, so damage raises here (a
    :class:`~kseg.errors.KsegError` at its position); with ``skip_corrupt`` it
    is yielded as :class:`Skipped` and the walk goes on.
    """
    if skip_corrupt:
        yield from _salvage(source, max_decompressed)
        return
    walk = BatchWalk(source.buf, strict=False)
    release = source.release
    for batch in walk:
        records = SourceRecords(batch, max_decompressed)
        try:
            batch.ensure_valid()
            summary = summarize(records)
        except KsegError as err:
            err.message += f" in the batch at byte {batch.position}{SKIP_HINT}"
            raise
        yield batch, records, summary
        release(batch.position)
    assert walk.end is not None
    if walk.end.reason != END_OF_DATA:
        tail = _tail_error(walk.end)
        tail.message += SKIP_HINT
        raise tail


def _salvage(source: MappedFile, max_decompressed: int) -> Iterator[Item | Skipped]:
    release = source.release
    for item in scan(source.buf):
        if isinstance(item, Gap):
            yield Skipped(item.start, item.end, item.reason)
            continue
        records = SourceRecords(item, max_decompressed)
        try:
            summary = summarize(records)
        except KsegError as err:
            yield Skipped(item.position, item.position + item.size, f"records: {err.message}")
            continue
        yield item, records, summary
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


__all__ = [
    "CHUNK",
    "SKIP_HINT",
    "BatchSummary",
    "Skipped",
    "SourceRecords",
    "first_base_offset",
    "iter_source",
    "summarize",
]
