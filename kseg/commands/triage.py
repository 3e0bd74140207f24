"""``kseg triage``: what the broker's next start does to every partition, worst first, and what to run next."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import click

from kseg.commands import options
from kseg.commands.unfinished import log_bytes
from kseg.render import progress
from kseg.render.terminal import terminal_width

if TYPE_CHECKING:
    from kseg.ops.triage.run import TriageResult

FORMATS = ("text", "json", "table")


class _Progress:
    """The log directory being read, on kseg's one progress line (:mod:`kseg.render.progress`).

    With ``sizes`` (each log directory's ``.log`` bytes) the line also shows the bytes of the log
    directories done, the total and the rate.  Built without a line (tests), it draws on stderr at once.
    """

    def __init__(self, line: progress.ProgressLine | None = None, sizes: list[int] | None = None) -> None:
        self.line = line if line is not None else progress.ProgressLine("", 0, delay=0.0)
        self.sizes = sizes

    def __call__(self, done: int, total: int, path: str) -> None:
        label = f"triage: reading log directory {done + 1} of {total}: {path}"
        if self.sizes is None:
            self.line.note(label)
        else:
            self.line.note(label, sum(self.sizes[:done]), sum(self.sizes))

    def clear(self) -> None:
        self.line.clear()



@click.command()
@click.argument("log_dirs", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--all", "show_all", is_flag=True, help="List healthy partitions too (default: only counted).")
@click.option("--format", "fmt", type=click.Choice(FORMATS), default=None,
              help="text = the plain screen; table = rich table; json = one object per partition, then a "
                   "summary.  [default: table on a terminal, text in a pipe]")
@click.option("-q", "--quiet", is_flag=True,
              help="Only what needs attention: no assumption line, no log directory with nothing to say.")
@options.max_batch_bytes
@options.progress
@options.jobs
def triage(log_dirs: tuple[Path, ...], show_all: bool, fmt: str | None, quiet: bool, max_batch_bytes: int,
           show_progress: bool, jobs: int | None) -> None:
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
      kseg triage --format json /var/lib/kafka/data \\
        | jq 'select(.type == "partition" and (.outcome == "truncated" or .outcome == "fails"))'
    (the partitions whose next start cuts data or fails; rebuilt ones lose nothing)
    """
    from kseg.ops.triage.run import triage as run_triage

    bar = progress.wanted(show_progress)
    try:
        sizes = None if bar is None else [log_bytes([p]) for p in log_dirs]
        result = run_triage([str(p) for p in log_dirs], progress=None if bar is None else _Progress(bar, sizes),
                            max_batch_bytes=max_batch_bytes, jobs=options.job_count(jobs))
    finally:
        if bar is not None:
            bar.clear()
    for line in _lines(result, fmt or ("table" if sys.stdout.isatty() else "text"), show_all, quiet):
        click.echo(line)
    click.get_current_context().exit(result.exit_code())


def _lines(result: TriageResult, fmt: str, show_all: bool, quiet: bool = False) -> Iterator[str]:
    from kseg.render import triage as render

    if fmt == "json":
        return render.render_json(result)
    if fmt == "table":
        color = sys.stdout.isatty() and "NO_COLOR" not in os.environ
        return render.render_table(result, show_all, color=color, width=terminal_width(), quiet=quiet)
    return render.render_text(result, show_all, quiet)
