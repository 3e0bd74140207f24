"""``kseg grep``: records matching key, value, header, offset, time, producer and transaction predicates."""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

import click

from kseg.commands import options
from kseg.commands.options import Timestamp, schemas_only_with_decode
from kseg.errors import EXIT_OK, EXIT_PROBLEMS

FORMATS = ("text", "json", "table")
TXN_STATES = ("committed", "aborted", "open")


@click.command()
@options.paths_argument
@click.option("--key", metavar="BYTES", help="Key equals BYTES (text as UTF-8; hex:.. or base64:.. for binary).")
@click.option("--key-prefix", metavar="BYTES", help="Key starts with BYTES.")
@click.option("--key-regex", metavar="RE", help="Key matches the regular expression (over the key's bytes).")
@click.option("--value", metavar="BYTES", help="Value equals BYTES.")
@click.option("--value-regex", metavar="RE", help="Value matches the regular expression (over the value's bytes).")
@click.option("--header", "headers", metavar="KEY[=VALUE]", multiple=True,
              help="A header with this key (and value) is present; repeatable, all must hold.")
@click.option("--from-offset", type=int, metavar="N", help="Records at offset N or later (found through .index).")
@click.option("--to-offset", type=int, metavar="N", help="Records at offset N or earlier.")
@click.option("--from-time", type=Timestamp(), help="Records with a timestamp at or after this (through .timeindex).")
@click.option("--to-time", type=Timestamp(), help="Records with a timestamp at or before this.")
@click.option("--producer-id", type=int, metavar="N", help="Records written by producer id N.")
@click.option("--txn", type=click.Choice(TXN_STATES),
              help="Records of transactions that were committed, aborted, or are still open (replayed per partition).")
@click.option("--control", is_flag=True, help="Search control records (transaction markers) instead of data records.")
@click.option("--decode", is_flag=True,
              help="Decode keys and values in the schema registry's framing (Avro, Protobuf, JSON Schema) offline.")
@options.schemas
@click.option("--where", "wheres", metavar="EXPR", multiple=True,
              help='A condition on the decoded (or JSON) key and value, e.g. \'value.customer.id == "C-17"\'; '
                   "repeatable, all must hold.")
@click.option("--schema-usage", is_flag=True,
              help="Instead of records: per topic, the schema ids its matching records use, unknown ids and "
                   "deleted schemas still in use.")
@click.option("--export", "export_file", type=click.Path(dir_okay=False, path_type=Path), metavar="FILE",
              help="Write the matching records to FILE (a new file) for a producer, instead of printing them.")
@click.option("--as", "export_as", type=click.Choice(("console", "kcat", "jsonl")), default="jsonl", show_default=True,
              help="--export's format: kafka-console-producer.sh (parse.headers, parse.key, null.marker), "
                   "kcat -P -K '\\t', or JSON Lines (everything kept).")
@click.option("--null-marker", default="\u2400", show_default=True, metavar="TEXT",
              help="--as console: the null.marker written for a null key, value or header value, and no headers.")
@click.option("-c", "--count", "count", is_flag=True, help="Print each partition (or named file) with its number of matches.")
@click.option("-l", "--files-with-matches", "list_only", is_flag=True,
              help="Print only the partitions (or named files) that hold a match.")
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="text", show_default=True,
              help="text = '<file>:<position>:' and dump's record line; json = dump's record object plus "
                   "path and position; table = rich table.")
@click.option("-j", "--jobs", type=click.IntRange(min=1), default=1, show_default=True,
              help="Worker processes (one segment each).")
@options.max_batch_bytes
def grep(paths: tuple[Path, ...], fmt: str, jobs: int, max_batch_bytes: int, count: bool, list_only: bool,
         decode: bool, schemas: Path | None, wheres: tuple[str, ...], schema_usage: bool, export_file: Path | None,
         export_as: str, null_marker: str, **predicates: Any) -> None:
    """Print the records of these segments that match every predicate given.

    PATHS are .log segments, partition directories or log directories.  With
    no predicate every data record matches.  Batches are tested on their
    header first, then (stored uncompressed) for the searched bytes anywhere
    inside them; only those that pass have their records decoded.  Never
    creates or changes a file.

    Exit 0 when a record matched, 1 when none did (as grep) or, with --export,
    when a matching record could not be exported; 2 on usage errors or
    unreadable input.  A batch that cannot be read is reported on stderr and
    skipped.

    \b
    Examples:
      kseg grep --key order-17 /var/lib/kafka/data/orders-3
      kseg grep --header trace-id=4bf92f35 --format json /var/lib/kafka/data
      kseg grep --producer-id 4711 --from-time 2026-11-27T09:00Z --to-time 2026-11-27T09:05Z DIR
      kseg grep --txn aborted -c /var/lib/kafka/data
    """
    from kseg.ops.discover import check_named_inputs
    from kseg.ops.grep.query import BadQuery
    from kseg.ops.grep.run import Options, plan
    from kseg.ops.grep.run import grep as run_grep

    check_named_inputs(paths)  # a FIFO or device is refused before anything is read
    for path in paths:
        if not path.is_dir() and not path.name.endswith(".log"):
            raise click.UsageError(f"{path}: kseg grep takes .log segments, partition directories or log directories")
    try:
        query = _query(predicates)
    except BadQuery as err:
        raise click.UsageError(err.message) from None
    schemas_only_with_decode(schemas, decode or bool(wheres) or schema_usage)
    decoding = None
    if decode or wheres or schema_usage:
        decoding = _decoding(paths, schemas, wheres, max_batch_bytes)
    units = plan(list(paths), query, max_batch_bytes)
    options = Options(max_batch_bytes, records=not (count or list_only), first_only=list_only, decoding=decoding)
    events = run_grep(units, query, options, jobs)
    if export_file is not None:
        exported, refused = _export(events, export_file, export_as, null_marker)
        click.get_current_context().exit(EXIT_PROBLEMS if refused or not exported else EXIT_OK)
    if schema_usage:
        from kseg.render.grep import write_schema_usage

        _write_to_sink(lambda sink: write_schema_usage(events, fmt, sink))
        return
    matches = _write(events, fmt, count, list_only)
    click.get_current_context().exit(EXIT_OK if matches else EXIT_PROBLEMS)


