"""``kseg verify``: check segments, indexes and partition directories; report every problem, located."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from kseg.commands import options
from kseg.ops.discover import check_named_inputs
from kseg.render.progress import wanted

if TYPE_CHECKING:
    from kseg.ops.verify import VerifyResult


@click.command()
@options.paths_argument
@options.deep
@options.max_batch_bytes
@options.strict
@options.report_format
@click.option("-j", "--jobs", type=click.IntRange(min=1), default=None, help="Worker processes [default: all cores].")
@options.max_findings
@options.quiet
@options.progress
def verify(
    paths: tuple[Path, ...],
    deep: bool,
    max_batch_bytes: int,
    strict: bool,
    fmt: str,
    jobs: int | None,
    max_findings: int,
    quiet: bool,
    show_progress: bool,
) -> None:
    """Check segment files, partition directories or log directories; report every problem.

    Goes on past damage (resynchronising on the next valid batch), locates each
    finding at the byte position of the batch or index entry at fault, and says
    what Kafka would do.  Never creates, locks or modifies a file.

    Exit 0 when clean, 1 when errors are found (warnings too with --strict),
    2 on usage errors, unreadable input or a named file that is not a Kafka
    file, 130 on Ctrl-C.

    \b
    Example:
      kseg verify /var/lib/kafka/orders-0
      kseg verify --deep --format json 00000000000000000000.log | jq .
    """
    from kseg.ops.verify import verify_paths

    check_named_inputs(paths)
    line = wanted(show_progress, label="verify")
    try:
        result = verify_paths(list(paths), deep=deep, jobs=jobs, progress=None if line is None else line.update,
                              max_batch_bytes=max_batch_bytes)
    finally:
        if line is not None:
            line.clear()
    if not result.files:
        raise click.UsageError(f"nothing to verify: no Kafka files in {', '.join(map(str, paths))}")
    show_result(result, fmt, strict=strict, max_findings=max_findings, quiet=quiet)


def show_result(result: VerifyResult, fmt: str, *, strict: bool, max_findings: int, quiet: bool = False) -> None:
    """Print a verify result and exit with its code: shared by ``kseg verify`` and ``kseg spark verify``."""
    color = sys.stdout.isatty() and "NO_COLOR" not in os.environ
    if fmt == "json":
        from kseg.render.verify import render_json

        for line in render_json(result, strict, quiet):
            click.echo(line)
    elif fmt == "table":
        from kseg.render.terminal import terminal_width
        from kseg.render.verify_table import table_lines

        for line in table_lines(result, max_findings=max_findings, strict=strict, quiet=quiet, color=color,
                                width=terminal_width()):
            click.echo(line, color=color)
    else:
        from kseg.render.verify import render_text

        render_text(result, max_findings=max_findings, strict=strict, color=color, quiet=quiet)
    _unreadable_line(result)
    click.get_current_context().exit(result.exit_code(strict))


def _unreadable_line(result: VerifyResult) -> None:
    """Exit 2 for unreadable input comes with the one error line on stderr, naming the (first) file."""
    from kseg.render.terminal import escape_controls

    unreadable = [f for f in result.findings() if f.kind == "unreadable"]
    if unreadable:
        more = len({f.path for f in unreadable}) - 1
        also = f" (and {more} more unreadable file{'s' if more > 1 else ''})" if more else ""
        first = unreadable[0]
        click.echo(f"kseg: error: {escape_controls(f'{first.path}: {first.message}{also}')}", err=True)
