"""Verify a .log file (or a KRaft .checkpoint, which holds the same batches), batch by batch.

The walk has two speeds.  The fast path takes runs of batches from the one
batch walker, :meth:`kseg.format.walk.BatchWalk.valid_v2_run`: for the
overwhelmingly common case -- a whole V2 batch whose CRC-32C matches and whose
header says nothing unusual -- it costs the walker's one header unpack and one
CRC call plus a handful of integer comparisons here, and builds no object
beyond the header tuple.  Everything else
takes a slow path:

* a header that is unusual (control batch, odd attributes, offsets out of
  order, producer fields that do not fit) gets ``_check_v2_header``
  (:mod:`~kseg.ops.verify.log_batches`);
* anything that is not a whole, CRC-valid V2 batch ends the run; the
  resynchronising scanner (:mod:`~kseg.ops.verify.log_gaps`) says what is
  there -- a valid V0/V1 message, or the gap up to the next batch that checks
  out -- and a new run starts after it.

With ``deep`` every record is decoded too (:mod:`~kseg.ops.verify.log_deep`).
"""

from __future__ import annotations

from collections.abc import Callable

from kseg.format.compression import DEFAULT_MAX_DECOMPRESSED
from kseg.format.layout import LOG_OVERHEAD, MAGIC_OFFSET, TRANSACTIONAL_MASK, Buffer
from kseg.format.legacy_run import LegacyRun, clean_legacy_run
from kseg.format.walk import BatchWalk, V2Header, cut_by_window
from kseg.index import DEFAULT_INDEX_INTERVAL_BYTES, DEFAULT_MAX_INDEX_SIZE
from kseg.ops.verify.log_gaps import GapChecks
from kseg.ops.verify.log_state import (
    PROGRESS_STEP,
    USUAL_V2_ATTRIBUTES,
    MessagesObserver,
    Observer,
    RunObserver,
)
from kseg.recovery.clean_prefix import PrefixRecorder
from kseg.segment import MappedFile

__all__ = ["LogWalk", "Observer", "walk_log"]

#: Bytes of batches the walker checks per call: large enough that a call costs nothing per batch,
#: small enough that the run's headers stay in cache while they are checked (bench/bench_verify.py).
RUN_BYTES = 1 << 20
#: The window a walk reads the file into (``read_into``), reused from window to window.
WINDOW_BYTES = 4 << 20
#: Read the file window by window rather than walk the mapping (not for --deep).  Copying costs
#: less than mapping a file whose page cache holds small folios (as a broker writes it: ~0.04 s
#: less CPU per GiB) and a little more for large ones (~0.02 s more; docs/core.md, "Figures").
READ_WINDOWS = True


