"""The files besides segments that make ``kseg recover -o`` a directory Kafka 4.3.0 loads without change.

A recovered partition in OUTDIR gets, beside its segments and indexes:

* ``leader-epoch-checkpoint`` as Kafka's cache stands after the load
  (``PartitionPrediction.leader_epochs``), extended by the epochs of batches
  kseg keeps beyond Kafka's log end (``LeaderEpochFileCache.assign``, R7.3)
  and cut at the output's log end and log start (R7.4, R7.5), in
  ``CheckpointFile``'s text format (R7.7);
* one producer snapshot at the output's log end, holding each producer's
  state replayed from the output log (``ProducerStateManager.writeSnapshot``'s
  fields), so the load reads no log and writes no snapshot (R6.3b);
* ``partition.metadata``, copied (without it a KRaft broker renames the
  directory ``-stray``, R1.5).

A log directory in OUTDIR also gets ``.kafka_cleanshutdown`` and the
recovery-point, log-start and replication checkpoints: every partition was
written and fsynced whole, so the next start recovers nothing (R4.1).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import BinaryIO

from kseg.errors import KsegError, LimitExceeded
from kseg.format.checkpoints import parse_partition_metadata, read_leader_epochs
from kseg.format.compression import DEFAULT_MAX_DECOMPRESSED
from kseg.format.control import decode_end_txn_marker
from kseg.format.snapshot import ProducerEntry, encode_snapshot
from kseg.format.v2 import V2Batch
from kseg.format.walk import BatchWalk
from kseg.listing import children
from kseg.ops.recover.kept import KeptFile
from kseg.ops.recover.report import CREATED, CheckpointChange, Report, SegmentOutcome, Written
from kseg.ops.recover.topics import METADATA_DIR, known_topic_id
from kseg.recovery.loading import PartitionPrediction
from kseg.recovery.loading.checkpoints import format_checkpoint
from kseg.recovery.loading.logdir import (
    CLEAN_SHUTDOWN,
    HIGH_WATERMARK,
    LOG_START,
    RECOVERY_POINT,
    read_offsets,
)
from kseg.recovery.producer_state import TxnTracker, track_producer_batch
from kseg.segment import MappedFile, read_small_file
from kseg.sidefile import read_side_file
from kseg.writing import atomic_write

COPY_CHUNK = 1 << 20  # bytes per write when copying: memory stays flat for any file size

EPOCH_FILE = "leader-epoch-checkpoint"
METADATA_FILE = "partition.metadata"
META_PROPERTIES = "meta.properties"
#: Written when the input log directory has no marker of its own: no broker epoch known.
CLEAN_SHUTDOWN_TEXT = b'{"version":0,"brokerEpoch":-1}'


def write_file(path: Path, data: bytes) -> None:
    """A new file in OUTDIR, written whole (temporary file, fsync, rename)."""
    with atomic_write(path, replace=False, like=None) as out:
        out.write(data)


# -- leader epochs -------------------------------------------------------------------------------


def _assign(entries: list[tuple[int, int]], epoch: int, start: int) -> None:
    """``LeaderEpochFileCache.assign`` (R7.1): a later start for the latest epoch changes nothing."""
    if entries and entries[-1][0] == epoch and start >= entries[-1][1]:
        return
    while entries and (entries[-1][0] >= epoch or entries[-1][1] >= start):
        entries.pop()
    entries.append((epoch, start))


def output_epochs(
    cached: Iterable[tuple[int, int]], batches: Iterable[tuple[int, int]], log_end: int, log_start: int
) -> list[tuple[int, int]]:
    """The epoch cache for the output: ``cached``, then R7.3 over ``batches`` (epoch, base offset), then R7.4/R7.5."""
    entries = list(cached)
    for epoch, base_offset in batches:
        if epoch >= 0 and (not entries or epoch > entries[-1][0]):
            _assign(entries, epoch, base_offset)
    while entries and entries[-1][1] >= log_end:
        entries.pop()
    removed = [e for e in entries if e[1] <= log_start]
    if removed:
        entries = [(removed[-1][0], log_start), *entries[len(removed) :]]
    return entries


def batch_epochs(logs: Sequence[Path], from_offset: int) -> list[tuple[int, int]]:
    """(partition leader epoch, base offset) of the V2 batches of ``logs`` at or after ``from_offset``."""
    found = []
    for log in logs:
        with MappedFile(log) as mapped:
            for pos, _, _, header, _ in BatchWalk(mapped.buf, 0, None, strict=False).frames():
                mapped.release(pos)
                if header is not None and header[0] >= from_offset:
                    found.append((header[2], header[0]))
    return found


def cached_epochs(prediction: PartitionPrediction | None, directory: Path) -> tuple[list[tuple[int, int]], int]:
    """Kafka's cache after the load and the offset kseg's output goes beyond it from.

    When the load throws (no cache predicted), the input's checkpoint as it
    reads, and every batch of the output counts.
    """
    if prediction is not None and prediction.leader_epochs is not None and prediction.log_end_offset is not None:
        return [(e, s) for e, s in prediction.leader_epochs], prediction.log_end_offset
    path = directory / EPOCH_FILE
    try:
        return (read_leader_epochs(read_side_file(path)) if path.is_file() else []), -1
    except KsegError:
        return [], -1


# -- the producer snapshot --------------------------------------------------------------------


def _marker_epoch(batch: V2Batch, max_batch_bytes: int) -> int | None:
    """The coordinator epoch of a control batch's end-transaction marker, None if it cannot be read.

    Past the read cap ``max_batch_bytes`` LimitExceeded propagates: unread is not unreadable.
    """
    try:
        first = next(iter(batch.iter_records(max_batch_bytes)), None)
        return None if first is None else decode_end_txn_marker(first.value).coordinator_epoch
    except LimitExceeded:
        raise
    except KsegError:
        return None


def _producer_batch(state: dict[int, list[int]], tracker: TxnTracker, batch: V2Batch) -> None:
    """``ProducerAppendInfo.append`` for one batch, as far as the snapshot's fields go."""
    try:
        track_producer_batch(tracker, batch)
    except LimitExceeded:
        raise  # kseg's read cap, not Kafka's: no guess is written
    except KsegError:
        return  # recovery stops after such a batch: the map end does not pass it
    entry = state.setdefault(batch.producer_id, [0, -1, -1, 0, -1, -1])
    entry[0] = batch.producer_epoch
    entry[4] = batch.max_timestamp
    if batch.is_control:
        coordinator = _marker_epoch(batch, tracker.max_batch_bytes)
        if coordinator is not None:
            entry[5] = coordinator
        return
    entry[1], entry[2], entry[3] = batch.last_sequence, batch.last_offset, batch.last_offset_delta


