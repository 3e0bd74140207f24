"""``kseg reindex``: rebuild .index/.timeindex/.txnindex from .log files, as Kafka's recovery does."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from pathlib import Path

import click

from kseg.commands import options
from kseg.commands.paths import in_place_locks, refuse_output_dir
from kseg.commands.unfinished import log_bytes, removed_unless_finished
from kseg.errors import EXIT_OK, EXIT_PROBLEMS
from kseg.ops.discover import check_named_inputs
from kseg.ops.reindex.run import Report, reindex_paths
from kseg.render import progress
from kseg.render.reindex import render_text, report_json
from kseg.render.terminal import shown


@click.command()
@options.paths_argument
@options.output_dir("Write the new indexes here; the input directories are not touched.")
@options.in_place(
    "Replace indexes that differ, keeping each old file as <name>.bak; "
    "refused while a running broker holds the log directory's .lock."
)
@options.dry_run(
    "Write nothing: only compare with the existing indexes (exit 1 if any differ).", aliases=("--check",), name="check"
)
@options.index_interval_bytes
@options.max_batch_bytes
@options.text_or_json
@click.option("-q", "--quiet", is_flag=True,
              help="Show only the segments with a file written, a difference, or bytes recovery would cut.")
@options.progress
def reindex(
    paths: tuple[Path, ...],
    output_dir: Path | None,
    in_place: bool,
    check: bool,
    index_interval_bytes: int,
    max_batch_bytes: int,
    fmt: str,
    quiet: bool,
    show_progress: bool,
) -> None:
    """Rebuild segment indexes exactly as Kafka's LogSegment.recover writes them.

    PATHS are .log segments, partition directories or log directories.
    Without -o, --in-place or --dry-run (also spelt --check), only the
    index files that are missing are created beside each .log; existing
    ones are kept as they are.  Exit 1 when --dry-run
    finds differences or a .log has bytes recovery would truncate; 2 on usage
    errors or unreadable input (what -o OUTDIR got so far is removed); 130 on
    Ctrl-C.

    \b
    Example:
      kseg reindex --check /var/lib/kafka/orders-0
      kseg reindex /var/lib/kafka/orders-0 -o /tmp/rebuilt
      kseg reindex --in-place /var/lib/kafka/orders-0/00000000000000000000.log
    """
    check_named_inputs(paths)
    if output_dir is not None:
        refuse_output_dir(paths, output_dir)
    reports: list[Report] = []
    # each report is printed as its segment is done; a refusal (ReindexRefused) or an unreadable
    # input then ends at the CLI edge: one line, exit 2, and what -o OUTDIR got so far is removed
    with (
        in_place_locks(paths, in_place or (output_dir is None and not check)),  # creating beside .log too
        removed_unless_finished(output_dir),
        progress.watching("reindex", log_bytes(paths), forced=show_progress) as line,
    ):
        found = reindex_paths(
            list(paths), out_dir=output_dir, in_place=in_place, check=check, index_interval_bytes=index_interval_bytes,
            max_batch_bytes=max_batch_bytes,
        )
        if fmt == "json":
            for report in _kept(found, reports):
                _clear(line)
                click.echo(json.dumps(report_json(report), sort_keys=True))
        else:
            for text in render_text(_kept(found, reports), check, quiet):
                _clear(line)
                click.echo(shown(text))  # names from the evidence: escaped on a terminal
    problems = any(r.problems for r in reports) or (check and any(r.differs for r in reports))
    click.get_current_context().exit(EXIT_PROBLEMS if problems else EXIT_OK)


def _clear(line: progress.ProgressLine | None) -> None:
    """Wipe the progress bar before a report line takes its place."""
    if line is not None:
        line.clear()


def _kept(reports: Iterable[Report], into: list[Report]) -> Iterator[Report]:
    """Pass ``reports`` through, keeping each in ``into`` for the exit code."""
    for report in reports:
        into.append(report)
        yield report
