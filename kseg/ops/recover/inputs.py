"""What ``kseg recover`` reads and where it may write: the input, the target, the refusals.

Every refusal is raised before anything is read or written.  A single
``.log`` is recovered with the producer state its earlier segments leave
(replayed, as ``UnifiedLog.rebuildProducerState`` does); a partition
directory is recovered whole, in order.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import takewhile
from pathlib import Path

from kseg.format.compression import DEFAULT_MAX_DECOMPRESSED
from kseg.listing import names
from kseg.locks import is_kafka_log_dir
from kseg.ops.discover import (
    file_kind,
    is_partition_dir,
    parse_partition_dir,
    partition_dirs,
    partition_files,
    segment_logs,
)
from kseg.ops.recover.kafka import STARTUP_FATE, special_kind
from kseg.ops.recover.report import DRY_RUN, IN_PLACE, OUTPUT, RecoverRefused
from kseg.recovery.index_compare import INDEX_KINDS
from kseg.recovery.loading.logdir import (
    CLEAN_SHUTDOWN,
    HIGH_WATERMARK,
    LOG_START,
    METADATA_TOPIC,
    RECOVERY_POINT,
)
from kseg.recovery.producer_state import TxnTracker, replay_segments
from kseg.segment import base_offset_from_name, sibling

#: Partition files OUTDIR gets besides the segments (copied, or written as the load leaves them).
COPIED_FILES = ("leader-epoch-checkpoint", "partition.metadata")
#: Log-directory files OUTDIR gets for a log-directory input.
LOG_DIR_FILES = (CLEAN_SHUTDOWN, RECOVERY_POINT, LOG_START, HIGH_WATERMARK, "meta.properties")


def partition_name(directory: Path) -> tuple[str, int] | None:
    """(topic, partition) of a directory named like a partition directory, else None."""
    name = parse_partition_dir(directory)
    return None if name is None else (name.topic, name.partition)


@dataclass(frozen=True, slots=True)
class Input:
    """The segments a run recovers, and the directory they are in."""

    directory: Path
    logs: tuple[Path, ...]  # the segments to recover, in order
    all_logs: tuple[Path, ...]  # every segment of the directory
    whole_partition: bool


def log_dir_partitions(path: Path) -> list[Path] | None:
    """The partition directories of a log directory (KRaft's metadata log excepted); None if not one."""
    if not path.is_dir() or is_partition_dir(path):
        return None
    parts = [p for p in partition_dirs(path) if not p.name.startswith(METADATA_TOPIC + "-")]
    # -delete, -stray and -future directories are Kafka's own leftovers: carried over as they are
    parts = [p for p in parts if not special_kind(p)]
    # a partition directory without a .log is loaded too (Kafka creates its first segment, R4.6); a broker's
    # log directory (meta.properties, a checkpoint) is one even with no partition: its files still load
    return parts if any(segment_logs(p) for p in parts) or is_kafka_log_dir(path) else None


def partition_input(path: Path) -> Input:
    """A partition directory of a log directory, with or without segments."""
    logs = tuple(segment_logs(path))
    return Input(path, logs, logs, True) if not logs else resolve_input(path)


def resolve_input(path: Path) -> Input:
    """One partition directory, or one ``.log`` whose name gives its base offset; anything else is refused."""
    if path.is_dir():
        if not is_partition_dir(path):
            raise RecoverRefused(
                f"{path}: not a partition directory or a log directory "
                "(give a log directory, one <topic>-<partition> directory or a .log)"
            )
        logs = tuple(segment_logs(path))
        if not logs:
            raise RecoverRefused(f"{path}: no .log segments found")
        return Input(path, logs, logs, True)
    if file_kind(path) != "log":
        raise RecoverRefused(f"{path}: not a .log segment or a partition directory")
    if not path.is_file():
        raise RecoverRefused(f"{path}: not a regular file")
    if base_offset_from_name(path) is None:
        raise RecoverRefused(
            f"{path}: cannot tell the base offset from the file name (expected <20 digits>.log)"
        )
    return Input(path.parent, (path,), tuple(segment_logs(path.parent)), False)


def choose_target(out_dir: Path | None, in_place: bool, dry_run: bool) -> str:
    """OUTPUT, IN_PLACE or DRY_RUN: exactly one must be asked for."""
    if sum((out_dir is not None, in_place, dry_run)) != 1:
        raise RecoverRefused("give exactly one of -o OUTDIR, --in-place or --dry-run")
    if in_place:
        return IN_PLACE
    return DRY_RUN if dry_run else OUTPUT


def refuse_outputs(source: Input, out_dir: Path) -> None:
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
        names += list(COPIED_FILES)
        names += [p.name for p in out_dir.glob("*.snapshot")] if out_dir.is_dir() else []
    for name in names:
        if (out_dir / name).exists():
            raise RecoverRefused(
                f"{out_dir / name} exists; refusing to replace it (choose an empty -o directory)"
            )


def refuse_log_dir_outputs(log_dir: Path, sources: list[Input], out_dir: Path) -> None:
    """A log directory's OUTDIR: not the input, and none of its partition or log-directory files there yet."""
    if out_dir.exists() and out_dir.resolve() == log_dir.resolve():
        raise RecoverRefused(f"{out_dir} is the input log directory; use --in-place (keeps backups) or another -o")
    if out_dir.exists() and not out_dir.is_dir():
        raise RecoverRefused(f"{out_dir}: not a directory")
    recovered = {source.directory.name for source in sources}
    carried = [name for name in names(log_dir) if name not in recovered]  # copied as they are
    for name in (*LOG_DIR_FILES, *carried):
        if (out_dir / name).exists() or (out_dir / name).is_symlink():
            raise RecoverRefused(f"{out_dir / name} exists; refusing to replace it (choose an empty -o directory)")
    for source in sources:
        refuse_outputs(source, out_dir / source.directory.name)


def not_copied(directory: Path) -> tuple[tuple[Path, str], ...]:
    """Files of the partition that OUTDIR does not get, and why."""
    out = []
    for path in partition_files(directory):
        kind = file_kind(path)
        if kind in ("log", "index", "timeindex", "txnindex") or path.name in COPIED_FILES:
            continue
        if kind == "snapshot":
            why = "producer snapshot: " + STARTUP_FATE["snapshot"]
        elif kind == "temp":
            why = STARTUP_FATE["temp"]
        else:
            why = "not a file recover copies"
        out.append((path, why))
    return tuple(out)


def later_segments(source: Input) -> tuple[Path, ...]:
    """The segments of the directory after a single input ``.log`` (Kafka may delete them)."""
    base = base_offset_from_name(source.logs[0]) or 0
    return tuple(log for log in source.all_logs if (base_offset_from_name(log) or 0) > base)


def tracker_before(source: Input, max_batch_bytes: int = DEFAULT_MAX_DECOMPRESSED) -> TxnTracker:
    """Producer state at the first segment: a single .log replays the earlier ones of its directory.

    The tracker reads control batches under the read cap ``max_batch_bytes``.
    """
    if source.whole_partition:
        return TxnTracker(max_batch_bytes)
    first = base_offset_from_name(source.logs[0]) or 0
    earlier = takewhile(lambda log: (base_offset_from_name(log) or 0) < first, source.all_logs)
    return replay_segments(earlier, max_batch_bytes=max_batch_bytes)
