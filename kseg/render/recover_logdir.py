"""Text for ``kseg recover`` on a log directory: each partition's report, then the totals.

Per partition the same lines as for a partition directory
(:func:`kseg.render.recover.partition_lines`) and its summary line; then the
log directory's files written to OUTDIR, and one line of totals: partitions
and segments changed, bytes recover cuts, the segments (and bytes) Kafka
deletes at the next start and the partitions whose load throws.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import IO, TYPE_CHECKING

from kseg.ops.recover import report as report_kinds
from kseg.ops.recover.report import CheckpointChange, LogDirReport
from kseg.recovery.loading.logdir import HIGH_WATERMARK
from kseg.render.recover import (
    mode_text,
    partition_lines,
    partition_says_something,
    plural,
    print_lines,
    says_something,
    summary_line,
)
from kseg.render.recover_map import LEGEND

if TYPE_CHECKING:
    from rich.text import Text


def _head(report: LogDirReport) -> str:
    mode = mode_text(report.salvage, any(p.kafka_kept for p in report.partitions))
    where = {report_kinds.IN_PLACE: "in place", report_kinds.DRY_RUN: "dry run, nothing written"}.get(
        report.target, f"into {report.out_dir}"
    )
    return f"recover log directory {report.path} ({mode}, {where})"


def _log_dir_error(report: LogDirReport) -> list[str]:
    error = report.prediction.error
    if error is None:
        return []
    return [f"Kafka's load of the log directory throws {error.exception}: {error.message} ({error.consequence})"]


def totals_line(report: LogDirReport) -> str:
    """The log directory's totals."""
    t = report.totals
    text = (
        f"{plural(t.partitions, 'partition')} ({t.changed_partitions} changed), "
        f"{plural(t.segments, 'segment')} ({t.changed_segments} changed, {plural(t.lost_bytes, 'byte')} lost); "
        f"Kafka deletes {plural(t.kafka_deleted_segments, 'segment')} ({plural(t.kafka_deleted_bytes, 'byte')})"
    )
    if t.kafka_fails:
        text += f"; the load throws in {plural(t.kafka_fails, 'partition')}"
    return text


def _offset(value: int | None) -> str:
    return "no entry" if value is None else str(value)


def checkpoint_change_line(change: CheckpointChange) -> str:
    """One checkpoint entry OUTDIR holds differently: a high watermark cut to the new end is data lost."""
    text = (f"rewrote {change.checkpoint} {change.topic}-{change.partition}: "
            f"{_offset(change.before)} -> {_offset(change.after)}")
    if change.checkpoint == HIGH_WATERMARK and change.before is not None and (change.after or 0) < change.before:
        text += " (committed offsets up to the old high watermark are not all in OUTDIR)"
    return text


def log_dir_lines(report: LogDirReport, width: int, quiet: bool = False) -> Iterator[str | Text]:
    """Lines of the text report for a log directory; ``quiet``: partitions with nothing to say counted only."""
    yield _head(report)
    yield from _log_dir_error(report)
    healthy = [p for p in report.partitions if quiet and not partition_says_something(p)]
    skipped = {id(p) for p in healthy}  # by identity: a list's ``in`` compares reports field by field
    for partition in report.partitions:
        if id(partition) in skipped:
            continue
        yield f"== {partition.path.name}"
        yield from partition_lines(partition, width, quiet)
        yield summary_line(partition)
    if healthy:
        segments = sum(len(p.segments) for p in healthy)
        yield (f"healthy: {plural(len(healthy), 'partition')} ({plural(segments, 'segment')}) with nothing cut, "
               "not shown (--all lists them)")
    if report.written:
        yield "wrote " + ", ".join(f.path.name for f in report.written)
    for change in report.checkpoint_changes:
        yield checkpoint_change_line(change)
    if report.carried:
        yield "copied as they are: " + ", ".join(f.path.name for f in report.carried)
    if not quiet or any(says_something(o) for p in report.partitions for o in p.segments):
        yield LEGEND  # the maps' key, when a map was drawn
    yield totals_line(report)


def print_log_dir(report: LogDirReport, file: IO[str] | None = None, quiet: bool = False) -> None:
    print_lines(lambda width: log_dir_lines(report, width, quiet), file)


__all__ = ["checkpoint_change_line", "log_dir_lines", "print_log_dir", "totals_line"]