def _query(given: dict[str, Any]) -> Any:
    """The :class:`~kseg.ops.grep.query.Query` for the options given (usage errors for bad values)."""
    from kseg.ops.grep.query import Query, compile_regex, parse_bytes, parse_header

    def literal(name: str) -> bytes | None:
        value = given[name]
        return None if value is None else parse_bytes(value, "--" + name.replace("_", "-"))

    def regex(name: str) -> Any:
        value = given[name]
        return None if value is None else compile_regex(value, "--" + name.replace("_", "-"))

    for low, high in (("from_offset", "to_offset"), ("from_time", "to_time")):
        if given[low] is not None and given[high] is not None and given[high] < given[low]:
            raise click.UsageError(f"--{high.replace('_', '-')} is before --{low.replace('_', '-')}")
    return Query(
        key=literal("key"), key_prefix=literal("key_prefix"), key_regex=regex("key_regex"),
        value=literal("value"), value_regex=regex("value_regex"),
        headers=tuple(parse_header(h) for h in given["headers"]),
        from_offset=given["from_offset"], to_offset=given["to_offset"],
        from_time=given["from_time"], to_time=given["to_time"],
        producer_id=given["producer_id"], txn=given["txn"], control=given["control"],
    )


def _export(events: Any, file: Path, export_as: str, null_marker: str) -> tuple[int, int]:
    """Write the matches to ``file`` (and, for console and kcat, their origins to ``file.origin.jsonl``), each
    through a temporary renamed in only when whole; (exported, refused).  Refusals go to stderr."""
    from kseg.ops.grep.search import Match, Problem
    from kseg.render.dump.common import Sink, binary_streams
    from kseg.render.grep import problem_line
    from kseg.render.grep_export import ExportFormat, NotExportable, origin_json
    from kseg.writing import atomic_write

    form = ExportFormat(export_as, null_marker)
    out, err = binary_streams()
    sink = Sink(out, err, escaping=_is_terminal(out))
    exported = refused = 0
    origin_path = file.with_name(file.name + ".origin.jsonl")
    with atomic_write(file) as data, (atomic_write(origin_path) if export_as != "jsonl" else _no_file()) as origins:
        for event in events:
            if isinstance(event, Problem):
                sink.err_line(problem_line(event))
            if not isinstance(event, Match):
                continue
            try:
                line = form.line(event)
            except NotExportable as why:
                refused += 1
                sink.err_line(f"kseg: warning: {event.path} byte {event.position}: offset {event.record[0]} "
                              f"not exported: {why}")
                continue
            data.write(line.encode("utf-8") + b"\n")
            if origins is not None:
                origins.write(origin_json(event).encode("utf-8") + b"\n")
            exported += 1
    sink.line(f"exported {exported} records to {file}" + (f", {refused} not exportable as {export_as}" if refused else ""))
    sink.line(f"origins: {origin_path}" if export_as != "jsonl" else "origins: in each line")
    sink.line(f"produce with: {form.producer_command(str(file))}")
    sink.flush()
    return exported, refused


@contextlib.contextmanager
def _no_file() -> Iterator[None]:
    yield None


def _decoding(paths: tuple[Path, ...], schemas: Path | None, wheres: tuple[str, ...], max_batch_bytes: int) -> Any:
    """The registry (:func:`kseg.commands.options.schema_registry`) and the ``--where`` tests."""
    from kseg.decode.where import WhereError
    from kseg.ops.grep.decoding import Decoding

    decoding = Decoding(options.schema_registry(paths, schemas, max_batch_bytes), wheres)
    try:
        decoding.check()
    except WhereError as err:
        raise click.UsageError(f"--where: {err}") from None
    return decoding


def _write_to_sink(write: Any) -> None:
    from kseg.render.dump.common import Sink, binary_streams

    out, err = binary_streams()
    sink = Sink(out, err, escaping=_is_terminal(out))
    try:
        write(sink)
    finally:
        sink.flush()


def _write(events: Any, fmt: str, count: bool, list_only: bool) -> int:
    """Render the events; the number of matching records."""
    if count or list_only:
        from kseg.render.grep import count_lines
        from kseg.render.terminal import escape_controls, shown

        return count_lines(events, fmt, lambda text: click.echo(shown(text)),
                           lambda text: click.echo(escape_controls(text), err=True), only_matching=list_only)
    from kseg.render.dump.common import Sink, binary_streams
    from kseg.render.grep import RecordWriter, write_table

    out, err = binary_streams()
    sink = Sink(out, err, escaping=_is_terminal(out))
    try:
        if fmt == "table":
            from rich.console import Console

            return write_table(events, Console(file=sys.stdout), sink)[0]
        writer = RecordWriter(sink, fmt)
        for event in events:
            writer.write(event)
        return writer.matches
    finally:
        sink.flush()


def _is_terminal(stream: IO[bytes]) -> bool:
    try:
        return os.isatty(stream.fileno())
    except (AttributeError, OSError, ValueError):
        return False
