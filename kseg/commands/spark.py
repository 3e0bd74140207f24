"""``kseg spark``: verify and export on Spark -- local[*] by default, or any cluster with --master."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import click

EXIT_OK, EXIT_PROBLEMS, EXIT_USAGE = 0, 1, 2


def _spark_options(command):
    """--master and --conf, shared by the subcommands."""
    command = click.option(
        "--conf", "conf", multiple=True, metavar="KEY=VALUE",
        help="A Spark setting (repeatable), e.g. spark.executor.memory=4g.",
    )(command)
    return click.option(
        "--master", default=None, metavar="URL",
        help="Spark master: local[*] (default), local[N], spark://host:7077, yarn, k8s://...",
    )(command)


def _conf_pairs(conf: tuple[str, ...]) -> list[tuple[str, str]]:
    pairs = []
    for item in conf:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise click.UsageError(f"--conf {item!r}: expected KEY=VALUE")
        pairs.append((key.strip(), value))
    return pairs


def _need_spark() -> None:
    try:
        import pyarrow  # noqa: F401
        import pyspark  # noqa: F401
    except ImportError as err:
        raise click.UsageError(f"kseg spark needs pyspark and pyarrow: pip install 'kseg[spark]' ({err})") from None


class _Session:
    """The Spark session for one command: started quietly, stopped only if this command started it."""

    def __init__(self, master: str | None, conf: tuple[str, ...]) -> None:
        self.master = master
        self.conf = _conf_pairs(conf)

    def __enter__(self):
        from kseg.spark import get_session

        _need_spark()
        try:
            self.spark, self.created = get_session(self.master, self.conf)
        except Exception as err:  # noqa: BLE001 - JVM launch failures come in many types
            _spark_failed(err)
        return self.spark

    def __exit__(self, kind, err, tb) -> None:
        if self.created:
            self.spark.stop()
        if err is not None and _is_spark_error(err):
            _spark_failed(err)


def _is_spark_error(err: BaseException) -> bool:
    module = type(err).__module__ or ""
    return module.startswith(("pyspark", "py4j"))


def _spark_failed(err: BaseException) -> None:
    """One line on stderr and exit 2: Spark's own messages are long and say where in Spark, not in the data."""
    from kseg.spark.session import log_path

    lines = [line.strip() for line in str(err).splitlines() if line.strip()]
    # a Python worker's error comes with its traceback: the last line says what went wrong
    pick = lines[-1] if any(line.startswith("Traceback") for line in lines) else lines[0] if lines else ""
    click.echo(f"kseg: error: spark: {pick or type(err).__name__} (Spark's log: {log_path()})", err=True)
    sys.exit(EXIT_USAGE)


@click.group()
def spark() -> None:
    """Run verify and export on Spark: local[*] by default, or a cluster with --master.

    Needs the spark extra: pip install 'kseg[spark]' (pyspark, pyarrow; Java 17+).
    Every path must be readable at the same place by the driver and by every
    executor (a local disk in local mode; a shared mount on a cluster).

    \b
    Example:
      kseg spark verify /var/lib/kafka
      kseg spark export /var/lib/kafka --to /data/kafka-records.parquet
      kseg spark verify --master spark://head:7077 /mnt/evidence/kafka-logs
    """


