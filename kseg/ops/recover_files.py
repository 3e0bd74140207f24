"""The file side of ``kseg recover``: read a segment or a partition, write what recovery keeps.

Built on :mod:`kseg.ops.recover` (the plan of one segment) and the reindex
core (the indexes of what is written).  Targets, one per run:

* ``-o OUTDIR``: every segment of the input is written to OUTDIR under its
  own name -- recovered ones and, for a partition, the unchanged ones too
  (copied byte for byte), each with rebuilt ``.index``/``.timeindex`` (and
  ``.txnindex`` when a transaction was aborted) -- plus the partition's
  ``leader-epoch-checkpoint`` and ``partition.metadata``, so OUTDIR is a
  complete partition directory Kafka can load.  Producer snapshots are not
  copied (Kafka rebuilds producer state from the log; a snapshot could
  describe batches that are gone).  Any existing target is refused before
  anything is written.
* ``--in-place``: only segments that change are rewritten; the original
  ``.log`` (and each replaced index) is kept beside it as ``<name>.bak``
  (:func:`kseg.ops.reindex.backup_path`), every replacement atomic.
* ``--dry-run``: the report only; nothing is created.

Later segments are never deleted, in any mode: the report says which ones
Kafka's ``LogLoader`` would delete, and why (reference §4.3).

Writes go through :func:`kseg.segment.atomic_write`: a hidden temporary
``.<name>.<random>.kseg-tmp`` in the target directory, fsynced, renamed into
place.  For each segment the indexes are built from the temporary ``.log``
and renamed into place *before* the ``.log`` itself, so a ``.log`` in OUTDIR
always has its indexes beside it; a process killed mid-way leaves complete
files only, plus at most two stray ``.kseg-tmp`` files (the ``.log`` being
written and one of its indexes), which neither Kafka nor kseg takes for a
segment or an index: their names end in ``.kseg-tmp``.
"""

from __future__ import annotations

import contextlib
import copy
import mmap
import os
import shutil
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import BinaryIO

from kseg.errors import KsegError, Refused
from kseg.format.checkpoints import read_offset_checkpoint
from kseg.ops.discover import file_kind, is_partition_dir, parse_partition_dir, partition_files
from kseg.ops.recover import RELEASE_EVERY, Plan, plan_segment
from kseg.ops.discover import segment_logs
from kseg.segment import backup_path, sibling
from kseg.recovery.index_compare import INDEX_KINDS, index_bytes
from kseg.recovery.indexes import DEFAULT_INDEX_INTERVAL_BYTES, IndexBuild, build_indexes
from kseg.recovery.producer_state import TxnTracker, replay_producer_state
from kseg.segment import MappedFile, atomic_write, base_offset_from_name, release_pages

COPY_CHUNK = 1 << 20  # bytes per write when copying kept runs: memory stays flat for any segment size
CLEAN_SHUTDOWN_FILE = ".kafka_cleanshutdown"
RECOVERY_POINT_FILE = "recovery-point-offset-checkpoint"
COPIED_FILES = ("leader-epoch-checkpoint", "partition.metadata")

#: Targets (``Report.target``).
OUTPUT, IN_PLACE, DRY_RUN = "output", "in-place", "dry-run"

#: What happened to one file (``Written.action``).
CREATED = "created"
REPLACED = "replaced"  # in place, the old file kept as a backup
UNCHANGED = "unchanged"  # in place: the file already holds exactly this
NOT_WRITTEN = "not-written"  # a .txnindex with nothing to hold (Kafka creates it lazily)

#: What happened to one segment (``SegmentOutcome.action``).
SEG_WRITTEN = "written"  # OUTDIR: recovered (or copied unchanged) with rebuilt indexes
SEG_REWRITTEN = "rewritten"  # in place
SEG_UNTOUCHED = "untouched"  # in place, nothing to cut
SEG_REFUSED = "not-written"  # kafka mode: Kafka's recovery throws on it; nothing is written
SEG_DRY_RUN = "dry-run"

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


class RecoverRefused(Refused):
    """A request kseg will not carry out (conflicting options, an existing target): a usage error."""


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


@dataclass(frozen=True, slots=True)
class Written:
    """One file written (or considered) by recover."""

    kind: str  # log | index | timeindex | txnindex | leader-epoch-checkpoint | partition.metadata
    path: Path
    action: str  # CREATED | REPLACED | UNCHANGED | NOT_WRITTEN
    size: int
    entries: int | None = None  # for index files
    backup: Path | None = None


@dataclass(frozen=True, slots=True)
class SegmentOutcome:
    log: Path
    plan: Plan
    kafka: KafkaView
    action: str  # SEG_*
    output: IndexBuild | None = None  # recovery's walk over the written .log (its indexes)
    files: tuple[Written, ...] = ()


