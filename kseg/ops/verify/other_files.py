"""Verify the files of a partition or log directory that are not segments.

KRaft ``.checkpoint`` snapshots are batch files and are walked like a .log;
producer-state ``.snapshot`` files are checked as Kafka loads them; text
checkpoints, ``partition.metadata`` and ``quorum-state`` are parsed;
``.deleted``/``.cleaned``/``.swap`` leftovers are reported.

The parsers of these files are imported by the checks that use them: a run
over one clean segment never needs them, and ``kseg verify``'s start-up is part
of its speed (bench/bench_verify.py).
"""

from __future__ import annotations

import os

from kseg.errors import IndexCorrupt, KsegError
from kseg.format.compression import DEFAULT_MAX_DECOMPRESSED
from kseg.ops.discover import UNFINISHED_OUTPUT
from kseg.ops.verify.log_walk import walk_log
from kseg.ops.verify.model import (
    ERROR,
    INFO,
    WARNING,
    Collector,
    FileReport,
    Unit,
    UnitResult,
    unreadable_report,
)
from kseg.ops.verify.plan import segment_base
from kseg.segment import read_small_file
from kseg.sidefile import SideFileTooLarge, read_side_file

OFFSET_CHECKPOINTS = (
    "recovery-point-offset-checkpoint",
    "replication-offset-checkpoint",
    "log-start-offset-checkpoint",
    "cleaner-offset-checkpoint",
)


def check_other_file(unit: Unit, deep: bool = False, max_batch_bytes: int = DEFAULT_MAX_DECOMPRESSED) -> UnitResult:
    """One file that is not part of a segment unit."""
    path, kind = unit.paths[0], unit.kind
    try:
        if kind == "checkpoint":
            return _check_batch_file(path, deep, max_batch_bytes)
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
    if os.path.basename(path) == UNFINISHED_OUTPUT:
        return UnitResult([_unfinished_output(path)])
    if not unit.explicit:
        return UnitResult([])  # files kseg does not know, found inside directories: not reported
    findings = Collector(path)
    findings.add("unknown-file", INFO, None, None, "not a Kafka file kind verify knows; not checked")
    return UnitResult([FileReport(path, "unknown", os.path.getsize(path), findings.close())])


def _check_batch_file(path: str, deep: bool, max_batch_bytes: int) -> UnitResult:
    """A KRaft snapshot (``<offset>-<epoch>.checkpoint``) or ``bootstrap.checkpoint``: batches from offset 0."""
    walk, size = walk_log(path, name_base=None, deep=deep, max_batch_bytes=max_batch_bytes)
    report = FileReport(
        path, "checkpoint", size, walk.findings.close(), batches=walk.batches,
        records=walk.records if deep else None, skipped_bytes=walk.skipped,
        first_offset=walk.first_offset, last_offset=walk.last_offset,
    )
    return UnitResult([report])


def _unfinished_output(path: str) -> FileReport:
    """``KSEG-UNFINISHED``: a ``recover -o`` or ``convert -o`` into this directory was killed before it finished."""
    findings = Collector(path)
    findings.add("unfinished-output", ERROR, None, None,
                 "a kseg run writing this directory did not finish (killed, or the machine stopped): what is here "
                 "may be incomplete; remove the directory and run the command again")
    return FileReport(path, "unknown", os.path.getsize(path), findings.close())


def _stray(path: str) -> FileReport:
    findings = Collector(path)
    name = os.path.basename(path)
    if name.endswith(".swap"):
        text = "a .swap file: finished cleaner or split output; at startup Kafka renames it over the segments it replaces"
    elif name.endswith(".cleaned"):
        text = "a .cleaned file: unfinished log-cleaner output; Kafka deletes it at startup"
    else:
        text = "a .deleted file: scheduled for deletion; Kafka deletes it at startup"
    findings.add("stray-file", WARNING, None, segment_base(path), text)
    return FileReport(path, "temp", os.path.getsize(path), findings.close())


def _check_text_file(path: str, kind: str) -> FileReport:
    """Parse a text checkpoint; Kafka's loader refuses malformed ones."""
    import json

    from kseg.format.checkpoints import read_leader_epochs, read_offset_checkpoint, read_partition_metadata

    findings = Collector(path)
    kind_name = "leader-epoch" if kind == "leader-epoch-checkpoint" else "checkpoint-file"
    try:
        data = read_side_file(path)
    except SideFileTooLarge as err:  # a forged size: reported, never parsed (kseg.sidefile)
        report = FileReport(path, kind, os.path.getsize(path))
        findings.add(kind_name, ERROR, err.offset, None, err.message)
        report.findings = findings.close()
        return report
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
            try:
                json.loads(data.decode("utf-8"))
            except (UnicodeDecodeError, json.JSONDecodeError) as err:
                findings.add("checkpoint-file", ERROR, getattr(err, "pos", None) or getattr(err, "start", 0), None,
                             f"quorum-state is not valid JSON: {err}")
        else:
            report.entries = len(read_offset_checkpoint(data, name=kind))
    except KsegError as err:
        findings.add(kind_name, ERROR, err.offset, None, f"{err.message} (Kafka's loader refuses this file)",
                     field=err.field)
    report.findings = findings.close()
    return report


# -- .snapshot -----------------------------------------------------------------------------------


def check_snapshot(path: str) -> FileReport:
    """A producer-state snapshot: version 1, CRC-32C, entries that fit, offsets below the name's."""
    from kseg.format.snapshot import SNAPSHOT_ENTRY, SNAPSHOT_HEADER, read_snapshot

    data = read_small_file(path)
    findings = Collector(path)
    add = findings.add
    report = FileReport(path, "snapshot", len(data))
    try:
        snapshot = read_snapshot(data)
    except IndexCorrupt as err:
        kind = "snapshot-version" if err.field == "snapshot.version" else "snapshot-structure"
        add(kind, ERROR, err.offset, None,
            f"{err.message} (Kafka would delete this snapshot and fall back to an older one)", field=err.field)
        report.findings = findings.close()
        return report
    except KsegError as err:
        add("snapshot-structure", ERROR, err.offset, None, err.message, field=err.field)
        report.findings = findings.close()
        return report
    report.entries = len(snapshot.entries)
    if not snapshot.crc_ok:
        add("snapshot-crc", ERROR, 2, None,
            f"Snapshot is corrupt (CRC is no longer valid). Stored crc: {snapshot.crc}. Computed crc: "
            f"{snapshot.computed_crc} (Kafka would delete this snapshot and fall back to an older one)",
            field="snapshot.crc")
    used = SNAPSHOT_HEADER.size + len(snapshot.entries) * SNAPSHOT_ENTRY.size
    if len(data) > used:
        add("snapshot-structure", WARNING, used, None,
            f"{len(data) - used} bytes after the {len(snapshot.entries)} entries", size=len(data) - used)
    end_offset = segment_base(path)
    if end_offset is not None and snapshot.crc_ok:
        for i, entry in enumerate(snapshot.entries):
            if entry.last_offset >= end_offset:
                add("snapshot-structure", WARNING, SNAPSHOT_HEADER.size + i * SNAPSHOT_ENTRY.size, entry.last_offset,
                    f"entry {i} (producer {entry.producer_id}): last offset {entry.last_offset} is not below the "
                    f"snapshot's offset {end_offset} (from the file name)", field=f"entries[{i}].last_offset")
    report.findings = findings.close()
    return report
