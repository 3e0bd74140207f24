"""The ``kseg`` command line: a click group over thin commands, and the one place a run ends.

Commands live one per module in :mod:`kseg.commands` and are imported only
when invoked, so ``kseg --help`` stays fast.  Each command parses its
arguments, calls one ``kseg.ops`` function, hands the result to
``kseg.render`` and picks the exit code.

The contract every command keeps is written in docs/cli.md; this module holds
the part no command can: :meth:`LazyGroup.main` turns however a run ends into
one exit code (``kseg.errors.EXIT_*``: 0 done, 1 problems found or data cut,
2 usage, unreadable input or could not complete, 130 interrupted, 143
terminated) and one line on stderr, ``kseg: error: <file>[ byte N (field)]: message`` (control
characters in it spelt out, so a newline in a file name cannot forge a second line) -- for a
``KsegError`` (a refusal included), an ``OSError``, a full stdout (named
``stdout``) and click's usage errors alike (``--traceback``, anywhere on the
line, shows the stack instead).  A closed pipe (``kseg dump ... | head``) ends
quietly.  Commands therefore never catch their own refusals or ``OSError``,
and never import this module.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
import os
import signal
import sys
import threading
from collections.abc import Iterator, Sequence
from typing import Any

import click

from kseg import __version__, mapguard
from kseg.errors import EXIT_INTERRUPTED, EXIT_OK, EXIT_TERMINATED, EXIT_USAGE, KsegError
from kseg.render.terminal import escape_controls

#: command name -> "module:attribute", imported on first use.
COMMANDS = {
    "dump": "kseg.commands.dump:dump",
    "verify": "kseg.commands.verify:verify",
    "reindex": "kseg.commands.reindex:reindex",
    "recover": "kseg.commands.recover:recover",
    "convert": "kseg.commands.convert:convert",
    "spark": "kseg.commands.spark:spark",
    "triage": "kseg.commands.triage:triage",
    "txn": "kseg.commands.txn:txn",
    "diff": "kseg.commands.diff:diff",
    "stats": "kseg.commands.stats:stats",
    "report": "kseg.commands.report:report",
    "metadata": "kseg.commands.metadata:metadata",
    "grep": "kseg.commands.grep:grep",
}
#: command name -> the first sentence of its help, for ``kseg --help`` without importing every
#: command (tests/test_startup_imports.py checks the listing against the commands' own).
SUMMARIES = {
    "dump": "Dump segments, indexes and snapshots as kafka-dump-log.sh does.",
    "verify": "Check segment files, partition directories or log directories; report every problem.",
    "reindex": "Rebuild segment indexes exactly as Kafka's LogSegment.recover writes them.",
    "recover": "Keep what Kafka's recovery keeps of a segment, or every intact batch.",
    "convert": "Convert a segment or a partition to another magic and/or codec, the way Kafka converts.",
    "spark": "Run verify and export on Spark: local[*] by default, or a cluster with --master.",
    "triage": "What the broker's next start does to every partition of these log directories.",
    "txn": "Transactions of every partition in these log or partition directories, and which ones hang.",
    "diff": "Compare the replicas of a partition; what every choice of leader throws away.",
    "stats": "Sizes, skew, formats, producers, time and the next retention pass of partitions and log directories.",
    "report": "Write one self-contained HTML page: treemap, time, formats, producers, retention, verdicts.",
    "metadata": "The cluster as a KRaft broker's __cluster_metadata-0 remembers it, at any offset or time.",
    "grep": "Print the records of these segments that match every predicate given.",
}


class Terminated(KeyboardInterrupt):
    """``SIGTERM``, raised where ``SIGINT`` raises ``KeyboardInterrupt``.

    A subclass, so that every cleanup written for Ctrl-C -- temporary files,
    an unfinished OUTDIR (kseg.commands.unfinished), worker pools -- runs for a
    ``kill`` too; only the last line and the exit code differ.
    """


@contextlib.contextmanager
def sigterm_raises() -> Iterator[None]:
    """For the length of one run, ``SIGTERM`` raises :class:`Terminated` in this process (the main thread only).

    A forked worker inherits the handler; there the signal keeps its default
    meaning (the worker ends), because only the run's own process unwinds.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    owner = os.getpid()

    def terminate(signum: int, frame: object) -> None:
        if os.getpid() != owner:
            signal.signal(signum, signal.SIG_DFL)
            os.kill(os.getpid(), signum)
            return
        raise Terminated

    previous = signal.signal(signal.SIGTERM, terminate)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


