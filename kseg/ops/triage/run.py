"""``kseg triage``: what the broker's next start does to every partition of one or several log directories.

The answer comes from the one model of Kafka 4.3.0's log loading
(:mod:`kseg.recovery.loading`); this module only measures and orders it for
someone on call:

* the loss of each partition measured against its high watermark
  (``replication-offset-checkpoint``: offsets below it were committed) and
  against the recovery-point checkpoint (offsets below it had been flushed:
  losing them means the disk, not an unflushed tail);
* an impact rank (:data:`STOPS` first, :data:`HEALTHY` last), so the
  partitions that stop the broker or lose committed data come first;
* the kseg commands to run next (:mod:`kseg.ops.triage.next`), all read-only.

Nothing is printed here and nothing is written: the model only reads, and
this module only ``stat`` s deleted segments for their size.
"""

from __future__ import annotations

import errno
import os
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import overload

from kseg.errors import EXIT_OK, EXIT_PROBLEMS, Refused
from kseg.format.compression import DEFAULT_MAX_DECOMPRESSED
from kseg.listing import children, names
from kseg.locks import is_kafka_log_dir
from kseg.ops.discover import parse_partition_dir
from kseg.ops.triage.next import NextStep, failing_file, log_dir_steps, partition_steps
from kseg.recovery.loading import (
    BROKER_STOPS,
    DIR_OFFLINE,
    FAILS,
    LogDirPrediction,
    PartitionPrediction,
    predict_broker,
)
from kseg.recovery.loading.model import OUTCOMES, RENAME
from kseg.recovery.verdict.facts import UNCOMMITTED_SERVED, UNREADABLE_SERVED
from kseg.recovery.verdict.partition import Loss, measure, missing_directories, verdict_of
from kseg.recovery.verdict.table import Verdict

#: Impact ranks, worst first: partitions are listed in this order.
STOPS = 0  # the load throws what LogManager does not handle: the broker halts
OFFLINE = 1  # the load throws an IOException: the partition's log directory goes offline
ATTENTION = 2  # the partition is not served at all (renamed -stray): none of its data reaches a client
COMMITTED = 3  # committed offsets (below the high watermark) lost, or the log ends below it
UNCOMMITTED = 4  # offsets lost above the high watermark
CHANGED = 5  # a .log changes without an offset lost (a tail that framed no batch), or the model stops short
HEALTHY = 6  # clean or rebuilt, nothing lost

#: ``progress(done, total, log_dir)``: called before each log directory is read.
Progress = Callable[[int, int, str], None]


@dataclass(slots=True)
class PartitionTriage:
    """One partition: the model's prediction, its loss, its rank and what to run next."""

    log_dir: str
    prediction: PartitionPrediction
    loss: Loss
    impact: int
    failing_file: str | None = None
    next: list[NextStep] = field(default_factory=list)
    unreadable: str | None = None  # the damaged offsets the start serves as they are (the verdict's words)
    uncommitted: str | None = None  # records of an open transaction the start serves as committed (its words)

    @property
    def problem(self) -> bool:
        return self.impact < HEALTHY

    @property
    def stray_rename(self) -> str | None:
        """The ``-stray`` name Kafka gives a directory without ``partition.metadata`` (R1.5), if it does."""
        return next((a.target for a in self.prediction.actions if a.kind == RENAME and a.rule == "R1.5"), None)

    def as_json(self) -> dict[str, object]:
        """The contract's object (exact keys, in order), then what triage adds."""
        pred, loss = self.prediction, self.loss
        return pred.as_json() | {
            "log_dir": self.log_dir,
            "high_watermark": pred.high_watermark,
            "recovery_point_checkpoint": pred.recovery_point_checkpoint,
            "lost_above_high_watermark": None if pred.outcome == FAILS else pred.lost_above_high_watermark,
            "lost_below_high_watermark": loss.below_high_watermark,
            "lost_below_recovery_point": loss.below_recovery_point,
            "behind_high_watermark": loss.behind_high_watermark,
            "deleted_bytes": loss.deleted_bytes,
            "consequence": None if pred.error is None else pred.error.consequence,
            "notes": list(pred.notes),
            "assumed": list(pred.assumed),
            "next": [step.as_json() for step in self.next],
        }


