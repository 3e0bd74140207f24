"""``kseg recover``: keep what Kafka's recovery keeps (or every intact batch), without destroying evidence."""

from __future__ import annotations

import json
from pathlib import Path

import click

from kseg.commands import options
from kseg.commands.paths import in_place_locks, marked_unfinished, refuse_output_dir
from kseg.commands.unfinished import log_bytes
from kseg.errors import EXIT_OK, EXIT_PROBLEMS
from kseg.ops.discover import check_named_inputs
from kseg.ops.recover.report import LogDirReport, Report
from kseg.ops.recover.run import recover_path
from kseg.recovery.verdict.table import Verdict
from kseg.render import progress
from kseg.render.recover import print_report
from kseg.render.recover_json import json_lines
from kseg.render.recover_logdir import print_log_dir
from kseg.render.terminal import escape_controls


@click.command()
@options.path_argument
@options.output_dir("Write the recovered segment(s) here, with rebuilt indexes; the input is not touched.")
@options.in_place(
    "Rewrite segments that change, keeping each original as <name>.bak; never deletes a segment. "
    "Refused while a running broker holds the log directory's .lock."
)
@options.dry_run("Write nothing: only report what would be kept and lost; the exit code is the next start's "
                 "verdict (docs/cli.md).")
@click.option(
    "--salvage",
    is_flag=True,
    help="Also keep every intact batch after the damage (offsets strictly increasing).",
)
@options.index_interval_bytes
@options.max_batch_bytes
@options.text_or_json
@click.option("-q", "--quiet", is_flag=True,
              help="Show only the segments and partitions with something cut, refused or deleted (the default "
                   "of --dry-run); the others are counted.")
@click.option("--all", "show_all", is_flag=True, help="Show every segment, healthy ones too.")
@options.progress
@options.jobs
def recover(
    path: Path,
    output_dir: Path | None,
    in_place: bool,
    dry_run: bool,
    salvage: bool,
    index_interval_bytes: int,
    max_batch_bytes: int,
    fmt: str,
    quiet: bool,
    show_all: bool,
    show_progress: bool,
    jobs: int | None,
) -> None:
    """Keep what Kafka's recovery keeps of a segment, or every intact batch.

    PATH is a .log segment, a partition directory (its segments are
    recovered in order) or a log directory (every partition; with -o, OUTDIR
    is a log directory Kafka loads without changing a file).  What Kafka does
    at the next start comes from kseg's model of Kafka 4.3.0's log loading.
    By default -o OUTDIR gets exactly what Kafka's next start keeps (a
    single .log: Kafka's valid prefix); with --salvage every segment and
    every intact batch after the damage is kept too.  Checkpoint entries
    OUTDIR rewrites are reported.  Give one of -o OUTDIR, --in-place or
    --dry-run.  Exit 0 when nothing had to be cut, 1 when something was
    (--dry-run: 1 when the next start's verdict has an error -- the broker
    stops, a log dir goes offline, offsets are lost, unreadable or not
    served), 2 on usage errors or unreadable input (an OUTDIR this run
    started is removed), 130 on Ctrl-C.  --dry-run shows only the segments
    with something to say and counts the healthy ones (--all shows them; -q
    does the same with -o and --in-place).

    \b
    Example:
      kseg recover /var/lib/kafka/orders-0 -o /tmp/orders-0
      kseg recover --salvage 00000000000000000000.log -o /tmp/salvaged
      kseg recover --dry-run --format json /var/lib/kafka/orders-0
      kseg recover /var/lib/kafka -o /srv/recovered-logdir
    """
    if quiet and show_all:  # before anything is read or written
        raise click.UsageError("-q and --all exclude each other")
    check_named_inputs([path])
    if output_dir is not None:
        refuse_output_dir([path], output_dir)
    # a refusal (RecoverRefused) or an unreadable input ends at the CLI edge: one line, exit 2,
    # and what -o OUTDIR got so far is removed; OUTDIR holds KSEG-UNFINISHED until the run is done
    with (
        in_place_locks([path], in_place),
        marked_unfinished(output_dir),
        progress.watching("recover", log_bytes([path]), forced=show_progress),
    ):
        report = recover_path(path, out_dir=output_dir, in_place=in_place, dry_run=dry_run, salvage=salvage,
                              index_interval_bytes=index_interval_bytes, max_batch_bytes=max_batch_bytes,
                              jobs=options.job_count(jobs))
    verdict = report.verdict(options.job_count(jobs)) if dry_run else None
    # --dry-run answers what the next start does: the one verdict's exit code (docs/cli.md)
    code = verdict.exit_code() if verdict is not None else (EXIT_PROBLEMS if report.changed else EXIT_OK)
    _print(report, fmt, code, quiet or (dry_run and not show_all), verdict)
    click.get_current_context().exit(code)


def _print(report: Report | LogDirReport, fmt: str, code: int, quiet: bool, verdict: Verdict | None) -> None:
    """The report of a log directory or of a partition / segment, as JSON Lines (always whole) or text;
    with --dry-run the verdict (the summary's ``verdict``, or the last text line)."""
    if fmt == "json":
        for obj in json_lines(report, code):
            if verdict is not None and obj["type"] == "summary":
                obj["verdict"] = verdict.as_json()
            click.echo(json.dumps(obj, sort_keys=True))
        return
    if isinstance(report, LogDirReport):
        print_log_dir(report, quiet=quiet)
    else:
        print_report(report, quiet=quiet)
    if verdict is not None:
        click.echo(escape_controls(verdict.headline()))