class LazyGroup(click.Group):
    """A group that imports each command's module only when that command runs, and ends every run itself."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(name for name, target in COMMANDS.items() if _importable(target))

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        target = COMMANDS.get(cmd_name)
        if target is None or not _importable(target):
            return None
        module_name, attr = target.split(":")
        return getattr(importlib.import_module(module_name), attr)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """Click's command listing, drawn from :data:`SUMMARIES`: ``kseg --help`` imports no command."""
        listed = [
            click.Command(name, help=SUMMARIES[name]) if name in SUMMARIES else self.get_command(ctx, name)
            for name in self.list_commands(ctx)
        ]  # a command without a summary yet is imported, as click would
        click.Group(commands=[c for c in listed if c is not None]).format_commands(ctx, formatter)

    def main(  # type: ignore[override]  # click's overloads; this one always exits (or returns the code)
        self,
        args: Sequence[str] | None = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        **extra: Any,
    ) -> int:
        """Run one command line and turn however it ends into one exit code (docs/cli.md).

        Click's own ``main`` prints usage errors on four lines, ``Aborted!`` on
        Ctrl-C with exit 1, and a traceback when stdout is full; here each ends
        as the contract says.
        """
        words = traceback_first(list(sys.argv[1:] if args is None else args))
        prog_name = "kseg"  # also under a test runner, which would say "cli"
        self._main_shell_completion(extra, prog_name, complete_var)
        real_stdout = sys.stdout
        named = NamedStdout(real_stdout)
        sys.stdout = named  # a TextIO in all but name
        try:
            with sigterm_raises():
                code = self._ended(named, words, prog_name, **extra)
        finally:
            sys.stdout = real_stdout
        if standalone_mode:
            sys.exit(code)
        return code

    def _ended(self, named: NamedStdout, words: list[str], prog_name: str, **extra: Any) -> int:
        """Run the command; however it ends, the exit code (its one line printed)."""
        faults = mapguard.faults()
        try:
            code = self._run(list(words), prog_name, **extra)  # click consumes the list it parses
            sys.stdout.flush()  # a full disk shows itself here at the latest
            dropped = mapguard.shrunk()  # a mapping dropped unclosed whose file shrank (kseg.mapguard)
            if dropped is not None:
                raise dropped
            if mapguard.faults() != faults:  # a vanished page no MappedFile.close accounted for (kseg.mapguard)
                raise mapguard.FileShrank("a file shrank while kseg read it (another process truncated it): "
                                          "what this run printed is not to be trusted")
        except BaseException as err:
            try:
                code = EXIT_OK if isinstance(err, SystemExit) and named.pipe_closed else _ending(err, words)
            except KeyboardInterrupt as again:  # a second Ctrl-C (or kill) while the first is being reported
                code = EXIT_TERMINATED if isinstance(again, Terminated) else EXIT_INTERRUPTED
        return code

    def _run(self, words: list[str], prog_name: str, **extra: Any) -> int:
        try:
            with self.make_context(prog_name, words, **extra) as ctx:
                self.invoke(ctx)
        except click.exceptions.Exit as done:
            return done.exit_code
        return EXIT_OK


class _Named:
    """A stream whose failed writes name it: an ``OSError`` from ``write`` has no file name of its own."""

    def __init__(self, stream: Any, name: str, owner: NamedStdout | None = None) -> None:
        self._stream = stream
        self._name = name
        self._owner = owner

    def __getattr__(self, attr: str) -> Any:
        return getattr(self._stream, attr)

    def _named(self, err: OSError) -> OSError:
        if isinstance(err, BrokenPipeError):
            if self._owner is not None:
                self._owner.pipe_closed = True
        elif err.filename is None:
            err.filename = self._name
        return err

    def write(self, data: Any) -> int:
        try:
            return self._stream.write(data)
        except OSError as err:
            raise self._named(err) from None

    def flush(self) -> None:
        try:
            self._stream.flush()
        except OSError as err:
            raise self._named(err) from None


