"""One segment searched: batch headers first, then the needles in the file's bytes, then records.

The walk goes through :meth:`kseg.format.BatchWalk.frames` (the compiled core
frames a chunk of batches per call: a tuple per batch, no object).  A batch
is read only when its header passes the batch-level predicates (offsets,
time, producer id, control, transaction state) and, when it is stored
uncompressed, every needle of :meth:`~kseg.ops.grep.query.Query.needles`
occurs inside it -- found by ``bytes.find``/``re.search`` at C speed
(:class:`Needles`).  Only then are its records decoded (the core's scanner)
and tested one by one.  The file is read a window at a time -- mapped (16 MiB,
``MAP_POPULATE``) when every needle is a literal and the core picks a
window's candidates in one call, else copied with ``preadv`` (1 MiB) -- (the
.index and .timeindex are mapped only to find where a window starts), so
memory stays flat whatever the file size: one window, or one batch when a
batch is larger.

A batch whose records cannot be read is a :class:`Problem` (file, byte,
Kafka's message) and the search goes on with the next batch; a size field
below 14 ends the file, as it ends Kafka's reader.
"""

from __future__ import annotations

import contextlib
import mmap
import os
import re
from collections.abc import Generator, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kseg import mapguard
from kseg.errors import Corrupt, KsegError
from kseg.format import BAD_SIZE, END_OF_DATA, Batch, BatchWalk, WalkEnd, read_batch
from kseg.format.find import find_bytes, grep_candidates
from kseg.format.layout import (
    CODEC_MASK,
    CONTROL_MASK,
    HEADER_SIZE_UP_TO_MAGIC,
    LOG_OVERHEAD,
    TRANSACTIONAL_MASK,
)
from kseg.format.model import LOG_APPEND_TIME, Record
from kseg.format.v2 import V2Batch
from kseg.ops.grep.query import Query
from kseg.segment import Segment, map_window, open_read_only

if TYPE_CHECKING:
    from kseg.ops.grep.decoding import Decoding
    from kseg.ops.grep.txnspans import TxnSpans

#: Bytes read (and searched) at once: the memory a search holds, whatever the file size.  Small enough
#: that the copy stays in the CPU's cache for the search that follows (1 MiB measured faster than 16).
WINDOW = 1 << 20
#: The literal path's mapped window: mapping has a cost per call that a copy does not, so it is larger
#: (16 MiB: 20% less CPU than ``preadv`` of 1 MiB windows, as little as 32 MiB); still flat memory.
MAPPED_WINDOW = 16 << 20


@dataclass(frozen=True, slots=True)
class Match:
    """A matching record: the file, its batch's byte position, the record (a control record's key and value)."""

    path: str
    position: int
    record: Record
    partition_dir: str
    decoded: dict[str, Any] | None = None  # with --decode: {"key": ..., "value": ...} (kseg.decode.payload)

    def __reduce__(self) -> tuple[object, tuple[object, ...]]:
        """Pickled as plain fields (for ``--jobs``): ``Record.__new__`` takes named fields, not a tuple."""
        return _match, (self.path, self.position, tuple(self.record), self.partition_dir, self.decoded)


def _match(path: str, position: int, fields: tuple[object, ...], partition_dir: str,
           decoded: dict[str, Any] | None) -> Match:
    return Match(path, position, tuple.__new__(Record, fields), partition_dir, decoded)


@dataclass(frozen=True, slots=True)
class Problem:
    """A batch whose records could not be read, or where the file could no longer be read."""

    path: str
    position: int | None
    message: str


@dataclass(frozen=True, slots=True)
class Counted:
    """``count_only``: this many records of a batch matched (they were not built)."""

    records: int


Found = Match | Problem | Counted


class Needles:
    """Where each needle next occurs in ``buf`` (one window of the file): per needle, the leftmost match
    starting at or after the position last searched from.

    A match lying wholly inside a batch ``[pos, nxt)`` lies inside any range
    holding the batch, so a search from ``pos`` that finds nothing before
    ``nxt`` proves the batch holds none; the answer serves the next batches
    too until the walk passes the match.  Each needle is searched at most once
    per match found, so a window costs one pass per needle.
    """

    def __init__(self, buf: bytes | bytearray, needles: tuple[bytes | re.Pattern[bytes], ...],
                 end: int | None = None) -> None:
        self.buf = buf
        self.needles = needles
        self.known: list[tuple[int, int | None]] = [(len(buf) + 1, None)] * len(needles)  # (searched from, hit)
        self.end = len(buf) if end is None else end  # bytes past it are not the file's

    def within(self, pos: int, nxt: int) -> bool:
        """Whether every needle occurs (starts) inside ``[pos, nxt)``."""
        for index, needle in enumerate(self.needles):
            start, hit = self.known[index]
            if start > pos or (hit is not None and hit < pos):
                hit = self._search(needle, pos)
                self.known[index] = (pos, hit)
            if hit is None or hit >= nxt:
                return False
        return True

    def _search(self, needle: bytes | re.Pattern[bytes], start: int) -> int | None:
        if isinstance(needle, bytes):
            found = find_bytes(self.buf, needle, start, self.end)
            return None if found < 0 else found
        match = needle.search(self.buf, start, self.end)
        return None if match is None else match.start()


