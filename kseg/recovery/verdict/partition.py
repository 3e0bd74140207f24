"""The facts of one broker's next start, read off the loading model's prediction.

:func:`measure` is the loss of one partition (against its high watermark and recovery point);
:func:`partition_facts` turns it and the prediction into :class:`~.facts.Fact` s,
:func:`log_dir_facts` adds the log directory's own, :func:`broker_facts` the whole broker's.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from kseg.locks import log_dir_locked
from kseg.recovery.loading import BROKER_STOPS, FAILS, TRUNCATED, LogDirPrediction, PartitionPrediction
from kseg.recovery.loading.logdir import worth_a_pool
from kseg.recovery.loading.model import RENAME
from kseg.recovery.verdict.facts import (
    BROKER_RUNNING,
    COMMITTED_LOST,
    GROUP_COMMITS_LOST,
    LOG_DIR_OFFLINE,
    NOT_MODELLED,
    NOT_SERVED,
    OFFSETS_LOST,
    PARTITION_MISSING,
    REBUILT,
    TAIL_CUT,
    UNCOMMITTED_SERVED,
    UNREADABLE_SERVED,
    Fact,
)
from kseg.recovery.verdict.facts import BROKER_STOPS as STOPS_FACT
from kseg.recovery.verdict.groups import describe, lost_commits
from kseg.recovery.verdict.served import served_damage
from kseg.recovery.verdict.table import Verdict
from kseg.recovery.verdict.unstable import open_unseen
from kseg.segment import MappedFile

CONSUMER_OFFSETS = "__consumer_offsets"


@dataclass(frozen=True, slots=True)
class Loss:
    """What one partition loses, measured against its high watermark and recovery point."""

    offsets: int = 0  # offsets gone: lost_offsets, lost_offsets_behind_damage, unserved_offsets
    below_high_watermark: int | None = 0  # of those, committed ones; None without a high-watermark entry
    below_recovery_point: int = 0  # of those, ones the recovery-point checkpoint says were flushed
    behind_high_watermark: int = 0  # high watermark - log end after the load, when positive
    truncated_bytes: int = 0
    deleted_bytes: int = 0  # .log bytes of the deleted segments

    @property
    def bytes(self) -> int:
        return self.truncated_bytes + self.deleted_bytes

    @property
    def lost(self) -> bool:
        """Offsets, or offsets the log no longer reaches (bytes that framed no batch are not a loss)."""
        return bool(self.offsets or self.behind_high_watermark)

    @property
    def committed(self) -> bool:
        """Committed data is gone from this replica (or may be: no high watermark to tell)."""
        below = self.below_high_watermark
        return self.behind_high_watermark > 0 or (below is None and self.offsets > 0) or bool(below)


def count_below(ranges: list[list[int]], limit: int) -> int:
    """Offsets of the ``[first, last]`` ranges that are below ``limit``."""
    return sum(max(0, min(last, limit - 1) - first + 1) for first, last in ranges)


def _deleted_bytes(pred: PartitionPrediction) -> int:
    """Sizes of the deleted segments' ``.log`` files (``stat`` only: no access time changes)."""
    logs = [Path(pred.path) / f"{base:020d}.log" for base in pred.deleted_segments]
    return sum(log.stat().st_size for log in logs if log.is_file())


def measure(pred: PartitionPrediction) -> Loss:
    """The loss of one partition; a directory marked ``-delete`` loses everything by design: nothing."""
    if pred.kind == "delete":
        return Loss()
    ranges, hw = pred.gone_offsets, pred.high_watermark
    behind = 0
    if hw is not None and pred.log_end_offset is not None:
        behind = max(0, hw - pred.log_end_offset)
    return Loss(
        offsets=count_below(ranges, 1 << 63),
        below_high_watermark=None if hw is None else count_below(ranges, hw),
        below_recovery_point=count_below(ranges, pred.recovery_point_checkpoint),
        behind_high_watermark=behind,
        truncated_bytes=pred.truncated_bytes,
        deleted_bytes=_deleted_bytes(pred),
    )