@dataclass(slots=True)
class LogDirTriage:
    """One log directory: the model's prediction and the commands for its own files."""

    prediction: LogDirPrediction
    next: list[NextStep] = field(default_factory=list)

    @property
    def path(self) -> str:
        return self.prediction.path


@dataclass(slots=True)
class TriageResult:
    """The whole broker: log directories as given, partitions worst first."""

    log_dirs: list[LogDirTriage]
    partitions: list[PartitionTriage]
    broker_stops: bool
    verdict: Verdict

    @property
    def problems(self) -> list[PartitionTriage]:
        return [p for p in self.partitions if p.problem]

    @property
    def healthy(self) -> list[PartitionTriage]:
        return [p for p in self.partitions if not p.problem]

    def stop_reason(self) -> str | None:
        """Why the broker stops: the first unhandled exception, or no log directory left online (R9.2)."""
        if not self.broker_stops:
            return None
        for d in self.log_dirs:
            if d.prediction.error is not None and d.prediction.error.consequence == BROKER_STOPS:
                return f"{d.prediction.error.exception} in {d.path}"
        for p in self.partitions:
            if p.prediction.error is not None and p.prediction.error.consequence == BROKER_STOPS:
                return f"{p.prediction.error.exception} in {p.prediction.path}"
        return "no log directory is left online"

    @property
    def offline(self) -> list[str]:
        return [d.path for d in self.log_dirs if d.prediction.offline]

    def outcomes(self) -> dict[str, int]:
        counted = Counter(p.prediction.outcome for p in self.partitions)
        return {outcome: counted[outcome] for outcome in OUTCOMES}

    def data_lost(self) -> bool:
        """Offsets or bytes lost, a segment deleted, the log behind its high watermark, or a checkpoint
        entry whose partition directory is gone (its data is not on this broker)."""
        lost = any(p.loss.lost for p in self.partitions)
        return lost or any(missing_directories(d.prediction) for d in self.log_dirs)

    def exit_code(self) -> int:
        """The verdict's (docs/cli.md, "One verdict"); usage errors and unreadable input are 2, at the edge."""
        return EXIT_PROBLEMS if self.verdict.exit_code() else EXIT_OK


# -- measuring ----------------------------------------------------------------------------------------------


def rank(pred: PartitionPrediction, loss: Loss, stray: bool, unreadable: bool = False) -> int:
    """The impact rank of one partition (see :data:`STOPS` ... :data:`HEALTHY`)."""
    if pred.error is not None:
        return STOPS if pred.error.consequence == BROKER_STOPS else OFFLINE
    if pred.outcome == FAILS:
        return STOPS
    if stray:
        return ATTENTION
    if loss.committed:
        return COMMITTED
    if loss.offsets or unreadable:
        return UNCOMMITTED
    if (pred.outcome == "truncated" and pred.kind != "delete") or pred.notes or loss.bytes:
        return CHANGED
    return HEALTHY


def _order(part: PartitionTriage) -> tuple[object, ...]:
    """Worst first: rank, committed offsets lost, offsets lost, bytes lost, then where."""
    loss, pred = part.loss, part.prediction
    committed = loss.offsets if loss.below_high_watermark is None else loss.below_high_watermark
    return (part.impact, -max(committed, loss.behind_high_watermark), -loss.offsets, -loss.bytes,
            -len(pred.deleted_segments), pred.outcome != FAILS, pred.topic, pred.partition, pred.path)