@dataclass(frozen=True, slots=True)
class Search:
    """One segment's search: what is looked for, the partition's transactions, the read cap, the names shown."""

    query: Query
    spans: TxnSpans | None
    max_batch_bytes: int
    display: str
    partition_dir: str = ""
    decoding: Decoding | None = None
    count_only: bool = False  # the records need not be built: Counted in place of Match where it saves work


def search_segment(path: Path, query: Query, spans: TxnSpans | None, max_batch_bytes: int,
                   partition_dir: str = "", decoding: Decoding | None = None, *,
                   count_only: bool = False) -> Iterator[Found]:
    """Every record of the segment ``path`` that matches, and every problem met, in file order."""
    run = Search(query, spans, max_batch_bytes, str(path), partition_dir, decoding, count_only)
    with Segment(path) as seg:
        try:
            start = _window_start(seg, query)
        except KsegError as err:
            yield Problem(run.display, err.offset, err.message)
            return
    if start is None:
        return
    fd = open_read_only(path)
    try:
        yield from _walk(fd, start, run)
    finally:
        os.close(fd)


def _walk(fd: int, pos: int, run: Search) -> Iterator[Found]:
    """The file a window at a time; a batch cut by a window's end starts the next.

    A search whose needles are all literals (:func:`_literal_needles`) maps each window
    (:func:`_mapped_walk`); any other reads it with ``preadv`` into one reused buffer.
    """
    size = os.fstat(fd).st_size
    literals = _literal_needles(run.query)
    if literals is not None and hasattr(mmap, "MAP_POPULATE"):
        yield from _mapped_walk(fd, pos, size, literals, run)
        return
    buf = bytearray(min(WINDOW, max(0, size - pos)))
    while pos < size:
        filled = os.preadv(fd, [memoryview(buf)[: min(len(buf), size - pos)]], pos)
        if filled <= 0:
            return
        walk = BatchWalk(buf, 0, filled, strict=False)
        if (yield from _window(buf, walk, pos, run)):
            return
        step = _next_window(walk.end, pos, filled, size, run)
        if isinstance(step, Problem) or step is None:
            if step is not None:
                yield step
            return
        pos, needed = step
        if needed > len(buf):  # one batch larger than the window: a window that holds it
            buf = bytearray(needed)


def _mapped_walk(fd: int, pos: int, size: int, literals: tuple[bytes, ...], run: Search) -> Iterator[Found]:
    """The literal path: each window of :data:`MAPPED_WINDOW` mapped with ``MAP_POPULATE`` (its pages entered
    in one call, no copy: less CPU than ``preadv``'s copy or page faults, docs/grep.md) and searched,
    framed and filtered in one core call (``grep_candidates``); the memory is one window."""
    mapguard.install()  # a file cut short under the mapping: the one error line (kseg.mapguard), not SIGBUS
    want = MAPPED_WINDOW
    while pos < size:
        base = pos - pos % mmap.ALLOCATIONGRANULARITY
        length = min(pos - base + want, size - base)
        try:
            window = map_window(fd, base, length)
        except ValueError:  # the file is now shorter than the window: another process truncated it
            raise _shrank(run.display, size, fd) from None
        try:
            kept, end = grep_candidates(window, length, literals, run.query.control, not run.query.control,
                                        pos - base)
            mapguard.check_size(fd, run.display, size)  # cut under the window (a fault, or zeros in a page)
            for at, _ in kept:
                yield from _batch_matches(window, at, base, run)
        finally:
            with contextlib.suppress(BufferError):  # a record still holding a view: unmapped when it goes
                window.close()
        step = _next_window(end, base, length, size, run)
        if isinstance(step, Problem) or step is None:
            if step is not None:
                yield step
            break
        pos, needed = step
        want = max(MAPPED_WINDOW, needed)
    mapguard.check_size(fd, run.display, size)  # zeros read past a cut are not the file: an error


def _shrank(display: str, size: int, fd: int) -> mapguard.FileShrank:
    """The error of a file found shorter than when the search began (the words of kseg.mapguard's own)."""
    now = os.fstat(fd).st_size
    return mapguard.FileShrank(
        f"the file shrank from {size} to {now} bytes while kseg read it (another process truncated it): "
        "nothing read from it is reported; run again when nothing writes it", offset=now, path=display)


def _next_window(end: WalkEnd | None, base: int, limit: int, size: int,
                 run: Search) -> tuple[int, int] | Problem | None:
    """Where the next window starts (the file position) and the bytes it must hold, after a window of the
    file's bytes up to ``base + limit`` whose walk ended at ``end``; a Problem or None when the
    file ends here."""
    if end is None or end.reason == END_OF_DATA:
        return base + limit, 0
    if end.reason == BAD_SIZE:
        return Problem(run.display, base + end.position,
                       f"Found record size {end.declared_size} smaller than minimum record overhead (14)")
    needed = LOG_OVERHEAD + (end.declared_size or 0)  # a batch cut by the window, or a short tail
    if base + end.position + max(needed, HEADER_SIZE_UP_TO_MAGIC + 1) > size:
        return None  # the file's own partial tail: Kafka's reader stops here quietly
    return base + end.position, needed


