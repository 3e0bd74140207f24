"""Consumer groups whose committed offsets the next start loses from ``__consumer_offsets``.

A group's position in a partition is the newest ``OffsetCommit`` record for (group, topic, partition)
in its ``__consumer_offsets`` partition; the coordinator replays the log when it loads the partition.
When the newest record of a key lies in an offset range the start takes out of service (cut,
deleted, behind damage, beyond the log end), the group falls back to the newest commit that stays --
its consumers re-read from there -- or, with none left, to the consumer's ``auto.offset.reset``.
The records are read from the files as they are on disk before the start (the lost batches are
still there); a batch that cannot be decoded is left out, and its commits are not named.
"""

from __future__ import annotations

from pathlib import Path

from kseg.errors import KsegError
from kseg.format.compression import DEFAULT_MAX_DECOMPRESSED
from kseg.format.v2 import V2Batch
from kseg.listing import children
from kseg.recovery.loading import PartitionPrediction
from kseg.segment import Segment

OFFSETS_TOPIC = "__consumer_offsets"
OFFSET_COMMIT_TYPES = (0, 1)  # OffsetCommitKey versions 0 and 1 (GroupCoordinatorRecordSerde)
Key = tuple[str, str, int]  # (group, topic, partition)
#: how many groups a fact names before "and N more"
SHOWN = 5


def _commits(logs: list[Path], cap: int) -> list[tuple[int, Key, int | None]]:
    """(record offset, key, committed offset or None for a tombstone) of every OffsetCommit record, in log order."""
    # imported here: the internal topics' schemas are needed only when __consumer_offsets is on the disk,
    # and every other run (verify of one clean segment included) should not pay for them
    from kseg.format.internal import decode_offsets_record

    found: list[tuple[int, Key, int | None]] = []
    for log in logs:
        try:
            seg = Segment(log)
        except (KsegError, OSError):
            continue  # unreadable: the load's own prediction says what it does with it
        with seg:
            for pos, _, magic, header, _ in seg.walk(strict=False).frames():
                if header is None or magic != 2:
                    continue
                try:
                    batch = V2Batch(seg.buf, pos)
                    if batch.is_control:
                        continue
                    records = list(batch.iter_records(cap))
                except KsegError:
                    continue  # damaged beyond decoding: its commits cannot be named
                for record in records:
                    decoded = decode_offsets_record(record.key, record.value, record.offset)
                    if decoded.problem is not None or decoded.key is None:
                        continue
                    if decoded.key["type"] not in OFFSET_COMMIT_TYPES:
                        continue
                    data = decoded.key["data"]
                    value = None if decoded.value is None else int(decoded.value["data"]["offset"])
                    found.append((record.offset, (data["group"], data["topic"], int(data["partition"])), value))
    return found


def _in(ranges: list[list[int]], offset: int) -> bool:
    return any(first <= offset <= last for first, last in ranges)


def lost_commits(pred: PartitionPrediction, cap: int = DEFAULT_MAX_DECOMPRESSED) -> list[str]:
    """One sentence per (group, topic, partition) whose newest commit the start loses, sorted."""
    gone = pred.gone_offsets
    if pred.topic != OFFSETS_TOPIC or not gone or pred.error is not None:
        return []
    logs = sorted(p for p in children(pred.path) if p.name.endswith(".log") and len(p.name) == 24 and p.name[:20].isdigit())
    newest: dict[Key, tuple[int, int | None]] = {}
    kept: dict[Key, tuple[int, int | None]] = {}
    for at, key, value in _commits(logs, cap):
        newest[key] = (at, value)
        if not _in(gone, at):
            kept[key] = (at, value)
    out = []
    for key, (at, value) in sorted(newest.items()):
        if not _in(gone, at) or value is None:
            continue
        group, topic, partition = key
        previous = kept.get(key)
        if previous is None or previous[1] is None:
            back = "no commit left: the consumers' auto.offset.reset decides"
        else:
            back = f"falls back to offset {previous[1]} (record {previous[0]}): re-reads {max(0, value - previous[1]):,}"
        out.append(f"group {group!r} {topic}-{partition}: commit of offset {value} (record {at}) lost; {back}")
    return out


def describe(sentences: list[str]) -> str:
    """The fact's text: the first few groups, then how many more."""
    more = len(sentences) - SHOWN
    text = "; ".join(sentences[:SHOWN])
    return text + (f"; and {more} more" if more > 0 else "")
