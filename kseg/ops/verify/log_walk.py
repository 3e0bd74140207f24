"""Verify a .log file (or a KRaft .checkpoint, which holds the same batches), batch by batch.

The walk has two speeds.  The fast path runs over the one batch walker,
:meth:`kseg.format.walk.BatchWalk.frames`: for the overwhelmingly common case
-- a whole V2 batch whose CRC-32C matches and whose header says nothing
unusual -- it costs the walker's one header unpack and one CRC call plus a
handful of integer comparisons here, and builds no objects.  Everything else
takes a slow path:

* a header that is unusual (control batch, odd attributes, offsets out of
  order, producer fields that do not fit) gets ``_check_v2_header``
  (:mod:`~kseg.ops.verify.log_batches`);
* anything that is not a whole, CRC-valid V2 batch ends the walk; the
  resynchronising scanner (:mod:`~kseg.ops.verify.log_gaps`) says what is
  there -- a valid V0/V1 message, or the gap up to the next batch that checks
  out -- and a new walk starts after it.

With ``deep`` every record is decoded too (:mod:`~kseg.ops.verify.log_deep`).
"""

from __future__ import annotations

from collections.abc import Callable

from kseg.format.layout import BATCH_HEADER, TRANSACTIONAL_MASK
from kseg.format.walk import BatchWalk
from kseg.ops.verify.log_gaps import GapChecks
from kseg.ops.verify.log_state import PROGRESS_STEP, USUAL_V2_ATTRIBUTES, Observer
from kseg.segment import RELEASE_EVERY, MappedFile

__all__ = ["LogWalk", "Observer", "walk_log"]


class LogWalk(GapChecks):
    """One pass over a .log or .checkpoint; findings go to ``findings`` (see :class:`WalkState`)."""

    def run(self) -> LogWalk:
        """Walk the whole file; returns self."""
        limit = self.limit
        pos = 0
        while pos < limit:
            pos = self._fast(pos)
            if pos < limit:
                pos = self._slow(pos)
        if self.batches:
            self.last_offset = self.max_last
        return self

    def _fast(self, start: int) -> int:
        """Walk the CRC-valid V2 batches from ``start``; returns where the first other entry (or the end) is."""
        walk = BatchWalk(self.buf, start, strict=False)
        observe, deep, epochs = self.observe, self.deep, self.epochs
        per_batch_extras = observe is not None or deep
        floor, max_epoch, overflow_at = self.floor, self.max_epoch, self.overflow_at
        usual_attributes, transactional = USUAL_V2_ATTRIBUTES, TRANSACTIONAL_MASK
        prev_position = self.prev_position
        batches = 0
        next_mark = self._next_mark(start)
        stop = -1
        # (breaking out drops the generator at once, which releases its view of the buffer)
        for pos, nxt, magic, header, crc_ok in walk.frames(check_crc=True):
            if not crc_ok or magic != 2 or header is None:
                stop = pos
                break
            base, _, epoch, _, _, attrs, lod, _, max_ts, pid, p_epoch, seq, count = header
            last = base + lod
            if (
                base > floor
                and last < overflow_at
                and attrs in usual_attributes
                and 0 <= count <= lod + 1
                and seq >= -1
                and (p_epoch >= 0 if pid >= 0 else pid == -1 and not attrs & transactional)
            ):
                floor = last
            else:
                self.prev_position = prev_position
                floor = self._check_v2_header(pos, header, floor)
            if epoch > max_epoch:
                max_epoch = epoch
                epochs.append((epoch, base))
            if per_batch_extras:
                if observe is not None:
                    observe(pos, base, last, max_ts)
                if deep:
                    self._deep_v2(pos)
            batches += 1
            prev_position = pos
            if nxt >= next_mark:
                next_mark = self._mark(nxt)
        if stop < 0:
            stop = walk.end.position if walk.end is not None else self.limit
        if batches and self.first_offset is None:  # the first batch of this walk is the file's first
            self.first_offset = BATCH_HEADER.unpack_from(self.buf, start)[0]
        self.batches += batches
        self.floor, self.max_epoch, self.prev_position = floor, max_epoch, prev_position
        if batches:  # the fast path keeps ``floor`` at the largest last offset seen
            self.max_last = max(self.max_last, floor)
        return stop

    def _next_mark(self, pos: int) -> int:
        """The next position at which the fast loop stops to release pages or report progress."""
        if self.release is None:
            return self._next_progress
        return min(self._next_progress, pos + RELEASE_EVERY)

    def _mark(self, pos: int) -> int:
        """Release the pages behind ``pos`` and report progress when due; returns the next mark."""
        if self.release is not None:
            self.release(pos)
        if pos >= self._next_progress:
            self.progress(pos)  # type: ignore[misc]  # a progress mark is only set with a progress callback
            self._next_progress = pos + PROGRESS_STEP
        return self._next_mark(pos)


def walk_log(
    path: str,
    *,
    name_base: int | None,
    deep: bool = False,
    observe: Observer | None = None,
    progress: Callable[[int], None] | None = None,
) -> tuple[LogWalk, int]:
    """Map ``path`` read-only and walk it; returns the finished walk and the file size."""
    with MappedFile(path) as mapped:
        walk = LogWalk(path, mapped.buf, name_base=name_base, deep=deep, observe=observe, progress=progress,
                       release=mapped.release)
        try:
            walk.run()
        finally:
            walk.close()
    return walk, mapped.size
