"""Walk a segment *past* damage: yield every batch that checks out and every gap between them.

Kafka's reader stops at the first entry it cannot frame and recovery cuts the
segment there.  A forensic reader goes on: after a bad entry it looks for the
next position where a whole entry with a known magic, a plausible size and a
matching CRC starts, and reports the bytes in between as a :class:`Gap`.
``verify`` reports gaps; ``recover --salvage`` keeps the batches around them.

Resynchronising costs one cheap header test per byte of damage, plus a CRC
only where the header is plausible; runs of zero bytes (sparse holes, a
preallocated tail) are skipped at C speed.

With the compiled core (docs/core.md) both loops -- the clean run of
CRC-valid entries and the search for the next one -- run in ``kseg._core``;
the Python functions below stay the reference (tests/core/).
"""

from __future__ import annotations

import mmap
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from kseg.format import Batch, read_batch
from kseg.format._core import CORE
from kseg.format._core import call as call_core
from kseg.format.layout import ENTRY_PREFIX, HEADER_SIZE_UP_TO_MAGIC, LOG_OVERHEAD, MIN_ENTRY_SIZE, Buffer
from kseg.format.v0v1 import LegacyBatch
from kseg.format.v2 import V2Batch
from kseg.format.walk import BatchWalk

MIN_SIZE = MIN_ENTRY_SIZE
_NONZERO = re.compile(rb"[^\x00]")
_CANDIDATE = re.compile(rb"(?s)(?=.{16}[\x00\x01\x02])")  # byte 16 (the magic) is a known magic

#: Why a gap began.
BAD_SIZE = "bad-size"  # size field below the minimum for its magic
BAD_MAGIC = "bad-magic"  # magic byte is not 0, 1 or 2
PARTIAL = "partial-batch"  # the entry claims more bytes than remain
SHORT_TAIL = "short-tail"  # too few bytes left to hold an entry header
BAD_CRC = "bad-crc"  # whole entry present, checksum wrong


@dataclass(frozen=True, slots=True)
class Gap:
    """Bytes ``[start, end)`` that belong to no valid entry."""

    start: int
    end: int
    reason: str
    declared_size: int | None = None  # the size field found at ``start``
    zero_filled: bool = False  # every byte of the gap is zero

    @property
    def size(self) -> int:
        return self.end - self.start


def _plausible(buf: Buffer, pos: int, end: int) -> Batch | None:
    """The entry at ``pos`` if it is whole and its CRC verifies, else None."""
    if pos + LOG_OVERHEAD + 14 > end:
        return None
    _, size, magic = ENTRY_PREFIX.unpack_from(buf, pos)
    if magic not in MIN_SIZE or size < MIN_SIZE[magic] or pos + LOG_OVERHEAD + size > end:
        return None
    batch = read_batch(buf, pos)
    return batch if batch.is_valid() else None


#: Bytes of entries the core checks per call of the clean run, at most (see walk.CORE_CHUNK_BYTES).
CORE_RUN_BYTES = 1 << 20
#: Bytes of entries the first call of a run checks (one entry: a caller may want only the first);
#: each later call checks twice as many, up to :data:`CORE_RUN_BYTES`.
FIRST_RUN_BYTES = 1


def _core_call(call: str, buf: Buffer, *args: int) -> Any:
    """``kseg._core.<call>(buf, *args)``; NotImplemented where the core cannot take the arguments."""
    if CORE is None or min(args) < 0:
        return NotImplemented
    return call_core(getattr(CORE, call), args[0], buf, *args)


def find_next_batch(buf: Buffer, start: int, end: int) -> Batch | None:
    """The first position >= ``start`` where a whole, CRC-valid entry begins (or None).

    A zero run at ``start`` is passed in one step first (:func:`first_nonzero`): no entry starts
    where its size field lies inside zeros, so the search begins 11 bytes before the first
    non-zero byte.
    """
    if start + LOG_OVERHEAD <= len(buf) and buf[start + 8 : start + 12] == b"\0\0\0\0":
        nonzero = first_nonzero(buf, start, end)
        if nonzero is None:
            return None
        start = max(start, nonzero - 11)
    found = _core_call("find_next", buf, start, min(end, len(buf)))
    if found is NotImplemented:
        return _find_next_batch(buf, start, end)
    return None if found is None else read_batch(buf, found)


def _find_next_batch(buf: Buffer, start: int, end: int) -> Batch | None:
    """The first position >= ``start`` where a whole, CRC-valid entry begins (or None).

    Candidates are found in C: a regular expression finds the next position
    whose byte 16 (the magic) is 0, 1 or 2 -- in random bytes one position in
    85 -- and runs of zero bytes (an entry's size field is never zero) are
    skipped in one step.  Only candidates get a Python-level header test.
    """
    pos = start
    last = end - LOG_OVERHEAD - 14
    while pos <= last:
        match = _CANDIDATE.search(buf, pos, end)
        if match is None or match.start() > last:
            return None
        candidate = match.start()
        if buf[candidate + 8 : candidate + 12] == b"\0\0\0\0":
            nonzero = first_nonzero(buf, candidate + 8, end)
            if nonzero is None:
                return None
            pos = max(candidate + 1, nonzero - 11)
            continue
        batch = _plausible(buf, candidate, end)
        if batch is not None:
            return batch
        pos = candidate + 1
    return None