def zero_filled_tail(pred: PartitionPrediction) -> bool:
    """The bytes the start cuts from the one ``.log`` it shortens are all zero (a crash's preallocated tail)."""
    logs = [n for n in pred.files_changed if n.endswith(".log") and len(n) == 24]
    if len(logs) != 1 or pred.truncated_bytes <= 0:
        return False
    path = Path(pred.path) / logs[0]
    with MappedFile(path) as mapped:
        size = len(mapped.buf)
        start = size - pred.truncated_bytes
        step = 1 << 20
        return start >= 0 and all(not any(mapped.buf[i : min(i + step, size)])
                                  for i in range(start, size, step))


def stray_rename(pred: PartitionPrediction) -> str | None:
    """The ``-stray`` name Kafka gives a directory without ``partition.metadata`` (R1.5), if it does."""
    return next((a.target for a in pred.actions if a.kind == RENAME and a.rule == "R1.5"), None)


def _ranges(ranges: list[list[int]]) -> str:
    return ", ".join(str(first) if first == last else f"{first}-{last}" for first, last in ranges)


def _loss_fact(pred: PartitionPrediction, loss: Loss) -> Fact | None:
    where, gone = pred.path, pred.gone_offsets
    if loss.committed:
        if loss.offsets and loss.below_high_watermark is None:
            text = f"offsets {_ranges(gone)} lost ({loss.offsets:,}; no high watermark: possibly committed)"
        elif loss.offsets:
            text = (f"offsets {_ranges(gone)} lost ({loss.offsets:,}, {loss.below_high_watermark:,} below the "
                    f"high watermark {pred.high_watermark})")
        else:
            text = (f"log end {pred.log_end_offset} is {loss.behind_high_watermark:,} below the high watermark "
                    f"{pred.high_watermark}")
        return Fact(COMMITTED_LOST, where, text, gone)
    if loss.offsets:
        return Fact(OFFSETS_LOST, where, f"offsets {_ranges(gone)} lost ({loss.offsets:,}, all at or above the "
                                         f"high watermark {pred.high_watermark}: never committed)", gone)
    return None


def partition_facts(pred: PartitionPrediction) -> list[Fact]:
    """The facts of one partition's next start."""
    where = pred.path
    if pred.error is not None:
        if pred.error.consequence == BROKER_STOPS:
            return [Fact(STOPS_FACT, where, f"the load throws {pred.error.exception}")]
        # the log directory goes offline: one fact per log directory, naming the partition that takes it
        return [Fact(LOG_DIR_OFFLINE, os.path.dirname(where) or ".",
                     f"{os.path.basename(where)}: the load throws {pred.error.exception}")]
    if pred.kind == "delete":
        return []
    facts: list[Fact] = []
    loss = measure(pred)
    lost = _loss_fact(pred, loss)
    if lost is not None:
        facts.append(lost)
    renamed = stray_rename(pred)
    if renamed is not None:
        facts.append(Fact(NOT_SERVED, where, f"renamed {renamed} (no partition.metadata): none of its "
                                             f"{_served(pred)} is served"))
    commits = lost_commits(pred)
    if commits:
        facts.append(Fact(GROUP_COMMITS_LOST, where, describe(commits)))
    damage = served_damage(pred)
    if damage:
        ranges = ", ".join(f"{name} offsets {first}-{'end' if last is None else last}"
                           + (" (a fetch there skips to the next segment)" if name.endswith(".index") else "")
                           for name, first, last in damage)
        facts.append(Fact(UNREADABLE_SERVED, where, f"served as it is, unreadable for consumers and followers: "
                                                    f"{ranges}", [[f, -1 if la is None else la] for _, f, la in damage]))
    unseen = open_unseen(pred)
    if unseen:
        txns = ", ".join(f"producer {producer} offsets {_ranges([[first, last]])}" for producer, first, last in unseen)
        facts.append(Fact(UNCOMMITTED_SERVED, where, f"read_committed consumers read as committed what never "
                          f"committed: {txns} (an open transaction; after a clean shutdown without a .snapshot "
                          "the start does not read the log for producer state, and a later marker completes "
                          "nothing)", [[first, last] for _, first, last in unseen]))
    if pred.log_end_offset is None and pred.notes:
        facts.append(Fact(NOT_MODELLED, where, pred.notes[0]))
    if loss.truncated_bytes and not loss.offsets:
        zeros = "zero-filled " if zero_filled_tail(pred) else ""
        facts.append(Fact(TAIL_CUT, where, f"{loss.truncated_bytes:,} bytes of {zeros}tail cut: no offset lost"))
    if not facts and pred.outcome in ("rebuilt", TRUNCATED):
        facts.append(Fact(REBUILT, where, "rebuilt: " + ", ".join(pred.files_created + pred.files_changed +
                                                                 pred.files_deleted)))
    return facts


