"""``kseg spark``: verify and export on Spark -- local[*] by default, or any cluster with --master."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from kseg.commands import options
from kseg.errors import EXIT_OK, EXIT_PROBLEMS, EXIT_USAGE

#: what ``spark export --file-format`` writes (kseg.spark.export.FORMATS; not imported here, which would load Spark's side)
FILE_FORMATS = ("parquet", "orc", "json")

if TYPE_CHECKING:
    from kseg.spark.export import ExportResult


def _need_spark() -> None:
    try:
        import pyarrow  # noqa: F401
        import pyspark  # noqa: F401
    except ImportError as err:
        raise click.UsageError(f"kseg spark needs pyspark and pyarrow: pip install 'kseg[spark]' ({err})") from None


@click.group()
def spark() -> None:
    """Run verify and export on Spark: local[*] by default, or a cluster with --master.

    Needs the spark extra: pip install 'kseg[spark]' (pyspark, pyarrow; Java 17+).
    Every path must be readable at the same place by the driver and by every
    executor (a local disk in local mode; a shared mount on a cluster).

    \b
    Example:
      kseg spark verify /var/lib/kafka
      kseg spark export /var/lib/kafka -o /data/kafka-records.parquet
      kseg spark verify --master spark://head:7077 /mnt/evidence/kafka-logs
    """


@spark.command("verify", short_help="Verify on Spark: the findings and exit codes of kseg verify.")
@options.paths_argument
@options.deep
@options.max_batch_bytes
@options.strict
@options.report_format
@options.max_findings
@options.quiet
@options.spark_master
@options.spark_conf
def verify_command(
    paths: tuple[Path, ...], deep: bool, strict: bool, fmt: str, max_findings: int, quiet: bool, master: str | None,
    conf: list[tuple[str, str]], max_batch_bytes: int,
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
    from kseg.commands.verify import show_result
    from kseg.spark import verify as spark_verify
    from kseg.spark.session import command_session

    _need_spark()
    with command_session(master, conf, list(paths), max_batch_bytes) as session:
        result = spark_verify(session, list(paths), deep=deep, max_batch_bytes=max_batch_bytes)
    show_result(result, fmt, strict=strict, max_findings=max_findings, quiet=quiet)


@spark.command("export", short_help="Write records (or batches) as Parquet, ORC or JSON.")
@options.paths_argument
@click.option("-o", "--output", "out", metavar="OUT", help="Output directory (a local path or any URI Spark writes).")
@click.option("--to", "old_out", metavar="OUT", hidden=True, help="The old spelling of -o/--output.")
@click.option("--file-format", "file_format", type=click.Choice(FILE_FORMATS), default=None,
              help="The exported files' format.  [default: parquet]")
@click.option("--format", "old_format", type=click.Choice(FILE_FORMATS), default=None, hidden=True,
              help="The old spelling of --file-format (deprecated: --format is the report's form elsewhere).")
@click.option("--level", type=click.Choice(["record", "batch"]), default="record", show_default=True,
              help="One row per record, or one per batch.")
@click.option("--overwrite", is_flag=True, help="Replace OUT if it exists (default: refuse).")
@click.option("--decode", is_flag=True,
              help="Add the decoded key and value (schema registry framing: Avro, Protobuf, JSON Schema) as columns.")
@options.schemas
@click.option("--split-bytes", type=click.IntRange(min=1), default=None,
              help="Cut segments larger than this into several tasks [default: total / cores, 4-128 MiB].")
@options.max_batch_bytes
@options.spark_master
@options.spark_conf
def export_command(
    paths: tuple[Path, ...], out: str | None, old_out: str | None, file_format: str | None,
    old_format: str | None, level: str, overwrite: bool, decode: bool, schemas: Path | None, split_bytes: int | None,
    master: str | None, conf: list[tuple[str, str]], max_batch_bytes: int,
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
    is_control, txn_state (committed, aborted, open: the record's transaction
    by its producer's next COMMIT/ABORT marker; none: not transactional).
    With --decode also key_decoded, key_schema_id, key_subject,
    value_decoded, value_schema_id, value_subject (decoded as JSON text) and
    decode_problem (why a framed key or value did not decode).

    \b
    Example:
      kseg spark export /var/lib/kafka/orders-0 -o orders.parquet
      kseg spark export --file-format orc /var/lib/kafka/orders-0 -o orders.orc
      kseg spark export --master yarn /mnt/shared/kafka-logs -o hdfs:///forensics/orders
    """
    from kseg.spark.rows import segment_files

    out_name, out = _one_spelling(("--output", out), ("--to", old_out), required=True)
    fmt = _one_spelling(("--file-format", file_format), ("--format", old_format))[1] or "parquet"
    if not segment_files(list(paths)):
        raise click.UsageError(f"nothing to export: no segment files in {', '.join(map(str, paths))}")
    if "://" not in out and os.path.exists(out) and not overwrite:
        raise click.UsageError(f"{out_name} {out}: exists (give --overwrite to replace it)")
    options.schemas_only_with_decode(schemas, decode)
    registry = _registry(paths, schemas, max_batch_bytes, level) if decode else None
    from kseg.spark.export import export
    from kseg.spark.session import command_session

    _need_spark()
    with command_session(master, conf, list(paths), max_batch_bytes) as session:
        result = export(session, list(paths), out, fmt=fmt, level=level, overwrite=overwrite, split_bytes=split_bytes,
                        max_batch_bytes=max_batch_bytes, registry=registry)
    for damaged in result.damaged:
        click.echo(f"kseg: {damaged.path}: {damaged.problem}", err=True)
    click.echo(_export_line(result, out, fmt, level))
    code = EXIT_USAGE if result.unreadable else EXIT_PROBLEMS if result.damaged else EXIT_OK
    click.get_current_context().exit(code)


def _registry(paths: tuple[Path, ...], schemas: Path | None, max_batch_bytes: int, level: str) -> Any:
    """The offline registry of ``--decode`` (:func:`kseg.commands.options.schema_registry`, as ``kseg grep
    --decode`` finds it); usage errors before Spark starts."""
    if level != "record":
        raise click.UsageError("--decode decodes records: it needs --level record")
    return options.schema_registry(paths, schemas, max_batch_bytes)


def _one_spelling(new: tuple[str, str | None], old: tuple[str, str | None], *, required: bool = False) -> tuple[str, str]:
    """The value of an option given under its name or its old one (hidden, kept for scripts); both at once is a usage error.

    Returns the spelling used with the value, so messages quote what was typed.
    """
    (new_name, new_value), (old_name, old_value) = new, old
    if new_value is not None and old_value is not None:
        raise click.UsageError(f"{old_name} is the old spelling of {new_name}: give one of them")
    if new_value is None and old_value is None and required:
        raise click.MissingParameter(param_hint=f"'-o' / '{new_name}'", param_type="option")
    return (old_name, old_value) if old_value is not None else (new_name, new_value or "")


def _export_line(result: ExportResult, out: str, fmt: str, level: str) -> str:
    """``exported 204 records from 1 file to OUT (parquet)``, and how many damaged regions were left out."""
    noun = "record" if level == "record" else "batch"
    plural = "" if result.rows == 1 else ("es" if noun == "batch" else "s")
    files = "file" if result.files == 1 else "files"
    line = f"exported {result.rows:,} {noun}{plural} from {result.files:,} {files} to {out} ({fmt})"
    if result.damaged:
        line += f"; {len(result.damaged):,} damaged regions not exported (listed on stderr)"
    return line
