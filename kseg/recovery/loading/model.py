"""What the model of Kafka 4.3.0's log loading answers: plain result data, nothing read or written here.

A :class:`BrokerPrediction` holds one :class:`LogDirPrediction` per log
directory, each holding one :class:`PartitionPrediction` per partition
directory.  Every file Kafka would create, rewrite, delete or rename is an
:class:`Action` naming the rule of ``docs/kafka-log-loading.md`` (``R#``) and
the Kafka method it comes from, so a caller can show *why* as well as *what*.
``outcome``, the files and the loss fields are the contract of ``kseg triage`` (docs/triage.md).
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields

#: ``PartitionPrediction.outcome`` (docs/triage.md, docs/kafka-log-loading.md §13).
CLEAN = "clean"  # no file of the partition directory changes
REBUILT = "rebuilt"  # every .log byte kept; another file is created, rewritten or deleted
TRUNCATED = "truncated"  # a .log loses bytes, is deleted, or is replaced by a .swap
FAILS = "fails"  # the load throws
OUTCOMES = (CLEAN, REBUILT, TRUNCATED, FAILS)

#: ``PartitionPrediction.disposition``: what ``LogManager.loadLog`` does with the loaded log (R1.5, R2.7).
CURRENT, FUTURE, STRAY, RENAMED_STRAY, PENDING_DELETE = "current", "future", "stray", "renamed_stray", "pending_delete"
_DISPOSITION_OF_KIND = {"": CURRENT, "future": FUTURE, "stray": STRAY, "delete": PENDING_DELETE}

#: ``Action.kind``.
CREATE, REWRITE, DELETE, RENAME, TRUNCATE, RESIZE = "create", "rewrite", "delete", "rename", "truncate", "resize"

#: ``LoadError.consequence`` (R9.1, R9.2).
DIR_OFFLINE = "log directory goes offline"
BROKER_STOPS = "broker stops"


def merge_ranges(ranges: list[tuple[int, int]]) -> list[list[int]]:
    """Overlapping or adjacent ``[first, last]`` ranges merged, in order."""
    merged: list[list[int]] = []
    for first, last in sorted(ranges):
        if merged and first <= merged[-1][1] + 1:
            merged[-1][1] = max(merged[-1][1], last)
        else:
            merged.append([first, last])
    return merged


def _by_fields(self: object) -> tuple[object, tuple[object, ...]]:
    """``__reduce__`` of a prediction's dataclasses: the class and its fields in order, rebuilt by
    ``__init__``.  A ``--jobs`` worker sends a prediction per partition back to the parent; the default
    pickling of a slotted dataclass goes through a Python ``__getstate__`` per object (with its field
    names): this form is about 40% smaller and takes about 40% less CPU each way (docs/core.md)."""
    return type(self), tuple(getattr(self, f.name) for f in fields(self))  # type: ignore[arg-type]


@dataclass(frozen=True, slots=True)
class Action:
    """One change Kafka makes on disk while loading.

    ``path`` is relative to the log directory (``topic-0/00000000000000000000.index``);
    ``target`` is the new name of a rename; ``size`` the file's size afterwards
    when known.  ``changes_content`` is False for changes that leave what the
    file says untouched (a rewrite with the same entries; the active index
    resized to its preallocated maximum, trimmed back at the next clean close):
    they do not make a partition ``rebuilt``.
    """

    kind: str
    path: str
    rule: str
    method: str
    detail: str = ""
    target: str | None = None
    size: int | None = None
    changes_content: bool = True

    __reduce__ = _by_fields  # compact pickling for --jobs workers


@dataclass(frozen=True, slots=True)
class LoadError:
    """An exception that ends the load of a partition (or of a log directory), as Kafka throws it."""

    exception: str  # fully qualified Java class
    message: str  # Kafka's message, exact
    consequence: str  # DIR_OFFLINE or BROKER_STOPS
    rule: str
    method: str
    cause: str | None = None  # "<class>: <message>" of the cause, for a KafkaStorageException

    __reduce__ = _by_fields  # compact pickling for --jobs workers

    def as_json(self) -> dict[str, str]:
        """The ``error`` object of the triage contract."""
        return {"exception": self.exception, "message": self.message}


class LoadFailed(Exception):
    """Internal: raised where Kafka's load throws; carries the :class:`LoadError`."""

    def __init__(self, error: LoadError) -> None:
        super().__init__(f"{error.exception}: {error.message}")
        self.error = error


@dataclass(frozen=True, slots=True)
class CheckpointRead:
    """A log-directory checkpoint as ``LogManager`` reads it (R1.1, R8.5)."""

    name: str
    exists: bool
    entries: dict[tuple[str, int], int]  # (topic, partition) -> offset; empty when the read failed
    problem: str | None = None  # "<class>: <message>" of the read failure, swallowed by LogManager
    reports_offline: bool = False  # an IOException went through CheckpointFileWithFailureHandler (R9.4)

    __reduce__ = _by_fields  # compact pickling for --jobs workers


