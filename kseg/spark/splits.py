"""Which Spark task reads which bytes: one split per segment, large segments cut at batch starts.

A task costs milliseconds to schedule, so small segments are read whole; a
segment larger than the split size is cut near every multiple of it, at
batch starts the log's own walk finds (headers only: the driver reads 17 bytes
per batch), so one 1 GiB segment keeps every core busy.  Where the ``.index``
names such a start -- and a whole batch with a valid CRC holding the indexed
offset is there -- its position is the cut; an index that points anywhere
else (missing, sparse, stale, inside a batch, at a batch forged inside a
record's value) is not used.

Planning runs where Spark plans (a Python worker on the driver's machine):
it stats every file and reads the indexes and batch headers of large segments, never the records.
"""

from __future__ import annotations

import os
from array import array
from bisect import bisect_left, bisect_right
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path

from kseg.errors import KsegError
from kseg.format import BatchWalk, read_batch
from kseg.format.layout import Buffer
from kseg.index import OffsetEntry, offset_slots
from kseg.ops.discover import expand_paths, file_kind, is_partition_dir, parse_partition_dir
from kseg.segment import MappedFile, base_offset_from_name, sibling

#: Split-size bounds: at least this much per task (a task costs ~ms), at most Spark's maxPartitionBytes.
MIN_SPLIT_BYTES = 4 << 20
MAX_SPLIT_BYTES = 128 << 20


@dataclass(frozen=True, slots=True)
class Split:
    """Bytes ``[start, end)`` of one segment file: one Spark task's work (must pickle)."""

    path: str
    start: int
    end: int
    topic: str | None
    partition: int | None
    segment_base_offset: int | None  # the number in a .log's name; None for a KRaft snapshot


def segment_files(paths: Sequence[str | os.PathLike[str]]) -> list[Path]:
    """Files holding batches: every .log and .checkpoint under directories; files named as given.

    A file named on its own is read as a segment whatever its name (evidence is
    often renamed); directories expand in Kafka's order (``expand_paths``).
    """
    out: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if not path.exists():
            raise FileNotFoundError(f"{path}: no such file or directory")
        if path.is_dir():
            out.extend(p for p in expand_paths([path]) if file_kind(p) in ("log", "checkpoint"))
        else:
            out.append(path)
    return out


def default_split_bytes(total_bytes: int, parallelism: int) -> int:
    """Spark's own rule for files: total over cores, within [4 MiB, 128 MiB]."""
    per_core = -(-total_bytes // max(1, parallelism))
    return max(MIN_SPLIT_BYTES, min(MAX_SPLIT_BYTES, per_core))


def plan_splits(
    paths: Sequence[str | os.PathLike[str]], split_bytes: int | None = None, parallelism: int | None = None
) -> list[Split]:
    """Splits for every segment under ``paths``, in Kafka's file order."""
    files = segment_files(paths)
    sizes = [os.stat(f).st_size for f in files]
    if split_bytes is None:
        split_bytes = default_split_bytes(sum(sizes), parallelism or os.cpu_count() or 1)
    splits: list[Split] = []
    for path, size in zip(files, sizes, strict=True):
        splits.extend(split_file(path, size, split_bytes))
    return splits


def file_identity(path: Path) -> tuple[str | None, int | None, int | None]:
    """(topic, partition, segment base offset) from the directory and file names."""
    name = parse_partition_dir(path.parent) if is_partition_dir(path.parent) else None
    snapshot = file_kind(path) == "checkpoint"
    base = None if snapshot else base_offset_from_name(path)
    return (name.topic if name else None, name.partition if name else None, base)


def split_file(path: Path, size: int, split_bytes: int) -> list[Split]:
    """One split, or several cut at batch starts near every ``split_bytes``."""
    topic, partition, base = file_identity(path)
    cuts = cut_positions(path, size, split_bytes) if size > split_bytes else []
    bounds = [0, *cuts, size]
    return [Split(str(path), a, b, topic, partition, base) for a, b in pairwise(bounds)]


def cut_positions(path: Path, size: int, split_bytes: int) -> list[int]:
    """Batch starts at or below each multiple of ``split_bytes``: from the .index where it agrees with the log.

    The log's own walk (headers only) decides what a batch start is: an index
    entry is used only where the walk found a batch starting there, so a forged
    ``.index`` pointing at a valid-looking batch inside a record's value cannot
    make a task read forged records or skip real ones.
    """
    targets = range(split_bytes, size, split_bytes)
    try:
        with MappedFile(path) as log:
            starts = _batch_starts(log.buf)
            cuts = _cuts_from_index(path, log.buf, targets, starts)
            if cuts is None:
                cuts = _cuts_from_starts(starts, targets)
    except OSError:
        return []  # unreadable here: one split, whose task reports it
    return cuts


def _batch_starts(buf: Buffer) -> array[int]:
    """Where the log's batches start, as Kafka's reader walks them (headers only, up to the first damage)."""
    return array("q", (batch.position for batch in BatchWalk(buf, 0, None, strict=False)))


def _is_start(starts: array[int], position: int) -> bool:
    i = bisect_left(starts, position)
    return i < len(starts) and starts[i] == position


def _cuts_from_index(path: Path, buf: Buffer, targets: range, starts: array[int]) -> list[int] | None:
    """Cuts at .index positions, each checked against the log; None when the index cannot be trusted."""
    index = sibling(path, ".index")
    if file_kind(path) != "log" or not index.is_file():
        return None
    base = base_offset_from_name(path) or 0
    with MappedFile(index) as mapped:
        entries = offset_slots(mapped.buf, base)
        cuts: list[int] = []
        for target in targets:
            i = _last_at_or_below(entries, target)
            if i is None:
                continue
            entry = entries[i]
            if cuts and entry.position <= cuts[-1]:
                continue  # the same entry serves two targets (a batch larger than the split size)
            if (entry.position <= 0 or not _is_start(starts, entry.position)
                    or not _batch_starts_at(buf, entry.position, entry.offset)):
                return None
            cuts.append(entry.position)
    # a sparse index (or one that stops early) leaves targets without a cut: the walk finds them
    return cuts if len(cuts) == len(targets) else None


def _last_at_or_below(entries: Sequence[OffsetEntry], target: int) -> int | None:
    """Index of the last entry whose position is <= target (positions increase in a sound index)."""
    lo, hi, found = 0, len(entries) - 1, None
    while lo <= hi:
        mid = (lo + hi) // 2
        if entries[mid].position <= target:
            found, lo = mid, mid + 1
        else:
            hi = mid - 1
    return found


def _batch_starts_at(buf: Buffer, position: int, indexed_offset: int) -> bool:
    """A whole batch with a valid CRC, holding the indexed offset, starts at ``position``."""
    try:
        batch = read_batch(buf, position)
        return (
            position + batch.size <= len(buf) and batch.is_valid() and batch.last_offset >= indexed_offset
        )
    except KsegError:
        return False


def _cuts_from_starts(starts: array[int], targets: range) -> list[int]:
    """Cuts at the last batch start at or below each target (past the walk's end: its last start)."""
    cuts: list[int] = []
    for target in targets:
        i = bisect_right(starts, target) - 1
        if i >= 0 and starts[i] > (cuts[-1] if cuts else 0):
            cuts.append(starts[i])
    return cuts
