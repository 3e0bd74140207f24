"""Consumer groups' offline lag: committed offsets in ``__consumer_offsets`` against the log end on the same disks.

The committed offset of (group, topic, partition) is the last OffsetCommit record for it
(OffsetCommitKey, record types 0 and 1) -- a tombstone removes it, and a commit written in a
transaction (a transactional offset commit) counts only once its COMMIT marker follows, as the
group coordinator replays its log.  The lag is the partition's log end offset minus the
committed offset, for the partitions whose directories are among the inputs (the offsets
partition's own log directory first).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kseg.format.control import decode_control_key
from kseg.format.internal import decode_offsets_record
from kseg.format.walk import BatchWalk
from kseg.format.whole import all_or_nothing
from kseg.ops.discover import segment_logs
from kseg.ops.stats.model import PartitionStats
from kseg.segment import MappedFile

OFFSETS_TOPIC = "__consumer_offsets"
OFFSET_COMMIT_TYPES = (0, 1)  # OffsetCommitKey versions 0 and 1 (GroupCoordinatorRecordSerde)
CONTROL_COMMIT = 1

Key = tuple[str, str, int]


@dataclass(frozen=True)
class GroupLag:
    """One group's committed offset for one partition, and how far the log end is beyond it."""

    group: str
    topic: str
    partition: int
    committed_offset: int
    log_end_offset: int | None  # None: the partition is not among the inputs
    lag: int | None


def _records(directory: Path) -> Iterator[tuple[Any, Any]]:
    """(batch, record) of every readable record of an offsets partition, in log order."""
    for log in segment_logs(directory):
        with MappedFile(log) as mapped:
            for batch in BatchWalk(mapped.buf, strict=False):
                mapped.release(batch.position)  # flat memory over a large offsets topic
                try:
                    records = all_or_nothing(batch)
                except Exception:  # a damaged batch: verify reports it; the coordinator would stop here too
                    continue
                for record in records:
                    yield batch, record


def _commit(record: Any) -> tuple[Key, int | None] | None:
    decoded = decode_offsets_record(record.key, record.value, record.offset)
    if decoded.problem is not None or decoded.key is None or decoded.key["type"] not in OFFSET_COMMIT_TYPES:
        return None
    key = decoded.key["data"]
    offset = None if decoded.value is None else int(decoded.value["data"]["offset"])
    return (str(key["group"]), str(key["topic"]), int(key["partition"])), offset


def committed_offsets(directory: Path) -> dict[Key, int]:
    """The committed offsets one ``__consumer_offsets`` partition holds at its end."""
    offsets: dict[Key, int] = {}
    pending: dict[int, list[tuple[Key, int | None]]] = {}

    def apply(commits: list[tuple[Key, int | None]]) -> None:
        for key, offset in commits:
            if offset is None:
                offsets.pop(key, None)
            else:
                offsets[key] = offset

    for batch, record in _records(directory):
        if getattr(batch, "is_control", False):
            commits = pending.pop(batch.producer_id, [])
            try:
                if decode_control_key(record.key).type_id == CONTROL_COMMIT:
                    apply(commits)
            except Exception:  # an undecodable marker: the commits stay unapplied
                pass
            continue
        commit = _commit(record)
        if commit is None:
            continue
        if getattr(batch, "is_transactional", False):
            pending.setdefault(batch.producer_id, []).append(commit)
        else:
            apply([commit])
    return offsets


def _log_end(parts: list[PartitionStats], log_dir: str, topic: str, partition: int) -> int | None:
    """The log end of ``topic-partition``: from the offsets partition's own log directory, else from the one
    input that holds it; None when no input does, or several log directories do (other brokers, other clusters)."""
    same = [p for p in parts if (p.topic, p.partition) == (topic, partition)]
    here = [p for p in same if p.log_dir == log_dir]
    if here:
        return here[0].log_end_offset
    return same[0].log_end_offset if len(same) == 1 else None


def group_lags(parts: list[PartitionStats]) -> list[GroupLag]:
    """Every committed offset found in the inputs' ``__consumer_offsets`` partitions, with its lag."""
    out = []
    for offsets in (p for p in parts if p.topic == OFFSETS_TOPIC):
        for (group, topic, partition), offset in sorted(committed_offsets(Path(offsets.path)).items()):
            end = _log_end(parts, offsets.log_dir, topic, partition)
            out.append(GroupLag(group, topic, partition, offset, end, None if end is None else end - offset))
    return sorted(out, key=lambda g: (-(g.lag or 0), g.group, g.topic, g.partition))