def _literal_needles(query: Query) -> tuple[bytes, ...] | None:
    """The needles when a window's batches can be chosen by :func:`~kseg.format.find.grep_candidates`: no
    predicate on batch headers but the control flag, and every needle a literal (no pattern); else None."""
    if query.batch_level:
        return None
    needles = query.needles()
    if not all(isinstance(needle, bytes) for needle in needles):
        return None
    return tuple(needle for needle in needles if isinstance(needle, bytes))


def _window(window: bytearray, walk: BatchWalk, base: int, run: Search) -> Generator[Found, None, bool]:
    """The matches of the whole batches of one window (positions in it are ``base`` bytes into the file);
    returns True when nothing further in the file can match.

    The per-batch loop is the cost of a search that finds nothing, so it does the least it can: the
    header predicates only when some were given, and when a needle occurs nowhere in the window, no
    needle search per batch at all -- only compressed batches and legacy messages are read then.
    """
    query = run.query
    needles = Needles(window, query.needles(), walk.limit)
    absent = bool(needles.needles) and not needles.within(0, walk.limit)
    control = CONTROL_MASK if query.control else 0
    headers_tested = query.batch_level
    for pos, nxt, _, header, _ in walk.frames():
        if header is not None:
            attributes = header[5]
            if attributes & CONTROL_MASK != control:
                continue
            if headers_tested:
                if query.to_offset is not None and header[0] > query.to_offset:
                    return True  # offsets grow through a segment Kafka wrote: nothing further can match
                if not _header_passes(header, query, run.spans):
                    continue
            if not attributes & CODEC_MASK and needles.needles and (absent or not needles.within(pos, nxt)):
                continue
        elif query.producer_id is not None or query.txn is not None or query.control:
            continue  # a magic 0/1 message has no producer id and no control records
        yield from _batch_matches(window, pos, base, run)
    return False


def _records(batch: Batch, position: int, run: Search) -> Iterator[Match | Counted]:
    """A batch's matching records.  A well-formed V2 data batch is tested on the scanner's columns and only
    its matching records become objects; anything else is read record by record (Kafka's iterator, which
    raises where Kafka throws)."""
    query = run.query
    records: Iterable[Record] | None = None
    if isinstance(batch, V2Batch) and not batch.is_control and query.looks_at_records:
        scan = batch.scan(run.max_batch_bytes)
        if scan is not None:
            log_append = batch.max_timestamp if batch.timestamp_type == LOG_APPEND_TIME else None
            wanted = query.scan_matches(scan, log_append)
            if not wanted:
                return
            if run.count_only and run.decoding is None:
                yield Counted(len(wanted))
                return
            records = batch.records_from(scan.subset(wanted) if len(wanted) < scan.count else scan)
    if records is None:
        test = query.record_matches if query.looks_at_records else None
        records = (r for r in batch.iter_records(run.max_batch_bytes) if test is None or test(r))
    for record in records:
        decoded = None
        if run.decoding is not None:
            passes, decoded = run.decoding.record(record)
            if not passes:
                continue
        yield Match(run.display, position, record, run.partition_dir, decoded)


def _window_start(seg: Segment, query: Query) -> int | None:
    """The first batch that may hold a match, found through the .index and .timeindex; None if none can."""
    start = 0
    if query.from_offset is not None:
        position = seg.position_of_offset(query.from_offset)
        if position is None:
            return None
        start = position
    if query.from_time is not None:
        position = seg.position_of_timestamp(query.from_time)
        if position is None:
            return None
        start = max(start, position)
    return start


def _header_passes(header: tuple[int, ...], query: Query, spans: TxnSpans | None) -> bool:
    """The batch-level predicates but the control flag, on the V2 header tuple (base offset, ..., producer id at 9)."""
    attributes = header[5]
    if query.producer_id is not None and header[9] != query.producer_id:
        return False
    if query.from_offset is not None and header[0] + header[6] < query.from_offset:
        return False
    if query.from_time is not None and header[8] < query.from_time:
        return False
    if query.txn is not None:
        if not attributes & TRANSACTIONAL_MASK or spans is None:
            return False
        return spans.state_of(header[9], header[0]) == query.txn
    return True


def _batch_matches(buf: bytearray | mmap.mmap, pos: int, base: int, run: Search) -> Iterator[Found]:
    """The batch's matching records; a problem (and the records read before it) where it cannot be read."""
    display = run.display
    try:
        batch = read_batch(buf, pos)
        if batch.magic not in (0, 1, 2):
            raise Corrupt(f"Invalid magic used in a batch: {batch.magic}", offset=pos, field="batch.magic")
        if batch.codec_id > 4:
            raise Corrupt(f"Unknown compression type id: {batch.codec_id}", offset=pos, field="batch.attributes")
        yield from _records(batch, base + pos, run)
    except KsegError as err:
        yield Problem(display, base + (err.offset if err.offset is not None else pos), err.message)
