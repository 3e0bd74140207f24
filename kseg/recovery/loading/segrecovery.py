"""``LogLoader.recoverSegment`` and segment deletion, with their exceptions (R3.5, R4.3-R4.5).

A segment is recovered with a temporary ``ProducerStateManager`` whose
``rebuildProducerState`` (up to the segment's base) changes snapshot files
on its own (R3.5), then ``LogSegment.recover``; what ``recover`` throws is
handled differently in ``loadSegmentFiles`` (nothing but the overflow split)
and ``recoverLog`` (``InvalidOffsetException``/``IOException`` empty the segment).
The overflow split is refused unless the segment's last batch overflows (R4.5).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

from kseg.errors import KsegError, LimitExceeded
from kseg.format.layout import Buffer
from kseg.format.v0v1 import LegacyBatch
from kseg.format.walk import BatchWalk
from kseg.recovery.indexes import RecoveryFailure
from kseg.recovery.loading.loadstate import LoadState
from kseg.recovery.loading.model import BROKER_STOPS, LoadError, LoadFailed
from kseg.recovery.loading.segments import (
    INDEX_SUFFIXES,
    INVALID_OFFSET,
    OVERFLOW,
    Recovered,
    Seg,
    apply_recovery,
    has_overflow,
    index_lookup,
    replay,
    run_recover,
    search_position,
)
from kseg.recovery.loading.snapshots import ProducerStates, Replayer, rebuild_producer_state
from kseg.recovery.producer_state import TxnTracker
from kseg.segment import MappedFile

#: Kafka's classes for the simple names :mod:`kseg.recovery.indexes` and producer_state use.
JAVA_CLASSES = {
    "InvalidOffsetException": "org.apache.kafka.common.errors.InvalidOffsetException",
    "InvalidTxnStateException": "org.apache.kafka.common.errors.InvalidTxnStateException",
    "IllegalArgumentException": "java.lang.IllegalArgumentException",
    "IllegalStateException": "java.lang.IllegalStateException",
    "NullPointerException": "java.lang.NullPointerException",
    "KafkaException": "org.apache.kafka.common.KafkaException",
    OVERFLOW: "org.apache.kafka.storage.internals.log.LogSegmentOffsetOverflowException",
}


class SplitNotModelled(Exception):
    """The overflow split would go ahead (the last batch overflows): the model does not follow it."""


class _EmptySegment(Exception):
    """``recover`` threw ``InvalidOffsetException`` inside ``recoverLog``: the segment is emptied (R4.3)."""


class SegmentRecovery:
    """``recoverSegment`` for one :class:`~kseg.recovery.loading.loadstate.LoadState`."""

    def __init__(self, loader: LoadState) -> None:
        self.loader = loader

    def replayer(self) -> Replayer:
        pdir = self.loader.pdir

        def run(seg: Seg, start: int, end: int | None, tracker: TxnTracker) -> None:
            pdir.loaded_indexes.add(seg.name(".index"))  # segment.read maps the offset index (R4.8)
            known = len(tracker.producers.entries)
            replay(pdir, seg, start, end, tracker)
            tracker.producers.reverse_since(known)  # loadProducersFromRecords' computeIfAbsent order (R6.8)

        return run

    def recover_early(self, seg: Seg) -> None:
        """R3.4/R3.5: recovered inside ``loadSegmentFiles``; the byte count is discarded, nothing else deleted."""
        try:
            self._recover(seg, "R3.5")
        except _EmptySegment as empty:
            raise self._stops(seg, empty.args[0], "R3.5") from None

    def recover_in_recover_log(self, seg: Seg) -> int:
        """R4.3: the bytes cut from this segment (``InvalidOffsetException`` empties it)."""
        try:
            return self._recover(seg, "R4.3")
        except _EmptySegment:
            pdir = self.loader.pdir
            size = pdir.size(seg.name(".log"))
            pdir.truncate(seg.name(".log"), 0, "R4.3", "LogLoader.recoverLog (InvalidOffsetException: truncateTo)")
            return size

    def _recover(self, seg: Seg, rule: str) -> int:
        loader = self.loader
        temp = ProducerStates(loader.pdir, rule, loader.inputs.max_batch_bytes)
        rebuild_producer_state(temp, loader.ordered(), loader.inputs.log_start_offset, seg.base, False,
                               self.replayer())
        rec = run_recover(loader.pdir, seg, temp.tracker)
        loader.epochs.assign_from_recovery(rec.epochs, seg.name(".log"))
        if rec.failure is not None:
            apply_recovery(loader.pdir, seg, rec, rule)
            # recover threw after offsetIndex().reset()/timeIndex().reset(): both stay preallocated (R4.5, R4.8)
            loader.pdir.preallocated.update(seg.name(kind) for kind in (".index", ".timeindex"))
            self._failure(seg, rec, rec.failure)
        truncated = apply_recovery(loader.pdir, seg, rec, rule)
        if rec.map_end is not None:
            temp.last_map = rec.map_end
        temp.take_snapshot(rule)
        return truncated

    def _failure(self, seg: Seg, rec: Recovered, failure: RecoveryFailure) -> None:
        """What an exception out of ``recover`` becomes (R4.4, R4.5, R5.3)."""
        if failure.exception == OVERFLOW:
            if has_overflow(self.loader.pdir, seg, rec.build.offset_index_bytes()):
                raise SplitNotModelled(seg.name(".log"))
            path = (self.loader.pdir.path / seg.name(".log")).absolute()
            message = f"Split operation is only permitted for segments with overflow, and the problem path is {path}"
            raise LoadFailed(LoadError("java.lang.IllegalArgumentException", message, BROKER_STOPS, "R4.5",
                                       "LocalLog.splitOverflowedSegment"))
        if failure.exception == INVALID_OFFSET:
            raise _EmptySegment(failure)
        raise self._stops(seg, failure, "R5.3")

    def _stops(self, seg: Seg, failure: RecoveryFailure, rule: str) -> LoadFailed:
        exception = JAVA_CLASSES.get(failure.exception, failure.exception)
        message = failure.message
        if failure.exception == INVALID_OFFSET:  # OffsetIndex.append / TimeIndex.maybeAppend end with the path
            kind = ".timeindex" if " to slot " in message else ".index"
            message = f"{message} to {(self.loader.pdir.path / seg.name(kind)).absolute()}"
        return LoadFailed(LoadError(exception, message, BROKER_STOPS, rule, "LogSegment.recover"))


def kafka_batches(buf: Buffer, start: int, end: int, cap: int, path: str,
                  release: Callable[[int], None] | None = None) -> tuple[list[tuple[int, int]], int]:
    """([(first, last)], stop position) of the batches Kafka's ``FileRecords.batches()`` yields in ``[start, end)``.

    What ``LoadLogDir`` counts as lost (§13): it reads ``baseOffset()``/``lastOffset()`` of each
    batch and stops at the first that throws.  A frame with magic 0/1 is a
    ``LegacyFileChannelRecordBatch``: its ``baseOffset()`` reads the record, and a compressed one
    (attributes & 7, in a magic-2 batch the CRC's top byte after a flipped magic) must decompress
    -- where kseg cannot decode it either, the iteration stops there.  A wrapper past kseg's read
    cap ``cap`` raises :class:`~kseg.errors.LimitExceeded` (kseg's refusal, not a prediction).
    """
    found: list[tuple[int, int]] = []
    walk = BatchWalk(buf, start, end, strict=False)
    for pos, _, magic, header, _ in walk.frames():
        if release is not None:  # a mapped file: the pages behind the walk go back (flat memory)
            release(pos)
        if magic >= 2:
            low = int.from_bytes(buf[pos : pos + 8], "big", signed=True)
            found.append((low, low if header is None else header[0] + header[6]))
            continue
        try:
            legacy = LegacyBatch(buf, pos)
            found.append((legacy.first_offset(cap), legacy.last_offset))
        except LimitExceeded as err:
            raise err.with_path(path) from None
        except KsegError:
            return found, pos
    return found, end if walk.end is None else walk.end.position


def first_unstable_read(loader: LoadState, log_start: int, log_end: int) -> None:
    """R6.7: ``UnifiedLog.maybeIncrementFirstUnstableOffset`` reads the log at the first unstable offset.

    ``PSM.firstUnstableOffset`` is the earliest first offset of the open transactions and of those
    the load's own replay completed (``unreplicatedTxns``, kept while their last offset is at or above
    the log start).  It carries no position, so ``convertToOffsetMetadataOrThrow(max(it, log start))``
    runs ``LocalLog.read``: from the segment holding the offset, ``translateOffset`` (offset index
    lookup, then the batches from there) until a batch reaches it.  That maps each such segment's
    ``.index`` (trimmed at close, R4.8), and a size field below 14 on the way throws
    ``CorruptRecordException``: the broker stops.  At the log end nothing is read.
    """
    tracker = loader.psm.tracker
    firsts = [first for first in tracker.open_transactions.values()]
    firsts += [first for first, last in tracker.completed if last >= log_start]
    if not firsts:
        return
    offset = max(min(firsts), log_start)
    if offset >= log_end:
        return
    pdir = loader.pdir
    segments = loader.ordered()
    floor = max((s.base for s in segments if s.base <= offset), default=None)
    for seg in segments:
        if floor is None or seg.base < floor:
            continue
        pdir.loaded_indexes.add(seg.name(".index"))
        source = pdir.source(seg.name(".log"))
        if source is None:
            continue
        index = pdir.current(seg.name(".index")) or b""
        path = (pdir.path / seg.name(".log")).absolute()
        with MappedFile(source) as mapped:
            start = index_lookup(index, seg.base, offset)[1]
            try:
                found = search_position(mapped.buf, start, pdir.size(seg.name(".log")), offset, path)
            except LoadFailed as failed:
                raise LoadFailed(replace(failed.error, rule="R6.7",
                                         method="UnifiedLog.maybeIncrementFirstUnstableOffset -> LocalLog.read")) from None
        if found is not None:
            return


def delete_segments(loader: LoadState, segments: Sequence[Seg], rule: str, method: str, *,
                    mark_snapshots: bool = True) -> None:
    """``removeAndDeleteSegmentsAsync``: files renamed ``.deleted`` at once, snapshots marked (R4.3, R8.2).

    ``mark_snapshots`` False: R8.2 passes ``segments.values()``, a live view that is empty by the time
    ``deleteProducerSnapshotsAsync`` reads it (the segments were removed from the map first), so no
    snapshot is marked; ``truncateFullyAndStartAt`` then deletes them outright.
    """
    pdir = loader.pdir
    for seg in segments:
        for suffix in (".log", *INDEX_SUFFIXES):
            name = seg.name(suffix)
            if pdir.exists(name):
                pdir.rename(name, name + ".deleted", rule, f"{method} -> LocalLog.deleteSegmentFiles")
        loader.segments.pop(seg.base, None)
        loader.deleted.append(seg.base)
    if mark_snapshots:
        loader.psm.mark_deleted([s.base for s in segments], rule)
