"""``kseg triage``: what the broker's next start does to every partition, worst first, and what to run next."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import click

from kseg.render.terminal import terminal_width

if TYPE_CHECKING:
    from kseg.ops.triage import TriageResult

FORMATS = ("text", "json", "table")


class _Progress:
    """One line on stderr naming the log directory being read; only when stderr is a terminal."""

    def __init__(self) -> None:
        self.width = 0  # of the line shown, to blank it out

    def __call__(self, done: int, total: int, path: str) -> None:
        line = f"triage: reading log directory {done + 1} of {total}: {path}"
        click.echo("\r" + line.ljust(self.width), err=True, nl=False)
        self.width = max(self.width, len(line))

    def clear(self) -> None:
        if self.width:
            click.echo("\r" + " " * self.width + "\r", err=True, nl=False)




@click.command()
@click.argument("log_dirs", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--all", "show_all", is_flag=True, help="List healthy partitions too (default: only counted).")
@click.option("--format", "fmt", type=click.Choice(FORMATS), default=None,
              help="text = the plain screen; table = rich table; json = one object per partition, then a "
                   "summary.  [default: table on a terminal, text in a pipe]")
def triage(log_dirs: tuple[Path, ...], show_all: bool, fmt: str | None) -> None:
    """What the broker's next start does to every partition of these log directories.

    LOG_DIRS are the broker's log.dirs (one or several).  For each partition:
    the outcome of the next start as Kafka 4.3.0 loads it (clean, rebuilt,
    truncated, fails), what is lost measured against the high watermark and
    the recovery point, why a load fails (Kafka's exception, and whether the
    log directory goes offline or the broker stops), and the read-only kseg
    commands to run next.  Problem partitions first, worst first.  Never
    creates or changes a file.

    Exit 0 when nothing is lost, 1 when data is lost, a partition fails to
    load, a log directory goes offline or the broker stops, 2 on usage errors
    or unreadable input.

    \b
    Example:
      kseg triage /var/lib/kafka/data-1 /var/lib/kafka/data-2
      kseg triage --format json /var/lib/kafka/data | jq 'select(.outcome != "clean")'
    """
    from kseg.ops.triage import triage as run_triage

    progress = _Progress() if sys.stderr.isatty() else None
    try:
        result = run_triage([str(p) for p in log_dirs], progress=progress)
    finally:
        if progress is not None:
            progress.clear()
    for line in _lines(result, fmt or ("table" if sys.stdout.isatty() else "text"), show_all):
        click.echo(line)
    click.get_current_context().exit(result.exit_code())


def _lines(result: TriageResult, fmt: str, show_all: bool) -> Iterator[str]:
    from kseg.render import triage as render

    if fmt == "json":
        return render.render_json(result)
    if fmt == "table":
        color = sys.stdout.isatty() and "NO_COLOR" not in os.environ
        return render.render_table(result, show_all, color=color, width=terminal_width())
    return render.render_text(result, show_all)
