"""``LogManager.loadLogs`` for whole log directories (R1.1, R1.2, R1.5, R8.5, R9.1-R9.4).

Per log directory, before any partition: the clean-shutdown marker (only
its existence counts, and it is deleted), the recovery-point and
log-start-offset checkpoints (created empty when missing; a read failure
means "no entries" for the whole directory, and an ``IOException`` also
reports the directory offline), then every subdirectory whose name parses
as a topic-partition.  :func:`predict_broker` adds what spans directories:
a partition present in two of them stops the broker.
"""

from __future__ import annotations

import contextlib
import os
import re
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

from kseg import segment as segment_module
from kseg.format.compression import DEFAULT_MAX_DECOMPRESSED
from kseg.listing import children
from kseg.locks import is_kafka_log_dir
from kseg.recovery.clean_prefix import CleanPrefix
from kseg.recovery.loading.checkpoints import STORAGE_EXCEPTION, read_checkpoint_file
from kseg.recovery.loading.model import (
    BROKER_STOPS,
    CREATE,
    DELETE,
    DIR_OFFLINE,
    FAILS,
    RENAME,
    Action,
    BrokerPrediction,
    CheckpointRead,
    LoadError,
    LogDirPrediction,
    PartitionPrediction,
)
from kseg.recovery.loading.partition import LoadInputs, predict_partition
from kseg.recovery.loading.topicid import FILE as METADATA_FILE
from kseg.recovery.loading.topicid import read_topic_id
from kseg.sidefile import read_side_file

CLEAN_SHUTDOWN = ".kafka_cleanshutdown"
RECOVERY_POINT = "recovery-point-offset-checkpoint"
LOG_START = "log-start-offset-checkpoint"
HIGH_WATERMARK = "replication-offset-checkpoint"
REMOTE_INDEX_CACHE = "remote-log-index-cache"
METADATA_TOPIC = "__cluster_metadata"
SPECIAL = {"delete": re.compile(r"^(\S+)-(\S+)\.(\S+)-delete$"), "future": re.compile(r"^(\S+)-(\S+)\.(\S+)-future$"),
           "stray": re.compile(r"^(\S+)-(\S+)\.(\S+)-stray$")}
LM = "LogManager"


def parse_topic_partition(path: Path) -> tuple[str, int, str]:
    """``LocalLog.parseTopicPartitionName``: (topic, partition, kind); a bad name stops the broker (R1.1)."""
    name = path.name
    kind = next((k for k in SPECIAL if name.endswith("-" + k)), "")
    bad = "-" not in name or (kind and not SPECIAL[kind].match(name))
    stem = name[: name.rindex(".")] if kind and not bad else name
    topic, _, number = stem.rpartition("-")
    digits = number[1:] if number[:1] in "+-" else number
    if bad or not topic or not digits.isdigit() or not -(1 << 31) <= int(number) < 1 << 31:
        message = (f"Found directory {os.path.realpath(path)}, '{name}' is not in the form of topic-partition or "
                   "topic-partition.uniqueId-delete (if marked for deletion).\n"
                   "Kafka's log directories (and children) should only contain Kafka topic data.")
        raise _DirFailed(LoadError("org.apache.kafka.common.KafkaException", message, BROKER_STOPS, "R1.1",
                                   "LocalLog.parseTopicPartitionName"))
    return topic, int(number), kind


class _DirFailed(Exception):
    def __init__(self, error: LoadError) -> None:
        super().__init__(error.message)
        self.error = error


def read_offsets(logdir: Path, name: str) -> CheckpointRead:
    """An offset checkpoint as ``LogManager`` reads it: whole file or nothing (R1.1, R8.5, R9.4)."""
    path = logdir / name
    if not path.is_file():
        return CheckpointRead(name, False, {})
    entries, failure = read_checkpoint_file(path, 3)
    if failure is not None:
        return CheckpointRead(name, True, {}, failure.text(), failure.is_io)
    found = {(str(topic), int(partition)): int(offset) for topic, partition, offset in entries}
    return CheckpointRead(name, True, found)


def _log_dir_facts(pred: LogDirPrediction, logdir: Path) -> None:
    """Marker and checkpoints, with the changes ``LogManager`` makes to them (R1.1)."""
    if pred.clean_shutdown:
        pred.actions.append(Action(DELETE, CLEAN_SHUTDOWN, "R1.1", f"{LM}.loadLogs (CleanShutdownFileHandler.delete)"))
    for name in (RECOVERY_POINT, LOG_START, HIGH_WATERMARK):
        read = read_offsets(logdir, name)
        pred.checkpoints[name] = read
        if not read.exists and name != HIGH_WATERMARK:
            pred.actions.append(Action(CREATE, name, "R1.1", "OffsetCheckpointFile.<init> (Files.createFile)", size=0))


