"""Text and JSON Lines for ``kseg verify`` results (:mod:`kseg.ops.verify`).

Text: one line per file with what was read and its findings counted by kind,
then -- when there are findings -- a table of them, worst first, capped, and
a closing summary line::

    ok     data/orders-0/00000000000000000000.log  log, 1,351 batches, 97,841 bytes
    ERROR  data/orders-0/00000000000000000042.log  log, 11 batches, 4,331 bytes, 390 skipped  [crc 1]

JSON Lines: per file a ``type: "file"`` object, then one object per finding
of that file (``type: "finding"``); last one ``type: "summary"`` object with
the totals.

rich is imported only to draw the findings table: a clean run prints plain
lines, which keeps ``kseg verify`` of a clean segment quick to start.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator

from kseg.ops.verify import ERROR, INFO, SEVERITY_RANK, WARNING, FileReport, VerifyResult
from kseg.ops.verify.groups import FindingGroup, group_findings
from kseg.render.terminal import escape_controls, shown, terminal_width, without_rule_ids

STATUS = {None: "ok", ERROR: "ERROR", WARNING: "WARN", INFO: "info"}
STATUS_STYLE = {None: "green", ERROR: "red", WARNING: "yellow", INFO: "cyan"}
SEVERITY_STYLE = {ERROR: "bold red", WARNING: "yellow", INFO: "cyan"}


# -- JSON Lines ---------------------------------------------------------------------------------


def file_json(report: FileReport) -> dict[str, object]:
    return {
        "type": "file",
        "path": report.path,
        "kind": report.kind,
        "size": report.size,
        "batches": report.batches,
        "records": report.records,
        "entries": report.entries,
        "skipped_bytes": report.skipped_bytes,
        "first_offset": report.first_offset,
        "last_offset": report.last_offset,
        "errors": report.count(ERROR),
        "warnings": report.count(WARNING),
        "infos": report.count(INFO),
    }


def is_problem(report: FileReport) -> bool:
    """A file ``--quiet`` lists: one with an error or a warning (info alone is not a problem)."""
    return report.worst in (ERROR, WARNING)


def render_json(result: VerifyResult, strict: bool = False, quiet: bool = False) -> Iterator[str]:
    """Per file, in file order: its ``file`` line, then one line per finding; then the summary line.

    The summary holds totals only: a log directory of thousands of files would otherwise end with
    one line of hundreds of kilobytes, and a stream reader sees each file's line as it comes.
    ``quiet`` leaves out the ``file`` lines of files without an error or a warning.
    """
    for report in result.files:
        if not quiet or is_problem(report):
            yield json.dumps(file_json(report))
        for finding in report.findings:
            yield json.dumps(finding.as_dict())
    summary = result.summary().as_dict()
    if result.verdict is not None:
        summary["verdict"] = result.verdict.as_json()
    summary["exit_code"] = result.exit_code(strict)
    yield json.dumps(summary)


# -- text ---------------------------------------------------------------------------------------


def count_text(n: int, word: str) -> str:
    return f"{n:,} {word}" + ("" if n == 1 else "s")


def describe_file(report: FileReport) -> str:
    """What was read, in a few words: ``log, 12 batches, 4,331 bytes``."""
    if report.kind == "missing":
        return "missing"
    parts = [report.kind]
    if report.batches is not None:
        parts.append(count_text(report.batches, "batch").replace("batchs", "batches"))
    if report.records is not None:
        parts.append(count_text(report.records, "record"))
    if report.entries is not None:
        parts.append(count_text(report.entries, "entry").replace("entrys", "entries"))
    if report.size is not None:
        parts.append(count_text(report.size, "byte"))
    if report.skipped_bytes:
        parts.append(f"{report.skipped_bytes:,} skipped")
    return ", ".join(parts)


def file_line(report: FileReport, style: bool = False) -> str:
    """The per-file line: status, path, what was read, and findings counted by kind."""
    import click

    worst = report.worst
    status = f"{STATUS[worst]:<5}"
    if style:
        status = click.style(status, fg=STATUS_STYLE[worst], bold=worst == ERROR)
    kinds = report.kinds
    counts = "  [" + ", ".join(f"{kind} {n}" for kind, n in sorted(kinds.items())) + "]" if kinds else ""
    return f"{status}  {shown(report.path)}  {describe_file(report)}{counts}"


def partition_line(directory: str, reports: list[FileReport], style: bool = False) -> str:
    """One partition directory's line: its worst status, files and bytes read, findings by severity."""
    import click

    worst = min((r.worst for r in reports if r.worst is not None), key=SEVERITY_RANK.__getitem__, default=None)
    status = f"{STATUS[worst]:<5}"
    if style:
        status = click.style(status, fg=STATUS_STYLE[worst], bold=worst == ERROR)
    batches = sum(r.batches or 0 for r in reports)
    read = [count_text(len(reports), "file"), count_text(batches, "batch").replace("batchs", "batches"),
            count_text(sum(r.size or 0 for r in reports), "byte")]
    found = [count_text(n, word) for word, n in (
        ("error", sum(r.count(ERROR) for r in reports)), ("warning", sum(r.count(WARNING) for r in reports)),
        ("info", sum(r.count(INFO) for r in reports))) if n]
    counts = "  [" + ", ".join(found).replace("infos", "info") + "]" if found else ""
    return f"{status}  {shown(directory)}/  partition, {', '.join(read)}{counts}"


def partitions_of(result: VerifyResult) -> dict[str, list[FileReport]]:
    """Each partition directory's reports, for a run over several (a log directory); else nothing."""
    if len(result.partitions) < 2:
        return {}
    out: dict[str, list[FileReport]] = {os.path.normpath(d): [] for d in result.partitions}
    for report in result.files:
        directory = os.path.normpath(report.path if report.kind == "directory" else os.path.dirname(report.path))
        if directory in out:
            out[directory].append(report)
    return out


