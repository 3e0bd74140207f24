"""The file side of ``kseg recover``: read a segment or a partition, write what recovery keeps.

What is kept is planned by the recovery core
(:func:`kseg.recovery.segment_plan.plan_segment`); what Kafka's loader does
at the next start is the one model's prediction (:mod:`kseg.recovery.loading`,
read per segment by :mod:`kseg.ops.recover.kafka`); this module only reads
and writes files.  The input is a ``.log``, a partition directory, or a log
directory (every partition, each with the same model).  Targets, one per run:

* ``-o OUTDIR`` on a partition or log directory, without ``--salvage``:
  exactly the files Kafka's next start keeps (:mod:`kseg.ops.recover.kept`,
  :func:`kseg.ops.recover.output.write_kept_partition_files`) -- the model's
  actions replayed.  With ``--salvage`` (or a single ``.log``, or a load the
  model sees throw): every segment of the input under its own name, each
  with rebuilt ``.index``/``.timeindex`` (and ``.txnindex`` when a
  transaction was aborted), plus ``partition.metadata``, the
  ``leader-epoch-checkpoint`` and a producer snapshot at the log end
  (:mod:`kseg.ops.recover.output`).  A log directory becomes
  ``OUTDIR/<partition>/...`` plus the clean-shutdown marker and checkpoints
  (each entry rewritten is reported) and a byte-for-byte copy of everything
  else, so Kafka 4.3.0 loads OUTDIR without changing a file.  Any existing
  target is refused before anything is written (:mod:`kseg.ops.recover.inputs`).
* ``--in-place``: only segments that change are rewritten; the original
  ``.log`` (and each replaced index) is kept beside it as ``<name>.bak``
  (:func:`kseg.writing.backup_path`), every replacement atomic.  Refused
  while another process (a running broker) holds the log directory's ``.lock``.
* ``--dry-run``: the report only; nothing is created.

No input segment is ever deleted: the report says which ones Kafka's
``LogLoader`` deletes, and why (reference §4.3); the default ``-o`` leaves them out of OUTDIR.

Each segment's files go through :class:`kseg.recovery.segment_files.SegmentFiles`:
every new file is written whole as a hidden ``.<name>.<random>.kseg-tmp``
first.  In place, the stale ``.index`` leaves first, then the other stale
indexes, then the new ``.log`` replaces the old, then its ``.txnindex``,
``.timeindex`` and ``.index`` (last) come in: a kill leaves the old set, the
new set or a ``.log`` without ``.index``, which Kafka rebuilds.  Into OUTDIR
the indexes land before the ``.log``, so a ``.log`` there always has them; a
killed run leaves at most two temporaries, an interrupted one none.
"""

from __future__ import annotations

import contextlib
import copy
import dataclasses
import mmap
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

from kseg.errors import KsegError
from kseg.format.compression import DEFAULT_MAX_DECOMPRESSED
from kseg.locks import refuse_in_place_while_locked
from kseg.ops.recover.inputs import (
    Input,
    choose_target,
    later_segments,
    log_dir_partitions,
    not_copied,
    partition_input,
    partition_name,
    refuse_log_dir_outputs,
    refuse_outputs,
    resolve_input,
    tracker_before,
)
from kseg.ops.recover.kafka import (
    KafkaView,
    Startup,
    kafka_views,
    predict,
    read_startup,
    startup_from,
    with_recovers_from,
)
from kseg.ops.recover.kept import kafka_files, write_kept_segments
from kseg.ops.recover.output import write_kept_partition_files, write_log_dir_files, write_partition_files
from kseg.ops.recover.report import (
    CREATED,
    DRY_RUN,
    IN_PLACE,
    NOT_WRITTEN,
    OUTPUT,
    REPLACED,
    SEG_DRY_RUN,
    SEG_KAFKA_DELETES,
    SEG_KEPT_AS_KAFKA,
    SEG_REFUSED,
    SEG_REWRITTEN,
    SEG_UNTOUCHED,
    SEG_WRITTEN,
    UNCHANGED,
    LogDirReport,
    Report,
    SegmentOutcome,
    Written,
)
from kseg.recovery.index_compare import ENTRY_SIZES, INDEX_KINDS, index_bytes
from kseg.recovery.indexes import DEFAULT_INDEX_INTERVAL_BYTES, IndexBuild, build_indexes
from kseg.recovery.loading import PartitionPrediction, predict_log_dir
from kseg.recovery.plan import Plan
from kseg.recovery.producer_state import TxnTracker
from kseg.recovery.segment_files import SegmentFiles
from kseg.recovery.segment_plan import plan_segment
from kseg.segment import MappedFile, base_offset_from_name, read_small_file, sibling
from kseg.writing import keep_backup