@spark.command("verify", short_help="Verify on Spark: the findings and exit codes of kseg verify.")
@click.argument("paths", nargs=-1, required=True, type=click.Path(exists=True, path_type=Path))
@click.option("--deep", is_flag=True, help="Decode every record too (default: batch level: framing, CRC, headers).")
@click.option("--strict", is_flag=True, help="Exit 1 on warnings as well as errors.")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@click.option(
    "--max-findings", type=click.IntRange(min=0), default=20, show_default=True, help="Rows in the text findings table."
)
@_spark_options
def verify_command(
    paths: tuple[Path, ...], deep: bool, strict: bool, fmt: str, max_findings: int, master: str | None,
    conf: tuple[str, ...],
) -> None:
    """Check segments, partition directories or log directories on Spark; same findings as kseg verify.

    Each segment (a .log with its indexes) or other file is one unit of work
    spread over the executors; the results are merged on the driver exactly as
    kseg verify merges its worker processes', so output and exit code are
    those of kseg verify: 0 clean, 1 errors (warnings too with --strict),
    2 usage error, unreadable input or a Spark failure.

    \b
    Example:
      kseg spark verify --format json /var/lib/kafka | jq 'select(.type=="finding")'
    """
    from kseg.ops.verify import plan_paths

    if not plan_paths(list(paths)).units:
        raise click.UsageError(f"nothing to verify: no Kafka files in {', '.join(map(str, paths))}")
    from kseg.spark import verify as spark_verify

    with _Session(master, conf) as session:
        result = spark_verify(session, list(paths), deep=deep)
    if fmt == "json":
        from kseg.render.verify import render_json

        for line in render_json(result, strict):
            click.echo(line)
    else:
        from kseg.render.verify import render_text

        color = sys.stdout.isatty() and "NO_COLOR" not in os.environ
        render_text(result, max_findings=max_findings, strict=strict, color=color)
    click.get_current_context().exit(result.exit_code(strict))


@spark.command("export", short_help="Write records (or batches) as Parquet, ORC or JSON.")
@click.argument("paths", nargs=-1, required=True, type=click.Path(exists=True, path_type=Path))
@click.option("--to", "out", required=True, metavar="OUT", help="Output directory (a local path or any URI Spark writes).")
@click.option("--format", "fmt", type=click.Choice(["parquet", "orc", "json"]), default="parquet", show_default=True)
@click.option("--level", type=click.Choice(["record", "batch"]), default="record", show_default=True,
              help="One row per record, or one per batch.")
@click.option("--overwrite", is_flag=True, help="Replace OUT if it exists (default: refuse).")
@click.option("--split-bytes", type=click.IntRange(min=1), default=None,
              help="Cut segments larger than this into several tasks [default: total / cores, 4-128 MiB].")
@_spark_options
def export_command(
    paths: tuple[Path, ...], out: str, fmt: str, level: str, overwrite: bool, split_bytes: int | None,
    master: str | None, conf: tuple[str, ...],
) -> None:
    """Write the records (or batches) of segments out as Parquet, ORC or JSON with Spark.

    Reads every .log and KRaft .checkpoint under PATHs (a file named on its own
    is read whatever its name), going on past damage.  Damaged batches are
    not exported: each is reported on stderr with its file and byte position.
    Exit 0 when everything was exported, 1 when damaged batches were left
    out, 2 on usage errors, unreadable input or a Spark failure.  The input
    files are only read.

    \b
    Columns (record level): path, topic, partition, segment_base_offset,
    batch_position, offset, timestamp, timestamp_type, key, value, headers,
    magic, codec, producer_id, producer_epoch, sequence, is_transactional,
    is_control.

    \b
    Example:
      kseg spark export /var/lib/kafka/orders-0 --to orders.parquet
      kseg spark export --master yarn /mnt/shared/kafka-logs --to hdfs:///forensics/orders
    """
    from kseg.spark.rows import segment_files

    if not segment_files(list(paths)):
        raise click.UsageError(f"nothing to export: no segment files in {', '.join(map(str, paths))}")
    if "://" not in out and os.path.exists(out) and not overwrite:
        raise click.UsageError(f"--to {out}: exists (give --overwrite to replace it)")
    from kseg.spark.export import export

    with _Session(master, conf) as session:
        result = export(session, list(paths), out, fmt=fmt, level=level, overwrite=overwrite, split_bytes=split_bytes)
    for damaged in result.damaged:
        click.echo(f"kseg: {damaged.path}: {damaged.problem}", err=True)
    noun = "record" if level == "record" else "batch"
    plural = "" if result.rows == 1 else ("es" if noun == "batch" else "s")
    files = "file" if result.files == 1 else "files"
    line = f"exported {result.rows:,} {noun}{plural} from {result.files:,} {files} to {out} ({fmt})"
    if result.damaged:
        line += f"; {len(result.damaged):,} damaged regions not exported (listed on stderr)"
    click.echo(line)
    code = EXIT_USAGE if result.unreadable else EXIT_PROBLEMS if result.damaged else EXIT_OK
    click.get_current_context().exit(code)
