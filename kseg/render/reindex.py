"""Text and JSON Lines for ``kseg reindex`` reports (:mod:`kseg.ops.reindex.run`).

Text, one block per segment::

    <log>: base offset 0, 1351 batches, 97841 bytes
      .index        22 entries  created out/00000000000000000000.index (old: same)
      .timeindex    24 entries  created out/00000000000000000000.timeindex (old: differs at entry 15: ...)
      .txnindex      0 entries  not written: no aborted transactions (old: none)

then one summary line.  ``--check`` prints ``same``/``differs ...``/``missing``
instead of what was written.  JSON Lines: one object per segment.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from kseg.index import AbortedTxn, OffsetEntry, TimeEntry
from kseg.ops.reindex import run as reindex
from kseg.ops.reindex.run import FileOutcome, Report
from kseg.recovery.index_compare import Difference, IndexEntry

KIND_WIDTH = len(".timeindex")


def describe_entry(entry: IndexEntry | None) -> str:
    """One index entry in words; None is the absence of one."""
    match entry:
        case None:
            return "none"
        case OffsetEntry():
            return f"(offset {entry.offset}, position {entry.position})"
        case TimeEntry():
            return f"(timestamp {entry.timestamp}, offset {entry.offset})"
        case AbortedTxn():
            return (
                f"(producer {entry.producer_id}, first offset {entry.first_offset}, "
                f"last offset {entry.last_offset}, last stable offset {entry.last_stable_offset})"
            )


def describe_difference(difference: Difference | None, existed: bool) -> str:
    """How the existing file compares with the rebuild, in a few words."""
    if difference is None:
        return "same" if existed else "no file"
    if difference.old_missing:
        return "missing"
    if difference.preallocated_tail:
        return (
            f"differs: the same {difference.new_entries} entries, then "
            f"{difference.old_entries - difference.old_live} preallocated zero slots (never trimmed)"
        )
    text = (
        f"differs at entry {difference.slot} "
        f"(old has {difference.old_entries}, rebuild {difference.new_entries}): "
        f"old {describe_entry(difference.old)}, rebuilt {describe_entry(difference.new)}"
    )
    if difference.old_trailing_bytes:
        text += f"; old file ends with {difference.old_trailing_bytes} bytes that are not a whole entry"
    return text


def _action(outcome: FileOutcome) -> str:
    """What was done with one index file, in words."""
    match outcome.action:
        case reindex.CREATED:
            return f"created {outcome.target}"
        case reindex.REPLACED:
            return f"replaced {outcome.target} (old kept as {outcome.backup})"
        case reindex.UNCHANGED:
            return "unchanged"
        case reindex.NOT_WRITTEN:
            return "not written: no aborted transactions"
        case reindex.SKIPPED:
            return "not written: recovery fails"
        case reindex.KEPT:
            return "kept: it exists" if outcome.difference is None else "kept: it exists, --in-place would replace it"
        case _:
            return outcome.action


def file_line(outcome: FileOutcome) -> str:
    """One line per index file: entries rebuilt, then what was done and how the old file compared."""
    noun = "entry" if outcome.entries == 1 else "entries"
    head = f"  {'.' + outcome.kind:<{KIND_WIDTH}} {outcome.entries:>6} {noun:<7}  "
    comparison = describe_difference(outcome.difference, outcome.existed)
    if outcome.action == reindex.CHECKED:
        return head + ("same (no file needed)" if comparison == "no file" else comparison)
    return head + f"{_action(outcome)} (old: {comparison})"


def log_lines(report: Report) -> list[str]:
    """What recovery would do to the .log itself, if anything."""
    build = report.build
    if build.failure is not None:
        failure = build.failure
        return [
            (
                f"  .log: Kafka's recovery fails at byte {failure.position}: {failure.exception}: "
                f"{failure.message}; {failure.consequence}"
            )
        ]
    if build.truncated_bytes:
        return [
            (
                f"  .log: recovery would truncate {build.truncated_bytes} bytes at byte {build.valid_bytes} "
                f"({build.stop}: {build.stop_detail})"
            )
        ]
    return []


def report_lines(report: Report) -> list[str]:
    build = report.build
    batches = f"{build.batches} batch" + ("" if build.batches == 1 else "es")
    lines = [f"{report.log}: base offset {build.base_offset}, {batches}, {build.size} bytes"]
    lines += log_lines(report)
    lines += [file_line(outcome) for outcome in report.files]
    return lines


def summary_line(reports: list[Report], check: bool) -> str:
    """The last line: how many segments, and how many need attention."""
    n = len(reports)
    segments = f"{n} segment{'s' if n != 1 else ''}"
    parts = []
    if check:
        differ = sum(r.differs for r in reports)
        parts.append(f"{differ} with differences, {n - differ} same")
    else:
        written = sum(o.action in (reindex.CREATED, reindex.REPLACED) for r in reports for o in r.files)
        parts.append(f"{written} file{'s' if written != 1 else ''} written")
    truncated = sum(r.build.truncated_bytes > 0 and r.build.failure is None for r in reports)
    failing = sum(r.build.failure is not None for r in reports)
    if truncated:
        parts.append(f"{truncated} with bytes recovery would truncate")
    if failing:
        parts.append(f"{failing} on which recovery fails")
    return f"{segments}: " + ", ".join(parts)


def noteworthy(report: Report, check: bool) -> bool:
    """A segment ``-q`` still shows: a file written or differing, bytes recovery would cut, a failing recovery."""
    if report.build.failure is not None or report.build.truncated_bytes > 0:
        return True
    if check:
        return report.differs
    return any(o.action in (reindex.CREATED, reindex.REPLACED) for o in report.files)


def render_text(reports: Iterable[Report], check: bool, quiet: bool = False) -> Iterator[str]:
    """Lines of text for each report as it comes, then the summary; ``quiet``: only noteworthy segments."""
    seen: list[Report] = []
    for report in reports:
        seen.append(report)
        if not quiet or noteworthy(report, check):
            yield from report_lines(report)
    yield summary_line(seen, check)


# -- JSON ----------------------------------------------------------------------


def _path(path: Path | None) -> str | None:
    return None if path is None else str(path)


def entry_json(entry: IndexEntry | None) -> dict[str, int] | None:
    match entry:
        case None:
            return None
        case OffsetEntry():
            return {"offset": entry.offset, "position": entry.position}
        case TimeEntry():
            return {"timestamp": entry.timestamp, "offset": entry.offset}
        case AbortedTxn():
            return {
                "version": entry.version,
                "producer_id": entry.producer_id,
                "first_offset": entry.first_offset,
                "last_offset": entry.last_offset,
                "last_stable_offset": entry.last_stable_offset,
            }


def difference_json(difference: Difference | None) -> dict[str, Any] | None:
    if difference is None:
        return None
    return {
        "slot": difference.slot,
        "old": entry_json(difference.old),
        "new": entry_json(difference.new),
        "old_entries": difference.old_entries,
        "new_entries": difference.new_entries,
        "old_live": difference.old_live,
        "old_trailing_bytes": difference.old_trailing_bytes,
        "old_missing": difference.old_missing,
        "preallocated_tail": difference.preallocated_tail,
    }


def report_json(report: Report) -> dict[str, Any]:
    """One segment's report as a JSON-ready dict."""
    build = report.build
    failure = build.failure
    return {
        "log": str(report.log),
        "mode": report.mode,
        "base_offset": build.base_offset,
        "batches": build.batches,
        "size": build.size,
        "valid_bytes": build.valid_bytes,
        "truncated_bytes": build.truncated_bytes,
        "stop": build.stop,
        "stop_detail": build.stop_detail,
        "failure": None
        if failure is None
        else {
            "exception": failure.exception,
            "message": failure.message,
            "position": failure.position,
            "consequence": failure.consequence,
        },
        "files": [
            {
                "kind": o.kind,
                "entries": o.entries,
                "existing": str(o.existing),
                "existed": o.existed,
                "same": o.same,
                "difference": difference_json(o.difference),
                "action": o.action,
                "target": _path(o.target),
                "backup": _path(o.backup),
            }
            for o in report.files
        ],
    }
