"""``kseg convert``: rewrite segments in another record format (magic) and/or codec, as Kafka converts."""

from __future__ import annotations

import json
from pathlib import Path

import click

from kseg.commands import options
from kseg.commands.paths import marked_unfinished, refuse_output_dir
from kseg.commands.unfinished import log_bytes
from kseg.errors import EXIT_OK, EXIT_PROBLEMS
from kseg.format.model import CODEC_NAMES
from kseg.ops.convert.run import DEFAULT_MAX_MESSAGE_BYTES, Target, convert_path
from kseg.ops.discover import check_named_inputs
from kseg.render import progress
from kseg.render.convert import render_text, report_json
from kseg.render.terminal import shown


@click.command()
@options.path_argument
@options.output_dir(
    "Where the converted segments and indexes go (created if needed; not the input's directory).", required=True
)
@click.option("--to-magic", required=True, type=click.IntRange(0, 2), help="Target record format: 0, 1 or 2.")
@click.option(
    "--compression", type=click.Choice(CODEC_NAMES),
    help="Target codec [default: each batch keeps its own, as Kafka does].",
)
@click.option("--level", type=int, help="Compression level (gzip 1-9, lz4 1-17, zstd -131072..22).")
@click.option(
    "--max-message-bytes", type=click.IntRange(min=1), default=DEFAULT_MAX_MESSAGE_BYTES, show_default=True,
    help="Largest output batch (the topic config max.message.bytes); a single larger record goes alone.",
)
@click.option(
    "--drop-control", is_flag=True, help="Below magic 2: drop control batches and transactional flags."
)
@click.option("--drop-headers", is_flag=True, help="Below magic 2: drop record headers.")
@click.option("--skip-corrupt", is_flag=True, help="Skip damaged batches and bytes, report them, exit 1.")
@options.index_interval_bytes
@options.max_batch_bytes
@options.text_or_json
@click.option("-q", "--quiet", is_flag=True,
              help="Show only the segments with something dropped, oversized or skipped, and the summary.")
@options.progress
def convert(
    path: Path,
    output_dir: Path,
    to_magic: int,
    compression: str | None,
    level: int | None,
    max_message_bytes: int,
    drop_control: bool,
    drop_headers: bool,
    skip_corrupt: bool,
    index_interval_bytes: int,
    max_batch_bytes: int,
    fmt: str,
    quiet: bool,
    show_progress: bool,
) -> None:
    """Convert a segment or a partition to another magic and/or codec, the way Kafka converts.

    PATH is a .log segment or a partition directory; each segment is written
    under its own name in OUTDIR with a rebuilt .index/.timeindex.  Offsets
    are kept exactly.  What the target cannot hold (control batches,
    transactions and headers below magic 2) is refused unless a --drop-*
    flag allows it, and every drop is counted in the report.  Exit 0
    converted, 1 damaged input skipped (--skip-corrupt), 2 usage errors,
    refusals or damaged input (nothing is left in OUTDIR), 130 on Ctrl-C
    (likewise).

    \b
    Example:
      kseg convert old-0/00000000000000000000.log -o new-0 --to-magic 2 --compression zstd
      kseg convert orders-0 -o orders-0.v1 --to-magic 1 --drop-headers --format json
    """
    codec = None if compression is None else CODEC_NAMES.index(compression)
    target = Target(to_magic, codec, level, max_message_bytes, drop_control, drop_headers, max_batch_bytes)
    check_named_inputs([path])
    refuse_output_dir([path], output_dir)
    # a refusal (ConvertRefused) or an unreadable input ends at the CLI edge: one line, exit 2,
    # and what OUTDIR got so far is removed; OUTDIR holds KSEG-UNFINISHED until the run is done
    with (
        marked_unfinished(output_dir),
        progress.watching("convert", log_bytes([path]), forced=show_progress),
    ):
        report = convert_path(
            path, output_dir, target, skip_corrupt=skip_corrupt, index_interval_bytes=index_interval_bytes
        )
    if fmt == "json":
        for obj in report_json(report):
            click.echo(json.dumps(obj, sort_keys=True))
    else:
        for line in render_text(report, quiet):
            click.echo(shown(line))  # names from the evidence: escaped on a terminal
    click.get_current_context().exit(EXIT_PROBLEMS if report.skipped_any else EXIT_OK)