class NamedStdout(_Named):
    """``sys.stdout`` (and its ``buffer``) for the length of one run: ``> /dev/full`` reads ``stdout: No space...``.

    It also remembers a closed pipe, because rich turns one into ``SystemExit(1)``
    (``Console.on_broken_pipe``): that exit is the quiet end of a closed pipe too.
    """

    def __init__(self, stream: Any) -> None:
        super().__init__(stream, "stdout")
        self._owner = self
        self.pipe_closed = False

    @property
    def buffer(self) -> Any:
        return _Named(self._stream.buffer, "stdout", self)


def traceback_first(words: list[str]) -> list[str]:
    """``--traceback`` is accepted anywhere on the line (before ``--``): moved to the front, where the group reads it."""
    end = words.index("--") if "--" in words else len(words)
    if "--traceback" not in words[:end]:
        return words
    rest = [w for w in words[:end] if w != "--traceback"]
    return ["--traceback", *rest, *words[end:]]


def _ending(err: BaseException, words: list[str]) -> int:
    """The exit code for a run that raised ``err``, after printing its one line (or its stack)."""
    if isinstance(err, SystemExit):
        raise err
    if isinstance(err, Terminated):  # before KeyboardInterrupt, whose subclass it is
        click.echo("kseg: terminated", err=True)
        return EXIT_TERMINATED
    if isinstance(err, (KeyboardInterrupt, click.Abort)):
        click.echo(("\n" if _terminal(sys.stderr) else "") + "kseg: interrupted", err=True)  # past the ^C
        return EXIT_INTERRUPTED
    if isinstance(err, BrokenPipeError):  # before OSError: a reader that went away is not an error
        _quiet_stdout()
        return EXIT_OK
    if isinstance(err, click.exceptions.NoArgsIsHelpError):  # bare ``kseg``: the help, as before
        click.echo(err.format_message(), err=True)
        return err.exit_code
    if isinstance(err, click.ClickException):
        click.echo(f"kseg: error: {escape_controls(usage_line(err))}", err=True)
        return err.exit_code
    if not isinstance(err, (KsegError, OSError)) or (words and words[0] == "--traceback"):
        raise err
    if isinstance(err, OSError) and err.filename == "stdout":
        _quiet_stdout()
    click.echo(f"kseg: error: {escape_controls(error_line(err))}", err=True)  # one line, whatever a name holds
    return EXIT_USAGE


def usage_line(err: click.ClickException) -> str:
    """Click's usage error on one line, with where to look: ``No such option: --bogus (see 'kseg verify --help')``."""
    message = " ".join(err.format_message().split())
    ctx = getattr(err, "ctx", None)
    if isinstance(err, click.UsageError) and ctx is not None:
        message += f" (see '{ctx.command_path} --help')"
    return message


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


def _terminal(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


def _quiet_stdout() -> None:
    """Point stdout at /dev/null so Python's exit-time flush does not complain (a pipe closed, a disk full)."""
    try:
        fd = sys.stdout.fileno()
    except (AttributeError, OSError, ValueError):  # not a real file (a test runner's buffer)
        return
    with open(os.devnull, "wb") as devnull:
        os.dup2(devnull.fileno(), fd)


def _version(ctx: click.Context, value: bool) -> None:
    """``kseg --version``: click's line plus the core's status (docs/core.md)."""
    if value and not ctx.resilient_parsing:
        from kseg.format._core import STATUS

        click.echo(f"kseg, version {__version__} ({STATUS})")
        ctx.exit()


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--version", is_flag=True, expose_value=False, is_eager=True, callback=lambda ctx, _, value: _version(ctx, value),
              help="Show the version, and whether the compiled core is in use, and exit.")
@click.option("--traceback", is_flag=True, help="Show the Python stack on errors (for bug reports).")
@click.pass_context
def cli(ctx: click.Context, traceback: bool) -> None:
    """Forensics for Apache Kafka log segment files.

    Read-only by default: dump, verify and triage never create or change a file.
    Exit codes: 0 ok, 1 problems found or data cut, 2 usage error, unreadable
    input or could not complete, 130 interrupted, 143 terminated (docs/cli.md).
    """
    ctx.ensure_object(dict)
    ctx.obj["traceback"] = traceback


def main() -> None:
    """Console-script entry point."""
    cli(prog_name="kseg")