@dataclass(slots=True)
class PartitionPrediction:
    """What the next start does to one partition directory (the triage contract, plus the why)."""

    path: str  # the partition directory
    topic: str
    partition: int
    kind: str = ""  # "", "delete", "future" or "stray" (R2.7)
    outcome: str = CLEAN
    log_start_offset: int | None = None
    log_end_offset: int | None = None  # None when the load fails
    recovery_point: int | None = None  # Kafka's new recovery point after the load
    recovery_point_checkpoint: int = 0  # what the load started from (R1.2)
    log_start_offset_checkpoint: int = 0
    high_watermark: int | None = None  # replication-offset-checkpoint entry, if any
    truncated_bytes: int = 0
    deleted_segments: list[int] = field(default_factory=list)
    lost_offsets: list[list[int]] = field(default_factory=list)
    error: LoadError | None = None
    leader_epochs: list[list[int]] | None = None  # None when the load fails before the cache exists
    actions: list[Action] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # rules the model does not follow for this partition
    assumed: list[str] = field(default_factory=list)  # inputs not on disk the prediction assumes (R1.5)
    number_of_segments: int | None = None  # after the load; None when it fails
    #: file names relative to the partition directory, sorted, as the next start leaves them (§13)
    files_created: list[str] = field(default_factory=list)
    files_changed: list[str] = field(default_factory=list)
    files_deleted: list[str] = field(default_factory=list)
    pending_async_deletes: list[str] = field(default_factory=list)  # renamed *.deleted, removed 60 s later
    #: offsets of intact batches behind a header Kafka's iterator cannot read, in bytes the load cuts (§13)
    lost_offsets_behind_damage: list[list[int]] = field(default_factory=list)
    #: batches beyond the log end Kafka computes: they stay on disk but are never served (R5.5)
    unserved_offsets: list[list[int]] = field(default_factory=list)

    __reduce__ = _by_fields  # compact pickling for --jobs workers

    @property
    def gone_offsets(self) -> list[list[int]]:
        """Every offset the start takes out of service: lost, behind the damage, or beyond the log end."""
        ranges = [(a, b) for a, b in self.lost_offsets + self.lost_offsets_behind_damage + self.unserved_offsets]
        return merge_ranges(ranges)

    @property
    def disposition(self) -> str | None:
        """``current``, ``future``, ``stray``, ``renamed_stray`` or ``pending_delete``; None when the load fails."""
        if self.error is not None or self.log_end_offset is None:
            return None
        if self.renamed_to is not None:
            return RENAMED_STRAY
        return _DISPOSITION_OF_KIND.get(self.kind, CURRENT)

    @property
    def renamed_to(self) -> str | None:
        """The directory's new name: ``topic-partition.<uuid>-stray`` (Kafka's uuid is random: a pattern)."""
        return next((a.target for a in self.actions if a.kind == RENAME and a.rule == "R1.5"), None)

    def as_json(self) -> dict[str, object]:
        """One ``{"type": "partition", ...}`` object of ``kseg triage --format json``."""
        return {
            "type": "partition",
            "path": self.path,
            "topic": self.topic,
            "partition": self.partition,
            "outcome": self.outcome,
            "log_start_offset": self.log_start_offset,
            "log_end_offset": self.log_end_offset,
            "truncated_bytes": self.truncated_bytes,
            "deleted_segments": list(self.deleted_segments),
            "lost_offsets": [list(r) for r in self.lost_offsets],
            "error": None if self.error is None else self.error.as_json(),
            "leader_epochs": None if self.leader_epochs is None else [list(e) for e in self.leader_epochs],
            "recovery_point": self.recovery_point,
            "number_of_segments": self.number_of_segments,
            "disposition": self.disposition,
            "renamed_to": self.renamed_to,
            "files_created": list(self.files_created),
            "files_changed": list(self.files_changed),
            "files_deleted": list(self.files_deleted),
            "pending_async_deletes": list(self.pending_async_deletes),
            "lost_offsets_behind_damage": [list(r) for r in self.lost_offsets_behind_damage],
            "unserved_offsets": [list(r) for r in self.unserved_offsets],
        }

    @property
    def lost_above_high_watermark(self) -> bool:
        """True when every lost offset is at or above the high watermark (nothing committed lost)."""
        hw = self.high_watermark
        return hw is not None and all(first >= hw for first, _ in self.gone_offsets)


@dataclass(slots=True)
class LogDirPrediction:
    """What the next start does in one log directory."""

    path: str
    clean_shutdown: bool  # .kafka_cleanshutdown exists (only existence counts, R1.1)
    checkpoints: dict[str, CheckpointRead] = field(default_factory=dict)
    partitions: list[PartitionPrediction] = field(default_factory=list)
    entries_without_directory: list[tuple[str, str, int, int]] = field(default_factory=list)  # (file, topic, p, offset)
    directories_without_entries: list[str] = field(default_factory=list)  # no recovery-point entry
    leftovers: list[str] = field(default_factory=list)  # -delete / -future / -stray directories
    ignored: list[str] = field(default_factory=list)  # subdirectories LogManager does not load here
    actions: list[Action] = field(default_factory=list)  # log-directory level (marker, checkpoints)
    error: LoadError | None = None  # the log directory as a whole fails

    @property
    def offline(self) -> bool:
        """The log directory goes offline at this start (R9.1, R9.4)."""
        if self.error is not None and self.error.consequence == DIR_OFFLINE:
            return True
        if any(c.reports_offline for c in self.checkpoints.values()):
            return True
        return any(p.error is not None and p.error.consequence == DIR_OFFLINE for p in self.partitions)

    @property
    def stops_broker(self) -> bool:
        """Something here throws what ``LogManager`` does not handle: the broker halts (R9.1)."""
        errors = [self.error] + [p.error for p in self.partitions]
        return any(e is not None and e.consequence == BROKER_STOPS for e in errors)


@dataclass(slots=True)
class BrokerPrediction:
    """Several log directories of one broker (``log.dirs``)."""

    log_dirs: list[LogDirPrediction]

    @property
    def broker_stops(self) -> bool:
        """The broker halts: an unhandled exception, or no log directory left online (R9.2)."""
        if any(d.stops_broker for d in self.log_dirs):
            return True
        return bool(self.log_dirs) and all(d.offline for d in self.log_dirs)

    @property
    def partitions(self) -> list[PartitionPrediction]:
        return [p for d in self.log_dirs for p in d.partitions]