@dataclass(frozen=True, slots=True)
class Report:
    path: Path
    salvage: bool
    target: str  # OUTPUT | IN_PLACE | DRY_RUN
    out_dir: Path | None
    whole_partition: bool  # the input was a partition directory
    startup: Startup
    segments: tuple[SegmentOutcome, ...]
    deletion: Deletion | None
    later_segments: tuple[Path, ...] = ()  # single-segment input: the later .log files of its directory
    copied: tuple[Written, ...] = ()
    not_copied: tuple[tuple[Path, str], ...] = ()

    @property
    def changed(self) -> bool:
        """Something was (or would be) cut, salvaged around or refused."""
        return any(outcome.plan.changed for outcome in self.segments)


# -- reading the startup situation ---------------------------------------------------------


def read_startup(directory: Path) -> Startup:
    """The clean-shutdown marker and recovery point Kafka would read from the log dir above ``directory``."""
    log_dir = directory.parent
    name = parse_partition_dir(directory)
    if name is None:
        return Startup(directory, log_dir, None, False, 0, RP_NOT_PARTITION)
    partition = f"{name.topic}-{name.partition}"
    clean = (log_dir / CLEAN_SHUTDOWN_FILE).is_file()
    checkpoint = log_dir / RECOVERY_POINT_FILE
    if not checkpoint.is_file():
        return Startup(directory, log_dir, partition, clean, 0, RP_ABSENT)
    try:
        entries = read_offset_checkpoint(checkpoint.read_bytes(), name=RECOVERY_POINT_FILE)
    except (KsegError, OSError) as err:
        return Startup(directory, log_dir, partition, clean, 0, RP_UNREADABLE, str(err))
    for topic, number, offset in entries:
        if (topic, number) == (name.topic, name.partition):
            return Startup(directory, log_dir, partition, clean, offset, RP_CHECKPOINT)
    return Startup(directory, log_dir, partition, clean, 0, RP_NO_ENTRY)


def _with_floor(startup: Startup, logs: list[Path]) -> Startup:
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


def _truncation_message(log: Path, plan: Plan) -> str:
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
    return views, Deletion(truncated, _truncation_message(truncated, plans[truncated]), later)


# -- writing ---------------------------------------------------------------------------------


def keep_backup(path: Path) -> Path:
    """Keep ``path`` under its backup name: a hard link when the filesystem allows, else a copy."""
    target = backup_path(path)
    try:
        os.link(path, target)
    except OSError:
        shutil.copy2(path, target)
    return target


def copy_runs(buf: bytes | mmap.mmap, plan: Plan, out: BinaryIO) -> None:
    """Write the kept runs of ``buf`` in order, byte for byte, a chunk at a time (pages released behind)."""
    released = 0
    with memoryview(buf) as view:
        for run in plan.runs:
            for pos in range(run.start, run.end, COPY_CHUNK):
                end = min(run.end, pos + COPY_CHUNK)
                out.write(view[pos:end])
                if end - released >= RELEASE_EVERY:
                    released = release_pages(buf, released, end)


@contextlib.contextmanager
def _written_bytes(out: BinaryIO, plan: Plan, source: bytes | mmap.mmap) -> Iterator[bytes | mmap.mmap]:
    """The bytes just written to ``out`` (mapped from its descriptor), for the index build.

    ``atomic_write``'s temporary file is opened read-write, so it can be
    mapped; if the platform refuses, the kept runs are joined in memory.
    """
    out.flush()
    size = plan.output_size
    if size == 0:
        yield b""
        return
    try:
        mapped = mmap.mmap(out.fileno(), size, access=mmap.ACCESS_READ)
    except (OSError, ValueError):
        yield b"".join(bytes(source[run.start : run.end]) for run in plan.runs)
        return
    try:
        yield mapped
    finally:
        with contextlib.suppress(BufferError):
            mapped.close()


def _index_written(
    out: BinaryIO, plan: Plan, source: bytes | mmap.mmap, tracker: TxnTracker, interval: int, log: Path
) -> IndexBuild:
    """Recovery's walk over the written bytes: the indexes, and proof that Kafka keeps every byte."""
    with _written_bytes(out, plan, source) as data:
        build = build_indexes(
            data, plan.base_offset, index_interval_bytes=interval, txn=copy.deepcopy(tracker)
        )
    if build.failure is not None or build.valid_bytes != plan.output_size:
        raise RuntimeError(  # a kseg bug: the plan promised an output Kafka's recovery keeps whole
            f"{log}: recovery of the written segment would stop at byte {build.valid_bytes} "
            f"of {plan.output_size} ({build.stop}: {build.stop_detail}); nothing was written"
        )
    return build


def _write_file(path: Path, data: bytes, *, replace: bool, like: Path | None) -> None:
    with atomic_write(path, replace=replace, like=like) as out:
        out.write(data)


