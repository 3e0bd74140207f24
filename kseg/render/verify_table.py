"""``kseg verify --format table``: the findings in a rich table, a row per finding group.

One row per group of findings (:mod:`kseg.ops.verify.groups`, the rows the text
report makes), worst first: severity, kind, count, byte position and offset
(the ranges of a group), then the file with the message under it -- the one
wide column, so that names are never folded and a message wraps in the room
left by the short columns, in 80 columns too.  When a run covers several
partition directories (a log directory), each partition gets a bold row --
worst status, findings, bytes, files and batches, findings by severity --
followed by its findings' rows (files then named within the partition),
partitions in the order verify read them.  The footer holds the totals and
the verdict of the text report's summary line.

``--max-findings`` caps the finding rows as it caps the text table (the same,
worst, groups are kept); ``--quiet`` leaves out the partitions with no error
or warning and no row shown, and the info findings (healthy data: a preallocated
index tail), counted in one line.  rich is imported only here.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import TYPE_CHECKING, NamedTuple

from rich.text import Text

from kseg.ops.verify import ERROR, INFO, SEVERITY_RANK, WARNING, FileReport, VerifyResult
from kseg.ops.verify.groups import FindingGroup
from kseg.render.terminal import shown, without_rule_ids
from kseg.render.verify import (
    SEVERITY_STYLE,
    STATUS,
    STATUS_STYLE,
    closing,
    count_text,
    hidden_line,
    is_problem,
    partitions_of,
    quiet_groups,
    short_paths,
)

if TYPE_CHECKING:
    from rich.table import Table

#: the verdict at the end of the footer, by exit code (as the text report's summary line says it)
VERDICT = {0: "clean", 1: "problems found", 2: "unreadable input"}

#: a partition's row label in the ``kind`` column
PARTITION = "partition"


def _range(span: tuple[int, int] | None, single: int | None, count: int, spec: str = "") -> str:
    """``651`` for one finding; ``0-794`` for a group; empty when unknown (bytes with ``spec=","``)."""
    if count == 1:
        return "" if single is None else format(single, spec)
    if span is None:
        return ""
    low, high = format(span[0], spec), format(span[1], spec)
    return low if low == high else f"{low}-{high}"


def _sections(result: VerifyResult, shown: list[FindingGroup]) -> list[tuple[str | None, list[FindingGroup]]]:
    """The shown groups under their partition directory (None: not in one), partitions in reading order.

    With fewer than two partitions there is one section, without a partition row.
    """
    partitions = partitions_of(result)
    if not partitions:
        return [(None, shown)]
    home = {id(r): d for d, reports in partitions.items() for r in reports}
    of_path = {r.path: home.get(id(r)) for r in result.files}
    sections: dict[str | None, list[FindingGroup]] = {d: [] for d in partitions}
    for group in shown:
        sections.setdefault(of_path.get(group.first.path), []).append(group)
    ordered: list[tuple[str | None, list[FindingGroup]]] = [(d, sections[d]) for d in partitions]
    if sections.get(None):
        ordered.append((None, sections[None]))
    return ordered


def _worst(reports: list[FileReport]) -> str | None:
    return min((r.worst for r in reports if r.worst is not None), key=SEVERITY_RANK.__getitem__, default=None)


class _Row(NamedTuple):
    """severity, kind, count, bytes, offsets, then the file (bold) with the message under it."""

    cells: tuple[Text, Text, str, str, str, Text]
    style: str | None = None
    end_section: bool = False


def _named(name: str, message: str) -> Text:
    """A file's name (bold) over what is wrong; both from the evidence, so escaped on a terminal."""
    cell = Text(shown(name), style="bold")
    cell.append("\n" + shown(without_rule_ids(message)))  # rule ids: --format json only
    return cell


def _partition_row(directory: str, reports: list[FileReport], last: bool) -> _Row:
    """A partition's row: worst status, its findings and bytes, then its files, batches and findings by severity."""
    worst = _worst(reports)
    counts = [(ERROR, "error"), (WARNING, "warning"), (INFO, "info")]
    found = [count_text(n, word) for severity, word in counts if (n := sum(r.count(severity) for r in reports))]
    batches = count_text(sum(r.batches or 0 for r in reports), "batch").replace("batchs", "batches")
    message = f"{count_text(len(reports), 'file')}, {batches}" + (
        "; " + ", ".join(found).replace("infos", "info") if found else "")
    total = sum(r.count(s) for r in reports for s in (ERROR, WARNING, INFO))
    size = sum(r.size or 0 for r in reports)
    cells = (Text(STATUS[worst], style=STATUS_STYLE[worst]), Text(PARTITION), f"{total:,}", f"{size:,}", "",
             _named(directory + "/", message))
    return _Row(cells, "bold", last)


