"""``kseg stats``' orchestration: partitions found under the paths, scanned (in a pool with ``jobs``), rolled up.

Partitions are independent, so a pool of worker processes takes one partition each; the
results come back in the order of the paths (Kafka's order within a log directory) and are
then sorted: by size, then worst skew first.  Nothing here prints or exits.
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from kseg.errors import KsegError
from kseg.format.checkpoints import read_offset_checkpoint
from kseg.listing import children
from kseg.ops.discover import file_kind, is_partition_dir, parse_partition_dir, partition_dirs, segment_logs
from kseg.ops.stats.groups import group_lags
from kseg.ops.stats.model import DEFAULT_MAX_MESSAGE_BYTES, PartitionStats, Rollup, StatsResult, Tally
from kseg.ops.stats.retention import TopicConfig, forecast
from kseg.ops.stats.scan import scan_partition
from kseg.segment import base_offset_from_name, read_small_file

METADATA_TOPIC = "__cluster_metadata"
CLEAN_SHUTDOWN = ".kafka_cleanshutdown"
#: Below this much data a pool costs more to start than it saves.
POOL_MIN_BYTES = 32 << 20


@dataclass(frozen=True)
class StatsOptions:
    """How one run counts: record level or not, one batch in ``sample``, "now", the largest batch allowed."""

    records: bool = False
    sample: int = 1
    now_ms: int | None = None
    max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES
    high_watermark: int | None = None


class NoPartitions(KsegError):
    """The paths hold no partition directory."""


#: One unit of work: a partition directory, and the segments named in it (None: the whole directory).
Unit = tuple[Path, frozenset[Path] | None]


def find_partitions(paths: list[Path]) -> list[Unit]:
    """Partition directories named by ``paths`` (log directories expanded, Kafka's order), each once; a
    segment ``.log`` named on its own stands for its directory restricted to the segments named."""
    whole: list[Path] = []
    parts: dict[Path, set[Path]] = {}
    for path in paths:
        if path.is_dir():
            whole.extend([path] if is_partition_dir(path) else partition_dirs(path))
        elif file_kind(path) == "log" and base_offset_from_name(path) is not None:
            parts.setdefault(path.parent, set()).add(path)
        else:
            raise NoPartitions("not a segment .log, partition or log directory", path=str(path))
    seen: set[Path] = set()
    units: list[Unit] = []
    for directory in whole:
        if directory.resolve() not in seen:
            seen.add(directory.resolve())
            units.append((directory, None))
    for directory, logs in parts.items():
        if directory.resolve() not in seen:
            seen.add(directory.resolve())
            units.append((directory, frozenset(logs)))
    return units


def _checkpoint(log_dir: Path, name: str) -> dict[tuple[str, int], int]:
    """An offset checkpoint of the log directory; empty when missing or unreadable (Kafka goes on too)."""
    try:
        return {(t, p): o for t, p, o in read_offset_checkpoint(read_small_file(log_dir / name))}
    except (OSError, KsegError):
        return {}


def recovered_from(directory: Path, topic: str, number: int) -> int | None:
    """Where the next start recovers this partition from (``LogLoader.recoverLog``): None after a clean
    shutdown; else the base of the segment holding the recovery point (``segments.values(recoveryPoint,
    Long.MAX_VALUE)`` starts at its floor), or the first segment when the point is below every base."""
    if (directory.parent / CLEAN_SHUTDOWN).exists():
        return None
    point = _checkpoint(directory.parent, "recovery-point-offset-checkpoint").get((topic, number), 0)
    bases = [base for log in segment_logs(directory) if (base := base_offset_from_name(log)) is not None]
    below = [b for b in bases if b <= point]
    return max(below) if below else min(bases, default=0)


def stats_partition(unit: Unit, options: StatsOptions, now_ms: int) -> PartitionStats:
    """One partition directory (or the segments named in it), scanned; runs inline or in a worker process."""
    directory, only = unit
    name = parse_partition_dir(directory)
    topic, number = (name.topic, name.partition) if name else (directory.name, -1)
    tally = Tally()
    segments = scan_partition(directory, tally, now_ms=now_ms, max_message_bytes=options.max_message_bytes,
                              records=options.records, sample=max(1, options.sample), only=only,
                              recovered_from=recovered_from(directory, topic, number))
    first = segments[0].base_offset if segments else 0
    checkpoint = _checkpoint(directory.parent, "log-start-offset-checkpoint").get((topic, number), 0)
    last = segments[-1] if segments else None
    end = (last.next_offset if last.next_offset is not None else last.base_offset) if last else 0
    return PartitionStats(str(directory), str(directory.parent), topic, number, tally, segments,
                          max(checkpoint, first), end, whole=only is None)


def _scan_all(dirs: list[Unit], options: StatsOptions, now_ms: int, jobs: int) -> list[PartitionStats]:
    total = sum(f.stat().st_size for d, _ in dirs for f in children(d) if f.is_file()) if jobs > 1 else 0
    if jobs <= 1 or len(dirs) <= 1 or total < POOL_MIN_BYTES:
        return [stats_partition(d, options, now_ms) for d in dirs]
    from concurrent.futures import ProcessPoolExecutor

    with ProcessPoolExecutor(max_workers=min(jobs, len(dirs))) as pool:
        return list(pool.map(stats_partition, dirs, [options] * len(dirs), [now_ms] * len(dirs)))


def _rollup(kind: str, name: str, parts: list[PartitionStats]) -> Rollup:
    tally = Tally()
    for part in parts:
        tally.add(part.tally)
    sizes = [p.tally.bytes for p in parts]
    mean = sum(sizes) / len(sizes) if sizes else 0
    return Rollup(kind, name, len(parts), tally, round(max(sizes) / mean, 3) if mean else 1.0)


def collect_stats(
    paths: list[Path],
    options: StatsOptions = StatsOptions(),
    configs: Mapping[str, TopicConfig] | None = None,
    jobs: int | None = None,
) -> StatsResult:
    """Statistics of every partition under ``paths``, rolled up to topics and log directories, with the
    retention forecast of each partition under ``configs`` (topic -> config; Kafka's defaults otherwise)."""
    dirs = find_partitions(paths)
    if not dirs:
        raise NoPartitions("no partition directories here", path=", ".join(map(str, paths)))
    now_ms = options.now_ms if options.now_ms is not None else int(time.time() * 1000)
    jobs = (os.cpu_count() or 1) if jobs is None else max(1, jobs)
    parts = _scan_all(dirs, options, now_ms, jobs)
    by_topic: dict[str, list[PartitionStats]] = {}
    by_dir: dict[str, list[PartitionStats]] = {}
    for part in parts:
        by_topic.setdefault(part.topic, []).append(part)
        by_dir.setdefault(part.log_dir, []).append(part)
    topics = [_rollup("topic", t, ps) for t, ps in by_topic.items()]
    log_dirs = [_rollup("log_dir", d, ps) for d, ps in by_dir.items()]
    skews = {}
    for rollup in topics:
        mean = rollup.tally.bytes / rollup.partitions if rollup.partitions else 0
        for part in by_topic[rollup.name]:
            skews[part.path] = round(part.tally.bytes / mean, 3) if mean else 1.0
    parts.sort(key=lambda p: (-p.tally.bytes, -skews[p.path], p.topic, p.partition, p.path))
    topics.sort(key=lambda r: (-r.tally.bytes, -r.skew, r.name))
    log_dirs.sort(key=lambda r: (-r.tally.bytes, -r.skew, r.name))
    result = StatsResult(now_ms, options.max_message_bytes, options.records, max(1, options.sample), parts, topics,
                         log_dirs, skews)
    result.lags = list(group_lags(parts))
    configs = configs or {}
    for part in parts:
        if part.topic == METADATA_TOPIC or not part.whole:
            continue  # the KRaft log's retention is the controller's; a few segments are not a partition
        result.forecasts[part.path] = forecast(part, configs.get(part.topic, TopicConfig()), now_ms,
                                               options.high_watermark)
    return result
