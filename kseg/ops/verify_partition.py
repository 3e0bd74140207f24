"""Verify what spans a partition directory, and the files that are not segments.

Across the segments of one partition (reference §3.1, §3.10, §4.3):

* segments, in base-offset order, must not overlap; offsets missing between
  two segments are reported (normal after compaction, data loss otherwise);
* every file name must be a base offset Kafka can parse (20 digits);
* each .log should have its .index and .timeindex, and a .txnindex when it
  holds ABORT markers; ``.deleted``/``.cleaned``/``.swap`` leftovers are reported;
* ``leader-epoch-checkpoint`` must agree with the partition leader epochs
  written in the batches: each epoch starts where its first batch is.

Other files: KRaft ``.checkpoint`` snapshots are batch files and are walked
like a .log; producer snapshots go to ``verify_index``; text checkpoints,
``partition.metadata`` and ``quorum-state`` are parsed.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from itertools import pairwise

from kseg.ops.verify import (
    ERROR,
    INFO,
    WARNING,
    Collector,
    FileReport,
    Finding,
    PartitionPlan,
    Unit,
    UnitResult,
)
from kseg.ops.verify_index import base_offset_of, check_snapshot, unreadable_report
from kseg.ops.verify_log import SegmentFacts, read_file, walk_log

OFFSET_CHECKPOINTS = (
    "recovery-point-offset-checkpoint",
    "replication-offset-checkpoint",
    "log-start-offset-checkpoint",
    "cleaner-offset-checkpoint",
)
SEGMENT_SUFFIXES = (".log", ".index", ".timeindex", ".txnindex", ".snapshot")


def missing_report(path: str) -> FileReport:
    """A path argument that does not exist (or is not a regular file or directory)."""
    findings = Collector(path)
    findings.add("unreadable", ERROR, None, None, "no such file or directory (or not a regular file)")
    return FileReport(path, "missing", None, findings.close())


# -- files that are not segments ---------------------------------------------------------------


def check_other_file(unit: Unit, deep: bool = False) -> UnitResult:
    """One file that is not part of a segment unit."""
    path, kind = unit.paths[0], unit.kind
    try:
        if kind == "checkpoint":
            return _check_batch_file(path, deep)
        if kind == "snapshot":
            return UnitResult([check_snapshot(path)])
        if kind == "temp":
            return UnitResult([_stray(path)])
        if kind in ("leader-epoch-checkpoint", *OFFSET_CHECKPOINTS, "partition.metadata", "quorum-state"):
            return UnitResult([_check_text_file(path, kind)])
        if kind == "meta.properties":
            return UnitResult([FileReport(path, kind, os.path.getsize(path))])
    except OSError as err:
        return UnitResult([unreadable_report(path, kind, err)])
    if not unit.explicit:
        return UnitResult([])  # files kseg does not know, found inside directories: not reported
    findings = Collector(path)
    findings.add("unknown-file", INFO, None, None, "not a Kafka file kind verify knows; not checked")
    return UnitResult([FileReport(path, "unknown", os.path.getsize(path), findings.close())])


def _check_batch_file(path: str, deep: bool) -> UnitResult:
    """A KRaft snapshot (``<offset>-<epoch>.checkpoint``) or ``bootstrap.checkpoint``: batches from offset 0."""
    walk, size = walk_log(path, name_base=None, deep=deep)
    report = FileReport(
        path, "checkpoint", size, walk.findings.close(), batches=walk.batches,
        records=walk.records if deep else None, skipped_bytes=walk.skipped,
        first_offset=walk.first_offset, last_offset=walk.last_offset,
    )
    return UnitResult([report])


def _stray(path: str) -> FileReport:
    findings = Collector(path)
    name = os.path.basename(path)
    if name.endswith(".swap"):
        text = "a .swap file: finished cleaner or split output; at startup Kafka renames it over the segments it replaces"
    elif name.endswith(".cleaned"):
        text = "a .cleaned file: unfinished log-cleaner output; Kafka deletes it at startup"
    else:
        text = "a .deleted file: scheduled for deletion; Kafka deletes it at startup"
    findings.add("stray-file", WARNING, None, base_offset_of(path), text)
    return FileReport(path, "temp", os.path.getsize(path), findings.close())


def _line_starts(data: bytes) -> list[int]:
    starts, pos = [], 0
    for line in data.split(b"\n"):
        starts.append(pos)
        pos += len(line) + 1
    return starts


def _check_text_file(path: str, kind: str) -> FileReport:
    """Parse a text checkpoint; Kafka's loader refuses malformed ones."""
    from kseg.errors import KsegError
    from kseg.format.checkpoints import read_leader_epochs, read_offset_checkpoint, read_partition_metadata

    data = read_file(path)
    findings = Collector(path)
    report = FileReport(path, kind, len(data))
    try:
        if kind == "leader-epoch-checkpoint":
            report.entries = len(read_leader_epochs(data))
        elif kind == "partition.metadata":
            fields = read_partition_metadata(data)
            missing = [name for name in ("version", "topic_id") if name not in fields]
            if missing:
                findings.add("checkpoint-file", ERROR, 0, None, f"partition.metadata lacks {', '.join(missing)}")
        elif kind == "quorum-state":
            import json

            try:
                json.loads(data.decode("utf-8"))
            except (UnicodeDecodeError, json.JSONDecodeError) as err:
                findings.add("checkpoint-file", ERROR, getattr(err, "pos", None) or getattr(err, "start", 0), None,
                             f"quorum-state is not valid JSON: {err}")
        else:
            report.entries = len(read_offset_checkpoint(data, name=kind))
    except KsegError as err:
        kind_name = "leader-epoch" if kind == "leader-epoch-checkpoint" else "checkpoint-file"
        findings.add(kind_name, ERROR, err.offset, None, f"{err.message} (Kafka's loader refuses this file)",
                     field=err.field)
    report.findings = findings.close()
    return report