def _write_index(kind: str, log_target: Path, build: IndexBuild, in_place: bool, log: Path) -> Written:
    """One index file of a written segment (in place: only if it differs, old one kept as a backup)."""
    target = sibling(log_target, kind)
    data = index_bytes(build, kind)
    entries = len(data) // {"index": 8, "timeindex": 12, "txnindex": 34}[kind]
    old = target.read_bytes() if in_place and target.is_file() else None
    if in_place and old == data:
        return Written(kind, target, UNCHANGED, len(data), entries)
    if old is None and kind == "txnindex" and not data:
        return Written(kind, target, NOT_WRITTEN, 0, 0)
    backup = keep_backup(target) if old is not None else None
    like = (target if old is not None else log) if in_place else None
    _write_file(target, data, replace=old is not None, like=like)
    return Written(kind, target, REPLACED if backup else CREATED, len(data), entries, backup)


def write_segment(
    log: Path,
    buf: bytes | mmap.mmap,
    plan: Plan,
    target_dir: Path,
    tracker: TxnTracker,
    *,
    in_place: bool,
    index_interval_bytes: int = DEFAULT_INDEX_INTERVAL_BYTES,
) -> tuple[IndexBuild, tuple[Written, ...]]:
    """Write the plan's runs as ``target_dir/<log name>`` with its indexes (``tracker``: state at base)."""
    dest = target_dir / log.name
    backup = keep_backup(log) if in_place else None
    with atomic_write(dest, replace=in_place, like=log if in_place else None) as out:
        copy_runs(buf, plan, out)
        build = _index_written(out, plan, buf, tracker, index_interval_bytes, log)
        indexes = [_write_index(kind, dest, build, in_place, log) for kind in INDEX_KINDS]
    action = REPLACED if in_place else CREATED
    return build, (Written("log", dest, action, plan.output_size, None, backup), *indexes)


# -- choosing what to read and where to write --------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Input:
    directory: Path
    logs: tuple[Path, ...]  # the segments to recover, in order
    all_logs: tuple[Path, ...]  # every segment of the directory
    whole_partition: bool


def _resolve_input(path: Path) -> _Input:
    if path.is_dir():
        if not is_partition_dir(path):
            raise RecoverRefused(
                f"{path}: not a partition directory (give one <topic>-<partition> directory or a .log)"
            )
        logs = tuple(segment_logs(path))
        if not logs:
            raise RecoverRefused(f"{path}: no .log segments found")
        return _Input(path, logs, logs, True)
    if file_kind(path) != "log":
        raise RecoverRefused(f"{path}: not a .log segment or a partition directory")
    if not path.is_file():
        raise RecoverRefused(f"{path}: not a regular file")
    if base_offset_from_name(path) is None:
        raise RecoverRefused(
            f"{path}: cannot tell the base offset from the file name (expected <20 digits>.log)"
        )
    return _Input(path.parent, (path,), tuple(segment_logs(path.parent)), False)


def _target(out_dir: Path | None, in_place: bool, dry_run: bool) -> str:
    if sum((out_dir is not None, in_place, dry_run)) != 1:
        raise RecoverRefused("give exactly one of -o OUTDIR, --in-place or --dry-run")
    if in_place:
        return IN_PLACE
    return DRY_RUN if dry_run else OUTPUT


def _refuse_outputs(source: _Input, out_dir: Path) -> None:
    """Refuse before anything is written: OUTDIR is the input's directory, or a target already exists."""
    if out_dir.exists() and out_dir.resolve() == source.directory.resolve():
        raise RecoverRefused(
            f"{out_dir} is the input's own directory; use --in-place (keeps backups) or another -o"
        )
    if out_dir.exists() and not out_dir.is_dir():
        raise RecoverRefused(f"{out_dir}: not a directory")
    names = [log.name for log in source.logs]
    names += [sibling(Path(n), kind).name for n in list(names) for kind in INDEX_KINDS]
    if source.whole_partition:
        names += [name for name in COPIED_FILES if (source.directory / name).is_file()]
    for name in names:
        if (out_dir / name).exists():
            raise RecoverRefused(
                f"{out_dir / name} exists; refusing to replace it (choose an empty -o directory)"
            )


def _not_copied(directory: Path) -> tuple[tuple[Path, str], ...]:
    """Files of the partition that OUTDIR does not get, and why."""
    out = []
    for path in partition_files(directory):
        kind = file_kind(path)
        if kind in ("log", "index", "timeindex", "txnindex") or path.name in COPIED_FILES:
            continue
        if kind == "snapshot":
            why = "producer snapshot: Kafka rebuilds producer state from the recovered log"
        elif kind == "temp":
            why = "Kafka's own leftover (.deleted/.cleaned are deleted at startup, a .swap is swapped in)"
        else:
            why = "not a file recover copies"
        out.append((path, why))
    return tuple(out)


