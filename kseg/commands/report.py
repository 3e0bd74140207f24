"""``kseg report``: one self-contained HTML page of what ``kseg stats`` finds (and verify/triage's verdicts)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from kseg.commands import options
from kseg.commands.stats import config_options, run_stats


def _verdicts(paths: tuple[Path, ...], jobs: int | None):
    """verify of every path, and triage when every path is a log directory (triage reads only those)."""
    from kseg.errors import KsegError
    from kseg.ops.triage.run import triage
    from kseg.ops.verify import verify_paths

    checked = verify_paths(list(paths), jobs=jobs)
    try:
        predicted, skipped = triage(list(paths)), None
    except KsegError as err:  # a partition directory, or a log directory the model cannot judge
        predicted, skipped = None, f"not run: {err}"
    return checked, predicted, skipped


@click.command()
@options.paths_argument
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path), required=True,
              help="The HTML file to write (replaced if it exists).")
@click.option("--with-verify", is_flag=True, help="Also run verify and triage and show their verdicts.")
@options.text_or_json
@config_options
def report(paths: tuple[Path, ...], output: Path, with_verify: bool, fmt: str, **kw: Any) -> None:
    """Write one self-contained HTML page: treemap, time, formats, producers, retention, verdicts.

    The page holds its styles, script and data: it opens from a USB stick, with
    no network access.  Takes the options of kseg stats.  Reads the inputs
    read-only; writes only OUTPUT -- never inside an input or a Kafka log
    directory -- and says so: a line on stderr, or with
    --format json one object on stdout.  Exit 0, or 2 on usage errors and
    unreadable input.

    \b
    Example:
      kseg report /var/lib/kafka -o kafka-disk.html --with-verify
    """
    from kseg.commands.paths import refuse_output_dir
    from kseg.render.report import render_html, report_data
    from kseg.writing import atomic_write

    refuse_output_dir(paths, output.absolute().parent)  # never into the evidence nor a Kafka log directory
    result = run_stats(paths, **kw)
    checked = predicted = skipped = None
    if with_verify:
        checked, predicted, skipped = _verdicts(paths, kw.get("jobs"))
    page = render_html(report_data(result, [str(p) for p in paths], checked, predicted, skipped))
    body = page.encode("utf-8")
    with atomic_write(output, replace=True) as out:
        out.write(body)
    if fmt == "json":
        import json

        click.echo(json.dumps({"type": "report", "output": str(output), "bytes": len(body),
                               "partitions": len(result.partitions),
                               "verify_exit_code": None if checked is None else checked.exit_code()}))
    else:
        click.echo(f"wrote {output} ({len(body):,} bytes)", err=True)
