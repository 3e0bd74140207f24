"""The ``kseg`` command line: a click group over thin commands.

Commands live one per module in :mod:`kseg.commands` and are imported only
when invoked, so ``kseg --help`` stays fast.  Each command parses its
arguments, calls one ``kseg.ops`` function, hands the result to
``kseg.render`` and picks the exit code.

Exit codes (``kseg.errors.EXIT_*``), for every command: 0 success (verify:
clean), 1 problems found, 2 usage errors, refusals or unreadable input.  This
is the one place that turns an exception into an exit: a ``KsegError`` (a
refusal included: ``kseg.errors.Refused``) and an ``OSError`` are caught here,
once for every command, and printed as one line on stderr,
``kseg: error: <file>: <message>`` (with the byte position and field when the
error has them); ``--traceback`` shows the stack instead.  A closed pipe
(``kseg dump ... | head``) ends quietly.  Commands therefore never catch
their own refusals or ``OSError``, and never import this module.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys
from typing import Any

import click

from kseg import __version__
from kseg.errors import EXIT_OK, EXIT_USAGE, KsegError

#: command name -> "module:attribute", imported on first use.
COMMANDS = {
    "dump": "kseg.commands.dump:dump",
    "verify": "kseg.commands.verify:verify",
    "reindex": "kseg.commands.reindex:reindex",
    "recover": "kseg.commands.recover:recover",
    "convert": "kseg.commands.convert:convert",
    "spark": "kseg.commands.spark:spark",
    "triage": "kseg.commands.triage:triage",
}


class LazyGroup(click.Group):
    """A group that imports each command's module only when that command runs."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(name for name, target in COMMANDS.items() if _importable(target))

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        target = COMMANDS.get(cmd_name)
        if target is None or not _importable(target):
            return None
        module_name, attr = target.split(":")
        return getattr(importlib.import_module(module_name), attr)

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except BrokenPipeError:  # before OSError: a reader that went away is not an error
            _quiet_broken_pipe()
            ctx.exit(EXIT_OK)
        except (KsegError, OSError) as err:
            if ctx.obj and ctx.obj.get("traceback"):
                raise
            click.echo(f"kseg: error: {error_line(err)}", err=True)
            ctx.exit(EXIT_USAGE)


def error_line(err: KsegError | OSError) -> str:
    """What follows ``kseg: error: ``: the file first when it is known, then what went wrong.

    A ``KsegError`` already reads ``<file> byte <N> (<field>): <message>``; an
    ``OSError`` says ``<file>: <strerror>`` (``[Errno 13] ...`` without the noise).
    """
    if isinstance(err, KsegError):
        return str(err)
    reason = err.strerror or str(err)
    return f"{err.filename}: {reason}" if err.filename is not None else reason


def _importable(target: str) -> bool:
    module_name = target.split(":", 1)[0]
    return importlib.util.find_spec(module_name) is not None


def _quiet_broken_pipe() -> None:
    """Point stdout at /dev/null so Python's exit-time flush does not complain."""
    with open(os.devnull, "wb") as devnull:
        os.dup2(devnull.fileno(), sys.stdout.fileno())


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="kseg")
@click.option("--traceback", is_flag=True, help="Show the Python stack on errors (for bug reports).")
@click.pass_context
def cli(ctx: click.Context, traceback: bool) -> None:
    """Forensics for Apache Kafka log segment files.

    Read-only by default: dump and verify never create or change a file.
    Exit codes: 0 ok, 1 problems found, 2 usage error or unreadable input.
    """
    ctx.ensure_object(dict)
    ctx.obj["traceback"] = traceback


def main() -> None:
    """Console-script entry point."""
    cli(prog_name="kseg")