def producer_snapshot(logs: Sequence[Path], max_batch_bytes: int = DEFAULT_MAX_DECOMPRESSED) -> bytes:
    """A snapshot of the producer state after replaying ``logs`` in order (``writeSnapshot``'s fields).

    Control batches are read under the read cap ``max_batch_bytes``.
    """
    state: dict[int, list[int]] = {}
    tracker = TxnTracker(max_batch_bytes)
    for log in logs:
        with MappedFile(log) as mapped:
            buf = mapped.buf
            for pos, _, _, header, _ in BatchWalk(buf, 0, None, strict=False).frames():
                mapped.release(pos)  # the pages behind the walk go: memory stays flat in the segment size
                if header is not None and header[9] >= 0:
                    _producer_batch(state, tracker, V2Batch(buf, pos))
    open_txns = tracker.open_transactions
    entries = [
        ProducerEntry(pid, e[0], e[1], e[2], e[3], e[4], e[5], open_txns.get(pid, -1))
        for pid, e in sorted(state.items())
    ]
    return encode_snapshot(entries)


# -- log-directory files ----------------------------------------------------------------------


def offset_checkpoint(entries: dict[tuple[str, int], int]) -> bytes:
    """``OffsetCheckpointFile``'s text: version 0, count, ``<topic> <partition> <offset>`` lines."""
    body = "".join(f"{topic} {partition} {offset}\n" for (topic, partition), offset in sorted(entries.items()))
    return f"0\n{len(entries)}\n{body}".encode()




# -- one partition of OUTDIR ------------------------------------------------------------------


