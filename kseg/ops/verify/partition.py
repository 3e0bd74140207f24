"""Verify what spans a partition directory: the checks across its segments and its files.

Across the segments of one partition (reference §3.1, §3.10, §4.3):

* segments, in base-offset order, must not overlap; offsets missing between
  two segments are reported (normal after compaction, data loss otherwise);
* every file name must be a base offset Kafka can parse (20 digits);
* each .log should have its .index and .timeindex, and a .txnindex when it
  holds ABORT markers;
* ``leader-epoch-checkpoint`` must agree with the partition leader epochs
  written in the batches: each epoch starts where its first batch is.

These run on the driver, over the :class:`~kseg.ops.verify.model.SegmentFacts`
the segment units sent back.  What Kafka does about a missing index or a
stale epoch entry at the next start is not decided here: the caller passes
the log-loading model's answer (:mod:`.load_findings`), and without one
(a directory Kafka would not load) nothing is said about the load.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from itertools import pairwise

from kseg.errors import KsegError
from kseg.ops.verify.model import ERROR, WARNING, Finding, PartitionPlan, SegmentFacts
from kseg.ops.verify.plan import segment_base
from kseg.sidefile import read_side_file

SEGMENT_SUFFIXES = (".log", ".index", ".timeindex", ".txnindex", ".snapshot")


def _line_starts(data: bytes) -> list[int]:
    starts, pos = [], 0
    for line in data.split(b"\n"):
        starts.append(pos)
        pos += len(line) + 1
    return starts


PartitionFinding = tuple[str, Finding, "str | None"]  # (path it is about, finding, file it belongs after)
EpochsAfterLoad = tuple[int, list[tuple[int, int]]]  # (log end, epoch entries) as the model's load leaves them


def check_partition(
    plan: PartitionPlan,
    facts: list[SegmentFacts],
    indexes: dict[str, str] | None = None,
    epochs: EpochsAfterLoad | None = None,
) -> list[PartitionFinding]:
    """Cross-file checks of one partition directory.

    ``indexes`` maps an index file's absolute path to what the next start does
    about it, ``epochs`` is the epoch cache after the load: both from the model.
    """
    out: list[PartitionFinding] = []
    out.extend(_check_names(plan.files))
    out.extend(_check_missing_indexes(plan.files, facts, indexes or {}))
    out.extend(_check_contiguity(facts))
    epoch_file = os.path.join(plan.directory, "leader-epoch-checkpoint")
    if epoch_file in plan.files:
        out.extend(_check_leader_epochs(epoch_file, facts, epochs))
    return out


def _finding(path: str, kind: str, severity: str, position: int | None, offset: int | None, message: str,
             anchor: str | None = None) -> PartitionFinding:
    return (path, Finding(path, kind, severity, position, offset, message), anchor)


def _check_names(files: list[str]) -> Iterator[PartitionFinding]:
    for path in files:
        name = os.path.basename(path)
        if not name.endswith(SEGMENT_SUFFIXES):
            continue
        stem = name.split(".", 1)[0]
        base = segment_base(path)
        if base is None:
            yield _finding(path, "segment-name", ERROR, None, None,
                           f"{stem!r} is not a base offset (Kafka parses it with Long.parseLong and would fail)")
        elif len(stem) != 20:
            yield _finding(path, "segment-name", WARNING, None, base,
                           f"the base offset in the name has {len(stem)} digits; Kafka writes 20")


def _check_missing_indexes(files: list[str], facts: list[SegmentFacts],
                           indexes: dict[str, str]) -> Iterator[PartitionFinding]:
    present = set(files)
    aborts = {f.path: f.aborts for f in facts}
    for path in files:
        if not path.endswith(".log"):
            continue
        stem = path[: -len(".log")]
        for suffix, what in ((".index", "the offset index"), (".timeindex", "the time index")):
            if stem + suffix not in present:
                kafka = indexes.get(os.path.abspath(stem + suffix))
                yield _finding(stem + suffix, "missing-index", WARNING, None, segment_base(path),
                               f"missing: {what}" + (f"; {kafka}" if kafka else ""), anchor=path)
        if aborts.get(path) and stem + ".txnindex" not in present:
            yield _finding(stem + ".txnindex", "missing-index", WARNING, None, segment_base(path),
                           f"missing, yet the log holds {aborts[path]} ABORT markers: read_committed consumers "
                           "would receive aborted records", anchor=path)


def _named_segments(facts: list[SegmentFacts]) -> list[SegmentFacts]:
    """The segments with a base offset in their name and at least one batch, in base-offset order."""
    named = [(f.name_base, i) for i, f in enumerate(facts) if f.name_base is not None and f.batches]
    return [facts[i] for _, i in sorted(named)]


def _check_contiguity(facts: list[SegmentFacts]) -> Iterator[PartitionFinding]:
    """Segments in base-offset order: no overlap; report offsets in no segment."""
    segments = _named_segments(facts)
    for before, after in pairwise(segments):
        assert before.last_offset is not None and after.name_base is not None
        if before.last_offset >= after.name_base:
            yield _finding(after.path, "segment-overlap", ERROR, 0, after.first_offset,
                           f"{os.path.basename(before.path)} holds offsets up to {before.last_offset}, at or beyond "
                           f"this segment's base offset {after.name_base}")
        elif before.last_offset + 1 < after.name_base:
            yield _finding(after.path, "segment-gap", WARNING, 0, after.first_offset,
                           f"offsets {before.last_offset + 1}..{after.name_base - 1} are in no segment: "
                           f"{os.path.basename(before.path)} ends at {before.last_offset} (normal for a compacted "
                           "topic; otherwise data is missing)")


EpochLine = tuple[int, int, "int | None"]  # (epoch, start offset, byte position of its line)


def _check_leader_epochs(path: str, facts: list[SegmentFacts],
                         after: EpochsAfterLoad | None) -> Iterator[PartitionFinding]:
    """The checkpoint against the epochs the batches carry (Kafka assigns an epoch where it first rises)."""
    from kseg.format.checkpoints import read_leader_epochs  # only for partitions that have the file

    try:
        data = read_side_file(path)
        entries = read_leader_epochs(data)
    except (OSError, KsegError):
        return  # reported by the file's own check
    starts = _line_starts(data)
    lines = [(epoch, start, starts[2 + i] if 2 + i < len(starts) else None) for i, (epoch, start) in enumerate(entries)]
    disordered = set()
    for (prev_epoch, prev_start, _), (epoch, start, where) in pairwise(lines):
        if epoch <= prev_epoch or start <= prev_start:
            disordered.add((epoch, start))
            yield _finding(path, "leader-epoch", ERROR, where, start,
                           f"entry ({epoch} {start}) does not follow ({prev_epoch} {prev_start}): epochs and start "
                           "offsets must both increase")
    segments = _named_segments(facts)
    if segments:
        ordered = [line for line in lines if line[:2] not in disordered]
        yield from _check_epochs_against_batches(path, lines, segments)
        yield from _check_epoch_ends(path, ordered, segments, after)


def _check_epochs_against_batches(
    path: str, lines: list[EpochLine], segments: list[SegmentFacts]
) -> Iterator[PartitionFinding]:
    """Each epoch where its first batch is."""
    derived: list[tuple[int, int]] = []
    for fact in segments:
        for epoch, offset in fact.epochs:
            if not derived or epoch > derived[-1][0]:
                derived.append((epoch, offset))
    log_first = segments[0].first_offset
    checkpoint = {epoch: (start, where) for epoch, start, where in lines}
    for k, (epoch, offset) in enumerate(derived):
        if epoch not in checkpoint:
            yield _finding(path, "leader-epoch", WARNING, None, offset,
                           f"batches of leader epoch {epoch} start at offset {offset}, but the checkpoint has no "
                           f"entry for epoch {epoch}")
            continue
        start, where = checkpoint[epoch]
        if start == offset or (k == 0 and start < offset == log_first):
            continue  # the first epoch may have begun before the oldest segment still present
        yield _finding(path, "leader-epoch", WARNING, where, start,
                       f"the checkpoint says epoch {epoch} starts at offset {start}, but its first batch is at "
                       f"offset {offset}")


def _check_epoch_ends(
    path: str, lines: list[EpochLine], segments: list[SegmentFacts], after: EpochsAfterLoad | None
) -> Iterator[PartitionFinding]:
    """Entries beyond the log end (the model says whether the next start drops them) or that no batch carries."""
    log_end = max(f.last_offset for f in segments if f.last_offset is not None) + 1
    log_first = segments[0].first_offset or 0
    carried = {epoch for fact in segments for epoch, _ in fact.epochs}
    for k, (epoch, start, where) in enumerate(lines):
        if after is not None and (epoch, start) not in after[1] and start >= after[0]:
            yield _finding(path, "leader-epoch", WARNING, where, start,
                           f"entry ({epoch} {start}) starts at or beyond the log end {after[0]}: the next start drops "
                           "it and rewrites the file [R7.4 LeaderEpochFileCache.truncateFromEndAsyncFlush]")
        elif after is None and start > log_end:
            yield _finding(path, "leader-epoch", WARNING, where, start,
                           f"entry ({epoch} {start}) starts beyond the log end offset {log_end}")
        elif carried and epoch not in carried and start < log_end:  # no epochs at all: pre-0.11 or -1
            following = lines[k + 1][1] if k + 1 < len(lines) else log_end
            if following > log_first:
                yield _finding(path, "leader-epoch", WARNING, where, start,
                               f"no batch carries leader epoch {epoch} (entry ({epoch} {start})): its batches are "
                               "missing, which is normal only if compaction removed them")
