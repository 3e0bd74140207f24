"""``kseg diff``: compare the replicas of one partition offline, and what each choice of leader throws away."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import click

from kseg.commands import options

if TYPE_CHECKING:
    from kseg.ops.diff.run import DiffResult


@click.command()
@click.argument("replicas", nargs=-1, required=True, type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--partition", metavar="TOPIC-PARTITION",
              help="The REPLICAS are log directories; compare this partition of each.")
@click.option("--export-unique", "export_dir", type=click.Path(path_type=Path), metavar="DIR",
              help="Write the batches only one replica holds, byte for byte, as segments under DIR (a new directory).")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True,
              help="text = lines; json = JSON Lines (docs/diff.md).")
@options.max_batch_bytes
def diff(replicas: tuple[Path, ...], partition: str | None, export_dir: Path | None, fmt: str,
         max_batch_bytes: int) -> None:
    """Compare the replicas of a partition; what every choice of leader throws away.

    REPLICAS are two or more partition directories of one partition (or log
    directories with --partition).  Each is loaded as Kafka 4.3's next start
    loads it; for every candidate leader, each other replica's truncation is
    replayed as the follower fetcher does it (leader epochs), and the offsets
    it throws away are counted below and above its high watermark.  Batches
    are compared range by range: identical, same records in other batches,
    different records, or only on one replica.  With __consumer_offsets in
    the log directories: the groups each choice of leader affects.  Reads
    only; --export-unique is the one thing written.

    Exit 0 when the replicas hold the same batches, 1 when they diverge,
    2 on usage errors or unreadable input.

    \b
    Example:
      kseg diff broker1/data/orders-0 broker2/data/orders-0 broker3/data/orders-0
      kseg diff --partition orders-0 --format json broker1/data broker2/data
    """
    from kseg.ops.diff.run import diff as run_diff

    if len(replicas) < 2:
        raise click.UsageError("kseg diff compares two or more replicas")
    result = run_diff([str(r) for r in replicas], partition=partition, max_batch_bytes=max_batch_bytes)
    exports = None
    if export_dir is not None:
        from kseg.ops.diff.export import export_unique

        exports = export_unique(result, export_dir)
    for text in _lines(result, fmt, exports):
        click.echo(text)
    click.get_current_context().exit(result.exit_code())


def _lines(result: DiffResult, fmt: str, exports: list[dict[str, object]] | None) -> Iterator[str]:
    from kseg.render import diff as render

    return render.render_json(result, exports) if fmt == "json" else render.render_text(result, exports)