COPY_CHUNK = 1 << 20  # bytes per write when copying kept runs: memory stays flat for any segment size

#: One segment's result before Kafka's startup view is known: (log, plan, action, build, files).
_Done = tuple[Path, Plan, str, IndexBuild | None, tuple[Written, ...]]


# -- writing one segment ---------------------------------------------------------------------


def copy_runs(source: MappedFile, plan: Plan, out: BinaryIO) -> None:
    """Write the kept runs of ``source`` in order, byte for byte, a chunk at a time (pages released behind)."""
    with memoryview(source.buf) as view:
        for run in plan.runs:
            for pos in range(run.start, run.end, COPY_CHUNK):
                end = min(run.end, pos + COPY_CHUNK)
                out.write(view[pos:end])
                source.release(end)


@contextlib.contextmanager
def _written_bytes(out: BinaryIO, plan: Plan, source: MappedFile) -> Iterator[bytes | mmap.mmap]:
    """The bytes just written to ``out``, read back for the index build.

    The temporary file is mapped through its descriptor's ``/dev/fd`` name by
    the one reader, :class:`~kseg.segment.MappedFile`; where the platform has
    no such name, the kept runs are joined in memory.
    """
    out.flush()
    if plan.output_size == 0:
        yield b""
        return
    try:
        written = MappedFile(f"/dev/fd/{out.fileno()}")
    except (OSError, ValueError):
        yield b"".join(bytes(source.buf[run.start : run.end]) for run in plan.runs)
        return
    with written:
        yield written.buf