def _served(pred: PartitionPrediction) -> str:
    if pred.log_end_offset is None or pred.log_start_offset is None or pred.log_end_offset <= pred.log_start_offset:
        return "data"
    return f"offsets {pred.log_start_offset}-{pred.log_end_offset - 1}"


def missing_directories(logdir: LogDirPrediction) -> list[tuple[str, str, int, int]]:
    """Checkpoint entries whose partition directory is gone -- not counting a directory marked ``-delete``
    (the topic was deleted: Kafka drops the entry at the next checkpoint)."""
    deleting = {(p.topic, p.partition) for p in logdir.partitions if p.kind == "delete"}
    return [e for e in logdir.entries_without_directory if (e[1], e[2]) not in deleting]


def log_dir_facts(logdir: LogDirPrediction, jobs: int = 1) -> list[Fact]:
    """The log directory's own facts, then its partitions'."""
    facts: list[Fact] = []
    where = logdir.path
    if os.path.isdir(where) and log_dir_locked(where):
        facts.append(Fact(BROKER_RUNNING, where, f"{os.path.join(where, '.lock')} is held by a live process "
                                                  "(a running broker?): the files may change while read"))
    if logdir.error is not None:
        kind = STOPS_FACT if logdir.error.consequence == BROKER_STOPS else LOG_DIR_OFFLINE
        facts.append(Fact(kind, where, f"{logdir.error.exception}: {' '.join(logdir.error.message.splitlines())}"))
    elif logdir.offline and not any(p.error is not None for p in logdir.partitions):
        facts.append(Fact(LOG_DIR_OFFLINE, where, "the log directory goes offline: none of its partitions is served"))
    seen: set[tuple[str, int]] = set()
    for file, topic, number, offset in missing_directories(logdir):
        if (topic, number) not in seen:
            seen.add((topic, number))
            facts.append(Fact(PARTITION_MISSING, where, f"{file} has {topic}-{number} at offset {offset}, but no "
                                                         "directory holds it: its data is not on this broker"))
    for part_facts in all_partition_facts(logdir.partitions, jobs):
        facts.extend(part_facts)
    return facts


def all_partition_facts(preds: Sequence[PartitionPrediction], jobs: int = 1) -> list[list[Fact]]:
    """:func:`partition_facts` of each partition, in order: here, or over ``jobs`` processes when the
    partitions are many or large.  Each partition's facts depend only on its prediction and its own files,
    so the answer is the same whatever ``jobs`` is (tests/jobs/test_verdict_pool.py)."""
    preds = list(preds)
    if not worth_a_pool([p.path for p in preds], jobs):
        return [partition_facts(p) for p in preds]
    from concurrent.futures import ProcessPoolExecutor  # only for a pool

    with ProcessPoolExecutor(max_workers=min(jobs, len(preds))) as pool:
        return list(pool.map(partition_facts, preds, chunksize=max(1, len(preds) // (jobs * 8))))


def broker_facts(log_dirs: Sequence[LogDirPrediction], broker_stops: bool, jobs: int = 1) -> list[Fact]:
    """Every fact of the broker's next start; ``broker_stops`` also when no log directory is left online.
    ``jobs``: worker processes for the partitions' facts (the same facts whatever the number)."""
    facts = [fact for d in log_dirs for fact in log_dir_facts(d, jobs)]
    if broker_stops and not any(f.kind == STOPS_FACT for f in facts):
        facts.insert(0, Fact(STOPS_FACT, log_dirs[0].path if log_dirs else "", "no log directory is left online"))
    return facts


__all__ = ["CONSUMER_OFFSETS", "FAILS", "Loss", "all_partition_facts", "broker_facts", "count_below", "log_dir_facts", "measure",
           "missing_directories", "partition_facts", "stray_rename", "verdict_of", "zero_filled_tail"]


def verdict_of(log_dirs: Sequence[LogDirPrediction], broker_stops: bool, jobs: int = 1) -> Verdict:
    """The one verdict of these log directories' next start (``jobs``: as for :func:`broker_facts`)."""
    return Verdict(broker_facts(log_dirs, broker_stops, jobs))
