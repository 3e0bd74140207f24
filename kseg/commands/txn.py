"""``kseg txn``: transactions, last stable offsets, hanging transactions and stuck groups, offline."""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Iterator
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING

import click

from kseg.commands import options
from kseg.render.progress import wanted
from kseg.render.terminal import terminal_width

if TYPE_CHECKING:
    from kseg.ops.txn.run import TxnResult

FORMATS = ("text", "json", "table")


@click.command()
@options.paths_argument
@click.option("--transaction-max-timeout-ms", "timeout_ms", type=click.IntRange(min=0), default=900_000,
              show_default=True,
              help="A transaction open longer than this (the broker's transaction.max.timeout.ms), measured "
                   "against --now, is a hanging candidate (KIP-664).")
@click.option("--now", "now", default=None, metavar="TIME",
              help="The clock a transaction's idle time is measured against: ISO-8601 (2026-11-27T03:00:00Z; "
                   "without a zone, UTC), milliseconds since the epoch, or 'newest' (each partition's newest "
                   "batch timestamp).  Default: the wall clock.")
@click.option("--bootstrap-server", "bootstrap", default="BROKER:9092", show_default=True, metavar="HOST:PORT",
              help="Put into the kafka-transactions.sh commands printed.")
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="text", show_default=True,
              help="text = problem partitions first; table = rich table; json = JSON Lines.")
@click.option("-q", "--quiet", is_flag=True, help="Text: list only the partitions with a problem.")
@options.max_batch_bytes
@options.progress
@options.jobs
def txn(paths: tuple[Path, ...], timeout_ms: int, now: str | None, bootstrap: str, fmt: str, quiet: bool,
        max_batch_bytes: int, show_progress: bool, jobs: int | None) -> None:
    """Transactions of every partition in these log or partition directories, and which ones hang.

    PATHS are log directories (the broker's log.dirs) or partition directories.
    For each partition: its producers and transactions (committed, aborted,
    open, hanging), the aborted ranges as the .txnindex holds them, the last
    stable offset the broker computes after loading the log, and where a
    producer .snapshot disagrees with the log.  A transaction open longer than
    the timeout (against --now: the wall clock unless told) hangs (KIP-664) unless __transaction_state, when present, says
    the coordinator still tracks it; for each, the kafka-transactions.sh abort
    command and what it unblocks.  With __consumer_offsets: the groups stuck
    at the LSO.  Never creates or changes a file.

    Exit 0 when no transaction hangs and the next start's verdict has no
    error, 1 when hanging transactions are found or the verdict has an error
    (docs/cli.md: the broker stops, offsets lost, unreadable or not served),
    2 on usage errors or unreadable input.

    \b
    Example:
      kseg txn /var/lib/kafka/data
      kseg txn --now 2026-11-27T03:00:00Z /mnt/copy-of-broker-3/data
      kseg txn --format json /var/lib/kafka/data | jq 'select(.state == "hanging")'
    """
    from kseg.ops.txn.run import total_bytes
    from kseg.ops.txn.run import txn as run_txn

    now_ms = parse_now(now)
    for path in paths:
        if not path.is_dir():
            raise click.UsageError(f"{path}: kseg txn takes log directories or partition directories")
    line = wanted(show_progress)  # bytes of .log replayed; the loading model's own reads are not counted twice
    if line is not None:
        line.label, line.total = "txn", total_bytes(paths)
    try:
        result = run_txn(paths, timeout_ms=timeout_ms, bootstrap=bootstrap,
                         advance=None if line is None else line.advance, max_batch_bytes=max_batch_bytes,
                         now_ms=now_ms, jobs=options.job_count(jobs))
    finally:
        if line is not None:
            line.clear()
    for text in _lines(result, fmt, quiet):
        click.echo(text)
    if fmt != "json":  # the next start's verdict (docs/cli.md, "One verdict"): the exit code says the same
        from kseg.render.terminal import escape_controls

        click.echo(escape_controls(result.verdict.headline()))
    click.get_current_context().exit(result.exit_code())


def parse_now(text: str | None) -> int | None:
    """``--now``: milliseconds since the epoch; None for 'newest'; the wall clock when not given."""
    if text is None:
        return time.time_ns() // 1_000_000
    if text == "newest":
        return None
    if text.isdigit():
        return int(text)
    try:
        when = datetime.fromisoformat(text.replace("Z", "+00:00") if text.endswith("Z") else text)
    except ValueError:
        raise click.BadParameter(f"{text!r} is not ISO-8601, milliseconds or 'newest'", param_hint="'--now'") from None
    if when.tzinfo is None:
        when = when.replace(tzinfo=timezone.utc)
    return int(when.timestamp() * 1000)


def _lines(result: TxnResult, fmt: str, quiet: bool = False) -> Iterator[str]:
    from kseg.render import txn as render

    if fmt == "json":
        return render.render_json(result)
    if fmt == "table":
        color = sys.stdout.isatty() and "NO_COLOR" not in os.environ
        return render.render_table(result, color=color, width=terminal_width())
    return render.render_text(result, quiet)