def _index_written(
    out: BinaryIO, plan: Plan, source: MappedFile, tracker: TxnTracker, interval: int, log: Path
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


def _index_file(kind: str, dest: Path, build: IndexBuild, in_place: bool, log: Path, files: SegmentFiles) -> Written:
    """One index of a written segment, handed to ``files`` (in place: identical ones are kept as they are)."""
    target = sibling(dest, kind)
    data = index_bytes(build, kind)
    entries = len(data) // ENTRY_SIZES[kind]
    old = read_small_file(target) if in_place and target.is_file() else None
    if in_place and old == data:
        files.index(kind, data, like=target, changed=False)
        return Written(kind, target, UNCHANGED, len(data), entries)
    if old is None and kind == "txnindex" and not data:
        return Written(kind, target, NOT_WRITTEN, 0, 0)
    like = (target if old is not None else log) if in_place else None
    files.index(kind, data, like=like)
    return Written(kind, target, CREATED, len(data), entries)


def _with_backup(written: Written, backups: dict[str, Path]) -> Written:
    """What the commit did to a file it replaced: kept the old one as a backup."""
    backup = backups.get(written.kind)
    return written if backup is None else dataclasses.replace(written, action=REPLACED, backup=backup)


def write_segment(
    source: MappedFile,
    plan: Plan,
    target_dir: Path,
    tracker: TxnTracker,
    *,
    in_place: bool,
    index_interval_bytes: int = DEFAULT_INDEX_INTERVAL_BYTES,
) -> tuple[IndexBuild, tuple[Written, ...]]:
    """Write the plan's runs as ``target_dir/<log name>`` with its indexes (``tracker``: state at base).

    The files go in through :class:`~kseg.recovery.segment_files.SegmentFiles`:
    in place, the stale indexes leave first, then the new ``.log`` comes in,
    then its indexes (``.index`` last); into OUTDIR, the indexes come before the ``.log``.
    """
    log = source.path
    dest = target_dir / log.name
    with SegmentFiles(dest, in_place=in_place) as files:
        with files.log_file(like=log if in_place else None) as out:
            copy_runs(source, plan, out)
            build = _index_written(out, plan, source, tracker, index_interval_bytes, log)
        indexes = [_index_file(kind, dest, build, in_place, log, files) for kind in INDEX_KINDS]
        backups = files.commit()
    action = REPLACED if in_place else CREATED
    written_log = Written("log", dest, action, plan.output_size, None, backups.get("log"))
    return build, (written_log, *(_with_backup(w, backups) for w in indexes))


# -- the operation --------------------------------------------------------------------------------


def recover_path(
    path: Path,
    *,
    out_dir: Path | None = None,
    in_place: bool = False,
    dry_run: bool = False,
    salvage: bool = False,
    index_interval_bytes: int = DEFAULT_INDEX_INTERVAL_BYTES,
    max_batch_bytes: int = DEFAULT_MAX_DECOMPRESSED,
    jobs: int = 1,
) -> Report | LogDirReport:
    """Recover one segment, every segment of a partition directory in order, or every partition of a log dir.

    The input is opened read-only; with ``out_dir`` or ``dry_run`` it is never
    modified.  Refusals are raised before anything is read or written.
    ``max_batch_bytes`` is the read cap (``--max-batch-bytes``) for the control
    batches and legacy wrappers recovery decompresses: one past it raises
    LimitExceeded (one error line, exit 2) -- kseg never guesses what it did not read.  ``jobs``:
    worker processes for the loading model's partitions of a log directory (the same result).
    """
    target = choose_target(out_dir, in_place, dry_run)
    parts = log_dir_partitions(path)
    if parts is not None:
        return _recover_log_dir(path, parts, target, out_dir, salvage, index_interval_bytes, max_batch_bytes, jobs)
    source = resolve_input(path)
    if in_place:
        refuse_in_place_while_locked(source.directory.resolve().parent)
    if out_dir is not None:
        refuse_outputs(source, out_dir)
    name = partition_name(source.directory)
    startup = read_startup(source.directory, name)
    return recover_partition(path, source, startup, predict(startup, name, max_batch_bytes), target, out_dir,
                             salvage, index_interval_bytes, max_batch_bytes)


def _recover_log_dir(
    path: Path, parts: list[Path], target: str, out_dir: Path | None, salvage: bool, interval: int, cap: int,
    jobs: int = 1,
) -> LogDirReport:
    """Every partition of a log directory, each with the model's prediction from ``predict_log_dir``."""
    if target == IN_PLACE:
        refuse_in_place_while_locked(path.resolve())
    sources = [partition_input(part) for part in parts]
    if out_dir is not None:
        refuse_log_dir_outputs(path, sources, out_dir)
    prediction = predict_log_dir(path, cap, jobs=jobs)
    by_path = {Path(p.path).name: p for p in prediction.partitions}
    tasks: list[_Task] = []
    for source in sources:
        name = partition_name(source.directory)
        startup = startup_from(source.directory, name, prediction.clean_shutdown, prediction.checkpoints)
        predicted = by_path.get(source.directory.name) or predict(startup, name, cap)
        part_out = None if out_dir is None else out_dir / source.directory.name
        tasks.append((source, startup, predicted, target, part_out, salvage, interval, cap))
    reports = _partition_reports(tasks, jobs if target == DRY_RUN else 1)
    written, carried, changes = write_log_dir_files(path, out_dir, reports) if out_dir is not None else ((), (), ())
    return LogDirReport(path, salvage, target, out_dir, prediction, tuple(reports), written, carried, changes)


_Task = tuple[Input, Startup, PartitionPrediction, str, "Path | None", bool, int, int]


def _partition_reports(tasks: list[_Task], jobs: int) -> list[Report]:
    """:func:`recover_partition` of each partition, in order: here, or -- a dry run, which writes
    nothing -- spread over ``jobs`` processes (each partition reads only its own files)."""
    from kseg.recovery.loading.logdir import worth_a_pool

    if not worth_a_pool([task[0].directory for task in tasks], jobs):
        return [_report(task) for task in tasks]
    from concurrent.futures import ProcessPoolExecutor  # only for a pool

    with ProcessPoolExecutor(max_workers=min(jobs, len(tasks))) as pool:
        return list(pool.map(_report, tasks, chunksize=max(1, len(tasks) // (jobs * 8))))


def _report(task: _Task) -> Report:
    source, startup, predicted, target, part_out, salvage, interval, cap = task
    return recover_partition(source.directory, source, startup, predicted, target, part_out, salvage, interval, cap)


def recover_partition(
    path: Path,
    source: Input,
    startup: Startup,
    prediction: PartitionPrediction,
    target: str,
    out_dir: Path | None,
    salvage: bool,
    interval: int,
    max_batch_bytes: int = DEFAULT_MAX_DECOMPRESSED,
) -> Report:
    """Plan and write the input's segments; what Kafka does comes from ``prediction``.

    ``max_batch_bytes`` (the read cap) goes with the producer-state tracker to every segment.
    """
    tracker = tracker_before(source, max_batch_bytes)
    if out_dir is not None:
        out_dir.mkdir(parents=True, exist_ok=True)
    whole_output = target == OUTPUT and source.whole_partition and out_dir is not None
    # with no segment there is nothing to salvage: OUTDIR gets what Kafka keeps in either mode
    as_kafka = whole_output and (not salvage or not source.logs) and _kafka_keeps_something(prediction)
    results: list[_Done] = []
    for log in source.logs:
        done, tracker = _recover_one(log, tracker, DRY_RUN if as_kafka else target, out_dir, salvage, interval)
        results.append(done)
    startup = with_recovers_from(startup, prediction)
    views, deletion = kafka_views(startup, prediction, source.all_logs, {log: plan for log, plan, *_ in results})
    copied: tuple[Written, ...] = ()
    written: tuple[Written, ...] = ()
    left: tuple[tuple[Path, str], ...] = ()
    log_end, log_start = None, 0
    if as_kafka and out_dir is not None:
        results, copied, written, left = _write_as_kafka(source.directory, out_dir, prediction, results,
                                                         interval, max_batch_bytes)
        log_end, log_start = _kafka_ends(prediction, out_dir)
    elif target == DRY_RUN and source.whole_partition and not salvage and _kafka_keeps_something(prediction):
        results = _dry_run_as_kafka(source.directory, prediction, results)
    elif whole_output and out_dir is not None:
        segments = _outcomes(results, views)
        copied, written, log_end, log_start, left = write_partition_files(
            source.directory, out_dir, segments, prediction, startup.log_start_offset, max_batch_bytes
        )
    return Report(
        path,
        salvage,
        target,
        out_dir,
        source.whole_partition,
        startup,
        _outcomes(results, views),
        deletion,
        () if source.whole_partition else later_segments(source),
        copied,
        _left_out(source.directory, left, as_kafka) if whole_output else (),
        prediction,
        written,
        log_end,
        log_start,
        as_kafka,
    )


def _left_out(directory: Path, left: tuple[tuple[Path, str], ...], as_kafka: bool) -> tuple[tuple[Path, str], ...]:
    """The partition's files OUTDIR does not get, and why (what Kafka keeps of snapshots is copied)."""
    found = not_copied(directory)
    if as_kafka:
        why = "producer snapshot: Kafka's load deletes or rewrites it; OUTDIR has the snapshots Kafka leaves"
        found = tuple((path, why if path.suffix == ".snapshot" else reason) for path, reason in found)
    return found + left


def _outcomes(results: list[_Done], views: dict[Path, KafkaView]) -> tuple[SegmentOutcome, ...]:
    return tuple(
        SegmentOutcome(log, plan, views[log], action, build, files) for log, plan, action, build, files in results
    )


def _kafka_keeps_something(prediction: PartitionPrediction) -> bool:
    """The model finishes the load of this partition: what Kafka keeps is known (else: kseg's own cut)."""
    return prediction.error is None and prediction.log_end_offset is not None and not prediction.kind


def _kafka_ends(prediction: PartitionPrediction, out_dir: Path) -> tuple[int | None, int]:
    """(log end, log-start checkpoint entry) of OUTDIR: Kafka's own; the entry only above the first base."""
    log_end = prediction.log_end_offset
    log_start = prediction.log_start_offset or 0
    bases = [base_offset_from_name(log) or 0 for log in out_dir.glob("*.log")]
    return log_end, (log_start if bases and log_start > min(bases) else 0)


def _dry_run_as_kafka(directory: Path, prediction: PartitionPrediction, results: list[_Done]) -> list[_Done]:
    """A dry run says what ``-o`` would write: what Kafka keeps of each segment."""
    files = kafka_files(directory, prediction)
    done: list[_Done] = []
    for log, plan, action, build, written in results:
        kept = files.get(log.name)
        if kept is None or kept.source != log:
            action = SEG_KAFKA_DELETES
        elif kept.size == plan.size and plan.changed:
            action = SEG_KEPT_AS_KAFKA
        done.append((log, plan, action, build, written))
    return done


def _write_as_kafka(
    directory: Path, out_dir: Path, prediction: PartitionPrediction, results: list[_Done], interval: int, cap: int
) -> tuple[list[_Done], tuple[Written, ...], tuple[Written, ...], tuple[tuple[Path, str], ...]]:
    """OUTDIR gets the files Kafka's next start keeps; each input segment's outcome says what became of it."""
    files, per_log = write_kept_segments(directory, out_dir, prediction, interval, cap)
    done: list[_Done] = []
    for log, plan, _, build, _ in results:
        kept = files.get(log.name)
        if kept is None or kept.source != log:
            done.append((log, plan, SEG_KAFKA_DELETES, build, ()))
        elif not per_log.get(log.name):
            per_log.pop(log.name, None)
            done.append((log, plan, SEG_REFUSED, build, ()))
        else:
            action = SEG_KEPT_AS_KAFKA if kept.size == plan.size and plan.changed else SEG_WRITTEN
            done.append((log, plan, action, build, per_log.pop(log.name)))
    copied, written, left = write_kept_partition_files(out_dir, files, prediction, cap, directory.parent)
    others = tuple(w for files_of in per_log.values() for w in files_of if w.kind == "log")
    return done, copied, others + written, left


def _recover_one(
    log: Path, tracker: TxnTracker, target: str, out_dir: Path | None, salvage: bool, interval: int
) -> tuple[_Done, TxnTracker]:
    """Plan one segment and write it where the target says; returns the producer state after it."""
    base = base_offset_from_name(log) or 0
    try:
        with MappedFile(log) as mapped:
            plan, after = plan_segment(
                mapped.buf, base, salvage=salvage, txn=tracker, index_interval_bytes=interval
            )
            action = _action_before_writing(plan, target)
            if action is not None:
                return (log, plan, action, None, ()), after
            directory = log.parent if target == IN_PLACE else out_dir
            assert directory is not None
            build, files = write_segment(
                mapped, plan, directory, tracker, in_place=target == IN_PLACE, index_interval_bytes=interval
            )
    except KsegError as err:
        raise err.with_path(str(log))
    return (log, plan, SEG_REWRITTEN if target == IN_PLACE else SEG_WRITTEN, build, files), after


def _action_before_writing(plan: Plan, target: str) -> str | None:
    """The segment's action when nothing is to be written (a dry run, a refusal, nothing to cut)."""
    if target == DRY_RUN:
        return SEG_DRY_RUN
    if plan.refused is not None:
        return SEG_REFUSED
    if target == IN_PLACE and not plan.changed:
        return SEG_UNTOUCHED
    return None


__all__ = [
    "COPY_CHUNK",
    "Report",
    "copy_runs",
    "keep_backup",
    "recover_path",
    "write_segment",
]