def triage_partition(log_dir: str, pred: PartitionPrediction, verdict: Verdict,
                     served_at: Mapping[tuple[str, str], str] | None = None) -> PartitionTriage:
    """One partition's triage; ``served_at`` is :func:`first_texts` of the verdict (built once for all)."""
    loss = measure(pred)
    stray = any(a.kind == RENAME and a.rule == "R1.5" for a in pred.actions)
    texts = first_texts(verdict) if served_at is None else served_at
    served = texts.get((UNREADABLE_SERVED, pred.path))
    uncommitted = texts.get((UNCOMMITTED_SERVED, pred.path))
    part = PartitionTriage(log_dir, pred, loss, rank(pred, loss, stray, served is not None or uncommitted is not None),
                           failing_file(pred), unreadable=served, uncommitted=uncommitted)
    part.next = partition_steps(pred, part.failing_file, loss.lost, loss.committed,
                                unreadable=served is not None, uncommitted=uncommitted is not None)
    return part


def first_texts(verdict: Verdict) -> dict[tuple[str, str], str]:
    """(kind, where) -> the first such fact's text: one pass, so each partition's lookup is O(1), not O(facts)."""
    texts: dict[tuple[str, str], str] = {}
    for fact in verdict.facts:
        if fact.kind in (UNREADABLE_SERVED, UNCOMMITTED_SERVED):
            texts.setdefault((fact.kind, fact.where), fact.text)
    return texts


# -- inputs ---------------------------------------------------------------------------------------------------


def check_log_dirs(paths: Sequence[str | os.PathLike[str]]) -> list[str]:
    """Each path must be a log directory, given once; a missing one is an ``OSError`` (one line, exit 2)."""
    seen: dict[str, str] = {}
    checked = []
    for given in paths:
        path = os.fspath(given)
        if not Path(path).is_dir():
            os.stat(path)  # FileNotFoundError / PermissionError with the path, as the edge prints them
            raise NotADirectoryError(errno.ENOTDIR, "Not a directory (give a log directory)", path)
        if _is_partition_dir(Path(path)):
            raise Refused(f"a partition directory; give the log directory that holds it "
                          f"({os.path.dirname(os.path.abspath(path))})", path=path)
        if not looks_like_log_dir(Path(path)):
            raise Refused("not a Kafka log directory (no meta.properties, no offset checkpoint, no "
                          "topic-partition directory)", path=path)
        real = os.path.realpath(path)
        if real in seen:
            raise Refused(f"the same log directory as {seen[real]}; give each log directory once", path=path)
        seen[real] = path
        checked.append(path)
    return checked


def looks_like_log_dir(path: Path) -> bool:
    """A directory a broker has used (``meta.properties``, a checkpoint), holding a ``topic-partition``
    directory, or empty: anything else (``/tmp``) would only make the model say the broker stops."""
    if is_kafka_log_dir(path):
        return True
    entries = children(path)
    return not entries or any(p.is_dir() and parse_partition_dir(p) is not None for p in entries)


def _is_partition_dir(path: Path) -> bool:
    if parse_partition_dir(path) is None:
        return False
    return any(name.endswith(".log") or name == "leader-epoch-checkpoint" for name in names(path))


class _Announced(Sequence[str]):
    """The log directories, calling ``progress`` as the model starts each one (it iterates them in order)."""

    def __init__(self, paths: list[str], progress: Progress | None) -> None:
        self.paths = paths
        self.progress = progress

    def __len__(self) -> int:
        return len(self.paths)

    @overload
    def __getitem__(self, i: int) -> str: ...

    @overload
    def __getitem__(self, i: slice) -> Sequence[str]: ...

    def __getitem__(self, i: int | slice) -> str | Sequence[str]:
        return self.paths[i]

    def __iter__(self) -> Iterator[str]:
        for done, path in enumerate(self.paths):
            if self.progress is not None:
                self.progress(done, len(self.paths), path)
            yield path


# -- the whole broker ---------------------------------------------------------------------------------------


