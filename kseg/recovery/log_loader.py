"""What Kafka's ``LogLoader`` does with a partition's segments at broker start, as the files stand.

The rules (reference §4.3; ``LogLoader.load``, ``loadSegmentFiles``,
``recoverLog`` in Kafka 4.3.0):

* the log directory's ``.kafka_cleanshutdown`` marker and its
  ``recovery-point-offset-checkpoint`` decide where recovery starts: after an
  unclean shutdown, every segment from the one holding the recovery point on
  (``LogSegments.values(recoveryPoint, MAX)``); a missing, unreadable or
  entry-less checkpoint means recovery point 0;
* a segment whose ``.index`` is missing is recovered in any case
  (``loadSegmentFiles``);
* once a recovery truncates a segment, every later segment is deleted
  (``recoverLog``), with the message Kafka logs.

This is a model: it reads the log directory (through
:func:`kseg.segment.read_small_file`) and replays the decisions without
doing any of them.  Issue 13's full model of the broker's start grows here.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

from kseg.errors import KsegError
from kseg.format.checkpoints import read_offset_checkpoint
from kseg.recovery.plan import Plan
from kseg.segment import base_offset_from_name, read_small_file, sibling

CLEAN_SHUTDOWN_FILE = ".kafka_cleanshutdown"
RECOVERY_POINT_FILE = "recovery-point-offset-checkpoint"

#: Whether and why Kafka's loader recovers a segment at startup (``KafkaView.why``).
RECOVERS_UNCLEAN = "unclean-shutdown"  # at or after the segment holding the recovery point
RECOVERS_NO_INDEX = "no-index"  # LogLoader.loadSegmentFiles: a .log without its .index
SKIPPED_CLEAN = "clean-shutdown"
SKIPPED_FLUSHED = "below-recovery-point"
DELETED = "deleted"  # removed because an earlier segment's recovery truncated

#: Recovery-point sources (``Startup.recovery_point_source``).
RP_CHECKPOINT = "checkpoint"
RP_ABSENT = "absent"  # no checkpoint file: Kafka uses 0
RP_NO_ENTRY = "no-entry"  # the file has no line for this partition: 0
RP_UNREADABLE = "unreadable"  # Kafka logs a warning and uses 0
RP_NOT_PARTITION = "not-a-partition"  # the directory is not named <topic>-<partition>


#: What Kafka does at startup with the partition's files that are not segments or indexes.
STARTUP_FATE = {
    "snapshot": "Kafka rebuilds producer state from the recovered log",
    "temp": "Kafka's own leftover (.deleted/.cleaned are deleted at startup, a .swap is swapped in)",
}


# -- results ----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Startup:
    """What Kafka's loader would know about this partition at broker startup, read from the log dir."""

    directory: Path  # the partition directory
    log_dir: Path
    partition: str | None  # "<topic>-<partition>", None when the directory is not named like one
    clean_shutdown: bool  # .kafka_cleanshutdown exists in the log dir
    recovery_point: int
    recovery_point_source: str  # RP_*
    recovery_point_error: str | None = None
    recovers_from: int | None = None  # base offset of the first segment recoverLog would recover


@dataclass(frozen=True, slots=True)
class KafkaView:
    """What Kafka's loader would do with one segment at startup, as the files stand."""

    recovers: bool
    why: str  # RECOVERS_* | SKIPPED_* | DELETED
    deleted_after: Path | None = None  # the segment whose truncation makes Kafka delete this one


@dataclass(frozen=True, slots=True)
class Deletion:
    """Kafka's ``recoverLog``: once a segment's recovery truncates, every later segment is deleted."""

    after: Path
    message: str  # what Kafka logs
    segments: tuple[Path, ...]


# -- reading the startup situation ---------------------------------------------------------


def read_startup(directory: Path, name: tuple[str, int] | None) -> Startup:
    """The clean-shutdown marker and recovery point Kafka would read from the log dir above ``directory``.

    ``name`` is the (topic, partition) the directory's name stands for, None
    when it is not named like a partition directory.
    """
    log_dir = directory.parent
    if name is None:
        return Startup(directory, log_dir, None, False, 0, RP_NOT_PARTITION)
    topic, number = name
    partition = f"{topic}-{number}"
    clean = (log_dir / CLEAN_SHUTDOWN_FILE).is_file()
    checkpoint = log_dir / RECOVERY_POINT_FILE
    if not checkpoint.is_file():
        return Startup(directory, log_dir, partition, clean, 0, RP_ABSENT)
    try:
        entries = read_offset_checkpoint(read_small_file(checkpoint), name=RECOVERY_POINT_FILE)
    except (KsegError, OSError) as err:
        return Startup(directory, log_dir, partition, clean, 0, RP_UNREADABLE, str(err))
    for entry_topic, entry_number, offset in entries:
        if (entry_topic, entry_number) == name:
            return Startup(directory, log_dir, partition, clean, offset, RP_CHECKPOINT)
    return Startup(directory, log_dir, partition, clean, 0, RP_NO_ENTRY)


def with_recovery_floor(startup: Startup, logs: list[Path]) -> Startup:
    """``LogSegments.values(recoveryPoint, MAX)``: from the segment holding the recovery point, or the 1st."""
    if startup.clean_shutdown or not logs:
        return startup
    bases = [base_offset_from_name(log) or 0 for log in logs]
    below = [base for base in bases if base <= startup.recovery_point]
    floor = max(below) if below else bases[0]
    return replace(startup, recovers_from=floor)


def kafka_truncates(plan: Plan) -> bool:
    """Kafka's recovery of this segment truncates it (bytes cut, or emptied on InvalidOffsetException)."""
    failure = plan.kafka.failure
    if failure is not None:
        return failure.exception == "InvalidOffsetException" and plan.size > 0
    return plan.kafka.truncated_bytes > 0


def truncation_message(log: Path, plan: Plan) -> str:
    """What ``recoverLog`` logs when it truncates a segment."""
    base = plan.base_offset
    if plan.kafka.failure is not None:
        return (
            "Found invalid offset during recovery. Deleting the corrupt segment and creating an empty one "
            f"with starting offset {base}"
        )
    return f"Corruption found in segment {base}, truncating to offset {plan.kafka_next_offset}"


def kafka_views(
    startup: Startup, logs: list[Path], plans: dict[Path, Plan]
) -> tuple[dict[Path, KafkaView], Deletion | None]:
    """Replay ``LogLoader.recoverLog``'s decisions over the segments (§4.3) without doing any of them.

    Segments without a plan (not examined) can not truncate; they are still
    listed as deleted when an earlier one truncated.
    """
    views: dict[Path, KafkaView] = {}
    truncated: Path | None = None
    for log in logs:
        base = base_offset_from_name(log) or 0
        if truncated is not None:
            views[log] = KafkaView(False, DELETED, truncated)
        elif startup.recovers_from is not None and base >= startup.recovers_from:
            views[log] = KafkaView(True, RECOVERS_UNCLEAN)
            if log in plans and kafka_truncates(plans[log]):
                truncated = log
        elif not sibling(log, "index").exists():
            views[log] = KafkaView(True, RECOVERS_NO_INDEX)
        else:
            views[log] = KafkaView(False, SKIPPED_CLEAN if startup.clean_shutdown else SKIPPED_FLUSHED)
    later = tuple(log for log in logs if views[log].why == DELETED)
    if truncated is None or not later:
        return views, None
    return views, Deletion(truncated, truncation_message(truncated, plans[truncated]), later)
