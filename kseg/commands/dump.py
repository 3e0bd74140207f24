"""``kseg dump``: kafka-dump-log's output (or JSON lines, or a table) for segments and side files."""

from __future__ import annotations

import os
import sys
from dataclasses import replace
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

import click

from kseg.commands import options
from kseg.commands.options import Timestamp as _Timestamp
from kseg.commands.options import progress as progress_option
from kseg.commands.options import schemas_only_with_decode
from kseg.errors import EXIT_OK, EXIT_PROBLEMS
from kseg.format.records_render import core_renders
from kseg.ops.discover import check_named_inputs
from kseg.ops.dump import (
    DECODER_PRECEDENCE,
    DEFAULT_RELEASE,
    INT_MAX,
    RELEASES,
    DumpOptions,
    DumpTarget,
    handler_kind,
    iter_dump,
    targets_for,
)
from kseg.ops.dump.dialect import Dialect, dialect_for, normalize_release

STRING_DECODER = "org.apache.kafka.tools.api.StringDecoder"
DEPRECATED_STRING_DECODER = "kafka.serializer.StringDecoder"
DECODER_HELP = {
    "offsets": "__consumer_offsets",
    "transaction-log": "__transaction_state",
    "cluster-metadata": "KRaft __cluster_metadata (logs and .checkpoint snapshots)",
    "remote-log-metadata": "__remote_log_metadata",
    "share-group-state": "__share_group_state",
}

if TYPE_CHECKING:
    from kseg.render.dump import JsonRenderer, TableRenderer, TextRenderer


def _kafka_version(ctx: click.Context, param: click.Parameter, value: str) -> Dialect:
    """``--kafka-version``: a release in RELEASES (patch numbers allowed), as its dialect."""
    release = normalize_release(value)
    if release is None:
        raise click.BadParameter(f"{value!r}: not a Kafka release kseg knows ({RELEASES[0]} to {RELEASES[-1]})")
    return dialect_for(release)


def _decoder_notices(value_class: str | None, key_class: str | None, dialect: Dialect) -> tuple[str, ...]:
    """Kafka accepts only StringDecoder here; 3.8-3.9 print a deprecation line per .log for the old name
    (ops/dump/dialect.py ``deprecated_decoder_notice``); 4.0 and later have no class of that name."""
    notices = []
    for option, name in (("--value-decoder-class", value_class), ("--key-decoder-class", key_class)):
        if name in (None, STRING_DECODER):
            continue
        if name == DEPRECATED_STRING_DECODER and dialect.deprecated_decoder_notice:
            notices.append(f"{DEPRECATED_STRING_DECODER} is deprecated. Please use {STRING_DECODER} instead")
            continue
        if name == DEPRECATED_STRING_DECODER and not dialect.json_offsets_decoder:
            continue  # before 3.8 it is the tool's own default class
        if name == DEPRECATED_STRING_DECODER:
            raise click.UsageError(f"{option} {name}: Kafka {dialect.release}'s kafka-dump-log has no such class "
                                   f"(removed in 4.0); use {STRING_DECODER}")
        raise click.UsageError(f"{option} {name}: not yet supported (only {STRING_DECODER})")
    return tuple(notices)


def _targets(paths: tuple[str, ...], files: tuple[str, ...]) -> list[DumpTarget]:
    """PATH arguments, then every ``--files a,b`` list (split on "," only, as Kafka does)."""
    args = list(paths)
    for group in files:
        for name in group.split(","):
            if not name:
                raise click.UsageError("--files: empty file name in the list")
            if not os.path.exists(name):
                raise click.UsageError(f"--files: {name}: no such file or directory")
            args.append(name)
    if not args:
        raise click.UsageError("give at least one PATH (or --files a,b)")
    # a named file dump has no reader for is an error, before any output (inside a directory it is skipped
    # with Kafka's "Ignoring unknown file" line); a FIFO or device is refused before it is opened
    check_named_inputs([Path(arg) for arg in args], known=lambda path: handler_kind(path.name) is not None)
    for arg in args:
        if os.path.isdir(arg) and not any(
            handler_kind(t.path.name) is not None for t in targets_for([arg])
        ):
            raise click.UsageError(f"{arg}: no Kafka files to dump in this directory")
    return targets_for(args)


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("paths", nargs=-1, type=click.Path(exists=True, path_type=str))
@click.option("--files", "files", multiple=True, metavar="A,B,...",
              help="Kafka's spelling: comma-separated files to dump (after any PATHs).")
@click.option("--format", "output_format", type=click.Choice(["text", "json", "table"]), default="text",
              show_default=True, help="text = kafka-dump-log's output; json = one object per line; table for people.")
@progress_option
@click.option("--payload", type=click.Choice(["utf8", "hex", "base64"]), default="utf8", show_default=True,
              help="How JSON shows keys, values and header values (utf8: non-UTF-8 as {\"base64\": ...}).")
