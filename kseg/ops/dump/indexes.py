"""``dumpIndex`` and ``dumpTimeIndex``: every entry of a .index or .timeindex checked against the log.

Kafka reads all slots up to the first zero-offset entry after the first one,
checks each against the batch it names in the sibling .log, and collects the
mismatches for the closing summaries (:mod:`kseg.ops.dump.summaries`).  Index
slot layouts come from :mod:`kseg.index`; batches are read through
:class:`kseg.format.BatchWalk`.
"""

from __future__ import annotations

import mmap
from collections.abc import Iterator
from contextlib import nullcontext
from dataclasses import dataclass
from pathlib import Path

from kseg.errors import KsegError
from kseg.format import BAD_SIZE, Batch, BatchWalk
from kseg.index import OFFSET_ENTRY, TIME_ENTRY
from kseg.ops.dump.events import Event, IndexEntry, IndexStatus, Problem, TimeIndexEntry
from kseg.ops.dump.options import DumpOptions
from kseg.ops.dump.summaries import Summaries
from kseg.ops.dump.targets import DumpTarget, name_offset
from kseg.segment import MappedFile, Segment, open_segment, sibling


def siblings(target: DumpTarget, *suffixes: str) -> tuple[list[Path], Problem | None]:
    """The sibling files Kafka opens (``<stem><suffix>`` beside the index); a missing one is a problem."""
    paths = [sibling(target.path, suffix) for suffix in suffixes]
    for path in paths:
        if not path.is_file():
            return paths, Problem(target.display, None, f"{path.name} not found beside it (Kafka needs it to dump this file)")
    return paths, None


def _bad_size(walk: BatchWalk) -> KsegError | None:
    """The error Kafka's reader throws where the walk met a size field below 14, else None."""
    if walk.end is not None and walk.end.reason == BAD_SIZE:
        return KsegError(
            f"Found record size {walk.end.declared_size} smaller than minimum record overhead (14) "
            f"in the log at byte {walk.end.position}",
            offset=walk.end.position,
        )
    return None


def _first_batch_last_offset(segment: Segment, position: int, max_size: int) -> int:
    """``fileRecords.slice(position, maxMessageSize).batches.iterator.next().lastOffset``."""
    if position < 0 or position > segment.size:
        raise KsegError(
            f"index points at position {position}, outside the log ({segment.size} bytes)", offset=position
        )
    end = min(position + max_size, segment.size)
    walk = segment.walk(position, end, strict=False)
    for batch in walk:
        return batch.last_offset
    bad = _bad_size(walk)
    if bad is not None:
        raise bad
    raise KsegError(
        f"no whole batch at log position {position} within --max-message-size ({max_size} bytes)", offset=position
    )


def dump_index(target: DumpTarget, options: DumpOptions, summaries: Summaries) -> Iterator[Event]:
    """``dumpIndex``: entries up to the preallocated tail, each checked against the first batch it points at."""
    base = name_offset(target)
    if isinstance(base, Problem):
        yield base
        return
    (log_path,), problem = siblings(target, ".log")
    if problem is not None:
        yield problem
        return
    with MappedFile(target.path) as index, open_segment(log_path) as segment:
        entries = index.size // OFFSET_ENTRY.size
        if entries == 0:
            yield IndexStatus(target.display, "empty")
            return
        if options.index_sanity_check:
            yield _offset_index_sanity(target, index, entries, base)
            return
        for i in range(entries):
            relative, position = OFFSET_ENTRY.unpack_from(index.buf, i * OFFSET_ENTRY.size)
            offset = base + relative
            if i > 0 and offset == base:
                return
            if options.before_window(offset):
                continue  # --from-offset: the entries of batches before the window are neither shown nor checked
            try:
                log_offset = _first_batch_last_offset(segment, position, options.max_message_size)
            except KsegError as err:
                yield Problem(target.display, i * OFFSET_ENTRY.size, f"entry {i} (offset {offset}): {err.message}")
                return
            if log_offset != offset:
                summaries.add_index_mismatch(target.absolute, offset, log_offset)
            if not options.verify_index_only:
                yield IndexEntry(target.display, offset, position)
            if options.closes_window(offset):
                return