def _group_row(group: FindingGroup, name: str, last: bool) -> _Row:
    f = group.first
    cells = (Text(f.severity, style=SEVERITY_STYLE[f.severity]), Text(f.kind, style="bold"), f"{group.count:,}",
             _range(group.positions, f.position, group.count, ","), _range(group.offsets, f.offset, group.count),
             _named(name, f.message if group.count == 1 else f"first: {f.message}"))
    return _Row(cells, None, last)


def _rows(result: VerifyResult, shown: list[FindingGroup], quiet: bool) -> Iterator[_Row]:
    """A row per shown group; with several partitions, each partition's row then its groups' rows.

    Under a partition row a file is named relative to the partition directory.  ``quiet`` leaves out
    the partitions with no error, no warning and no row shown.
    """
    short = short_paths(result)
    partitions = partitions_of(result)
    for directory, members in _sections(result, shown):
        if directory is not None:
            reports = partitions[directory]
            if quiet and not members and not any(map(is_problem, reports)):
                continue
            yield _partition_row(_shown_directory(result, directory), reports, not members)
        for i, group in enumerate(members):
            path = group.first.path
            name = os.path.relpath(path, directory) if directory is not None else short.get(path, path)
            yield _group_row(group, name, directory is not None and i == len(members) - 1)


def _shown_directory(result: VerifyResult, directory: str) -> str:
    """A partition directory as the report names it: relative to the directory all reported files share."""
    try:
        common = os.path.commonpath([os.path.dirname(os.path.abspath(r.path)) for r in result.files])
    except ValueError:
        return directory
    return os.path.relpath(os.path.abspath(directory), common)


def _footer(result: VerifyResult, strict: bool) -> str:
    """``20 files: 7 errors, 6 warnings, 0 info; 29 batches, 651 bytes skipped: problems found``."""
    s = result.summary()
    found = [count_text(s.errors, "error"), count_text(s.warnings, "warning"), f"{s.infos:,} info"]
    read = [count_text(s.batches, "batch").replace("batchs", "batches")]
    if s.records is not None:
        read.append(count_text(s.records, "record"))
    if s.skipped_bytes:
        read.append(f"{s.skipped_bytes:,} bytes skipped")
    return f"{count_text(s.files, 'file')}: {', '.join(found)}; {', '.join(read)}: {closing(result, strict)}"


def _table(result: VerifyResult, strict: bool) -> Table:
    """The empty table: its columns, and its footer with the totals of the whole run."""
    from rich import box
    from rich.table import Table

    s = result.summary()
    worst = _worst(result.files)
    table = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False, header_style="bold", padding=(0, 1, 0, 0),
                  show_footer=True, footer_style="bold")
    table.add_column("severity", no_wrap=True, footer=Text(STATUS[worst], style=STATUS_STYLE[worst]))
    table.add_column("kind", no_wrap=True)
    table.add_column("n", justify="right", no_wrap=True, footer=f"{s.errors + s.warnings + s.infos:,}")
    table.add_column("bytes", justify="right", no_wrap=True, footer=f"{s.bytes:,}")
    table.add_column("offsets", justify="right", no_wrap=True)
    table.add_column("file; what is wrong", ratio=1, overflow="fold", footer=_footer(result, strict))
    return table


def table_lines(
    result: VerifyResult, *, max_findings: int = 20, strict: bool = False, quiet: bool = False,
    color: bool = False, width: int = 100,
) -> Iterator[str]:
    """The table, then a ``... and N more`` line if rows were capped."""
    from rich.console import Console

    groups, hidden = quiet_groups(result, quiet)
    table = _table(result, strict)
    for row in _rows(result, groups[:max_findings], quiet):
        table.add_row(*row.cells, style=row.style, end_section=row.end_section)
    console = Console(no_color=not color, force_terminal=color, highlight=False, width=width)
    with console.capture() as captured:
        console.print(table)
    for line in captured.get().splitlines():
        yield line.rstrip()
    left = sum(g.count for g in groups[max_findings:])
    if left:
        yield f"... and {left:,} more (--format json lists them all)"
    if hidden:
        yield hidden_line(hidden)
    if result.verdict is not None:
        yield shown(result.verdict.headline())


__all__ = ["PARTITION", "table_lines"]
