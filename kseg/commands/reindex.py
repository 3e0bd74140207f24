"""``kseg reindex``: rebuild .index/.timeindex/.txnindex from .log files, as Kafka's recovery does."""

from __future__ import annotations

import json
from pathlib import Path

import click

from kseg.cli import EXIT_OK, EXIT_PROBLEMS, EXIT_USAGE
from kseg.ops.reindex import ReindexRefused, Report, reindex_paths
from kseg.recovery.indexes import DEFAULT_INDEX_INTERVAL_BYTES
from kseg.render.reindex import render_text, report_json


@click.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path(exists=True, path_type=Path))
@click.option(
    "-o",
    "--output-dir",
    type=click.Path(file_okay=False, path_type=Path),
    help="Write the new indexes here; the input directories are not touched.",
)
@click.option(
    "--in-place", is_flag=True, help="Replace indexes that differ, keeping each old file as <name>.bak."
)
@click.option("--check", is_flag=True, help="Only compare with the existing indexes (exit 1 if any differ).")
@click.option(
    "--index-interval-bytes",
    type=click.IntRange(min=0),
    default=DEFAULT_INDEX_INTERVAL_BYTES,
    show_default=True,
    help="The topic's index.interval.bytes.",
)
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
def reindex(
    paths: tuple[Path, ...],
    output_dir: Path | None,
    in_place: bool,
    check: bool,
    index_interval_bytes: int,
    fmt: str,
) -> None:
    """Rebuild segment indexes exactly as Kafka's LogSegment.recover writes them.

    PATHS are .log segments, partition directories or log directories.
    Without -o, --in-place or --check, indexes are created beside each .log
    only where none exist.  Exit 1 when --check finds differences or a .log
    has bytes recovery would truncate; 2 on usage errors or unreadable input.

    \b
    Example:
      kseg reindex --check /var/lib/kafka/orders-0
      kseg reindex /var/lib/kafka/orders-0 -o /tmp/rebuilt
      kseg reindex --in-place /var/lib/kafka/orders-0/00000000000000000000.log
    """
    reports: list[Report] = []

    def collect():
        for report in reindex_paths(
            list(paths),
            out_dir=output_dir,
            in_place=in_place,
            check=check,
            index_interval_bytes=index_interval_bytes,
        ):
            reports.append(report)
            yield report

    try:
        if fmt == "json":
            for report in collect():
                click.echo(json.dumps(report_json(report), sort_keys=True))
        else:
            for line in render_text(collect(), check):
                click.echo(line)
    except ReindexRefused as refusal:
        click.echo(f"kseg: error: {refusal}", err=True)
        click.get_current_context().exit(EXIT_USAGE)
    except OSError as err:
        click.echo(f"kseg: error: {err.filename or ''}: {err.strerror or err}", err=True)
        click.get_current_context().exit(EXIT_USAGE)
    problems = any(r.problems for r in reports) or (check and any(r.differs for r in reports))
    click.get_current_context().exit(EXIT_PROBLEMS if problems else EXIT_OK)