def _offset_index_sanity(target: DumpTarget, index: MappedFile, entries: int, base: int) -> Event:
    """``OffsetIndex.sanityCheck`` (after the empty check, so ``entries`` > 0)."""
    relative, _ = OFFSET_ENTRY.unpack_from(index.buf, (entries - 1) * OFFSET_ENTRY.size)
    last_offset = base + relative
    where = target.absolute
    if last_offset < base:
        return Problem(
            target.display,
            (entries - 1) * OFFSET_ENTRY.size,
            f"Corrupt index found, index file {where} has non-zero size but the last offset is {last_offset} "
            f"which is less than the base offset {base}",
        )
    if index.size % OFFSET_ENTRY.size:
        return Problem(
            target.display,
            entries * OFFSET_ENTRY.size,
            f"Index file {where} is corrupt, found {index.size} bytes which is neither positive nor a multiple of 8",
        )
    return IndexStatus(target.display, "sanity_check_passed")


def kafka_offset_lookup(buf: bytes | mmap.mmap, entries: int, base: int, target: int) -> int:
    """``OffsetIndex.lookup(target).position`` over *every* slot, warm-section binary search included.

    Kafka trusts all ``entries`` slots of an existing file (a preallocated
    zero tail too), so the search is reproduced exactly rather than over the
    live entries only.
    """

    def offset_at(slot: int) -> int:
        relative: int = OFFSET_ENTRY.unpack_from(buf, slot * OFFSET_ENTRY.size)[0]
        return base + relative

    if entries == 0:
        return 0
    first_hot = max(0, entries - 1 - 8192 // OFFSET_ENTRY.size)
    if offset_at(first_hot) < target:
        lo, hi = first_hot, entries - 1
    elif offset_at(0) > target:
        return 0
    else:
        lo, hi = 0, first_hot
    while lo < hi:
        mid = (lo + hi + 1) >> 1
        found = offset_at(mid)
        if found > target:
            hi = mid - 1
        elif found < target:
            lo = mid
        else:
            lo = mid
            break
    position: int = OFFSET_ENTRY.unpack_from(buf, lo * OFFSET_ENTRY.size)[1]
    return position


@dataclass(frozen=True, slots=True)
class _EmptyFile:
    """Stands in for a missing .index: no bytes, so every lookup answers position 0, as an empty index does."""

    buf: bytes = b""
    size: int = 0


_EMPTY_FILE = _EmptyFile()


def dump_time_index(target: DumpTarget, options: DumpOptions, summaries: Summaries) -> Iterator[Event]:
    """``dumpTimeIndex``: each entry checked against the batch its offset names and that batch's records."""
    base = name_offset(target)
    if isinstance(base, Problem):
        yield base
        return
    (log_path, index_path), problem = siblings(target, ".log", ".index")
    index_missing = problem is not None and log_path.is_file() and not index_path.exists()
    if problem is not None and not index_missing:
        yield problem
        return
    if index_missing:  # Kafka's tool creates it empty, then dies; the entries still mean something
        yield Problem(target.display, None, f"{index_path.name} not found beside it (Kafka's tool creates it empty "
                                            "and dies; kseg checks the entries against an empty index)")
    index_file: nullcontext[_EmptyFile] | MappedFile = nullcontext(_EMPTY_FILE) if index_missing else MappedFile(index_path)
    with MappedFile(target.path) as tindex, index_file as index, open_segment(log_path) as segment:
        if options.index_sanity_check:
            yield _time_index_sanity(target, tindex, tindex.size // TIME_ENTRY.size, base)
            return
        yield from _time_entries(target, options, summaries, base, tindex, index, segment)


def _time_entries(
    target: DumpTarget, options: DumpOptions, summaries: Summaries, base: int,
    tindex: MappedFile, index: MappedFile | _EmptyFile, segment: Segment,
) -> Iterator[Event]:
    entries = tindex.size // TIME_ENTRY.size
    offset_entries = index.size // OFFSET_ENTRY.size
    previous = -1
    for i in range(entries):
        timestamp, relative = TIME_ENTRY.unpack_from(tindex.buf, i * TIME_ENTRY.size)
        offset = base + relative
        if i > 0 and offset == base:
            return
        if options.before_window(offset, timestamp):
            continue  # before --from-offset/--from-time: neither shown nor checked
        position = kafka_offset_lookup(index.buf, offset_entries, base, offset)
        try:
            _check_time_entry(segment, position, timestamp, offset, previous, target.absolute, summaries,
                              options.max_batch_bytes)
        except KsegError as err:
            yield Problem(target.display, i * TIME_ENTRY.size, f"entry {i} (offset {offset}): {err.message}")
            return
        if not options.verify_index_only:
            yield TimeIndexEntry(target.display, timestamp, offset)
        previous = timestamp
        if options.closes_window(offset, timestamp):
            return


def _check_time_entry(
    segment: Segment, position: int, timestamp: int, offset: int, previous: int, where: str, summaries: Summaries,
    max_batch_bytes: int,
) -> None:
    """Find the batch holding ``offset`` from ``position`` on and compare timestamps, as Kafka does."""
    if position < 0 or position > segment.size:
        raise KsegError(f"the offset index gives position {position}, outside the log", offset=position)
    walk = segment.walk(position, segment.size, strict=False)
    found: Batch | None = None
    for batch in walk:
        if batch.last_offset >= offset:
            found = batch
            break
    if found is None:
        bad = _bad_size(walk)
        if bad is not None:
            raise bad
        summaries.add_time("time_index_offset_not_found", where, offset, -1)
    elif found.last_offset != offset:
        summaries.add_time("time_index_offset_not_found", where, offset, found.last_offset)
    else:
        max_timestamp = -1
        for record in found.iter_records(max_batch_bytes):
            max_timestamp = max(max_timestamp, record.timestamp)
        if max_timestamp != timestamp:
            summaries.add_time("time_index_mismatch", where, timestamp, max_timestamp)
        if previous >= timestamp:
            summaries.add_time("time_index_out_of_order", where, timestamp, previous)


def _time_index_sanity(target: DumpTarget, tindex: MappedFile, entries: int, base: int) -> Event:
    """``TimeIndex.sanityCheck``."""
    where = target.absolute
    if entries:
        first_timestamp, _ = TIME_ENTRY.unpack_from(tindex.buf, 0)
        last_timestamp, last_relative = TIME_ENTRY.unpack_from(tindex.buf, (entries - 1) * TIME_ENTRY.size)
        last_offset = base + last_relative
        if last_timestamp < first_timestamp:
            return Problem(
                target.display,
                (entries - 1) * TIME_ENTRY.size,
                f"Corrupt time index found, time index file ({where}) has non-zero size but the last timestamp "
                f"is {last_timestamp} which is less than the first timestamp {first_timestamp}",
            )
        if last_offset < base:
            return Problem(
                target.display,
                (entries - 1) * TIME_ENTRY.size,
                f"Corrupt time index found, time index file ({where}) has non-zero size but the last offset "
                f"is {last_offset} which is less than the first offset {base}",
            )
    if tindex.size % TIME_ENTRY.size:
        return Problem(
            target.display,
            entries * TIME_ENTRY.size,
            f"Time index file {where} is corrupt, found {tindex.size} bytes which is neither positive nor a "
            f"multiple of 12",
        )
    return IndexStatus(target.display, "sanity_check_passed")
