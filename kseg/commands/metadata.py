"""``kseg metadata``: the cluster a KRaft metadata log describes, at any point, its history and diffs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from kseg.render.terminal import terminal_width

FORMATS = ("text", "json", "table")
SUBCOMMANDS = ("show", "history", "diff")


class DefaultShow(click.Group):
    """``kseg metadata [OPTIONS] DIR`` is ``kseg metadata show [OPTIONS] DIR``: a first argument that is neither
    a subcommand nor an option shows, and so does one of show's options (``kseg metadata --at 1234 DIR``);
    ``--help`` and an unknown option stay the group's (its usage errors point at ``kseg metadata --help``)."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        args = self._subcommand_first(ctx, args)
        if args and args[0] not in self.commands and (not args[0].startswith("-") or self._shows(ctx, args[0])):
            args = ["show", *args]
        return super().parse_args(ctx, args)

    def _subcommand_first(self, ctx: click.Context, args: list[str]) -> list[str]:
        """Options given before a subcommand (``kseg metadata --format json history DIR --topic x``) are
        moved after it when they are its own; any other is refused in one line that names the order."""
        lead: list[str] = []
        names: list[str] = []
        i = 0
        while i < len(args) and args[i].startswith("-") and args[i] not in ctx.help_option_names:
            step = 1 if "=" in args[i] or i + 1 >= len(args) else 2  # every option of kseg metadata takes a value
            names.append(args[i].split("=", 1)[0])
            lead += args[i:i + step]
            i += step
        if not lead or i >= len(args) or args[i] not in self.commands or args[i] == "show":
            return args
        command = args[i]
        own = {opt for param in self.commands[command].get_params(ctx) for opt in param.opts}
        for name in names:
            if name not in own:
                raise click.UsageError(f"{name} is not an option of 'kseg metadata {command}'; the subcommand "
                                       f"comes first: kseg metadata {command} ARGS [OPTIONS]", ctx)
        return [command, *lead, *args[i + 1:]]

    def _shows(self, ctx: click.Context, word: str) -> bool:
        """Is ``word`` (``--at``, ``--at=5``) one of show's own options?"""
        options = {name for param in self.commands["show"].get_params(ctx) for name in param.opts}
        return word.split("=", 1)[0] in options - set(ctx.help_option_names)


def _exit(findings: int) -> None:
    click.get_current_context().exit(1 if findings else 0)


def _at(_: click.Context, __: click.Parameter, value: Any) -> Any:
    from kseg.metadata.at import parse_at

    if value is None:
        return None
    if isinstance(value, tuple):
        return tuple(parse_at(v) for v in value)
    return parse_at(value)


directory = click.argument("path", type=click.Path(exists=True, file_okay=False, path_type=Path))


@click.group(cls=DefaultShow)
def metadata() -> None:
    """The cluster as a KRaft broker's __cluster_metadata-0 remembers it, at any offset or time.

    \b
    kseg metadata [--at OFFSET|<n>ms|ISO-8601] [--format text|table|json] DIR
    kseg metadata history DIR --topic T | --partition T-P | --config KEY | --acl PRINCIPAL | --broker N
    kseg metadata diff DIR --at T1 --at T2
    kseg metadata check LOGDIR...

    DIR is a log directory or its __cluster_metadata-0.  The newest snapshot at or
    before the point and the log after it are replayed as Kafka's metadata loader does.
    --at 1234 is an offset, 1795738601947ms epoch milliseconds, 2026-11-27T09:00:00Z a
    time (UTC when no zone is given); a bare number of 13+ digits is refused.
    Read-only.  Exit 0, or 1 when a damaged batch or impossible record was found.
    """


@metadata.command()
@directory
@click.option("--at", "at", callback=_at, metavar="OFFSET|<n>ms|ISO-8601",
              help="The image after this offset (digits), or at this time (<n>ms or ISO-8601; default: the end).")
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="text", show_default=True,
              help="text = a line per entity; table = partitions as a table; json = JSON Lines.")
def show(path: Path, at: Any, fmt: str) -> None:
    """The image at a point: topics, partitions, configs, brokers, ACLs, features, quotas."""
    from kseg.ops.metadata.show import show as run_show
    from kseg.render import metadata as render

    result = run_show(path, at)
    lines = (render.show_json(result) if fmt == "json" else
             render.show_table(result, terminal_width()) if fmt == "table" else render.show_text(result))
    for line in lines:
        click.echo(line)
    _exit(len(result.replay.findings))


@metadata.command()
@directory
@click.option("--topic", help="A topic: creation, partitions, configs, deletion.")
@click.option("--partition", help="TOPIC-PARTITION: replicas, ISR, ELR, leader and epochs.")
@click.option("--config", help="A config key, on every resource.")
@click.option("--acl", help="A principal (User:alice): its ACLs.")
@click.option("--broker", help="A broker id: registrations, fencing, log dirs.")
@click.option("--format", "fmt", type=click.Choice(("text", "json")), default="text", show_default=True)
def history(path: Path, fmt: str, **subjects: str | None) -> None:
    """Every change of one subject, with its offset and time."""
    from kseg.ops.metadata.history import history as run_history
    from kseg.render import metadata as render

    given = [(k, v) for k, v in subjects.items() if v is not None]
    if len(given) != 1:
        raise click.UsageError("give exactly one of --topic, --partition, --config, --acl, --broker")
    result = run_history(path, *given[0])
    for line in render.history_lines(result, fmt):
        click.echo(line)
    _exit(len(result.replay.findings))


@metadata.command()
@directory
@click.option("--at", "at", multiple=True, required=True, callback=_at, metavar="OFFSET|<n>ms|ISO-8601",
              help="Give twice: the two points to compare.")
@click.option("--format", "fmt", type=click.Choice(("text", "json")), default="text", show_default=True)
def diff(path: Path, at: tuple[Any, ...], fmt: str) -> None:
    """The entities added, removed or changed between two points."""
    from kseg.ops.metadata.diff import diff as run_diff
    from kseg.render import metadata as render

    if len(at) != 2:
        raise click.UsageError("give --at exactly twice")
    result = run_diff(path, at[0], at[1])
    for line in render.diff_lines(result, fmt):
        click.echo(line)
    _exit(len(result.before.findings) + len(result.after.findings))


@metadata.command()
@click.argument("log_dirs", nargs=-1, required=True, type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--format", "fmt", type=click.Choice(("text", "json")), default="text", show_default=True)
def check(log_dirs: tuple[Path, ...], fmt: str) -> None:
    """The image against the partition directories of these log directories (one broker's log.dirs).

    Strays (renamed at the next start), partitions assigned here but missing, topic ids that disagree,
    replicas the image puts in another log directory (KIP-858), and the metadata log's own findings.
    Exit 0 clean, 1 findings.
    """
    from kseg.ops.metadata.check import check as run_check
    from kseg.render import metadata as render

    result = run_check(log_dirs)
    for line in render.check_lines(result, fmt):
        click.echo(line)
    _exit(len(result.findings))