def triage(
    paths: Sequence[str | os.PathLike[str]],
    progress: Progress | None = None,
    max_batch_bytes: int = DEFAULT_MAX_DECOMPRESSED,
    jobs: int = 1,
) -> TriageResult:
    """Predict the next start of the broker owning these log directories; read-only.

    Raises ``OSError`` for a path that is missing or unreadable and
    :class:`~kseg.errors.Refused` for a partition directory or a log
    directory given twice.  ``max_batch_bytes`` is the read cap (``--max-batch-bytes``)
    for the control batches the model decompresses; one past it raises
    :class:`~kseg.errors.LimitExceeded` (one error line, exit 2): kseg cannot
    predict what it was told not to read, and a guess would be worse.  ``jobs``: worker processes
    for the partitions (the result is the same whatever the number).
    """
    log_dirs = check_log_dirs(paths)
    broker = predict_broker(_Announced(log_dirs, progress), max_batch_bytes, jobs=jobs)
    dirs = [LogDirTriage(d, log_dir_steps(d)) for d in broker.log_dirs]
    verdict = verdict_of(broker.log_dirs, broker.broker_stops, jobs)
    texts = first_texts(verdict)
    parts = [triage_partition(d.path, p, verdict, texts) for d in broker.log_dirs for p in d.partitions]
    parts.sort(key=_order)
    return TriageResult(dirs, parts, broker.broker_stops, verdict)


@dataclass(frozen=True, slots=True)
class Totals:
    """The broker's totals (partitions marked ``-delete`` lose nothing by design and are not counted)."""

    bytes_lost: int
    truncated_bytes: int
    deleted_segments: int
    deleted_bytes: int
    lost_offsets: int
    lost_below_high_watermark: int
    lost_below_recovery_point: int
    failing_partitions: int


def totals(result: TriageResult) -> Totals:
    parts = result.partitions
    losses = [p.loss for p in parts]
    return Totals(
        bytes_lost=sum(loss.bytes for loss in losses),
        truncated_bytes=sum(loss.truncated_bytes for loss in losses),
        deleted_segments=sum(len(p.prediction.deleted_segments) for p in parts if p.prediction.kind != "delete"),
        deleted_bytes=sum(loss.deleted_bytes for loss in losses),
        lost_offsets=sum(loss.offsets for loss in losses),
        lost_below_high_watermark=sum(loss.below_high_watermark or 0 for loss in losses),
        lost_below_recovery_point=sum(loss.below_recovery_point for loss in losses),
        failing_partitions=sum(p.prediction.outcome == FAILS for p in parts),
    )


def summary(result: TriageResult) -> dict[str, object]:
    """The ``{"type": "summary"}`` object: counts, totals lost, and the log-directory findings."""
    return {
        "type": "summary",
        "partitions": len(result.partitions),
        "outcomes": result.outcomes(),
        "problems": len(result.problems),
        "healthy": len(result.healthy),
        **asdict(totals(result)),
        "log_dirs": len(result.log_dirs),
        "log_dirs_offline": result.offline,
        "broker_stops": result.broker_stops,
        "entries_without_directory": [
            {"log_dir": d.path, "file": file, "topic": topic, "partition": number, "offset": offset}
            for d in result.log_dirs for file, topic, number, offset in d.prediction.entries_without_directory
        ],
        "directories_without_entries": [
            {"log_dir": d.path, "directory": name} for d in result.log_dirs
            for name in d.prediction.directories_without_entries
        ],
        "log_dir_errors": [
            {"log_dir": d.path, "exception": e.exception, "message": e.message, "consequence": e.consequence}
            for d in result.log_dirs if (e := d.prediction.error) is not None
        ],
        "verdict": result.verdict.as_json(),
        "exit_code": result.exit_code(),
    }


__all__ = [
    "ATTENTION", "CHANGED", "COMMITTED", "DIR_OFFLINE", "HEALTHY", "OFFLINE", "STOPS", "UNCOMMITTED",
    "LogDirTriage", "Loss", "NextStep", "PartitionTriage", "Progress", "Totals", "TriageResult", "check_log_dirs",
    "measure", "missing_directories", "rank", "summary", "totals", "triage",
]
