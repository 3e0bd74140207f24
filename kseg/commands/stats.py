"""``kseg stats``: sizes, skew, formats, producers, time and the next retention pass, per partition, topic and log dir."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import click

from kseg.commands import options


def parse_topic_config(specs: tuple[str, ...]) -> dict[str, dict[str, str]]:
    """``TOPIC:KEY=VALUE`` options as {topic: {key: value}} (the topic may hold ':' itself; the last one before '=' splits)."""
    out: dict[str, dict[str, str]] = {}
    for spec in specs:
        key_value_at = spec.find("=")
        colon = spec.rfind(":", 0, key_value_at if key_value_at >= 0 else len(spec))
        if colon <= 0 or key_value_at < colon:
            raise click.BadParameter(f"{spec!r}: expected TOPIC:KEY=VALUE", param_hint="--topic-config")
        key, _, value = spec[colon + 1 :].partition("=")
        out.setdefault(spec[:colon], {})[key] = value
    return out


def config_options(f):
    """The topic-config options ``kseg stats`` and ``kseg report`` share."""
    for decorator in reversed((
        click.option("--retention-ms", type=int, default=None, help="retention.ms for every topic [Kafka: 604800000]."),
        click.option("--retention-bytes", type=int, default=None, help="retention.bytes for every topic [Kafka: -1]."),
        click.option("--cleanup-policy", default=None, help="cleanup.policy for every topic: delete, compact, or compact,delete."),
        click.option("--topic-config", "topic_config", multiple=True, metavar="TOPIC:KEY=VALUE",
                     help="A config of one topic (retention.ms, retention.bytes, cleanup.policy); repeatable."),
        click.option("--now", "now_ms", type=int, default=None, help="The retention clock, ms since the epoch [now]."),
        click.option("--records", is_flag=True, help="Also read the records: tombstones, keys, headers, compression."),
        click.option("--sample", type=click.IntRange(min=1), default=1, show_default=True,
                     help="With --records, read one batch in N."),
        click.option("--max-message-bytes", type=click.IntRange(min=0), default=1048588, show_default=True,
                     help="The largest batch the topic accepts (max.message.bytes)."),
        click.option("-j", "--jobs", type=click.IntRange(min=1), default=None, help="Worker processes [default: all cores]."),
    )):
        f = decorator(f)
    return f


def run_stats(paths: tuple[Path, ...], retention_ms: int | None, retention_bytes: int | None,
              cleanup_policy: str | None, topic_config: tuple[str, ...], now_ms: int | None, records: bool,
              sample: int, max_message_bytes: int, jobs: int | None):
    """The shared run of stats and report: options to configs, then :func:`kseg.ops.stats.collect_stats`."""
    from kseg.ops.discover import check_named_inputs, parse_partition_dir
    from kseg.ops.stats import StatsOptions, collect_stats, topic_configs
    from kseg.ops.stats.run import find_partitions

    check_named_inputs(paths)  # a FIFO or a file of no Kafka kind: refused before anything is read
    defaults = {k: str(v) for k, v in (("retention.ms", retention_ms), ("retention.bytes", retention_bytes),
                                       ("cleanup.policy", cleanup_policy)) if v is not None}
    topics = sorted({name.topic for d, _ in find_partitions(list(paths)) if (name := parse_partition_dir(d))})
    try:
        configs = topic_configs(topics, defaults=defaults, per_topic=parse_topic_config(topic_config))
    except ValueError as err:
        raise click.BadParameter(str(err), param_hint="--topic-config") from None
    opts = StatsOptions(records=records, sample=sample, now_ms=now_ms, max_message_bytes=max_message_bytes)
    return collect_stats(list(paths), opts, configs, jobs=jobs)


@click.command()
@options.paths_argument
@click.option("--format", "fmt", type=click.Choice(["text", "table", "json"]), default="text", show_default=True,
              help="text = lines; table = rich tables with bars; json = JSON Lines (partitions, topics, log dirs).")
@config_options
def stats(paths: tuple[Path, ...], fmt: str, **kw: Any) -> None:
    """Sizes, skew, formats, producers, time and the next retention pass of partitions and log directories.

    Reads batch headers (verify's speed) and, with --records, the records of one
    batch in --sample.  The retention forecast is Kafka 4.3.0's next
    deleteOldSegments pass with the topic configs given (Kafka's defaults
    otherwise): which segments go, which stay and why.  Read-only.  Exit 0, or
    2 on usage errors and unreadable input.

    \b
    Example:
      kseg stats /var/lib/kafka --format table
      kseg stats /var/lib/kafka --retention-ms 86400000 --topic-config logs:retention.bytes=1073741824
    """
    result = run_stats(paths, **kw)
    if fmt == "json":
        from kseg.render.stats import json_lines

        for line in json_lines(result):
            click.echo(line)
    elif fmt == "table":
        from kseg.render.stats import table_lines
        from kseg.render.terminal import terminal_width

        color = sys.stdout.isatty() and "NO_COLOR" not in os.environ
        for line in table_lines(result, width=terminal_width(), color=color):
            click.echo(line, color=color)
    else:
        from kseg.render.stats import text_lines

        for line in text_lines(result):
            click.echo(line)
