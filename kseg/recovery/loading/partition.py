"""``LogLoader.load`` for one partition directory, step by step in Kafka's order (R1.3, R1.4).

:class:`Loader` replays the load against a :class:`~kseg.recovery.loading.state.PartitionDir`
(an in-memory picture: the real directory is only read) and records what
each step changes.  :func:`predict_partition` turns that into a
:class:`~kseg.recovery.loading.model.PartitionPrediction`.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TypeVar

from kseg.recovery.clean_prefix import CleanPrefix
from kseg.recovery.loading.epochs import EpochCache
from kseg.recovery.loading.loadstate import LoadInputs, LoadState
from kseg.recovery.loading.model import FAILS, TRUNCATED, LoadFailed, PartitionPrediction
from kseg.recovery.loading.outcome import finish_prediction
from kseg.recovery.loading.segments import Seg, file_name, read_next_offset
from kseg.recovery.loading.segrecovery import (
    SegmentRecovery,
    SplitNotModelled,
    delete_segments,
    first_unstable_read,
)
from kseg.recovery.loading.snapshots import ProducerStates, rebuild_producer_state
from kseg.recovery.loading.split import split_segment
from kseg.recovery.loading.startup import load_segment_files, offset_from_name, remove_temp_and_swap
from kseg.recovery.loading.state import PartitionDir
from kseg.recovery.loading.topicid import FILE as METADATA_FILE
from kseg.recovery.loading.topicid import topic_id_failure

LONG_MAX = (1 << 63) - 1
MAX_INDEX_SIZE = 10 * 1024 * 1024  # segment.index.bytes
MAX_SPLITS = 1000  # each split leaves segments that cannot overflow again; a bound all the same
T = TypeVar("T")


class Loader(LoadState):
    """One ``LogLoader.load``: the steps, over the shared :class:`LoadState`."""

    def __init__(self, pdir: PartitionDir, inputs: LoadInputs, epochs: EpochCache, psm: ProducerStates) -> None:
        super().__init__(pdir, inputs, epochs, psm)
        self.recovery = SegmentRecovery(self)

    def load(self) -> tuple[int, int, int]:
        """(log start offset, recovery point, log end offset) as ``LogLoader.load`` returns them (R1.4)."""
        inputs = self.inputs
        remove_temp_and_swap(self)
        self._retry_on_overflow(lambda: load_segment_files(self, self.recovery.recover_early), in_map=False)
        if inputs.kind != "delete":
            recovery_point, next_offset = self._retry_on_overflow(self.recover_log, in_map=True)
            self.resize_active_indexes()
        else:  # R2.7
            if not self.segments:
                self._new_segment(0, "R2.7")
            recovery_point = next_offset = 0
        self.epochs.truncate_from_end(next_offset)
        log_start = max(inputs.log_start_offset, self.ordered()[0].base)  # R8.1
        self.epochs.truncate_from_start(inputs.log_start_offset)
        self.psm.remove_strays(sorted(self.segments))
        rebuild_producer_state(self.psm, self.ordered(), log_start, next_offset, inputs.clean_shutdown,
                               self.recovery.replayer())
        return log_start, max(recovery_point, log_start), next_offset  # R1.6 raises rp to the log start

    def _retry_on_overflow(self, step: Callable[[], T], in_map: bool) -> T:
        """``LogLoader.retryOnOffsetOverflow`` (R4.4): split the overflowing segment and run ``step`` again.

        ``in_map``: the step is ``recoverLog`` (the segment is in the map), not ``loadSegmentFiles``.
        A split the model does not follow (:func:`~.split.plan_split`) ends the prediction with a note.
        """
        for _ in range(MAX_SPLITS):
            overflowed = self._attempt(step)
            if not isinstance(overflowed, SplitNotModelled):
                return overflowed
            if not split_segment(self, Seg(offset_from_name(overflowed.args[0], "R4.4", "LogLoader")), in_map):
                raise overflowed
        raise SplitNotModelled(f"more than {MAX_SPLITS} splits")

    @staticmethod
    def _attempt(step: Callable[[], T]) -> T | SplitNotModelled:
        """``step``'s result, or the overflow it ran into."""
        try:
            return step()
        except SplitNotModelled as overflowed:
            return overflowed

    def recover_log(self) -> tuple[int, int]:
        """``LogLoader.recoverLog`` (R4.1-R4.6): (new recovery point, next offset)."""
        inputs = self.inputs
        if not inputs.clean_shutdown and inputs.recovery_point != LONG_MAX:  # R4.1, R4.2
            unflushed = _values_from(self.ordered(), inputs.recovery_point)
            for i, seg in enumerate(unflushed):
                if self.recovery.recover_in_recover_log(seg) > 0:
                    delete_segments(self, unflushed[i + 1 :], "R4.3", "LogLoader.recoverLog")
                    break
        log_end = self._log_start_beyond_end()
        if not self.segments:
            self._new_segment(inputs.log_start_offset, "R4.6")
        if inputs.clean_shutdown and log_end is not None:
            return log_end, log_end
        if log_end is None:
            log_end = read_next_offset(self.pdir, self.ordered()[-1])
        return min(inputs.recovery_point, log_end), log_end

    def _log_start_beyond_end(self) -> int | None:
        """``deleteSegmentsIfLogStartGreaterThanLogEnd`` (R8.2): the log end, or None if everything went."""
        if not self.segments:
            return None
        log_end = read_next_offset(self.pdir, self.ordered()[-1])
        if log_end >= self.inputs.log_start_offset:
            return log_end
        delete_segments(self, self.ordered(), "R8.2", "LogLoader.deleteSegmentsIfLogStartGreaterThanLogEnd",
                        mark_snapshots=False)
        self.epochs.clear()
        self.psm.truncate_fully(self.inputs.log_start_offset)
        return None

    def _new_segment(self, base: int, rule: str) -> None:
        """``LogSegment.open`` of an empty active segment (R4.6, R2.7, R5.7)."""
        self.pdir.create(file_name(base, ".log"), 0, rule, "LogSegment.open", "new empty active segment")
        self.segments[base] = Seg(base)

    def resize_active_indexes(self) -> None:
        """``resizeIndexes(config.maxIndexSize)`` on the active segment (R4.7): preallocated, entries kept."""
        seg = self.ordered()[-1]
        for kind, size in ((".index", MAX_INDEX_SIZE), (".timeindex", MAX_INDEX_SIZE - MAX_INDEX_SIZE % 12)):
            name = seg.name(kind)
            if self.pdir.exists(name):
                self.pdir.record("resize", name, "R4.7", "LogSegment.resizeIndexes", size=size,
                                 detail="preallocated to the maximum; trimmed back at a clean close",
                                 changes_content=False)
            else:
                self.pdir.create(name, size, "R4.7", "LogSegment.resizeIndexes (AbstractIndex.createAndAssignMmap)")
                self.pdir.files[name].data = b""