def file_lines(result: VerifyResult, *, quiet: bool = False, style: bool = False) -> Iterator[str]:
    """The per-file lines; for several partitions, each one's line after its last file's.

    ``quiet`` keeps only the files (and partitions) with an error or a warning.
    """
    partitions = partitions_of(result)
    last = {id(reports[-1]): (d, reports) for d, reports in partitions.items() if reports}
    for report in result.files:
        if not quiet or is_problem(report):
            yield file_line(report, style)
        if id(report) in last:
            directory, reports = last[id(report)]
            if not quiet or any(map(is_problem, reports)):
                yield partition_line(directory, reports, style)


def summary_line(result: VerifyResult, strict: bool = False) -> str:
    s = result.summary()
    totals = [count_text(s.errors, "error"), count_text(s.warnings, "warning"), f"{s.infos:,} info"]
    read = [count_text(s.files, "file"), count_text(s.bytes, "byte"), count_text(s.batches, "batch").replace("batchs", "batches")]
    if s.records is not None:
        read.append(count_text(s.records, "record"))
    if s.skipped_bytes:
        read.append(f"{s.skipped_bytes:,} bytes skipped")
    return f"{', '.join(totals)} in {', '.join(read)}: {closing(result, strict)}"


def closing(result: VerifyResult, strict: bool = False) -> str:
    """The summary's last words; they follow the exit code (docs/cli.md, "One verdict")."""
    code = result.exit_code(strict)
    if code == 0 and result.summary().errors:
        return "nothing lost: the next start repairs what is found"
    return {0: "clean", 1: "problems found", 2: "unreadable input"}[code]


def short_paths(result: VerifyResult) -> dict[str, str]:
    """Paths relative to the directory all reported files share (just the names for one directory)."""
    paths = [report.path for report in result.files]
    try:
        common = os.path.commonpath([os.path.dirname(os.path.abspath(p)) for p in paths]) if paths else ""
    except ValueError:
        common = ""
    return {p: os.path.relpath(os.path.abspath(p), common) if common else p for p in paths}


def render_text(
    result: VerifyResult, *, max_findings: int = 20, strict: bool = False, color: bool = False, quiet: bool = False
) -> None:
    """Print the per-file (and per-partition) lines, the findings table and the summary to stdout (click's)."""
    import click

    for line in file_lines(result, quiet=quiet, style=color):
        click.echo(line, color=color)
    groups, hidden = quiet_groups(result, quiet)
    shown = groups[:max_findings]
    if shown:
        click.echo("")
        _print_table(result, shown, color)
    left = sum(g.count for g in groups[max_findings:])
    if left:
        click.echo(f"... and {left:,} more (--format json lists them all)")
    if hidden:
        click.echo(hidden_line(hidden))
    click.echo(summary_line(result, strict))
    if result.verdict is not None:
        click.echo(escape_controls(result.verdict.headline()))


def quiet_groups(result: VerifyResult, quiet: bool) -> tuple[list[FindingGroup], int]:
    """The finding groups to show, worst first, and how many info findings ``--quiet`` leaves out.

    Info findings (a preallocated index tail a crash leaves, a leftover Kafka ignores) are facts about
    healthy data: ``-q`` shows errors and warnings only, and says how many it left out.
    """
    groups = group_findings(result.findings(), {r.path: i for i, r in enumerate(result.files)})
    if not quiet:
        return groups, 0
    hidden = sum(g.count for g in groups if g.first.severity == INFO)
    return [g for g in groups if g.first.severity != INFO], hidden


def hidden_line(hidden: int) -> str:
    return f"{hidden:,} info finding{'' if hidden == 1 else 's'} not shown (-q; --format json lists them)"


def _where(group: FindingGroup) -> str:
    """Byte position and offset of one finding, or the count and ranges of a group."""
    f = group.first
    if group.count == 1:
        byte = "" if f.position is None else f"  byte {f.position:,}"
        return byte + ("" if f.offset is None else f"  offset {f.offset}")
    text = f"  {group.count:,} alike"
    if group.positions is not None:
        text += f"  bytes {group.positions[0]:,} to {group.positions[1]:,}"
    if group.offsets is not None:
        text += f"  offsets {group.offsets[0]} to {group.offsets[1]}"
    return text


def _print_table(result: VerifyResult, groups: list[FindingGroup], color: bool) -> None:
    """The findings, worst first: severity, then kind, file, byte position and offset above the message.

    A group of alike findings (:mod:`kseg.ops.verify.groups`) is one row: its
    count and ranges, then the first one's message.
    """
    import click
    from rich import box
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    short = short_paths(result)
    table = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False, header_style="bold", padding=(0, 1, 0, 0))
    table.add_column("severity", no_wrap=True)
    table.add_column("finding: kind, file, byte position, offset; what is wrong", ratio=1)
    for group in groups:
        f = group.first
        cell = Text()
        cell.append(f.kind, style="bold")
        cell.append(f"  {shown(short.get(f.path, f.path))}{_where(group)}")  # names and messages: from the evidence
        message = without_rule_ids(f.message if group.count == 1 else f"first: {f.message}")  # ids: JSON only
        cell.append("\n" + shown(message))
        table.add_row(Text(f.severity, style=SEVERITY_STYLE[f.severity]), cell)
    console = Console(file=sys.stdout, no_color=not color, force_terminal=color, highlight=False, width=terminal_width())
    with console.capture() as captured:
        console.print(table)
    for line in captured.get().splitlines():
        click.echo(line.rstrip(), color=color)