# -- across the segments of one partition --------------------------------------------------------

PartitionFinding = tuple[str, Finding, "str | None"]  # (path it is about, finding, file it belongs after)


def check_partition(plan: PartitionPlan, facts: list[SegmentFacts]) -> list[PartitionFinding]:
    """Cross-file checks of one partition directory."""
    out: list[PartitionFinding] = []
    out.extend(_check_names(plan.files))
    out.extend(_check_missing_indexes(plan.files, facts))
    out.extend(_check_contiguity(facts))
    epoch_file = os.path.join(plan.directory, "leader-epoch-checkpoint")
    if epoch_file in plan.files:
        out.extend(_check_leader_epochs(epoch_file, facts))
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
        if not stem.isdigit():
            yield _finding(path, "segment-name", ERROR, None, None,
                           f"{stem!r} is not a base offset (Kafka parses it with Long.parseLong and would fail)")
        elif len(stem) != 20:
            yield _finding(path, "segment-name", WARNING, None, int(stem),
                           f"the base offset in the name has {len(stem)} digits; Kafka writes 20")


def _check_missing_indexes(files: list[str], facts: list[SegmentFacts]) -> Iterator[PartitionFinding]:
    present = set(files)
    aborts = {f.path: f.aborts for f in facts}
    for path in files:
        if not path.endswith(".log"):
            continue
        stem = path[: -len(".log")]
        for suffix, what in ((".index", "the offset index (Kafka would rebuild it at startup)"),
                             (".timeindex", "the time index (Kafka would start an empty one)")):
            if stem + suffix not in present:
                yield _finding(stem + suffix, "missing-index", WARNING, None, base_offset_of(path),
                               f"missing: {what}", anchor=path)
        if aborts.get(path) and stem + ".txnindex" not in present:
            yield _finding(stem + ".txnindex", "missing-index", WARNING, None, base_offset_of(path),
                           f"missing, yet the log holds {aborts[path]} ABORT markers: read_committed consumers "
                           "would receive aborted records", anchor=path)


def _check_contiguity(facts: list[SegmentFacts]) -> Iterator[PartitionFinding]:
    """Segments in base-offset order: no overlap; report offsets in no segment."""
    segments = sorted((f for f in facts if f.name_base is not None and f.batches), key=lambda f: f.name_base)
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


def _check_leader_epochs(path: str, facts: list[SegmentFacts]) -> Iterator[PartitionFinding]:
    """The checkpoint against the epochs the batches carry (Kafka assigns an epoch where it first rises)."""
    from kseg.errors import KsegError
    from kseg.format.checkpoints import read_leader_epochs

    try:
        data = read_file(path)
        entries = read_leader_epochs(data)
    except (OSError, KsegError):
        return  # reported by the file's own check
    starts = _line_starts(data)
    lines = [(epoch, start, starts[2 + i] if 2 + i < len(starts) else None) for i, (epoch, start) in enumerate(entries)]
    for (prev_epoch, prev_start, _), (epoch, start, where) in pairwise(lines):
        if epoch <= prev_epoch or start <= prev_start:
            yield _finding(path, "leader-epoch", ERROR, where, start,
                           f"entry ({epoch} {start}) does not follow ({prev_epoch} {prev_start}): epochs and start "
                           "offsets must both increase")
    segments = sorted((f for f in facts if f.name_base is not None and f.batches), key=lambda f: f.name_base)
    if not segments:
        return
    derived: list[tuple[int, int]] = []
    for fact in segments:
        for epoch, offset in fact.epochs:
            if not derived or epoch > derived[-1][0]:
                derived.append((epoch, offset))
    log_first = segments[0].first_offset
    log_end = max(f.last_offset for f in segments if f.last_offset is not None) + 1
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
    for epoch, start, where in lines:
        if start > log_end:
            yield _finding(path, "leader-epoch", WARNING, where, start,
                           f"entry ({epoch} {start}) starts beyond the log end offset {log_end} (Kafka truncates the "
                           "cache to the log end when it loads the log)")
