"""``LogSegment.recover``'s loop over a segment's leading clean batches, run during another walk.

``kseg verify`` of a partition directory walks each segment for its own checks, and the
log-loading model then recovers the segments Kafka would recover (a missing ``.index``, an
unclean shutdown) -- a second walk of the same bytes, which costs as much as the first.  Both
walks take the leading clean batches (whole, CRC-valid V2 batches) the same way, so the compiled
core runs the recovery loop over them inside verify's walk (``valid_v2_run_indexed``: the headers
verify checks and the loop's state, in one pass), and the model's
:func:`~kseg.recovery.indexes.build_indexes` goes on from where that loop stopped instead of
starting at byte 0.

The prefix holds no producer state: the core's loop stops before the first batch with a
producer id (:mod:`kseg.recovery.indexes`, ``_clean_run``), so what it built is the same
whatever the producer state at the segment's base offset is.  It is only used for a build of the
same bytes (``limit``), base offset, ``index.interval.bytes`` and index capacity; anything else,
or the pure-Python path (no core: no prefix is recorded), is a build from byte 0 as before.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from kseg.format.layout import Buffer
from kseg.format.walk import V2Header, core_index_run, core_valid_v2_run_indexed, cut_by_window

#: Bytes of index per entry (``OffsetIndex``, ``TimeIndex``: kseg.index OFFSET_ENTRY, TIME_ENTRY).
_OFFSET_ENTRY_BYTES, _TIME_ENTRY_BYTES = 8, 12
#: Epoch and map end not set yet, in the core's state (its ``index::NONE``).
NONE = -(1 << 63)
#: The window :func:`read_clean_run` reads the file into, reused from window to window.
WINDOW_BYTES = 4 << 20
#: What a run of the loop leaves: (position reached, state, .index entries, .timeindex entries, epoch changes).
Ran = tuple[int, tuple[int, ...], bytearray, bytearray, list[tuple[int, int]]]


def fresh_state(base_offset: int, interval: int, max_index_size: int) -> tuple[int, ...]:
    """The loop's state before the first batch, as the core takes it (``index::IndexState``, 16 ints).

    Base offset, interval, valid bytes, batches, max timestamp, its offset, next index point;
    the offset index's last offset, count, capacity; the time index's last timestamp, last offset
    (``lastEntry`` of an empty ``TimeIndex``: the base offset), count, capacity; the last batch's
    epoch and the map end (``NONE``: no batch yet).
    """
    return (
        base_offset, interval, 0, 0, -1, -1, interval,
        -1, 0, max_index_size // _OFFSET_ENTRY_BYTES,
        -1, base_offset, 0, max_index_size // _TIME_ENTRY_BYTES,
        NONE, NONE,
    )


@dataclass(frozen=True, slots=True)
class CleanPrefix:
    """The recovery loop's state after a segment's leading clean batches (see the module docstring)."""

    limit: int  # the bytes walked: the file's size
    position: int  # where the loop must go on: the first batch it did not take, or ``limit``
    state: tuple[int, ...]  # :func:`fresh_state`'s fields after the batches taken
    offsets: bytes  # the .index entries so far
    times: bytes  # the .timeindex entries so far
    epochs: tuple[tuple[int, int], ...]  # (epoch, base offset) of each batch whose epoch differs from the last

    def fits(self, limit: int, base_offset: int, interval: int, max_index_size: int) -> bool:
        """Whether this prefix belongs to a build of these bytes and settings."""
        return self.limit == limit and self.state[:2] == (base_offset, interval) and (
            self.state[9], self.state[13]
        ) == (max_index_size // _OFFSET_ENTRY_BYTES, max_index_size // _TIME_ENTRY_BYTES)


class PrefixRecorder:
    """Runs the recovery loop inside a walk that takes runs of clean V2 batches (verify's fast path).

    :meth:`valid_v2_run` replaces ``BatchWalk.valid_v2_run`` for the walk: the same headers and end,
    and the loop's state carried along while the runs follow each other from byte 0 without a gap.
    The first run that does not start where the loop stands (the walk took an entry on its slow
    path), or a batch the loop must leave to Python, ends the prefix.
    """

    def __init__(self, base_offset: int, limit: int, interval: int, max_index_size: int) -> None:
        self.limit = limit
        self.position = 0
        self.running = True
        self.state = fresh_state(base_offset, interval, max_index_size)
        self.offsets = bytearray()
        self.times = bytearray()
        self.epochs: list[tuple[int, int]] = []

    def valid_v2_run(
        self, buf: Buffer, position: int, until: int, base: int = 0, limit: int | None = None
    ) -> tuple[list[V2Header], int] | None:
        """The run's (headers, end), the loop carried over it; None: the caller runs it without the loop.

        ``buf`` is the file (``base`` 0, ``limit`` None: the file's size), or a window of it read into
        memory: ``buf[:limit]`` is the file from position ``base``; ``position``, ``until`` and the end
        returned are then the window's.
        """
        if not self.running or base + position != self.position:
            self.running = False
            return None
        limit = self.limit - base if limit is None else limit
        ran = core_valid_v2_run_indexed(buf, position, limit, until, self.state, base)
        if ran is None:  # the pure-Python path, or arguments the core does not take
            self.running = False
            return None
        headers, end, stopped, self.state, offsets, times, epochs = ran
        self.offsets += offsets
        self.times += times
        self.epochs += epochs
        self.position = base + (end if stopped is None else stopped)
        self.running = stopped is None
        return headers, end

    def prefix(self) -> CleanPrefix | None:
        """What the loop built, or None if it took no batch (a build from byte 0 is as cheap)."""
        if self.position == 0:
            return None
        return CleanPrefix(self.limit, self.position, self.state, bytes(self.offsets), bytes(self.times),
                           tuple(self.epochs))


def read_clean_run(
    buf: Buffer, limit: int, state: tuple[int, ...], read_into: Callable[[memoryview, int], int]
) -> Ran | None:
    """The core's loop over the leading clean batches of ``buf[:limit]``, the file read window by window.

    ``read_into(view, position)`` copies the file from ``position`` into ``view`` (``MappedFile.
    read_into``): no page of the mapping is touched but for a batch longer than a window, taken
    from ``buf``.  A run that stops only because the window ends there is taken up again from a
    window starting at that batch.  The same result as ``index_run`` over ``buf`` (rust/kseg-wire/
    tests/properties.rs); None on the pure-Python path.
    """
    window = bytearray(min(WINDOW_BYTES, limit))
    offsets, times, epochs = bytearray(), bytearray(), []
    pos = 0
    with memoryview(window) as view:
        while pos < limit:
            got = read_into(view[: min(len(window), limit - pos)], pos)
            ran = core_index_run(window, 0, got, got, state, pos)
            if ran is None:
                return None
            rel, state, new_offsets, new_times, changes = ran
            offsets += new_offsets
            times += new_times
            epochs += changes
            stop = pos + rel
            if pos + got >= limit or got < len(window) or not cut_by_window(window, rel, got):
                return stop, state, offsets, times, epochs  # the end, or an entry the loop must see
            if rel == 0:  # a batch longer than the window: from the mapping
                ran = core_index_run(buf, pos, limit, pos + 1, state)
                if ran is None or ran[0] == pos:
                    return pos, state, offsets, times, epochs
                stop, state, new_offsets, new_times, changes = ran
                offsets += new_offsets
                times += new_times
                epochs += changes
            pos = stop
    return pos, state, offsets, times, epochs