def _values_from(segments: list[Seg], start: int) -> list[Seg]:
    """``LogSegments.values(from, Long.MAX_VALUE)``: from the segment containing ``from`` (R4.2)."""
    floor = [s for s in segments if s.base <= start]
    low = floor[-1].base if floor else None
    return [s for s in segments if low is None or s.base >= low]


def _initialize_topic_id(pdir: PartitionDir) -> None:
    """``UnifiedLog.initializeTopicId`` (R1.6): a ``partition.metadata`` Kafka cannot read fails the load after it ran."""
    data = pdir.current(METADATA_FILE)
    if data is None:
        return
    failure = topic_id_failure(data, (pdir.path / METADATA_FILE).absolute())
    if failure is not None:
        raise LoadFailed(failure)


__all__ = ["LoadInputs", "Loader", "predict_partition"]


def predict_partition(
    path: Path, topic: str, partition: int, inputs: LoadInputs, prefixes: Mapping[str, CleanPrefix] | None = None
) -> PartitionPrediction:
    """What ``UnifiedLog.create`` does to this partition directory at the next start (read-only).

    ``prefixes``: recovery loops already run over the leading clean batches of .log files, by
    absolute path (:mod:`kseg.recovery.clean_prefix`); recovering such a file goes on from there.
    """
    pred = PartitionPrediction(str(path), topic, partition, kind=inputs.kind,
                               recovery_point_checkpoint=inputs.recovery_point,
                               log_start_offset_checkpoint=inputs.log_start_offset,
                               high_watermark=inputs.high_watermark)
    pdir = PartitionDir(path, path.name, prefixes)
    pdir.now_ms = inputs.now_ms if inputs.now_ms is not None else time.time_ns() // 1_000_000
    loader: Loader | None = None
    try:
        epochs = EpochCache.load(pdir)  # R1.3 (3)
        psm = ProducerStates(pdir, "R6.3b", inputs.max_batch_bytes)  # R1.3 (4)
        loader = Loader(pdir, inputs, epochs, psm)
        log_start, recovery_point, log_end = loader.load()
        first_unstable_read(loader, log_start, log_end)  # R6.7, in UnifiedLog's constructor
        _initialize_topic_id(pdir)  # in the UnifiedLog constructor, right after it (R1.6)
        pred.log_start_offset, pred.recovery_point, pred.log_end_offset = log_start, recovery_point, log_end
        pred.leader_epochs = epochs.as_lists()
    except LoadFailed as failed:
        pred.error = failed.error
        pred.outcome = FAILS
        pred.log_end_offset = None
    except SplitNotModelled as split:
        pred.notes.append(f"{split.args[0]}: the overflow split goes ahead (R4.4); not modelled past this point")
        pred.log_end_offset = None
    finish_prediction(pred, pdir, loader)
    if pred.notes and pred.log_end_offset is None and pred.error is None:
        pred.outcome = TRUNCATED  # the split replaces the .log with .swap segments
    return pred


