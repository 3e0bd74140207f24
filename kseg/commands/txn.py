"""``kseg txn``: transactions, last stable offsets, hanging transactions and stuck groups, offline."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
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
                   "against the partition's newest timestamp, is a hanging candidate (KIP-664).")
@click.option("--bootstrap-server", "bootstrap", default="BROKER:9092", show_default=True, metavar="HOST:PORT",
              help="Put into the kafka-transactions.sh commands printed.")
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="text", show_default=True,
              help="text = problem partitions first; table = rich table; json = JSON Lines.")
@options.max_batch_bytes
@options.progress
@options.jobs
def txn(paths: tuple[Path, ...], timeout_ms: int, bootstrap: str, fmt: str, max_batch_bytes: int,
        show_progress: bool, jobs: int | None) -> None:
    """Transactions of every partition in these log or partition directories, and which ones hang.

    PATHS are log directories (the broker's log.dirs) or partition directories.
    For each partition: its producers and transactions (committed, aborted,
    open, hanging), the aborted ranges as the .txnindex holds them, the last
    stable offset the broker computes after loading the log, and where a
    producer .snapshot disagrees with the log.  A transaction open longer than
    the timeout hangs (KIP-664) unless __transaction_state, when present, says
    the coordinator still tracks it; for each, the kafka-transactions.sh abort
    command and what it unblocks.  With __consumer_offsets: the groups stuck
    at the LSO.  Never creates or changes a file.

    Exit 0 when no transaction hangs, 1 when hanging transactions are found,
    2 on usage errors or unreadable input.

    \b
    Example:
      kseg txn /var/lib/kafka/data
      kseg txn --format json /var/lib/kafka/data | jq 'select(.state == "hanging")'
    """
    from kseg.ops.txn.run import total_bytes
    from kseg.ops.txn.run import txn as run_txn

    for path in paths:
        if not path.is_dir():
            raise click.UsageError(f"{path}: kseg txn takes log directories or partition directories")
    line = wanted(show_progress)  # bytes of .log replayed; the loading model's own reads are not counted twice
    if line is not None:
        line.label, line.total = "txn", total_bytes(paths)
    try:
        result = run_txn(paths, timeout_ms=timeout_ms, bootstrap=bootstrap,
                         advance=None if line is None else line.advance, max_batch_bytes=max_batch_bytes,
                         jobs=options.job_count(jobs))
    finally:
        if line is not None:
            line.clear()
    for text in _lines(result, fmt):
        click.echo(text)
    click.get_current_context().exit(result.exit_code())


def _lines(result: TxnResult, fmt: str) -> Iterator[str]:
    from kseg.render import txn as render

    if fmt == "json":
        return render.render_json(result)
    if fmt == "table":
        color = sys.stdout.isatty() and "NO_COLOR" not in os.environ
        return render.render_table(result, color=color, width=terminal_width())
    return render.render_text(result)