def _partition_dirs(pred: LogDirPrediction, logdir: Path) -> list[tuple[Path, str, int, str]]:
    """The subdirectories ``loadLogs`` loads: (path, topic, partition, kind)."""
    found = []
    for entry in sorted(children(logdir), key=lambda e: e.name):
        if not entry.is_dir():
            continue
        if entry.name == REMOTE_INDEX_CACHE:
            pred.ignored.append(entry.name)
            continue
        topic, partition, kind = parse_topic_partition(entry)
        if topic == METADATA_TOPIC:
            pred.ignored.append(entry.name)
            continue
        if kind:
            pred.leftovers.append(entry.name)
        found.append((entry, topic, partition, kind))
    return found


def predict_log_dir(
    path: str | os.PathLike[str],
    max_batch_bytes: int = DEFAULT_MAX_DECOMPRESSED,
    prefixes: Mapping[str, CleanPrefix] | None = None,
    now_ms: int | None = None,
    jobs: int = 1,
) -> LogDirPrediction:
    """What the next start does in one log directory; reads only, never writes.

    ``max_batch_bytes`` is kseg's read cap for the control batches the load replays;
    ``prefixes`` as for :func:`~kseg.recovery.loading.partition.predict_partition`;
    ``now_ms`` the broker's wall clock at that start (producer expiry, loading/snapshots.py),
    by default this machine's clock now: Kafka uses its own clock at the start, so the
    prediction is for a start made now.  ``jobs``: worker processes for the partitions
    (:func:`_predict_partitions`); the prediction is the same whatever the number.
    """
    if now_ms is None:
        now_ms = time.time_ns() // 1_000_000
    logdir = Path(path)
    pred = LogDirPrediction(str(logdir), (logdir / CLEAN_SHUTDOWN).exists())
    _log_dir_facts(pred, logdir)
    try:
        dirs = _partition_dirs(pred, logdir)
    except _DirFailed as failed:
        pred.error = failed.error
        return pred
    points = pred.checkpoints[RECOVERY_POINT].entries
    starts = pred.checkpoints[LOG_START].entries
    marks = pred.checkpoints[HIGH_WATERMARK].entries
    # ReplicaManager reads replication-offset-checkpoint only after loadLogs: not offline yet at the rename (R9.4)
    offline = any(c.reports_offline for n, c in pred.checkpoints.items() if n != HIGH_WATERMARK)
    work = []
    for part_path, topic, partition, kind in dirs:
        key = (topic, partition)
        if kind == "" and key not in points:
            pred.directories_without_entries.append(part_path.name)
        inputs = LoadInputs(pred.clean_shutdown, points.get(key, 0), starts.get(key, 0), marks.get(key), kind,
                            max_batch_bytes, now_ms, closes=not offline)
        work.append((part_path, topic, partition, inputs))
    pred.partitions.extend(_predict_partitions(work, prefixes, jobs))
    reporters = [p for p in pred.partitions if _reports_offline(p)]
    for (part_path, _, _, kind), prediction in zip(dirs, pred.partitions, strict=True):
        _stray(prediction, part_path, kind, logdir, offline, [p for p in reporters if p is not prediction])
    _entries_without_directory(pred, {(t, p) for _, t, p, k in dirs if k != "delete"})
    return pred


#: Fewer partitions than this are predicted in this process: a pool costs more to start than they take.
POOL_MIN_PARTITIONS = 32
#: ...unless their segments hold this much: the walks after the prediction (the verdict's served-damage
#: and open-transaction checks, txn's replay, recover's plan) read every byte, so a few large partitions
#: are worth a pool too.
POOL_MIN_BYTES = 256 << 20


def segment_bytes(paths: Sequence[str | os.PathLike[str]]) -> int:
    """The bytes of the ``.log`` files of these partition directories (one O_NOATIME listing each)."""
    total = 0
    for path in paths:
        for child in children(path):
            if child.name.endswith(".log"):
                with contextlib.suppress(OSError):
                    total += child.stat().st_size
    return total


