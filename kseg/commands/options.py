"""Click options that more than one command takes, each written once.

One named decorator per option (as pip-tools does), so that ``kseg verify``
and ``kseg spark verify`` -- or reindex, recover and convert -- cannot drift
apart in a default, a range or a spelling.  Where the help must say what the
option means for one command (``-o``: segments or indexes?), the decorator is
a function taking that help text; the name, type and default stay here.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from kseg.index import DEFAULT_INDEX_INTERVAL_BYTES

F = TypeVar("F", bound=Callable[..., Any])

# -- arguments --------------------------------------------------------------------------------------------

#: PATHS...: one or more files, partition directories or log directories that exist.
paths_argument = click.argument("paths", nargs=-1, required=True, type=click.Path(exists=True, path_type=Path))

#: PATH: one .log segment or partition directory that exists.
path_argument = click.argument("path", type=click.Path(exists=True, path_type=Path))

# -- output -----------------------------------------------------------------------------------------------

#: ``--format text|json`` into the parameter ``fmt``.
text_or_json = click.option(
    "--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True
)


def output_dir(help_text: str, *, required: bool = False) -> Callable[[F], F]:
    """``-o/--output-dir``: a directory the command writes into (created if needed)."""
    return click.option(
        "-o", "--output-dir", required=required, type=click.Path(file_okay=False, path_type=Path), help=help_text
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

# -- verify (kseg verify and kseg spark verify) ----------------------------------------------------------

deep = click.option("--deep", is_flag=True, help="Decode every record too (default: batch level: framing, CRC, headers).")
strict = click.option("--strict", is_flag=True, help="Exit 1 on warnings as well as errors.")
max_findings = click.option(
    "--max-findings", type=click.IntRange(min=0), default=20, show_default=True, help="Rows in the text findings table."
)

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