def output_log_end(outcomes: Sequence[SegmentOutcome]) -> int | None:
    """``LogSegment.readNextOffset`` of the output's last segment: the last batch's next offset, or its base.

    The last batch's, not the highest: offsets that go backwards inside what recovery keeps (a flipped
    base offset, which the CRC does not cover) stay, and Kafka's log end follows the file's last batch.
    """
    written = [o for o in outcomes if o.files]
    if not written:
        return None
    last = written[-1]
    next_offset = last.plan.base_offset
    with MappedFile(last.files[0].path) as mapped:
        buf = mapped.buf
        for pos, _, _, header, _ in BatchWalk(buf, 0, None, strict=False).frames():
            mapped.release(pos)
            if header is not None:
                next_offset = header[0] + header[6] + 1
            elif pos + 8 <= len(buf):  # a V0/V1 entry's offset field: its (last) offset
                next_offset = int.from_bytes(buf[pos : pos + 8], "big") + 1
    return next_offset


def write_partition_files(
    directory: Path, out_dir: Path, outcomes: Sequence[SegmentOutcome], prediction: PartitionPrediction | None,
    log_start_checkpoint: int, max_batch_bytes: int = DEFAULT_MAX_DECOMPRESSED,
) -> tuple[tuple[Written, ...], tuple[Written, ...], int | None, int, tuple[tuple[Path, str], ...]]:
    """``partition.metadata`` copied; epochs and a producer snapshot written as the load would leave them.

    Returns (copied, written, the output's log end, the log-start checkpoint entry to write (0: none),
    the files left out with the reason: a broken ``partition.metadata``).
    """
    meta = directory / METADATA_FILE
    topic = prediction.topic if prediction is not None else None
    copied, fresh, left = _metadata(KeptFile(METADATA_FILE, meta, 0) if meta.is_file() else None, out_dir,
                                    directory.parent, topic)
    log_end = output_log_end(outcomes)
    if log_end is None:
        return tuple(copied), tuple(fresh), None, 0, tuple(left)
    logs = [o.files[0].path for o in outcomes if o.files]
    first_base = next(o.plan.base_offset for o in outcomes if o.files)
    # a log start at or past the salvaged log end would hide every batch kept: the entry is dropped
    log_start = log_start_checkpoint if first_base < log_start_checkpoint < log_end else 0
    cached, beyond = cached_epochs(prediction, directory)
    epochs = output_epochs(cached, batch_epochs(logs, beyond), log_end, log_start)
    data = format_checkpoint(epochs)
    write_file(out_dir / EPOCH_FILE, data)
    written = [*fresh, Written(EPOCH_FILE, out_dir / EPOCH_FILE, CREATED, len(data), len(epochs))]
    if log_end > max(log_start, first_base):
        snapshot = out_dir / f"{log_end:020d}.snapshot"
        data = producer_snapshot(logs, max_batch_bytes)
        write_file(snapshot, data)
        written.append(Written("snapshot", snapshot, CREATED, len(data)))
    return tuple(copied), tuple(written), log_end, log_start, tuple(left)


# -- one partition of OUTDIR as Kafka keeps it (the default mode) ------------------------------------


def _metadata(
    kept: KeptFile | None, out_dir: Path, log_dir: Path, topic: str | None
) -> tuple[list[Written], list[Written], list[tuple[Path, str]]]:
    """``partition.metadata``: copied when Kafka can read it; else written anew from the topic id the log
    directory's metadata log knows, or left out, and why.  Returns (copied, written, left out)."""
    if kept is None or kept.source is None:
        return [], [], []
    data = read_small_file(kept.source)
    try:
        parse_partition_metadata(data)
    except KsegError as err:
        topic_id = None if topic is None else known_topic_id(log_dir, topic)
        if topic_id is not None:  # PartitionMetadata.encode: no newline after the id
            text = f"version: 0\ntopic_id: {topic_id}".encode()
            write_file(out_dir / METADATA_FILE, text)
            why = (f"Kafka's reader throws on it ({err}); OUTDIR has a new one with the topic id {topic_id} "
                   f"of the TopicRecord in {log_dir / METADATA_DIR}")
            return [], [Written(METADATA_FILE, out_dir / METADATA_FILE, CREATED, len(text))], [(kept.source, why)]
        why = (f"Kafka's reader throws on it ({err}); the topic id is not in {log_dir / METADATA_DIR}, and "
               "without the file a KRaft broker renames the directory <topic>-<partition>.<uuid>-stray: write "
               "'version: 0' and 'topic_id: <the topic's id>' into OUTDIR's copy before starting a broker on it")
        return [], [], [(kept.source, why)]
    write_file(out_dir / METADATA_FILE, data)
    return [Written(METADATA_FILE, out_dir / METADATA_FILE, CREATED, len(data))], [], []


