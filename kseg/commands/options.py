"""Click options that more than one command takes, each written once.

One named decorator per option (as pip-tools does), so that ``kseg verify``
and ``kseg spark verify`` -- or reindex, recover and convert -- cannot drift
apart in a default, a range or a spelling.  Where the help must say what the
option means for one command (``-o``: segments or indexes?), the decorator is
a function taking that help text; the name, type and default stay here.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, TypeVar

import click

from kseg.format.compression import DEFAULT_MAX_DECOMPRESSED
from kseg.index import DEFAULT_INDEX_INTERVAL_BYTES

F = TypeVar("F", bound=Callable[..., Any])

# -- arguments --------------------------------------------------------------------------------------------

#: PATHS...: one or more files, partition directories or log directories that exist.
paths_argument = click.argument("paths", nargs=-1, required=True, type=click.Path(exists=True, path_type=Path))

#: PATH: one .log segment or partition directory that exists.
path_argument = click.argument("path", type=click.Path(exists=True, path_type=Path))

class Timestamp(click.ParamType):
    """Milliseconds since the epoch, or an ISO-8601 date-time (UTC unless it says otherwise)."""

    name = "MS|ISO-TIME"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> int:
        if isinstance(value, int):
            return value
        text = str(value).strip()
        try:
            return int(text)
        except ValueError:
            pass
        try:
            moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
        except ValueError:
            self.fail(f"{value!r} is neither milliseconds nor an ISO-8601 time", param, ctx)
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=timezone.utc)
        return int(moment.timestamp() * 1000)


# -- output -----------------------------------------------------------------------------------------------

#: ``--format text|json`` into the parameter ``fmt``.
text_or_json = click.option(
    "--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True
)

#: ``--format text|json|table`` into the parameter ``fmt`` (verify and spark verify).
report_format = click.option(
    "--format", "fmt", type=click.Choice(["text", "json", "table"]), default="text", show_default=True,
    help="text = lines and a findings table; json = JSON Lines; table = one rich table with a totals footer.",
)


class AliasedOption(click.Option):
    """An option that also answers to older spellings, left out of ``--help`` so scripts keep working."""

    def __init__(self, *args: Any, hidden_aliases: tuple[str, ...] = (), **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.hidden_aliases = hidden_aliases

    def get_help_record(self, ctx: click.Context) -> tuple[str, str] | None:
        shown = [name for name in self.opts if name not in self.hidden_aliases]
        saved, self.opts = self.opts, shown
        try:
            return super().get_help_record(ctx)
        finally:
            self.opts = saved


def output_dir(help_text: str, *, required: bool = False) -> Callable[[F], F]:
    """``-o/--output``: a directory the command writes into (created if needed; ``--output-dir`` still works)."""
    return click.option(
        "-o", "--output", "--output-dir", "output_dir", cls=AliasedOption, hidden_aliases=("--output-dir",),
        required=required, type=click.Path(file_okay=False, path_type=Path), metavar="OUTDIR", help=help_text,
    )


def dry_run(help_text: str, *, aliases: tuple[str, ...] = (), name: str = "dry_run") -> Callable[[F], F]:
    """``--dry-run``: write nothing, report what would happen; exit 1 where the write would change data."""
    return click.option("--dry-run", *aliases, name, is_flag=True, help=help_text)


#: ``--progress``: a progress line on stderr even when it is not a terminal (a terminal always gets the bar).
progress = click.option(
    "--progress", "show_progress", is_flag=True,
    help="Show progress on stderr even when it is not a terminal (a terminal always gets a live bar).",
)


def in_place(help_text: str) -> Callable[[F], F]:
    """``--in-place``: change the input's own directory, keeping every replaced file as ``<name>.bak``."""
    return click.option("--in-place", is_flag=True, help=help_text)


#: ``--index-interval-bytes``: the topic's setting, which decides where index entries fall.
index_interval_bytes = click.option(
    "--index-interval-bytes",
    type=click.IntRange(min=0),
    default=DEFAULT_INDEX_INTERVAL_BYTES,
    show_default=True,
    help="The topic's index.interval.bytes, for the .index/.timeindex written.",
)

