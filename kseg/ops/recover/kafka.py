"""What Kafka 4.3.0 does with a partition at its next start, as ``kseg recover`` reports it.

Every "Kafka ..." sentence of recover's report comes from the one model of
Kafka's log loading (:mod:`kseg.recovery.loading`): the prediction for the
partition directory as it stands (``outcome``, ``deleted_segments``,
``error``, the file ``actions`` with their rules).  This module only reads
that prediction per segment:

* recovered in ``loadSegmentFiles`` (R3.4/R3.5: its ``.index`` is missing,
  at any start) or in ``recoverLog`` (R4.2/R4.3: unclean start, from the
  segment holding the recovery point) -- an action of ``LogSegment.recover``
  on the segment's ``.index`` with that rule;
* truncated -- a ``truncate`` action on its ``.log``;
* deleted -- listed in ``deleted_segments`` (R4.3 after a truncation in
  ``recoverLog``, or R8.2 when the log start offset is beyond the log end);
* the load throws -- ``error`` (exception class, Kafka's message, and
  whether the log directory goes offline or the broker stops).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from kseg.format.compression import DEFAULT_MAX_DECOMPRESSED
from kseg.recovery.loading import (
    CheckpointRead,
    LoadError,
    LoadInputs,
    PartitionPrediction,
    predict_partition,
)
from kseg.recovery.loading.logdir import (
    CLEAN_SHUTDOWN,
    HIGH_WATERMARK,
    LOG_START,
    RECOVERY_POINT,
    read_offsets,
    stray_rule_alone,
)
from kseg.recovery.loading.model import TRUNCATE
from kseg.recovery.plan import Plan
from kseg.segment import base_offset_from_name

#: Whether and why Kafka's loader recovers a segment at startup (``KafkaView.why``).
RECOVERS_UNCLEAN = "unclean-shutdown"  # recoverLog: at or after the segment holding the recovery point
RECOVERS_NO_INDEX = "no-index"  # loadSegmentFiles: a .log without its .index (or a failing .txnindex)
SKIPPED_CLEAN = "clean-shutdown"
SKIPPED_FLUSHED = "below-recovery-point"
DELETED = "deleted"  # removed: an earlier segment's recovery truncated, or the log start is past the end

#: Recovery-point sources (``Startup.recovery_point_source``).
RP_CHECKPOINT = "checkpoint"
RP_ABSENT = "absent"  # no checkpoint file: Kafka uses 0
RP_NO_ENTRY = "no-entry"  # the file has no line for this partition: 0
RP_UNREADABLE = "unreadable"  # Kafka logs a warning and uses 0 for the whole log directory
RP_NOT_PARTITION = "not-a-partition"  # the directory is not named <topic>-<partition>

#: What happens to the partition's files that recover does not copy into OUTDIR.
STARTUP_FATE = {
    "snapshot": "kseg writes one at the new log end instead; an old one may describe batches that are gone",
    "temp": "Kafka's own leftover (.deleted/.cleaned are deleted at startup, a .swap is swapped in)",
}

_RECOVER = "LogSegment.recover"
_SPECIAL_KINDS = ("delete", "future", "stray")


@dataclass(frozen=True, slots=True)
class Startup:
    """What Kafka's loader knows about this partition at broker start, read from the log directory."""

    directory: Path  # the partition directory
    log_dir: Path
    partition: str | None  # "<topic>-<partition>", None when the directory is not named like one
    clean_shutdown: bool  # .kafka_cleanshutdown exists in the log dir
    recovery_point: int
    recovery_point_source: str  # RP_*
    recovery_point_error: str | None = None
    recovers_from: int | None = None  # base offset of the first segment recoverLog recovers
    log_start_offset: int = 0  # log-start-offset-checkpoint entry (0 when absent)
    high_watermark: int | None = None  # replication-offset-checkpoint entry


@dataclass(frozen=True, slots=True)
class KafkaView:
    """What Kafka's loader does with one segment at startup, per the model."""

    recovers: bool
    why: str  # RECOVERS_* | SKIPPED_* | DELETED
    deleted_after: Path | None = None  # the segment whose truncation makes Kafka delete this one
    truncated_to: int | None = None  # the .log's size after Kafka's recovery, when it cuts
    error: LoadError | None = None  # the load throws on this segment


@dataclass(frozen=True, slots=True)
class Deletion:
    """Segments Kafka deletes at startup: after a truncation in ``recoverLog`` (R4.3), or all of them (R8.2)."""

    after: Path | None  # the truncated segment; None for R8.2
    message: str  # what Kafka logs, or why
    segments: tuple[Path, ...]
    bytes: int  # size of the deleted .log files


def startup_from(
    directory: Path, name: tuple[str, int] | None, clean: bool, checkpoints: Mapping[str, CheckpointRead]
) -> Startup:
    """The marker and checkpoint entries ``LogManager.loadLogs`` hands to this partition (R1.1, R1.2)."""
    log_dir = directory.parent
    if name is None:
        return Startup(directory, log_dir, None, False, 0, RP_NOT_PARTITION)
    rp = checkpoints[RECOVERY_POINT]
    point, source, error = 0, RP_CHECKPOINT, None
    if not rp.exists:
        source = RP_ABSENT
    elif rp.problem is not None:
        source, error = RP_UNREADABLE, rp.problem
    elif name not in rp.entries:
        source = RP_NO_ENTRY
    else:
        point = rp.entries[name]
    return Startup(
        directory,
        log_dir,
        f"{name[0]}-{name[1]}",
        clean,
        point,
        source,
        error,
        log_start_offset=checkpoints[LOG_START].entries.get(name, 0),
        high_watermark=checkpoints[HIGH_WATERMARK].entries.get(name),
    )