def _kept_epochs(kept: KeptFile | None, prediction: PartitionPrediction) -> bytes | None:
    """``leader-epoch-checkpoint`` as Kafka leaves it: the input's if never written, else Kafka's cache."""
    if kept is None:
        return None
    if kept.source is not None:
        return read_small_file(kept.source)[: kept.size]
    if kept.size == 0:
        return b""  # created by CheckpointFile's constructor and never written (R7.2)
    return format_checkpoint([(e, s) for e, s in prediction.leader_epochs or []])


def write_kept_partition_files(
    out_dir: Path, files: dict[str, KeptFile], prediction: PartitionPrediction, max_batch_bytes: int,
    log_dir: Path,
) -> tuple[tuple[Written, ...], tuple[Written, ...], tuple[tuple[Path, str], ...]]:
    """Beside the segments Kafka keeps: its epoch checkpoint, its snapshots and ``partition.metadata``.

    Returns (copied, written, left out with the reason).  A snapshot Kafka keeps is copied; one it
    writes is kseg's replay of the output's segments below its offset (``writeSnapshot``'s fields).
    """
    copied, written, left = _metadata(files.get(METADATA_FILE), out_dir, log_dir, prediction.topic)
    epochs = _kept_epochs(files.get(EPOCH_FILE), prediction)
    if epochs is not None:
        write_file(out_dir / EPOCH_FILE, epochs)
        written.append(Written(EPOCH_FILE, out_dir / EPOCH_FILE, CREATED, len(epochs),
                               len(prediction.leader_epochs or [])))
    logs = [out_dir / name for name in sorted(files) if name.endswith(".log") and (out_dir / name).is_file()]
    for name in sorted(n for n in files if n.endswith(".snapshot") and n[:20].isdigit()):
        kept = files[name]
        if kept.source is not None:
            data = read_small_file(kept.source)
        else:
            data = producer_snapshot([log for log in logs if int(log.name[:20]) < int(name[:20])], max_batch_bytes)
        write_file(out_dir / name, data)
        written.append(Written("snapshot", out_dir / name, CREATED, len(data)))
    return tuple(copied), tuple(written), tuple(left)


# -- the log directory of OUTDIR ---------------------------------------------------------------


def _log_dir_entries(reports: Sequence[Report], inputs: Sequence[dict[tuple[str, int], int]]) -> list[dict[tuple[str, int], int]]:
    """Recovery points (every output's log end), log starts and high watermarks (cut to the log end).

    ``inputs``: the input's three checkpoints, in that order.  Entries of partitions recover does not
    write (the metadata log, carried-over directories, entries without a directory) stay as they are; a
    log start entry stays where it equals the output's log start.
    """
    keys = {(r.prediction.topic, r.prediction.partition) for r in reports if r.prediction is not None}
    points, starts, marks = ({k: v for k, v in entries.items() if k not in keys} for entries in inputs)
    for report in reports:
        pred = report.prediction
        if pred is None or pred.kind or report.output_log_end is None:
            continue
        key = (pred.topic, pred.partition)
        points[key] = report.output_log_end
        if report.output_log_start or inputs[1].get(key) == report.output_log_start:
            starts[key] = report.output_log_start
        if key in inputs[2]:
            marks[key] = min(inputs[2][key], report.output_log_end)
    return [points, starts, marks]


def checkpoint_changes(log_dir: Path, files: Sequence[tuple[str, dict[tuple[str, int], int]]]) -> tuple[CheckpointChange, ...]:
    """Each entry of the input's checkpoints that OUTDIR's copy changes, adds or drops."""
    changes: list[CheckpointChange] = []
    for name, after in files:
        before = read_offsets(log_dir, name).entries
        changes.extend(
            CheckpointChange(name, key[0], key[1], before.get(key), after.get(key))
            for key in sorted(set(before) | set(after))
            if before.get(key) != after.get(key)
        )
    return tuple(changes)