def _copy_side_files(directory: Path, out_dir: Path) -> tuple[Written, ...]:
    written = []
    for name in COPIED_FILES:
        source = directory / name
        if source.is_file():
            data = source.read_bytes()
            _write_file(out_dir / name, data, replace=False, like=None)
            written.append(Written(name, out_dir / name, CREATED, len(data)))
    return tuple(written)


# -- the operation --------------------------------------------------------------------------------


def recover_path(
    path: Path,
    *,
    out_dir: Path | None = None,
    in_place: bool = False,
    dry_run: bool = False,
    salvage: bool = False,
    index_interval_bytes: int = DEFAULT_INDEX_INTERVAL_BYTES,
) -> Report:
    """Recover one segment, or every segment of a partition directory in order, into OUTDIR or in place.

    The input is opened read-only; with ``out_dir`` or ``dry_run`` it is never
    modified.  Refusals are raised before anything is read or written.
    """
    target = _target(out_dir, in_place, dry_run)
    source = _resolve_input(path)
    if out_dir is not None:
        _refuse_outputs(source, out_dir)
    startup = _with_floor(read_startup(source.directory), list(source.all_logs))
    tracker = _tracker_before(source)
    if out_dir is not None:
        out_dir.mkdir(parents=True, exist_ok=True)
    results: list[tuple[Path, Plan, str, IndexBuild | None, tuple[Written, ...]]] = []
    for log in source.logs:
        plan, action, build, files, tracker = _recover_one(
            log, tracker, target, out_dir, salvage, index_interval_bytes
        )
        results.append((log, plan, action, build, files))
    views, deletion = kafka_views(startup, list(source.all_logs), {log: plan for log, plan, *_ in results})
    segments = tuple(
        SegmentOutcome(log, plan, views[log], action, build, files)
        for log, plan, action, build, files in results
    )
    copied: tuple[Written, ...] = ()
    if target == OUTPUT and source.whole_partition:
        assert out_dir is not None
        copied = _copy_side_files(source.directory, out_dir)
    later = () if source.whole_partition else _later(source)
    not_copied = _not_copied(source.directory) if target == OUTPUT and source.whole_partition else ()
    return Report(
        path,
        salvage,
        target,
        out_dir,
        source.whole_partition,
        startup,
        segments,
        deletion,
        later,
        copied,
        not_copied,
    )


def _later(source: _Input) -> tuple[Path, ...]:
    base = base_offset_from_name(source.logs[0]) or 0
    return tuple(log for log in source.all_logs if (base_offset_from_name(log) or 0) > base)


def _tracker_before(source: _Input) -> TxnTracker:
    """Producer state at the first segment: a single .log replays the earlier ones of its directory."""
    tracker = TxnTracker()
    if source.whole_partition:
        return tracker
    first = base_offset_from_name(source.logs[0]) or 0
    for log in source.all_logs:
        if (base_offset_from_name(log) or 0) >= first:
            break
        try:
            with MappedFile(log) as mapped:
                replay_producer_state(mapped.buf, tracker)
        except KsegError as err:
            raise err.with_path(str(log))
    return tracker


def _recover_one(
    log: Path, tracker: TxnTracker, target: str, out_dir: Path | None, salvage: bool, interval: int
) -> tuple[Plan, str, IndexBuild | None, tuple[Written, ...], TxnTracker]:
    """Plan one segment and write it where the target says; returns the producer state after it."""
    base = base_offset_from_name(log) or 0
    try:
        with MappedFile(log) as mapped:
            plan, after = plan_segment(
                mapped.buf, base, salvage=salvage, txn=tracker, index_interval_bytes=interval
            )
            if target == DRY_RUN:
                return plan, SEG_DRY_RUN, None, (), after
            if plan.refused is not None:
                return plan, SEG_REFUSED, None, (), after
            if target == IN_PLACE and not plan.changed:
                return plan, SEG_UNTOUCHED, None, (), after
            directory = log.parent if target == IN_PLACE else out_dir
            assert directory is not None
            build, files = write_segment(
                log,
                mapped.buf,
                plan,
                directory,
                tracker,
                in_place=target == IN_PLACE,
                index_interval_bytes=interval,
            )
    except KsegError as err:
        raise err.with_path(str(log))
    return plan, SEG_REWRITTEN if target == IN_PLACE else SEG_WRITTEN, build, files, after


__all__ = [
    "CREATED",
    "DELETED",
    "DRY_RUN",
    "IN_PLACE",
    "NOT_WRITTEN",
    "OUTPUT",
    "REPLACED",
    "UNCHANGED",
    "Deletion",
    "KafkaView",
    "RecoverRefused",
    "Report",
    "SegmentOutcome",
    "Startup",
    "Written",
    "kafka_truncates",
    "kafka_views",
    "read_startup",
    "recover_path",
    "write_segment",
]