#: ``--max-batch-bytes``: the read cap -- the most bytes one batch (or legacy wrapper) may decompress to,
#: which also caps the headers read in one record (one per 256 bytes).  Input past it is refused or
#: reported with the cap named, never read into memory; the same option in every command that reads records.
max_batch_bytes = click.option(
    "--max-batch-bytes", type=click.IntRange(min=1), default=DEFAULT_MAX_DECOMPRESSED, show_default=True,
    metavar="N", help="Read cap: the most bytes one batch may decompress to (also caps headers per record).",
)

# -- verify (kseg verify and kseg spark verify) ----------------------------------------------------------

deep = click.option("--deep", is_flag=True, help="Decode every record too (default: batch level: framing, CRC, headers).")
strict = click.option("--strict", is_flag=True, help="Exit 1 on warnings as well as errors.")
max_findings = click.option(
    "--max-findings", type=click.IntRange(min=0), default=20, show_default=True,
    help="Rows in the findings table (text and table).",
)
quiet = click.option("-q", "--quiet", is_flag=True, help="List only the files (and partitions) with errors or warnings.")

# -- spark ------------------------------------------------------------------------------------------------


def _conf_pairs(ctx: click.Context, param: click.Parameter, conf: tuple[str, ...]) -> list[tuple[str, str]]:
    """``--conf KEY=VALUE`` as (key, value) pairs, checked before Spark starts."""
    pairs = []
    for item in conf:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise click.UsageError(f"--conf {item!r}: expected KEY=VALUE", ctx)
        pairs.append((key.strip(), value))
    return pairs


spark_master = click.option(
    "--master", default=None, metavar="URL",
    help="Spark master: local[*] (default), local[N], spark://host:7077, yarn, k8s://...",
)
spark_conf = click.option(
    "--conf", "conf", multiple=True, metavar="KEY=VALUE", callback=_conf_pairs,
    help="A Spark setting (repeatable), e.g. spark.executor.memory=4g.",
)


#: ``-j/--jobs N`` into the parameter ``jobs``: worker processes, None for all cores (:func:`job_count`).
jobs = click.option("-j", "--jobs", type=click.IntRange(min=1), default=None,
                    help="Worker processes for the partitions [default: all cores].")


def job_count(jobs: int | None) -> int:
    """``--jobs`` as a number: all cores when not given."""
    import os

    return jobs if jobs is not None else (os.cpu_count() or 1)

# -- decoding (kseg grep --decode and kseg spark export --decode) -----------------------------------------

#: ``--schemas PATH`` into the parameter ``schemas``: where ``--decode`` finds the schema registry.
schemas = click.option(
    "--schemas", type=click.Path(exists=True, path_type=Path), metavar="PATH",
    help="The registry --decode reads: a _schemas partition directory, a log directory holding _schemas-0, or a "
         "REST export (GET /schemas) as JSON. Default: _schemas-0 beside the PATHS.",
)


def schemas_only_with_decode(schemas: Path | None, decoding: bool) -> None:
    """``--schemas`` names the registry ``--decode`` reads: alone it would be ignored without a word, so
    it is a usage error (exit 2) in every command that takes it."""
    if schemas is not None and not decoding:
        raise click.UsageError("--schemas is the registry of --decode: give --decode too")


def schema_registry(paths: tuple[Path, ...], schemas: Path | None, max_batch_bytes: int) -> Any:
    """The offline registry ``--decode`` decodes with: ``--schemas``, else ``_schemas-0`` beside the PATHS.

    Usage errors (exit 2, before any record is read) when the ``kseg[decode]`` extra is missing or no
    registry is found; the decoders are imported only here, so a command without ``--decode`` never pays.
    """
    from kseg.decode.payload import MissingExtra, require_extra
    from kseg.decode.registry import load_registry

    try:
        require_extra()
    except MissingExtra as err:
        raise click.UsageError(str(err)) from None
    source = schemas if schemas is not None else schemas_beside(paths)
    if source is None:
        raise click.UsageError("no _schemas-0 beside the PATHS: give the registry with --schemas")
    return load_registry(source, max_batch_bytes)


def schemas_beside(paths: tuple[Path, ...]) -> Path | None:
    """``_schemas-0`` in a log directory given, or beside a partition (or a segment's partition) given."""
    for path in paths:
        for directory in (path, path.parent, path.parent.parent):
            if (directory / "_schemas-0").is_dir():
                return directory / "_schemas-0"
    return None