def read_startup(directory: Path, name: tuple[str, int] | None) -> Startup:
    """:func:`startup_from` with the log directory above ``directory`` read as ``LogManager`` reads it."""
    log_dir = directory.parent
    checkpoints = {n: read_offsets(log_dir, n) for n in (RECOVERY_POINT, LOG_START, HIGH_WATERMARK)}
    return startup_from(directory, name, (log_dir / CLEAN_SHUTDOWN).exists(), checkpoints)


def special_kind(directory: Path) -> str:
    """``-delete``/``-future``/``-stray`` directories load with their own rules (R2.7)."""
    suffix = directory.name.rsplit("-", 1)[-1]
    return suffix if "." in directory.name and suffix in _SPECIAL_KINDS else ""


def predict(
    startup: Startup, name: tuple[str, int] | None, max_batch_bytes: int = DEFAULT_MAX_DECOMPRESSED
) -> PartitionPrediction:
    """The model's prediction for the partition; a directory not named like one loads as if unclean, from 0.

    ``max_batch_bytes`` is the read cap for the control batches the model replays.
    """
    topic, number = name if name is not None else (startup.directory.name, 0)
    inputs = LoadInputs(
        startup.clean_shutdown,
        startup.recovery_point,
        startup.log_start_offset,
        startup.high_watermark,
        special_kind(startup.directory),
        max_batch_bytes,
    )
    prediction = predict_partition(startup.directory, topic, number, inputs)
    if name is not None:
        stray_rule_alone(prediction)  # the log directory above it renames it -stray as a whole one does
    return prediction


def _recoveries(prediction: PartitionPrediction) -> tuple[dict[int, set[str]], dict[int, int], int | None]:
    """Per base offset: the rules it was recovered by, the smallest size its .log is cut to; the last recovered."""
    rules: dict[int, set[str]] = {}
    cut: dict[int, int] = {}
    last = None
    for action in prediction.actions:
        name = action.path.rsplit("/", 1)[-1]
        base = base_offset_from_name(name)
        if base is None:
            continue
        if action.method == _RECOVER and name.endswith(".index"):
            rules.setdefault(base, set()).add(action.rule)
            last = base
        if action.kind == TRUNCATE and name.endswith(".log") and action.size is not None:
            cut[base] = min(action.size, cut.get(base, action.size))
    return rules, cut, last


def with_recovers_from(startup: Startup, prediction: PartitionPrediction) -> Startup:
    """The first segment ``recoverLog`` recovers (R4.2), as the model replayed it."""
    rules, _, _ = _recoveries(prediction)
    bases = [base for base, found in rules.items() if "R4.3" in found]
    if not bases:
        return startup
    return replace(startup, recovers_from=min(bases))


def truncation_message(base: int, plan: Plan | None) -> str:
    """What ``recoverLog`` logs when it truncates a segment and deletes the rest (R4.3)."""
    if plan is not None and plan.kafka.failure is not None:
        return (
            "Found invalid offset during recovery. Deleting the corrupt segment and creating an empty one "
            f"with starting offset {base}"
        )
    if plan is not None and plan.kafka_next_offset is not None:
        return f"Corruption found in segment {base}, truncating to offset {plan.kafka_next_offset}"
    return f"Corruption found in segment {base}"


def kafka_views(
    startup: Startup, prediction: PartitionPrediction, logs: Sequence[Path], plans: Mapping[Path, Plan]
) -> tuple[dict[Path, KafkaView], Deletion | None]:
    """Each segment's fate at the next start, and the deletion, read from the model's prediction."""
    rules, cut, last_recovered = _recoveries(prediction)
    by_base = {base_offset_from_name(log) or 0: log for log in logs}
    deleted = set(prediction.deleted_segments)
    truncated_in_recover_log = [b for b in sorted(cut) if "R4.3" in rules.get(b, set()) and b < min(deleted, default=-1)]
    after = by_base.get(truncated_in_recover_log[-1]) if truncated_in_recover_log else None
    failing = last_recovered if prediction.error is not None and prediction.error.rule != "R6.4" else None
    views: dict[Path, KafkaView] = {}
    for log in logs:
        base = base_offset_from_name(log) or 0
        found = rules.get(base)
        if base in deleted:
            views[log] = KafkaView(False, DELETED, after)
        elif found:
            why = RECOVERS_UNCLEAN if "R4.3" in found else RECOVERS_NO_INDEX
            error = prediction.error if base == failing else None
            views[log] = KafkaView(True, why, None, cut.get(base), error)
        else:
            views[log] = KafkaView(False, SKIPPED_CLEAN if startup.clean_shutdown else SKIPPED_FLUSHED)
    gone = tuple(log for log in logs if views[log].why == DELETED)
    if not gone:
        return views, None
    size = sum(log.stat().st_size for log in gone if log.is_file())
    if after is None:
        message = (
            f"the log start offset {startup.log_start_offset} is beyond the log end: every segment is deleted "
            "(LogLoader.deleteSegmentsIfLogStartGreaterThanLogEnd)"
        )
        return views, Deletion(None, message, gone, size)
    return views, Deletion(after, truncation_message(base_offset_from_name(after) or 0, plans.get(after)), gone, size)


__all__ = [
    "DELETED",
    "RECOVERS_NO_INDEX",
    "RECOVERS_UNCLEAN",
    "RP_ABSENT",
    "RP_CHECKPOINT",
    "RP_NOT_PARTITION",
    "RP_NO_ENTRY",
    "RP_UNREADABLE",
    "SKIPPED_CLEAN",
    "SKIPPED_FLUSHED",
    "STARTUP_FATE",
    "Deletion",
    "KafkaView",
    "Startup",
    "kafka_views",
    "predict",
    "read_startup",
    "special_kind",
    "startup_from",
    "with_recovers_from",
]
