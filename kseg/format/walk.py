"""The one batch walker: entries of a buffer framed exactly as Kafka's ``FileLogInputStream`` frames them.

``FileLogInputStream.nextBatch`` (clients, ``org.apache.kafka.common.record``):

* 17 or fewer bytes left (``HEADER_SIZE_UP_TO_MAGIC``) -> no more batches;
* a size field below 14 (``MIN_RECORD_OVERHEAD``) -> ``CorruptRecordException``;
* an entry running past the end -> no more batches (a partial tail).

No maximum size, no CRC and no offset order are checked while framing: the
callers decide what a frame is worth.  Every command walks through this class:

* :meth:`BatchWalk.frames` yields one light tuple per entry -- the decoded V2
  header and whether its CRC-32C holds -- for the per-batch loops of verify,
  reindex, recovery and the resynchronising scanner (no object per batch);
* iterating the walk yields batch objects (:class:`~kseg.format.v2.V2Batch`,
  :class:`~kseg.format.v0v1.LegacyBatch`) for dump, recover and convert.

After either, :attr:`BatchWalk.end` says where and why the walk stopped.

Both loops have a compiled twin in ``kseg._core`` (docs/core.md), used when it is
built and ``KSEG_PURE`` is unset: it frames a chunk of entries (CRCs included) per
call and hands back the same tuples.  The Python loops below are the reference
(tests/core/ compare the two on every kind of input).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeAlias

from kseg.errors import Corrupt
from kseg.format._core import CORE, NOT_FOR_CORE, call, core_failure, is_core_failure
from kseg.format.crc import crc32c_unsigned
from kseg.format.layout import (
    BATCH_HEADER,
    ENTRY_PREFIX,
    HEADER_SIZE_UP_TO_MAGIC,
    LOG_OVERHEAD,
    MIN_RECORD_OVERHEAD,
    MIN_V2_BATCH_LENGTH,
    RECORD_BATCH_OVERHEAD,
    V2_ATTRIBUTES_OFFSET,
    Buffer,
)

if TYPE_CHECKING:
    from kseg.format.v0v1 import LegacyBatch
    from kseg.format.v2 import V2Batch

    Batch: TypeAlias = V2Batch | LegacyBatch

#: Why a walk ended.
END_OF_DATA = "end"  # every byte belongs to a whole entry
SHORT_TAIL = "short-tail"  # 17 or fewer bytes left: too few to frame an entry
PARTIAL_BATCH = "partial-batch"  # the last entry declares more bytes than remain
BAD_SIZE = "bad-size"  # an entry declares fewer than 14 bytes (e.g. a zero-filled tail)

#: The V2 header fields as :data:`~kseg.format.layout.BATCH_HEADER` unpacks them.
V2Header: TypeAlias = tuple[int, int, int, int, int, int, int, int, int, int, int, int, int]
#: One framed entry: (position, next position, magic, V2 header or None, CRC holds).
#: The header is None for magic 0/1 and for a V2 entry too short to hold one;
#: ``crc_ok`` is only computed for V2 (False when not asked for, or too short).
Frame = tuple[int, int, int, V2Header | None, bool]

#: What one call of the core frames at most: a chunk small enough that a consumer stopping early
#: (or releasing pages behind the walk) is not far behind it, large enough to cost nothing per batch.
CORE_CHUNK_FRAMES = 4096
CORE_CHUNK_BYTES = 1 << 20


@dataclass(frozen=True, slots=True)
class WalkEnd:
    """Where and why a walk stopped; ``remaining`` bytes were not part of any whole entry."""

    position: int
    remaining: int
    reason: str
    declared_size: int | None = None  # for PARTIAL_BATCH and BAD_SIZE: the size field found there


class BatchWalk:
    """Walk the entries of ``buf[start:end]`` the way Kafka's file reader does.

    A size field below 14 makes Kafka throw ``CorruptRecordException``: with
    ``strict=True`` the walk raises :class:`~kseg.errors.Corrupt`, otherwise it
    stops with ``BAD_SIZE`` so the caller can report and resynchronise.
    """

    def __init__(
        self, buf: Buffer, start: int = 0, end: int | None = None, *, strict: bool = True
    ) -> None:
        self.buf = buf
        self.start = start
        self.limit = len(buf) if end is None else min(end, len(buf))
        self.strict = strict
        self.end: WalkEnd | None = None

    def frames(self, *, check_crc: bool = False) -> Iterator[Frame]:
        """Every entry Kafka frames, as a :data:`Frame`; with ``check_crc`` the V2 CRC-32C is checked.

        This is the per-batch loop of kseg: one ``unpack_from`` of the 61-byte
        header and, when asked, one CRC over a memoryview slice -- no copy,
        no object per batch.  With the compiled core, one call per chunk.
        """
        if CORE is not None and self.start >= 0 and self.limit >= 0:
            try:
                CORE.walk_frames(self.buf, 0, 0, False, 1, 1)  # can the core borrow this buffer?
            except NOT_FOR_CORE:
                pass
            else:
                return self._core_frames(check_crc)
        return self._frames(check_crc)

    def _core_frames(self, check_crc: bool) -> Iterator[Frame]:
        """:meth:`frames` through the core: the same tuples, chunk by chunk."""
        assert CORE is not None
        buf, limit, pos = self.buf, self.limit, self.start
        while True:
            try:
                chunk, more, end = CORE.walk_frames(buf, pos, limit, check_crc, CORE_CHUNK_FRAMES, CORE_CHUNK_BYTES)
            except Exception as err:
                if is_core_failure(err):
                    raise core_failure(err, pos) from None
                raise
            yield from chunk
            if more is None:
                break
            pos = more
        assert end is not None  # the core returns an end with the last chunk
        position, remaining, reason, declared_size = end
        if reason == BAD_SIZE:
            self._bad_size(position, declared_size)
        else:
            self.end = WalkEnd(position, remaining, reason, declared_size)

    def _frames(self, check_crc: bool) -> Iterator[Frame]:
        """:meth:`frames` in Python: the reference."""
        buf, limit = self.buf, self.limit
        view = memoryview(buf)
        unpack_prefix, unpack_header, checksum = ENTRY_PREFIX.unpack_from, BATCH_HEADER.unpack_from, crc32c_unsigned
        header_limit = limit - RECORD_BATCH_OVERHEAD  # positions where a whole V2 header fits
        frame_limit = limit - HEADER_SIZE_UP_TO_MAGIC
        overhead, min_size, smallest_batch, crc_from = (
            LOG_OVERHEAD, MIN_RECORD_OVERHEAD, RECORD_BATCH_OVERHEAD, V2_ATTRIBUTES_OFFSET,
        )
        pos = self.start
        try:
            while pos < frame_limit:
                if pos <= header_limit:
                    header = unpack_header(buf, pos)
                    size, magic = header[1], header[3]
                else:
                    header = None
                    _, size, magic = unpack_prefix(buf, pos)
                if size < min_size:
                    self._bad_size(pos, size)
                    return
                nxt = pos + overhead + size
                if nxt > limit:
                    self.end = WalkEnd(pos, limit - pos, PARTIAL_BATCH, size)
                    return
                if magic < 2 or header is None or nxt - pos < smallest_batch:
                    yield pos, nxt, magic, None, False
                else:
                    ok = check_crc and checksum(view[pos + crc_from : nxt]) == header[4]
                    yield pos, nxt, magic, header, ok
                pos = nxt
            self.end = WalkEnd(pos, max(0, limit - pos), END_OF_DATA if pos == limit else SHORT_TAIL)
        finally:
            with contextlib.suppress(BufferError):
                view.release()

    def valid_v2_run(self, position: int, until: int) -> tuple[list[V2Header], int]:
        """The headers of the whole, CRC-valid magic-2 batches from ``position`` on that start before
        ``until``, and the position after the last of them.

        For loops that take such batches fast and everything else slowly (verify): one call per run,
        not one generator step per batch, and ``until`` lets the caller release pages and report
        progress between runs (a run of about 1 MiB keeps the headers in cache).  Batch ``n + 1``
        starts at ``position + LOG_OVERHEAD + header[1]`` of batch ``n``, so nothing but the tuples
        ``unpack_from`` made is handed over.  A returned position below ``until`` and below the end
        of the walk is that of an entry that is not such a batch (or of a tail too short to hold one).
        """
        if CORE is not None and position >= 0 and until >= 0 and self.limit >= 0:
            run = call(CORE.valid_v2_run, position, self.buf, position, self.limit, until)
            if run is not NotImplemented:
                return run
        return self._valid_v2_run(position, until)

    def _valid_v2_run(self, position: int, until: int) -> tuple[list[V2Header], int]:
        """:meth:`valid_v2_run` in Python: the reference."""
        buf, limit = self.buf, self.limit
        view = memoryview(buf)
        unpack, checksum = BATCH_HEADER.unpack_from, crc32c_unsigned
        overhead, min_length, crc_from = LOG_OVERHEAD, MIN_V2_BATCH_LENGTH, V2_ATTRIBUTES_OFFSET
        bound = min(until, limit - RECORD_BATCH_OVERHEAD + 1)  # a whole V2 header fits below this
        headers: list[V2Header] = []
        add = headers.append
        pos = position
        try:
            while pos < bound:
                header = unpack(buf, pos)
                nxt = pos + overhead + header[1]
                if (
                    header[3] != 2
                    or header[1] < min_length
                    or nxt > limit
                    or checksum(view[pos + crc_from : nxt]) != header[4]
                ):
                    break
                add(header)
                pos = nxt
        finally:
            with contextlib.suppress(BufferError):
                view.release()
        return headers, pos

    def _bad_size(self, pos: int, size: int) -> None:
        self.end = WalkEnd(pos, self.limit - pos, BAD_SIZE, size)
        if self.strict:
            raise Corrupt(
                f"Found record size {size} smaller than minimum record overhead ({MIN_RECORD_OVERHEAD})",
                offset=pos + 8,
                field="batch.size",
            )

    def __iter__(self) -> Iterator[Batch]:
        """The entries as batch objects (headers decoded, records left for later)."""
        from kseg.format.v0v1 import LegacyBatch
        from kseg.format.v2 import V2Batch

        buf = self.buf
        view = memoryview(buf)  # one view shared by the batches: their CRC checks slice it
        for pos, _, magic, _, _ in self.frames():
            yield LegacyBatch(buf, pos) if magic < 2 else V2Batch(buf, pos, view)


def cut_by_window(window: Buffer, pos: int, limit: int) -> bool:
    """Whether ``window[:limit]``, a part of a file read into memory, may hold only part of the entry at ``pos``.

    True when fewer bytes than a V2 batch header are left, or the entry's size field reaches past
    ``limit``: a run of :meth:`BatchWalk.valid_v2_run` over the window that stopped at ``pos``
    may have stopped only because the window ends there.
    """
    if limit - pos < RECORD_BATCH_OVERHEAD:
        return True
    return pos + LOG_OVERHEAD + ENTRY_PREFIX.unpack_from(window, pos)[1] > limit


def iter_batches(buf: Buffer, start: int = 0, end: int | None = None) -> Iterator[Batch]:
    """Shorthand for ``iter(BatchWalk(buf, start, end))`` when the end reason is not needed."""
    return iter(BatchWalk(buf, start, end))


#: recovery/indexes.py's loop state as the core's ``index_run`` takes and returns it (16 ints:
#: base offset, interval, valid bytes, batches, max timestamp, its offset, next index point, then
#: the offset index's last offset, count, capacity and the time index's last timestamp, last
#: offset, count, capacity, then the last batch's epoch and the map end; recovery/clean_prefix.py
#: ``fresh_state`` makes the first).
IndexState: TypeAlias = tuple[int, ...]
#: (epoch, base offset) of each batch whose partition leader epoch differs from the batch before.
EpochChanges: TypeAlias = list[tuple[int, int]]


def core_index_run(
    buf: Buffer, position: int, limit: int, until: int, state: IndexState, base: int = 0
) -> tuple[int, IndexState, bytes, bytes, EpochChanges] | None:
    """The core's run of ``LogSegment.recover``'s loop over the clean batches before ``until``.

    Returns (position reached, state, new ``.index`` entries, new ``.timeindex`` entries, epoch
    changes), or None when the core is not in use or cannot take these arguments: the caller's own
    loop (the reference, recovery/indexes.py ``_recover``) then does everything.  The run stops
    before any batch that loop would treat otherwise than as a clean batch without a producer id.
    ``buf`` may be a window of the file read into memory, ``buf[0]`` at file position ``base``
    (the core's ``index_run_at``): the state stays in file positions, the others are ``buf``'s.
    """
    if CORE is None or min(position, limit, until, base) < 0:
        return None
    ran = call(CORE.index_run_at, position, buf, base, position, limit, until, state)
    return None if ran is NotImplemented else ran


def core_legacy_index_run(
    buf: Buffer, position: int, limit: int, until: int, state: IndexState
) -> tuple[int, IndexState, bytes, bytes] | None:
    """:func:`core_index_run` for valid V0/V1 messages (the core's ``legacy_index_run``).

    Returns (position reached, state, new ``.index`` entries, new ``.timeindex`` entries), or None
    when the core is not in use (or is older than this function) or cannot take the arguments.
    The run takes each message as ``_recover`` does -- shallowly, no epoch, no producer state --
    and stops before any entry that is not a valid V0/V1 message or that the loop would treat
    otherwise (an offset outside the segment, an index append that throws).
    """
    if CORE is None or not hasattr(CORE, "legacy_index_run") or min(position, limit, until) < 0:
        return None
    ran = call(CORE.legacy_index_run, position, buf, position, limit, until, state)
    return None if ran is NotImplemented else ran


def core_valid_v2_run_indexed(
    buf: Buffer, position: int, limit: int, until: int, state: IndexState, base: int = 0
) -> tuple[list[V2Header], int, int | None, IndexState, bytes, bytes, EpochChanges] | None:
    """:meth:`BatchWalk.valid_v2_run` and :func:`core_index_run` over the same batches, in one pass.

    Returns (headers, end, where the loop stopped or None, state, ``.index`` entries, ``.timeindex``
    entries, epoch changes): the headers and end are exactly ``valid_v2_run``'s; the loop takes the
    run's batches up to the first it must leave to Python (its position is the third item), exactly
    as ``index_run`` would.  None when the core is not in use or cannot take these arguments
    (recovery/clean_prefix.py then records nothing and the caller walks as before).  ``buf`` may
    be a window of the file read into memory, ``buf[0]`` at file position ``base``: the state
    stays in file positions, the positions passed and returned are ``buf``'s.
    """
    if CORE is None or min(position, limit, until, base) < 0:
        return None
    ran = call(CORE.valid_v2_run_indexed, position, buf, base, position, limit, until, state)
    return None if ran is NotImplemented else ran