def copy_file(source: Path, target: Path) -> int:
    """``source`` byte for byte as a new ``target``, written whole through a temporary; its size."""
    size = source.stat().st_size
    with atomic_write(target, replace=False, like=source) as out:
        if size:
            with MappedFile(source) as mapped:
                _copy_mapped(mapped, size, out)
    return size


def _copy_mapped(mapped: MappedFile, size: int, out: BinaryIO) -> None:
    with memoryview(mapped.buf) as view:
        for pos in range(0, size, COPY_CHUNK):
            out.write(view[pos : min(size, pos + COPY_CHUNK)])
            mapped.release(min(size, pos + COPY_CHUNK))


def copy_tree(source: Path, target: Path) -> int:
    """A directory byte for byte, file by file through temporaries (symbolic links as links); the bytes."""
    target.mkdir()
    total = 0
    for entry in sorted(children(source), key=lambda p: p.name):
        if entry.is_symlink():
            os.symlink(os.readlink(entry), target / entry.name)
        elif entry.is_dir():
            total += copy_tree(entry, target / entry.name)
        elif entry.is_file():
            total += copy_file(entry, target / entry.name)
    return total


def carry_over(log_dir: Path, out_dir: Path, recovered: Sequence[str], written: Sequence[str]) -> tuple[Written, ...]:
    """Everything of the log directory recover does not model, copied byte for byte (directories whole)."""
    carried = []
    for entry in sorted(children(log_dir), key=lambda p: p.name):
        if entry.name in recovered or entry.name in written:
            continue
        target = out_dir / entry.name
        if entry.is_symlink():
            os.symlink(os.readlink(entry), target)
            carried.append(Written("link", target, CREATED, 0))
        elif entry.is_dir():
            carried.append(Written("directory", target, CREATED, copy_tree(entry, target)))
        elif entry.is_file():
            carried.append(Written("file", target, CREATED, copy_file(entry, target)))
    return tuple(carried)


def write_log_dir_files(
    log_dir: Path, out_dir: Path, reports: Sequence[Report]
) -> tuple[tuple[Written, ...], tuple[Written, ...], tuple[CheckpointChange, ...]]:
    """The marker, the checkpoints (``LogManager``'s text format), and everything else carried over.

    Returns (written, carried over, checkpoint entries changed).
    """
    written = []
    marker = log_dir / CLEAN_SHUTDOWN
    data = read_small_file(marker) if marker.is_file() else CLEAN_SHUTDOWN_TEXT
    files: list[tuple[str, bytes]] = [(CLEAN_SHUTDOWN, data)]
    hw_path = log_dir / HIGH_WATERMARK
    inputs = [read_offsets(log_dir, name).entries for name in (RECOVERY_POINT, LOG_START, HIGH_WATERMARK)]
    points, starts, marks = _log_dir_entries(reports, inputs)
    entries = [(RECOVERY_POINT, points), (LOG_START, starts)]
    files += [(RECOVERY_POINT, offset_checkpoint(points)), (LOG_START, offset_checkpoint(starts))]
    if hw_path.is_file():
        files.append((HIGH_WATERMARK, offset_checkpoint(marks)))
        entries.append((HIGH_WATERMARK, marks))
    out_dir.mkdir(parents=True, exist_ok=True)
    for name, content in files:
        write_file(out_dir / name, content)
        written.append(Written(name, out_dir / name, CREATED, len(content)))
    carried = carry_over(log_dir, out_dir, [r.path.name for r in reports], [name for name, _ in files])
    return tuple(written), carried, checkpoint_changes(log_dir, entries)


__all__ = [
    "CLEAN_SHUTDOWN_TEXT",
    "EPOCH_FILE",
    "METADATA_FILE",
    "batch_epochs",
    "cached_epochs",
    "carry_over",
    "checkpoint_changes",
    "format_checkpoint",
    "offset_checkpoint",
    "output_epochs",
    "producer_snapshot",
    "write_file",
    "write_kept_partition_files",
    "write_log_dir_files",
    "write_partition_files",
]