def worth_a_pool(paths: Sequence[str | os.PathLike[str]], jobs: int) -> bool:
    """Whether per-partition walks over these partition directories go to ``jobs`` worker processes:
    many partitions, or a few whose segments are large (the answer is the same either way)."""
    if jobs <= 1 or len(paths) < 2:
        return False
    return len(paths) >= POOL_MIN_PARTITIONS or segment_bytes(paths) >= POOL_MIN_BYTES

_Work = tuple[Path, str, int, LoadInputs]


def _predict_partitions(
    work: list[_Work], prefixes: Mapping[str, CleanPrefix] | None, jobs: int
) -> list[PartitionPrediction]:
    """``predict_partition`` for each partition, in order: here, or spread over ``jobs`` processes.

    Each partition's load depends only on its own directory and inputs (the log-directory facts
    -- the marker, the checkpoints, the wall clock -- are in its ``LoadInputs``), so the
    partitions are independent, as the broker's recovery threads treat them; the results come
    back in the directory order, exactly as a serial run gives them (tests/recovery/test_jobs.py).
    """
    if jobs <= 1 or len(work) < POOL_MIN_PARTITIONS:
        return [predict_partition(path, topic, partition, inputs, prefixes) for path, topic, partition, inputs in work]
    from concurrent.futures import ProcessPoolExecutor  # only for a pool

    by_dir: dict[str, dict[str, CleanPrefix]] = {}
    for name, prefix in (prefixes or {}).items():  # each worker gets only its partition's prefixes
        by_dir.setdefault(os.path.dirname(name), {})[name] = prefix
    tasks = [(item, by_dir.get(os.path.abspath(item[0]), {})) for item in work]
    with ProcessPoolExecutor(max_workers=min(jobs, len(work))) as pool:
        return list(pool.map(_predict_one, tasks, chunksize=max(1, len(tasks) // (jobs * 8))))


def _predict_one(task: tuple[_Work, Mapping[str, CleanPrefix]]) -> PartitionPrediction:
    """One partition's prediction, in a worker process (which draws no progress: the parent's line)."""
    segment_module.read_observer = None
    (path, topic, partition, inputs), prefixes = task
    return predict_partition(path, topic, partition, inputs, prefixes)


def _reports_offline(prediction: PartitionPrediction) -> bool:
    """The load reported the log dir to ``LogDirFailureChannel`` at once (``CFH.read``/``PMF.read``, R9.4)."""
    error = prediction.error
    return error is not None and error.consequence == DIR_OFFLINE and error.exception == STORAGE_EXCEPTION


def _stray(prediction: PartitionPrediction, path: Path, kind: str, logdir: Path, offline: bool,
           reporters: list[PartitionPrediction]) -> None:
    """R1.5: a KRaft broker renames a partition without ``partition.metadata`` (no topic id) ``-stray``.

    The other half of ``isStray`` -- the topic id unknown to the controller's metadata
    image, or this broker not among the partition's replicas -- is not on disk: the
    prediction says it assumes the image keeps the partition here (``assumed``).
    ``-delete`` and ``-stray`` directories are never checked; ``-future`` ones are.  The rename
    changes no file of the directory: the outcome stays what the load made it (§13).

    ``UnifiedLog.renameDir`` runs through ``LocalLog.maybeHandleIOException``, which
    throws ``KafkaStorageException`` without a cause when the log dir is already in
    the failure channel: ``LogManager`` does not catch that, the broker stops (R9.4).
    A checkpoint read put it there before any partition loads; another partition's
    failed read may or may not have run first (the recovery threads' order).
    """
    if kind in ("delete", "stray") or prediction.error is not None:
        return
    metadata = path / METADATA_FILE
    detail = "no partition.metadata: no topic id"
    if metadata.exists():
        topic_id = read_topic_id(read_side_file(metadata), metadata.absolute())
        verdict = _image_verdict(logdir, topic_id, prediction.partition)
        if verdict is None:
            prediction.assumed.append(f"the controller's metadata image knows topic id {topic_id} and lists this "
                                      f"broker among the replicas of {prediction.topic}-{prediction.partition}; "
                                      "otherwise Kafka renames the directory -stray (R1.5)")
            return
        if not verdict:
            return
        detail = verdict
    method = f"{LM}.loadLog (isStray -> UnifiedLog.renameDir)"
    if offline:
        message = f"The log dir {os.path.abspath(logdir)} is already offline due to a previous IO exception."
        prediction.error = LoadError(STORAGE_EXCEPTION, message, BROKER_STOPS, "R9.4",
                                     f"{method} -> LocalLog.maybeHandleIOException")
        prediction.outcome = FAILS
        return
    prediction.actions.append(Action(RENAME, path.name, "R1.5", method,
                                     detail=detail, target=f"{path.name}.<uuid>-stray"))
    for other in reporters:
        prediction.notes.append(f"the load of {Path(other.path).name} reports this log dir offline (R9.4); if it "
                                "runs first, this rename throws KafkaStorageException and the broker stops")


def stray_rule_alone(prediction: PartitionPrediction) -> None:
    """R1.5 for a partition directory given on its own: its log directory is the one above it.

    The broker loads the partition as part of that log directory, so the ``-stray`` rename (and the
    offline log directory's ``KafkaStorageException`` instead of it) applies as :func:`_stray` applies it
    in :func:`predict_log_dir`; only the other partitions' reports (R9.4's race) are not known here.  A
    directory whose parent holds neither ``meta.properties`` nor an offset checkpoint is a copy outside
    any log directory: no broker loads it where it is, and no rule of a log directory applies.
    """
    path = Path(prediction.path)
    logdir = path.parent
    if not is_kafka_log_dir(logdir):
        return
    offline = any(read_offsets(logdir, name).reports_offline for name in (RECOVERY_POINT, LOG_START))
    _stray(prediction, path, prediction.kind, logdir, offline, [])


def _image_verdict(logdir: Path, topic_id: str | None, partition: int) -> str | None:
    """R1.5's metadata half from the disk: the image at the end of ``logdir``'s ``__cluster_metadata-0``
    (``isStrayKraftReplica`` with this broker's ``node.id``): the reason the log is stray, "" when the image
    keeps it here, None when there is no metadata log or node.id to ask (docs/metadata.md).  Imported here:
    a partition without ``partition.metadata`` never needs the metadata decoders."""
    from kseg.metadata.disk import disk_image, node_id, stray_reason

    image, broker = disk_image(logdir), node_id(logdir)
    if image is None or broker is None:
        return None
    return stray_reason(image, broker, topic_id, partition) or ""


def _entries_without_directory(pred: LogDirPrediction, present: set[tuple[str, int]]) -> None:
    for name in (RECOVERY_POINT, LOG_START, HIGH_WATERMARK):
        for (topic, partition), offset in sorted(pred.checkpoints[name].entries.items()):
            if (topic, partition) not in present:
                pred.entries_without_directory.append((name, topic, partition, offset))


def predict_broker(
    paths: Sequence[str | os.PathLike[str]], max_batch_bytes: int = DEFAULT_MAX_DECOMPRESSED,
    now_ms: int | None = None, jobs: int = 1,
) -> BrokerPrediction:
    """Every log directory of one broker (``log.dirs``); the marker and checkpoints are per directory.

    ``now_ms``: the start's wall clock, one for all directories (default: now); ``jobs``: worker
    processes for the partitions of each directory (:func:`predict_log_dir`).
    """
    now = time.time_ns() // 1_000_000 if now_ms is None else now_ms
    broker = BrokerPrediction([predict_log_dir(p, max_batch_bytes, now_ms=now, jobs=jobs) for p in paths])
    mark_duplicates(broker.log_dirs)
    return broker


def mark_duplicates(log_dirs: Sequence[LogDirPrediction]) -> None:
    """A partition in two of these log directories: the later one's load throws, the broker stops (R1.5)."""
    seen: dict[tuple[str, int, bool], PartitionPrediction] = {}
    for logdir in log_dirs:
        for part in logdir.partitions:
            if part.kind in ("delete", "stray"):
                continue
            key = (part.topic, part.partition, part.kind == "future")
            previous = seen.setdefault(key, part)
            if previous is not part and logdir.error is None:
                logdir.error = _duplicate(part, previous)


def _duplicate(part: PartitionPrediction, previous: PartitionPrediction) -> LoadError:
    """``LogManager.loadLog``'s duplicate check (R1.5): the broker stops."""
    here, there = os.path.abspath(part.path), os.path.abspath(previous.path)
    if part.kind == "future":
        message = f"Duplicate log directories found: {here}, {there}"
    else:
        message = (f"Duplicate log directories for {part.topic}-{part.partition} are found in both {here} "
                   f"and {there}. It is likely because log directory failure happened while broker was "
                   "replacing current replica with future replica. Recover broker from this failure by manually "
                   "deleting one of the two directories for this partition. It is recommended to delete the "
                   "partition in the log directory that is known to have failed recently.")
    return LoadError("java.lang.IllegalStateException", message, BROKER_STOPS, "R1.5", f"{LM}.loadLog")