@click.option("--deep-iteration", is_flag=True, help="One line per record, not only per batch.")
@click.option("--print-data-log", is_flag=True, help="Print keys and payloads (implies --deep-iteration).")
@click.option("--skip-record-metadata", is_flag=True, help="Deep iteration without the per-record metadata.")
@click.option("--max-bytes", type=click.IntRange(0, INT_MAX), default=None,
              help="Read only the first N bytes of each .log (whole batches only).")
@click.option("--max-message-size", type=click.IntRange(0, INT_MAX), default=5 * 1024 * 1024, show_default=True,
              help="Bytes read at each .index position when checking it against the log.")
@click.option("--index-sanity-check", is_flag=True, help="For .index/.timeindex: run Kafka's sanity check only.")
@click.option("--verify-index-only", is_flag=True, help="For .index/.timeindex: check entries, print none.")
@click.option("--key-decoder-class", is_flag=False, flag_value=STRING_DECODER, default=None, metavar="[CLASS]",
              help=f"Only {STRING_DECODER} (implies --print-data-log).")
@click.option("--value-decoder-class", is_flag=False, flag_value=STRING_DECODER, default=None, metavar="[CLASS]",
              help=f"Only {STRING_DECODER} (implies --print-data-log).")
@click.option("--from-offset", type=int, help="Start at the batch holding this offset (seeks through the .index).")
@click.option("--to-offset", type=int, help="Stop after the batch holding this offset.")
@click.option("--from-time", type=_Timestamp(), help="Start at the first batch reaching this time (.timeindex).")
@click.option("--to-time", type=_Timestamp(), help="Stop after the first batch reaching this time.")
@click.option("--max-batches", type=click.IntRange(min=1), help="Show at most N batches per .log file.")
@click.option("--kafka-version", "dialect", default=DEFAULT_RELEASE, show_default=True, metavar="X.Y",
              callback=_kafka_version, help=f"Print the text of this release's kafka-dump-log ({RELEASES[0]}-"
              f"{RELEASES[-1]}; see docs/dump.md for what changed when).")
@click.option("--offsets-decoder", "decoder_0", is_flag=True,
              help=f"Decode records as {DECODER_HELP['offsets']} (implies --print-data-log).")
@click.option("--transaction-log-decoder", "decoder_1", is_flag=True,
              help=f"Decode records as {DECODER_HELP['transaction-log']}.")
@click.option("--cluster-metadata-decoder", "decoder_2", is_flag=True,
              help=f"Decode records as {DECODER_HELP['cluster-metadata']}.")
@click.option("--remote-log-metadata-decoder", "decoder_3", is_flag=True,
              help=f"Decode records as {DECODER_HELP['remote-log-metadata']}.")
@click.option("--share-group-state-decoder", "decoder_4", is_flag=True,
              help=f"Decode records as {DECODER_HELP['share-group-state']}.")
@click.option("--decode", is_flag=True,
              help="Add each record's key and value decoded through the schema registry (Avro, Protobuf, JSON "
                   "Schema; the kseg[decode] extra; docs/grep.md). Text and JSON.")
@options.schemas
@options.max_batch_bytes
def dump(paths: tuple[str, ...], files: tuple[str, ...], output_format: str, payload: str, **flags: Any) -> None:
    """Dump segments, indexes and snapshots as kafka-dump-log.sh does.

    PATH may be a .log, .index, .timeindex, .txnindex, producer .snapshot or
    KRaft .checkpoint file, a checkpoint or metadata file of a partition or log
    directory, a partition directory or a whole log directory.  Text output is
    kafka-dump-log's stdout line for line (summaries on stderr); the
    --*-decoder options decode Kafka's internal topics as kafka-dump-log does.
    Where Kafka's tool would crash, kseg reports the problem with its byte
    position on stderr and goes on.  Exit status: 0 ok, 1 problems reported,
    2 usage error or missing input.

    \b
    Example:
        kseg dump --deep-iteration --print-data-log 00000000000000000000.log
        kseg dump --files 00000000000000000000.log,00000000000000000000.index
        kseg dump --format json --deep-iteration /var/lib/kafka/orders-0 | jq .
        kseg dump --offsets-decoder /var/lib/kafka/__consumer_offsets-12
    """
    show_progress = flags.pop("show_progress")
    decode, schemas = flags.pop("decode"), flags.pop("schemas")
    schemas_only_with_decode(schemas, decode)
    options = _dump_options(output_format, payload, **flags)
    registry = None
    if decode:
        registry = _registry(paths, schemas, options.max_batch_bytes, output_format)
        options = replace(options, json_records=False, encoded_records=False)
    problems = _run(_targets(paths, files), options, output_format, payload, show_progress, registry)
    click.get_current_context().exit(EXIT_PROBLEMS if problems else EXIT_OK)