#: Bytes compared at a time by :func:`first_nonzero` (``memcmp`` against this many zeros).
ZERO_CHUNK = 1 << 20
_ZEROS = bytes(ZERO_CHUNK)


def first_nonzero(buf: Buffer, start: int, end: int) -> int | None:
    """The position of the first non-zero byte of ``buf[start:end]``, or None.

    A megabyte at a time copied and compared with zeros (``memcpy``, ``memcmp``: a tenth of
    the regular expression's time over a zero run), then the first chunk that differs is
    searched: a preallocated or sparse gigabyte costs a fraction of a second.  The mapped pages
    of an all-zero chunk are dropped at once (no one reads zeros twice), so a zero run of any
    length leaves the resident set as it was.
    """
    end = min(end, len(buf))
    pos = start
    while pos < end:
        stop = min(end, pos + ZERO_CHUNK)
        data = bytes(buf[pos:stop])
        if data != (_ZEROS if len(data) == ZERO_CHUNK else _ZEROS[: len(data)]):
            return pos + len(data) - len(data.lstrip(b"\0"))
        _drop_zero_pages(buf, pos, stop)
        pos = stop
    return None


def _drop_zero_pages(buf: Buffer, start: int, stop: int) -> None:
    """``madvise(MADV_DONTNEED)`` over the whole pages of ``[start, stop)`` of a mapped file."""
    if not isinstance(buf, mmap.mmap) or not hasattr(mmap, "MADV_DONTNEED"):
        return
    first = -(-start // mmap.PAGESIZE) * mmap.PAGESIZE
    last = stop - stop % mmap.PAGESIZE
    if last > first:
        buf.madvise(mmap.MADV_DONTNEED, first, last - first)


def _is_zero(buf: Buffer, start: int, end: int) -> bool:
    return first_nonzero(buf, start, end) is None


def _damage_at(buf: Buffer, pos: int, end: int) -> tuple[str, int | None]:
    """Why the entry at ``pos`` cannot be taken."""
    if end - pos <= HEADER_SIZE_UP_TO_MAGIC:
        return SHORT_TAIL, None
    _, size, magic = ENTRY_PREFIX.unpack_from(buf, pos)
    if magic not in MIN_SIZE:
        return BAD_MAGIC, size
    if size < MIN_SIZE[magic]:
        return BAD_SIZE, size
    if pos + LOG_OVERHEAD + size > end:
        return PARTIAL, size
    return BAD_CRC, size


def _valid_run(buf: Buffer, start: int, end: int) -> Iterator[Batch]:
    """The whole, CRC-valid entries from ``start`` on, through the one walker; stops at the first that is not.

    After the run, the caller finds where it stopped from the last batch's end.

    Lazy in what it checks: the first call checks one entry and each later one twice as many
    bytes (up to :data:`CORE_RUN_BYTES`), so a caller that takes only the first item -- verify's
    slow path, once per V0/V1 message under ``--deep`` -- pays for that entry, not for the
    megabyte after it (docs/core.md, "Runs that start small").
    """
    limit = min(end, len(buf))
    pos = start
    step = FIRST_RUN_BYTES
    while (chunk := _core_call("valid_entries", buf, pos, limit, step)) is not NotImplemented:
        entries, pos, more = chunk
        for at, magic in entries:
            yield V2Batch(buf, at) if magic == 2 else LegacyBatch(buf, at)
        if not more:
            return
        step = min(2 * step, CORE_RUN_BYTES)
    yield from _python_valid_run(buf, pos, end)


def _python_valid_run(buf: Buffer, start: int, end: int) -> Iterator[Batch]:
    """:func:`_valid_run` in Python: the reference."""
    walk = BatchWalk(buf, start, end, strict=False)
    for pos, nxt, magic, _, crc_ok in walk.frames(check_crc=True):
        if magic == 2 and crc_ok:
            yield V2Batch(buf, pos)
            continue
        if magic in (0, 1) and nxt - pos - LOG_OVERHEAD >= MIN_SIZE[magic]:
            legacy = LegacyBatch(buf, pos)
            if legacy.is_valid():
                yield legacy
                continue
        return


def scan(buf: Buffer, start: int = 0, end: int | None = None) -> Iterator[Batch | Gap]:
    """Yield valid batches and the gaps between them, in file order, covering ``[start, end)``."""
    end = len(buf) if end is None else min(end, len(buf))
    pos = start
    while pos < end:
        for batch in _valid_run(buf, pos, end):
            yield batch
            pos = batch.position + batch.size
        if pos >= end:
            return
        reason, size = _damage_at(buf, pos, end)
        resume = None
        if reason == BAD_CRC and size is not None:
            # the size was believable: the next entry most likely starts right after
            following = pos + LOG_OVERHEAD + size
            if following == end or _plausible(buf, following, end) is not None:
                resume = following
        if resume is None and reason != SHORT_TAIL:
            found = find_next_batch(buf, pos + 1, end)
            resume = found.position if found is not None else None
        stop = end if resume is None else resume
        yield Gap(pos, stop, reason, size, _is_zero(buf, pos, stop))
        pos = stop