class LogWalk(GapChecks):
    """One pass over a .log or .checkpoint; findings go to ``findings`` (see :class:`WalkState`)."""

    def run(self) -> LogWalk:
        """Walk the whole file; returns self."""
        limit = self.limit
        pos = 0
        while pos < limit:
            pos = self._fast(pos)
            if pos < limit:
                taken = self._legacy(pos)
                pos = self._slow(pos) if taken == pos else taken
        if self.batches:
            self.last_offset = self.max_last
        return self

    def _fast(self, start: int) -> int:
        """Take the CRC-valid V2 batches from ``start`` run by run; returns where the first other entry is.

        With ``read_into`` the file is read window by window (:meth:`_fast_read`), else the runs
        go over the mapping.

        Between runs (about :data:`RUN_BYTES` each) the pages behind the walk are released and
        progress is reported; a run that ends before its bound ends at an entry for the slow path
        (or at the end of the file).
        """
        if self.read_into is not None:
            return self._fast_read(start)
        return self._runs(self.buf, 0, self.limit, start)

    def _runs(self, buf: Buffer, base: int, limit: int, start: int) -> int:
        """Runs of clean V2 batches in ``buf[:limit]`` (the file from position ``base``) from ``start``
        (``buf``'s position) until one stops before its bound; returns where, in ``buf``."""
        walk = BatchWalk(buf, start, limit, strict=False)
        recorder = self.recorder
        pos = start
        while True:
            until = pos + RUN_BYTES
            ran = recorder.valid_v2_run(buf, pos, until, base, limit) if recorder is not None else None
            headers, end = ran if ran is not None else walk.valid_v2_run(pos, until)
            if headers:
                self._take(headers, base + pos)
            pos = end
            if self.release is not None:
                self.release(base + pos)
            if base + pos >= self._next_progress:
                self.progress(base + pos)  # type: ignore[misc]  # a progress mark is only set with a progress callback
                self._next_progress = base + pos + PROGRESS_STEP
            if end < until:
                return end

    def _fast_read(self, start: int) -> int:
        """:meth:`_fast` over windows of the file read into one reused buffer instead of the mapping.

        The same runs as over the mapping: a run that stops only because the window ends there is
        taken up again from a window starting at that batch; a batch longer than a window is taken
        from the mapping.  Only the slow paths touch the mapping (its pages are dropped behind the
        walk all the same).
        """
        read_into = self.read_into
        assert read_into is not None
        if start + MAGIC_OFFSET < self.limit and self.buf[start + MAGIC_OFFSET] != 2:
            return start  # not a V2 batch: nothing to read a window for (a V0/V1 message, damage)
        if self._window is None:  # one per walk, no larger than the file: a small file's walk must not
            # zero 4 MiB (a log directory of thousands of small segments)
            self._window = bytearray(max(1, min(WINDOW_BYTES, self.limit - start)))
        window = self._window
        size = len(window)
        with memoryview(window) as view:
            pos = start
            while True:
                got = read_into(view, pos)
                stop = pos + self._runs(window, pos, got, 0)
                if got < size or pos + got >= self.limit or not cut_by_window(window, stop - pos, got):
                    return stop  # the end of the file, or an entry that is not a clean V2 batch
                if stop == pos:  # a batch longer than the window
                    stop = self._one_mapped(pos)
                    if stop == pos:
                        return pos
                pos = stop

    def _legacy(self, start: int) -> int:
        """Take the clean V0/V1 messages from ``start`` run by run (:mod:`kseg.format.legacy_run`);
        returns where the first other entry is (``start`` when there is none: the slow path's).

        Not with ``deep``: the slow path decodes every inner message.  Between runs the pages
        behind the walk are released and progress is reported, as on the V2 fast path.
        """
        if self.deep:
            return start
        each = self.observe is not None
        pos = start
        while True:
            until = pos + RUN_BYTES
            run = clean_legacy_run(self.buf, pos, self.limit, until, self.floor, self.overflow_at, each)
            if run.count:
                self._take_legacy(run)
            pos = run.end
            if self.release is not None:
                self.release(pos)
            if pos >= self._next_progress:
                self.progress(pos)  # type: ignore[misc]  # a progress mark is only set with a progress callback
                self._next_progress = pos + PROGRESS_STEP
            if pos < until:
                return pos

    def _take_legacy(self, run: LegacyRun) -> None:
        """What ``_check_legacy`` does for a message with nothing to report, for a whole run at once."""
        observe = self.observe
        if observe is not None and run.messages is not None:
            if self.observe_messages is not None:
                self.observe_messages(run.messages)
            else:
                for pos, offset, timestamp in run.messages:
                    observe(pos, offset, offset, timestamp)
        if self.first_offset is None:
            self.first_offset = run.first_offset
        self.floor = run.last_offset  # the run's offsets go up strictly from above the floor
        self.max_last = max(self.max_last, run.last_offset)
        self.batches += run.count
        self.prev_position = run.last_position

    def _one_mapped(self, pos: int) -> int:
        """The batch at ``pos`` taken from the mapping, if it is a clean V2 batch; returns where the walk is."""
        ran = self.recorder.valid_v2_run(self.buf, pos, pos + 1) if self.recorder is not None else None
        headers, end = ran if ran is not None else BatchWalk(self.buf, pos, strict=False).valid_v2_run(pos, pos + 1)
        if headers:
            self._take(headers, pos)
        return end

    def _take(self, headers: list[V2Header], start: int) -> None:
        """The fast path: a run of whole, CRC-valid V2 batches, the first at ``start``.

        Per batch: one tuple unpack and a handful of integer comparisons; a header with
        anything unusual goes to ``_check_v2_header``.
        """
        observe, deep, epochs = self.observe, self.deep, self.epochs
        if observe is not None and self.observe_run is not None:
            self.observe_run(start, headers)  # the index checks see the run in one call
            observe = None
        per_batch_extras = observe is not None or deep
        floor, max_epoch, overflow_at = self.floor, self.max_epoch, self.overflow_at
        usual_attributes, transactional, overhead = USUAL_V2_ATTRIBUTES, TRANSACTIONAL_MASK, LOG_OVERHEAD
        pos, nxt = self.prev_position, start
        for header in headers:
            base, length, epoch, _, _, attrs, lod, _, max_ts, pid, p_epoch, seq, count = header
            prev_position, pos = pos, nxt
            nxt = pos + overhead + length
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
        if self.first_offset is None:
            self.first_offset = headers[0][0]
        self.batches += len(headers)
        self.floor, self.max_epoch, self.prev_position = floor, max_epoch, pos
        self.max_last = max(self.max_last, floor)  # the fast path keeps ``floor`` at the largest last offset

def _release_unpopulated(mapped: MappedFile) -> Callable[[int], None]:
    """The walk's ``release`` when it reads the file: pages the slow paths mapped go, none are mapped ahead."""
    return lambda upto: mapped.release(upto, populate=False)


def walk_log(
    path: str,
    *,
    name_base: int | None,
    deep: bool = False,
    observe: Observer | None = None,
    progress: Callable[[int], None] | None = None,
    max_batch_bytes: int = DEFAULT_MAX_DECOMPRESSED,
    recovery_prefix: bool = False,
    observe_run: RunObserver | None = None,
    observe_messages: MessagesObserver | None = None,
) -> tuple[LogWalk, int]:
    """Map ``path`` read-only and walk it; returns the finished walk and the file size.

    ``recovery_prefix``: also run ``LogSegment.recover``'s loop over the leading clean batches
    (``walk.recorder``, :mod:`kseg.recovery.clean_prefix`), for the load model.
    ``observe_run`` / ``observe_messages``: ``observe`` for a fast path's whole run at once (both
    with ``observe``, which the slow paths call batch by batch).
    """
    with MappedFile(path, readable=not deep) as mapped:
        walk = LogWalk(path, mapped.buf, name_base=name_base, deep=deep, observe=observe, progress=progress,
                       release=mapped.release, max_batch_bytes=max_batch_bytes)
        if observe is not None:
            walk.observe_run, walk.observe_messages = observe_run, observe_messages
        if recovery_prefix and name_base is not None:
            walk.recorder = PrefixRecorder(name_base, mapped.size, DEFAULT_INDEX_INTERVAL_BYTES, DEFAULT_MAX_INDEX_SIZE)
        if READ_WINDOWS and not deep:  # a deep walk reads every record from the mapping anyway
            walk.read_into = mapped.read_into
            walk.release = _release_unpopulated(mapped)
        try:
            walk.run()
        finally:
            walk.close()
    return walk, mapped.size