def _dump_options(
    output_format: str,
    payload: str,
    *,
    deep_iteration: bool,
    print_data_log: bool,
    skip_record_metadata: bool,
    max_bytes: int | None,
    max_message_size: int,
    index_sanity_check: bool,
    verify_index_only: bool,
    key_decoder_class: str | None,
    value_decoder_class: str | None,
    from_offset: int | None,
    to_offset: int | None,
    from_time: int | None,
    to_time: int | None,
    max_batches: int | None,
    dialect: Dialect,
    max_batch_bytes: int,
    **decoders: bool,
) -> DumpOptions:
    """The command line as ``DumpOptions``, checked the way Kafka's ``DumpLogSegmentsOptions`` checks it."""
    decoder = _chosen_decoder(decoders)
    # Kafka builds the key/value decoders only when no internal-topic decoder is given
    notices = () if decoder else _decoder_notices(value_decoder_class, key_decoder_class, dialect)
    _check_windows(from_offset, to_offset, from_time, to_time)
    return DumpOptions(
        deep_iteration=deep_iteration,
        print_data_log=(print_data_log or key_decoder_class is not None or value_decoder_class is not None
                        or decoder is not None),
        skip_record_metadata=skip_record_metadata,
        max_bytes=max_bytes,
        max_message_size=max_message_size,
        index_sanity_check=index_sanity_check,
        verify_index_only=verify_index_only,
        decoder_notices=notices,
        from_offset=from_offset,
        to_offset=to_offset,
        from_time=from_time,
        to_time=to_time,
        max_batches=max_batches,
        json_records=output_format == "json" and decoder is None,
        encoded_records=output_format == "text" and decoder is None and core_renders(),
        kafka_text=output_format == "text",
        decoder=decoder,
        dialect=dialect,
        max_batch_bytes=max_batch_bytes,
    )


def _chosen_decoder(flags: dict[str, bool]) -> str | None:
    """The one internal-topic decoder asked for; two are a usage error (Kafka's tool silently takes the first)."""
    chosen = [name for index, name in enumerate(DECODER_PRECEDENCE) if flags.get(f"decoder_{index}")]
    if len(chosen) > 1:
        raise click.UsageError(f"--{chosen[0]}-decoder and --{chosen[1]}-decoder exclude each other; give one")
    return chosen[0] if chosen else None


def _check_windows(
    from_offset: int | None, to_offset: int | None, from_time: int | None, to_time: int | None
) -> None:
    if from_offset is not None and to_offset is not None and to_offset < from_offset:
        raise click.UsageError("--to-offset is before --from-offset")
    if from_time is not None and to_time is not None and to_time < from_time:
        raise click.UsageError("--to-time is before --from-time")


def _registry(paths: tuple[str, ...], schemas: Path | None, max_batch_bytes: int, output_format: str) -> Any:
    """``--decode``'s registry (:func:`kseg.commands.options.schema_registry`; usage errors otherwise)."""
    from kseg.commands.options import schema_registry

    if output_format == "table":
        raise click.UsageError("--decode shows in --format text and json")
    return schema_registry(tuple(map(Path, paths)), schemas, max_batch_bytes)


def _run(
    targets: list[DumpTarget], options: DumpOptions, output_format: str, payload: str, show_progress: bool = False,
    registry: Any = None,
) -> int:
    from kseg.render.dump import (
        JsonRenderer,
        Progress,
        Sink,
        TableRenderer,
        TextRenderer,
        binary_streams,
        render,
    )

    out, err = binary_streams()
    sink = Sink(out, err, escaping=_is_terminal(out))
    renderer: JsonRenderer | TableRenderer | TextRenderer
    if registry is not None:
        from kseg.render.dump_decode import DecodingJsonRenderer, DecodingTextRenderer

        renderer = (DecodingJsonRenderer(sink, options, payload, registry) if output_format == "json"
                    else DecodingTextRenderer(sink, options, registry))
    elif output_format == "json":
        renderer = JsonRenderer(sink, options, payload)
    elif output_format == "table":
        from rich.console import Console

        from kseg.render.terminal import FALLBACK_COLUMNS

        console = Console(file=sys.stdout)
        if console.width <= 0:  # COLUMNS=0: no width at all, not a table without columns
            console.width = FALLBACK_COLUMNS
        renderer = TableRenderer(console, options, sink)
    else:
        renderer = TextRenderer(sink, options)
    progress = None
    if _is_terminal(err) or show_progress:
        progress = Progress(err, {t.display: _size(t.path) for t in targets}, live=_is_terminal(err))
    return render(iter_dump(targets, options), renderer, progress)


def _is_terminal(stream: IO[bytes]) -> bool:
    try:
        return os.isatty(stream.fileno())
    except (AttributeError, OSError, ValueError):
        return False


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0
