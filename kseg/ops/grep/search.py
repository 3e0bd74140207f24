"""One segment searched: batch headers first, then the needles in the file's bytes, then records.

The walk goes through :meth:`kseg.format.BatchWalk.frames` (the compiled core
frames a chunk of batches per call: a tuple per batch, no object).  A batch
is read only when its header passes the batch-level predicates (offsets,
time, producer id, control, transaction state) and, when it is stored
uncompressed, every needle of :meth:`~kseg.ops.grep.query.Query.needles`
occurs inside it -- found by ``bytes.find``/``re.search`` over the mapped
file, a window at a time (:class:`Needles`).  Only then are its records
decoded (the core's scanner) and tested one by one.  Pages behind the walk
are given back to the kernel, so memory stays flat whatever the file size.

A batch whose records cannot be read is a :class:`Problem` (file, byte,
Kafka's message) and the search goes on with the next batch; a size field
below 14 ends the file, as it ends Kafka's reader.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from mmap import mmap
from pathlib import Path

from kseg.errors import KsegError
from kseg.format import BAD_SIZE, Buffer, read_batch
from kseg.format.layout import CODEC_MASK, CONTROL_MASK, TRANSACTIONAL_MASK
from kseg.format.model import Record
from kseg.ops.grep.query import Query
from kseg.ops.grep.txnspans import TxnSpans
from kseg.segment import RELEASE_EVERY, Segment, release_pages

#: How far ahead of a batch one needle search looks (and so how much of the file it maps at once).
WINDOW = 16 << 20


@dataclass(frozen=True, slots=True)
class Match:
    """A matching record: the file, its batch's byte position, the record (a control record's key and value)."""

    path: str
    position: int
    record: Record
    partition_dir: str

    def __reduce__(self) -> tuple[object, tuple[object, ...]]:
        """Pickled as plain fields (for ``--jobs``): ``Record.__new__`` takes named fields, not a tuple."""
        return _match, (self.path, self.position, tuple(self.record), self.partition_dir)


def _match(path: str, position: int, fields: tuple[object, ...], partition_dir: str) -> Match:
    return Match(path, position, tuple.__new__(Record, fields), partition_dir)


@dataclass(frozen=True, slots=True)
class Problem:
    """A batch whose records could not be read, or where the file could no longer be read."""

    path: str
    position: int | None
    message: str


Found = Match | Problem


class Needles:
    """Where each needle next occurs in ``buf``: per needle, the leftmost match in ``[start, upto)``.

    A match lying wholly inside a batch ``[pos, nxt)`` lies inside any range
    holding the batch, so a search from ``pos`` to at least ``nxt`` that finds
    nothing before ``nxt`` proves the batch holds none; the answer serves the
    next batches too until the walk passes the match.
    """

    def __init__(self, buf: bytes | mmap, needles: tuple[bytes | re.Pattern[bytes], ...]) -> None:
        self.buf = buf
        self.size = len(buf)
        self.needles = needles
        self.known: list[tuple[int, int, int | None]] = [(0, 0, None)] * len(needles)  # (start, upto, hit)

    def within(self, pos: int, nxt: int) -> bool:
        """Whether every needle occurs (starts) inside ``[pos, nxt)``."""
        for index, needle in enumerate(self.needles):
            start, upto, hit = self.known[index]
            if not (start <= pos and nxt <= upto and (hit is None or hit >= pos)):
                upto = min(self.size, max(nxt, pos + WINDOW))
                hit = self._search(needle, pos, upto)
                self.known[index] = (pos, upto, hit)
            if hit is None or hit >= nxt:
                return False
        return True

    def _search(self, needle: bytes | re.Pattern[bytes], start: int, upto: int) -> int | None:
        if isinstance(needle, bytes):
            found = self.buf.find(needle, start, upto)
            return None if found < 0 else found
        match = needle.search(self.buf, start, upto)
        return None if match is None else match.start()


def search_segment(path: Path, query: Query, spans: TxnSpans | None, max_batch_bytes: int,
                   partition_dir: str = "") -> Iterator[Found]:
    """Every record of the segment ``path`` that matches, and every problem met, in file order."""
    display = str(path)
    with Segment(path) as seg:
        try:
            start = _window_start(seg, query)
        except KsegError as err:
            yield Problem(display, err.offset, err.message)
            return
        if start is None:
            return
        yield from _walk(seg, start, query, spans, max_batch_bytes, (display, partition_dir))


def _walk(seg: Segment, start: int, query: Query, spans: TxnSpans | None, max_batch_bytes: int,
          names: tuple[str, str]) -> Iterator[Found]:
    buf = seg.buf
    needles = Needles(buf, query.needles())
    released = start
    walk = seg.walk(start, strict=False)
    for pos, nxt, _, header, _ in walk.frames():
        if nxt - released >= RELEASE_EVERY:
            released = release_pages(buf, released, pos)
        if header is not None:
            if query.to_offset is not None and header[0] > query.to_offset:
                return  # offsets grow through a segment Kafka wrote
            if not _header_passes(header, query, spans):
                continue
            if not header[5] & CODEC_MASK and needles.needles and not needles.within(pos, nxt):
                continue
        elif query.producer_id is not None or query.txn is not None or query.control:
            continue  # a magic 0/1 message has no producer id and no control records
        yield from _batch_matches(buf, pos, query, max_batch_bytes, names)
    if walk.end is not None and walk.end.reason == BAD_SIZE:
        yield Problem(names[0], walk.end.position,
                      f"Found record size {walk.end.declared_size} smaller than minimum record overhead (14)")


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
    """The batch-level predicates, on the V2 header tuple (base offset, ..., producer id at 9)."""
    attributes = header[5]
    if bool(attributes & CONTROL_MASK) != query.control:
        return False
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


def _batch_matches(buf: Buffer, pos: int, query: Query, max_batch_bytes: int,
                   names: tuple[str, str]) -> Iterator[Found]:
    """The batch's matching records; a problem (and the records read before it) where it cannot be read."""
    display, partition_dir = names
    try:
        batch = read_batch(buf, pos)
        if batch.magic not in (0, 1, 2):
            raise KsegError(f"Invalid magic used in a batch: {batch.magic}", offset=pos, field="batch.magic")
        if batch.codec_id > 4:
            raise KsegError(f"Unknown compression type id: {batch.codec_id}", offset=pos, field="batch.attributes")
        test = query.record_matches if query.looks_at_records else None
        for record in batch.iter_records(max_batch_bytes):
            if test is None or test(record):
                yield Match(display, pos, record, partition_dir)
    except KsegError as err:
        yield Problem(display, err.offset if err.offset is not None else pos, err.message)
