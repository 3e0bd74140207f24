"""``kseg verify``: check segments, indexes and partition directories; report every problem, located."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

import click

from kseg.commands import options

if TYPE_CHECKING:
    from kseg.ops.verify import VerifyResult


class _Progress:
    """Progress on stderr for long runs, only when stderr is a terminal."""

    DELAY = 1.0  # seconds before the first report: short runs stay silent
    EVERY = 0.25

    def __init__(self) -> None:
        self.start = time.monotonic()
        self.last = 0.0
        self.shown = False

    def __call__(self, done: int, total: int) -> None:
        now = time.monotonic()
        if now - self.start < self.DELAY or now - self.last < self.EVERY or not total:
            return
        self.last = now
        self.shown = True
        rate = done / (now - self.start) / 1e9
        click.echo(f"\rverify: {done / total:4.0%} of {total / 2**30:.2f} GiB ({rate:.1f} GB/s)", err=True, nl=False)

    def clear(self) -> None:
        if self.shown:
            click.echo("\r" + " " * 60 + "\r", err=True, nl=False)


@click.command()
@options.paths_argument
@options.deep
@options.strict
@options.text_or_json
@click.option("-j", "--jobs", type=click.IntRange(min=1), default=None, help="Worker processes [default: all cores].")
@options.max_findings
def verify(paths: tuple[Path, ...], deep: bool, strict: bool, fmt: str, jobs: int | None, max_findings: int) -> None:
    """Check segment files, partition directories or log directories; report every problem.

    Goes on past damage (resynchronising on the next valid batch), locates each
    finding at the byte position of the batch or index entry at fault, and says
    what Kafka would do.  Never creates, locks or modifies a file.

    Exit 0 when clean, 1 when errors are found (warnings too with --strict),
    2 on usage errors or unreadable input.

    \b
    Example:
      kseg verify /var/lib/kafka/orders-0
      kseg verify --deep --format json 00000000000000000000.log | jq .
    """
    from kseg.ops.verify import verify_paths

    progress = _Progress() if sys.stderr.isatty() else None
    try:
        result = verify_paths(list(paths), deep=deep, jobs=jobs, progress=progress)
    finally:
        if progress is not None:
            progress.clear()
    if not result.files:
        raise click.UsageError(f"nothing to verify: no Kafka files in {', '.join(map(str, paths))}")
    show_result(result, fmt, strict=strict, max_findings=max_findings)


def show_result(result: VerifyResult, fmt: str, *, strict: bool, max_findings: int) -> None:
    """Print a verify result and exit with its code: shared by ``kseg verify`` and ``kseg spark verify``."""
    if fmt == "json":
        from kseg.render.verify import render_json

        for line in render_json(result, strict):
            click.echo(line)
    else:
        from kseg.render.verify import render_text

        color = sys.stdout.isatty() and "NO_COLOR" not in os.environ
        render_text(result, max_findings=max_findings, strict=strict, color=color)
    click.get_current_context().exit(result.exit_code(strict))
