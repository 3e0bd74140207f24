"""The contract of the command line's edge, for every command at once (docs/cli.md; real processes,
signals, FIFOs and a full or closed stdout are in tests/test_cli_faults.py).

* Exit codes live in ``kseg.errors`` only; no command imports ``kseg.cli`` (the lazy
  loader imports the commands, so the other way round would be a hidden cycle).
* A refusal (``kseg.errors.Refused``), any other ``KsegError`` and an ``OSError`` are
  handled once, in ``kseg.cli``: one line ``kseg: error: <file>: <message>`` on stderr,
  nothing on stdout, exit 2 (``--traceback`` shows the stack instead).
* Options two commands share are one decorator (``kseg.commands.options``).
* Every command and subcommand answers ``--help`` with exit 0.
"""

from __future__ import annotations

import ast
import errno
import importlib
import os
from pathlib import Path

import click
import pytest
from click.testing import CliRunner
from support import FIXTURES, REPO

from kseg.cli import COMMANDS, cli
from kseg.errors import EXIT_USAGE, KsegError, Refused

COMMANDS_DIR = REPO / "kseg" / "commands"
CLEAN_LOG = FIXTURES / "verify" / "clean" / "v2-codecs.log"


def run(*args: str | Path) -> click.testing.Result:
    return CliRunner().invoke(cli, [str(a) for a in args], env={"NO_COLOR": "1", "COLUMNS": "100"})


def _imported_modules(path: Path) -> set[str]:
    """Every name ``path`` imports, at any depth (imports inside functions count), relative ones resolved."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            package = ["kseg", "commands"][: 3 - node.level] if node.level else []
            base = ".".join([*package, node.module] if node.module else package)
            names.add(base)
            names.update(f"{base}.{alias.name}" for alias in node.names)
    return names


# -- exit codes in one place, no command imports the CLI ----------------------------------------------


@pytest.mark.parametrize("path", sorted(COMMANDS_DIR.glob("*.py")), ids=lambda p: p.name)
def test_no_command_module_imports_the_cli(path):
    imported = _imported_modules(path)
    assert {name for name in imported if name == "kseg.cli" or name.startswith("kseg.cli.")} == set()


def test_exit_codes_are_defined_only_in_errors():
    homes = set()
    for path in sorted((REPO / "kseg").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            targets = node.targets if isinstance(node, ast.Assign) else []
            for target in targets:
                names = target.elts if isinstance(target, ast.Tuple) else [target]
                if any(isinstance(n, ast.Name) and n.id.startswith("EXIT_") for n in names):
                    homes.add(str(path.relative_to(REPO)))
    assert homes == {"kseg/errors.py"}


# -- refusals, input errors and OSError end at the edge: one line, exit 2 --------------------------------

#: command -> (module holding the op it calls, the op's name there, arguments that reach the op)
OPS = {
    "dump": ("kseg.commands.dump", "iter_dump", ["{log}"]),
    "verify": ("kseg.ops.verify", "verify_paths", ["{log}"]),
    "reindex": ("kseg.commands.reindex", "reindex_paths", ["--check", "{log}"]),
    "recover": ("kseg.commands.recover", "recover_path", ["--dry-run", "{log}"]),
    "convert": ("kseg.commands.convert", "convert_path", ["{log}", "-o", "{out}", "--to-magic", "2"]),
}


def _run_with_failing_op(name, error, tmp_path, monkeypatch, *options):
    module, attr, args = OPS[name]

    def fail(*args, **kwargs):
        raise error

    monkeypatch.setattr(importlib.import_module(module), attr, fail)
    filled = [a.format(log=CLEAN_LOG, out=tmp_path / "out") for a in args]
    return run(*options, name, *filled)


@pytest.mark.parametrize("name", sorted(OPS))
def test_a_refusal_from_an_op_is_one_line_and_exit_2(name, tmp_path, monkeypatch):
    refusal = Refused("the output exists; refusing to replace it", path="/evidence/00000000000000000000.index")
    result = _run_with_failing_op(name, refusal, tmp_path, monkeypatch)
    assert (result.exit_code, result.stdout) == (EXIT_USAGE, "")
    assert result.stderr == (
        "kseg: error: /evidence/00000000000000000000.index: the output exists; refusing to replace it\n"
    )


@pytest.mark.parametrize("name", sorted(OPS))
def test_an_input_error_names_file_byte_and_field(name, tmp_path, monkeypatch):
    error = KsegError("Record is corrupt", path="/evidence/0.log", offset=267, field="batch.crc")
    result = _run_with_failing_op(name, error, tmp_path, monkeypatch)
    assert (result.exit_code, result.stdout) == (EXIT_USAGE, "")
    assert result.stderr == "kseg: error: /evidence/0.log byte 267 (batch.crc): Record is corrupt\n"


@pytest.mark.parametrize("name", sorted(OPS))
def test_an_os_error_from_an_op_is_one_line_naming_the_file(name, tmp_path, monkeypatch):
    error = PermissionError(errno.EACCES, os.strerror(errno.EACCES), "/evidence/0.log")
    result = _run_with_failing_op(name, error, tmp_path, monkeypatch)
    assert (result.exit_code, result.stdout) == (EXIT_USAGE, "")
    assert result.stderr == "kseg: error: /evidence/0.log: Permission denied\n"


def test_an_os_error_without_a_file_is_its_reason_alone(tmp_path, monkeypatch):
    error = OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
    result = _run_with_failing_op("recover", error, tmp_path, monkeypatch)
    assert (result.exit_code, result.stderr) == (EXIT_USAGE, "kseg: error: No space left on device\n")


def test_traceback_shows_the_error_itself(tmp_path, monkeypatch):
    error = PermissionError(errno.EACCES, "Permission denied", "/evidence/0.log")
    result = _run_with_failing_op("reindex", error, tmp_path, monkeypatch, "--traceback")
    assert result.exception is error and "kseg: error:" not in result.stderr


def _refuse_to_open(path: Path, monkeypatch) -> None:
    """Simulated EACCES on ``path``: a real chmod 0 is no obstacle to root, which CI runs as."""
    real_open = os.open

    def refuse(target, flags, *args, **kwargs):
        if os.fspath(target) == str(path):
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), str(path))
        return real_open(target, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", refuse)


@pytest.mark.parametrize(
    "args",
    [
        ["reindex", "--check", "{log}"],
        ["recover", "--dry-run", "{log}"],
        ["convert", "{log}", "-o", "{out}", "--to-magic", "2"],
    ],
    ids=lambda args: args[0],
)
def test_an_unreadable_input_is_one_line_naming_it_and_exit_2(args, tmp_path, monkeypatch):
    log = tmp_path / "in" / "00000000000000000000.log"
    log.parent.mkdir()
    log.write_bytes(CLEAN_LOG.read_bytes())
    _refuse_to_open(log, monkeypatch)
    result = run(*(a.format(log=log, out=tmp_path / "out") for a in args))
    assert (result.exit_code, result.stdout) == (EXIT_USAGE, "")
    assert result.stderr == f"kseg: error: {log}: Permission denied\n"
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())


# -- shared options, help ----------------------------------------------------------------------------------


def _option(command: click.Command, name: str) -> click.Parameter:
    return next(p for p in command.params if p.name == name)


def test_verify_and_spark_verify_take_the_same_options():
    from kseg.commands.spark import spark
    from kseg.commands.verify import verify

    spark_verify = spark.commands["verify"]
    for name in ("paths", "deep", "strict", "fmt", "max_findings"):
        mine, theirs = _option(verify, name), _option(spark_verify, name)
        assert mine.to_info_dict() == theirs.to_info_dict(), name


def test_reindex_recover_and_convert_share_their_index_and_output_options():
    commands = [importlib.import_module(f"kseg.commands.{n}") for n in ("reindex", "recover", "convert")]
    reindex, recover, convert = (getattr(m, m.__name__.rsplit(".", 1)[1]) for m in commands)
    for name in ("index_interval_bytes", "fmt"):
        infos = [_option(c, name).to_info_dict() for c in (reindex, recover, convert)]
        assert infos[0] == infos[1] == infos[2], name
    assert _option(reindex, "in_place").opts == _option(recover, "in_place").opts == ["--in-place"]


def _all_commands() -> list[list[str]]:
    found = []
    for name in sorted(COMMANDS):
        command = cli.get_command(click.Context(cli), name)
        found.append([name])
        if isinstance(command, click.Group):
            found.extend([name, sub] for sub in sorted(command.commands))
    return found


@pytest.mark.parametrize("words", _all_commands(), ids=" ".join)
def test_every_command_has_help_that_exits_0(words):
    for flag in ("--help", "-h") if len(words) == 1 else ("--help",):
        result = run(*words, flag)
        assert result.exit_code == 0, result.output
        usage = result.stdout.splitlines()[0]
        assert usage.startswith("Usage: ") and f" {' '.join(words)} [OPTIONS]" in usage


def test_the_group_help_lists_every_command():
    result = run("--help")
    assert result.exit_code == 0
    assert all(f"  {name} " in result.stdout for name in COMMANDS)


def test_a_spark_that_cannot_start_is_one_line_and_exit_2(monkeypatch):
    pytest.importorskip("pyspark")
    pytest.importorskip("pyarrow")
    from kseg.spark import session

    def cannot_start(master, conf, **settings):
        raise RuntimeError("Java gateway process exited\nbefore sending its port number")

    monkeypatch.setattr(session, "get_session", cannot_start)
    result = run("spark", "verify", CLEAN_LOG)
    assert (result.exit_code, result.stdout) == (EXIT_USAGE, "")
    assert result.stderr == f"kseg: error: spark: Java gateway process exited (Spark's log: {session.log_path()})\n"


# -- docs/cli.md, clause by clause, for every command ---------------------------------------------------

#: every command -> (module holding the op it calls, the op's name there, arguments that reach the op)
EVERY_OP = {
    **OPS,
    "triage": ("kseg.ops.triage.run", "triage", ["{dir}"]),
    "txn": ("kseg.ops.txn.run", "txn", ["{dir}"]),
}
#: the commands that write into -o OUTDIR, with arguments that do
WRITERS = {
    "reindex": ["reindex", "{log}", "-o", "{out}"],
    "recover": ["recover", "{log}", "-o", "{out}"],
    "convert": ["convert", "{log}", "-o", "{out}", "--to-magic", "2"],
}


def _fake_op(error: BaseException, out: Path | None = None):
    """An op that has begun writing into ``out`` (a segment's index) and then raises ``error``."""

    def op(*args, **kwargs):
        if out is not None:
            out.mkdir(parents=True, exist_ok=True)
            (out / "00000000000000000000.index").write_bytes(b"\0" * 8)
        raise error

    return op


def _run_op_raising(name, error, tmp_path, monkeypatch, args=None, out=None, *options):
    module, attr, op_args = EVERY_OP[name]
    monkeypatch.setattr(importlib.import_module(module), attr, _fake_op(error, out))
    words = [name, *op_args] if args is None else args
    return run(*options, *(a.format(log=CLEAN_LOG, dir=tmp_path, out=out or tmp_path / "out") for a in words))


@pytest.mark.parametrize("name", sorted(EVERY_OP))
def test_ctrl_c_is_exit_130_and_one_line(name, tmp_path, monkeypatch):
    result = _run_op_raising(name, KeyboardInterrupt(), tmp_path, monkeypatch)
    assert (result.exit_code, result.stdout, result.stderr) == (130, "", "kseg: interrupted\n")


@pytest.mark.parametrize("name", sorted(WRITERS))
@pytest.mark.parametrize("error", [KeyboardInterrupt(), KsegError("Record is corrupt", path="/e/0.log", offset=9)],
                         ids=["interrupted", "failed"])
def test_an_outdir_the_command_created_is_removed_when_it_cannot_finish(name, error, tmp_path, monkeypatch):
    out = tmp_path / "made" / "orders-0"
    result = _run_op_raising(name, error, tmp_path, monkeypatch, WRITERS[name], out)
    assert result.exit_code == (130 if isinstance(error, KeyboardInterrupt) else EXIT_USAGE)
    assert not (tmp_path / "made").exists()


@pytest.mark.parametrize("name", sorted(WRITERS))
def test_an_existing_outdir_loses_only_what_the_run_added(name, tmp_path, monkeypatch):
    out = tmp_path / "out"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    result = _run_op_raising(name, OSError(28, "No space left on device"), tmp_path, monkeypatch, WRITERS[name], out)
    assert result.exit_code == EXIT_USAGE
    assert sorted(p.name for p in out.iterdir()) == ["notes.txt"]


@pytest.mark.parametrize("name", sorted(EVERY_OP))
def test_traceback_is_accepted_after_the_command_too(name, tmp_path, monkeypatch):
    error = PermissionError(errno.EACCES, "Permission denied", "/evidence/0.log")
    module, attr, op_args = EVERY_OP[name]
    monkeypatch.setattr(importlib.import_module(module), attr, _fake_op(error))
    words = [a.format(log=CLEAN_LOG, dir=tmp_path, out=tmp_path / "out") for a in op_args]
    result = run(name, *words, "--traceback")
    assert result.exception is error and "kseg: error:" not in result.stderr


def test_traceback_after_double_dash_is_an_argument():
    from kseg.cli import traceback_first

    assert traceback_first(["dump", "--", "--traceback"]) == ["dump", "--", "--traceback"]
    assert traceback_first(["dump", "x", "--traceback"]) == ["--traceback", "dump", "x"]


@pytest.mark.parametrize("words", _all_commands(), ids=" ".join)
def test_a_usage_error_is_one_line_with_a_pointer_to_help(words):
    result = run(*words, "--no-such-option")
    assert (result.exit_code, result.stdout) == (EXIT_USAGE, "")
    assert result.stderr.startswith("kseg: error: No such option") and result.stderr.count("\n") == 1
    assert result.stderr.endswith(f"(see 'kseg {' '.join(words)} --help')\n")


def test_a_missing_argument_is_one_line_too():
    result = run("verify")
    assert (result.exit_code, result.stderr) == (
        EXIT_USAGE, "kseg: error: Missing argument 'PATHS...'. (see 'kseg verify --help')\n"
    )


NAMED = {
    "dump": ["dump", "{file}"],
    "verify": ["verify", "{file}"],
    "reindex": ["reindex", "--dry-run", "{file}"],
    "recover": ["recover", "--dry-run", "{file}"],
    "convert": ["convert", "{file}", "-o", "{out}", "--to-magic", "2"],
    "triage": ["triage", "{file}"],
    "txn": ["txn", "{file}"],
}


@pytest.mark.parametrize("name", sorted(NAMED))
def test_a_named_file_that_is_not_a_kafka_file_is_an_error(name, tmp_path):
    notes = tmp_path / "notes.txt"
    notes.write_text("not a segment")
    result = run(*(a.format(file=notes, out=tmp_path / "out") for a in NAMED[name]))
    assert (result.exit_code, result.stdout) == (EXIT_USAGE, "")
    assert result.stderr.startswith(f"kseg: error: {notes}: ") and result.stderr.count("\n") == 1
    assert not (tmp_path / "out").exists()


def test_output_is_spelt_the_same_everywhere_and_old_spellings_still_work(tmp_path):
    commands = [importlib.import_module(f"kseg.commands.{n}") for n in ("reindex", "recover", "convert")]
    for module in commands:
        command = getattr(module, module.__name__.rsplit(".", 1)[1])
        option = _option(command, "output_dir")
        assert option.opts == ["-o", "--output", "--output-dir"]
        help_text = run(command.name, "--help").stdout
        assert "-o, --output OUTDIR" in help_text and "--output-dir" not in help_text
    log = tmp_path / "in" / "00000000000000000000.log"
    log.parent.mkdir()
    log.write_bytes((FIXTURES / "verify" / "clean" / "partition" / "orders-0" / log.name).read_bytes())
    for spelling in ("-o", "--output", "--output-dir"):
        out = tmp_path / spelling.strip("-")
        assert run("reindex", str(log), spelling, str(out)).exit_code == 0
        assert (out / "00000000000000000000.index").is_file()


def test_dry_run_is_spelt_the_same_everywhere():
    from kseg.commands.recover import recover
    from kseg.commands.reindex import reindex

    assert _option(recover, "dry_run").opts == ["--dry-run"]
    assert _option(reindex, "check").opts == ["--dry-run", "--check"]
    dry, check = run("reindex", "--dry-run", CLEAN_LOG), run("reindex", "--check", CLEAN_LOG)
    assert (dry.exit_code, dry.stdout) == (check.exit_code, check.stdout)


def test_format_means_the_report_form_everywhere():
    for words in _all_commands():
        command = cli.get_command(click.Context(cli), words[0])
        if len(words) > 1 or isinstance(command, click.Group):
            continue  # spark export --format is the file format (docs/cli.md)
        fmt = next(p for p in command.params if "--format" in p.opts)
        assert {"text", "json"} <= set(fmt.type.choices), words


def test_spark_export_spells_output_and_file_format_like_the_rest():
    """``-o/--output`` and ``--file-format``; ``--to`` and ``--format`` (file formats only) are hidden old spellings."""
    from kseg.commands.spark import FILE_FORMATS, spark

    export = spark.commands["export"]
    assert _option(export, "out").opts == ["-o", "--output"]
    assert _option(export, "file_format").opts == ["--file-format"]
    assert _option(export, "old_out").hidden and _option(export, "old_format").hidden
    assert set(_option(export, "old_format").type.choices) == set(FILE_FORMATS)  # never text or table
    help_text = run("spark", "export", "--help").stdout
    assert "-o, --output OUT" in help_text and "--file-format" in help_text
    assert "--to " not in help_text and "--format " not in help_text
    exporter = pytest.importorskip("kseg.spark.export")
    assert tuple(exporter.FORMATS) == FILE_FORMATS


@pytest.mark.parametrize(
    "args",
    [
        ["-o", "{out}", "--to", "{out}"],
        ["-o", "{out}", "--file-format", "orc", "--format", "orc"],
        ["-o", "{out}", "--format", "text"],
        [],
    ],
    ids=["output+to", "file-format+format", "format-text", "no-output"],
)
def test_spark_export_option_mistakes_are_one_line_and_exit_2(args, tmp_path):
    result = run("spark", "export", CLEAN_LOG, *(a.format(out=tmp_path / "out") for a in args))
    assert (result.exit_code, result.stdout) == (EXIT_USAGE, "")
    assert result.stderr.startswith("kseg: error: ") and result.stderr.count("\n") == 1
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    "args",
    [
        ["dump", "--offsets-decoder", "--cluster-metadata-decoder", "{log}"],
        ["recover", "--dry-run", "-o", "{out}", "{log}"],
        ["reindex", "--dry-run", "--in-place", "{log}"],
        ["dump", "--from-offset", "9", "--to-offset", "3", "{log}"],
    ],
    ids=lambda args: " ".join(a for a in args if a.startswith("--")),
)
def test_conflicting_options_are_one_line_and_exit_2(args, tmp_path):
    result = run(*(a.format(log=CLEAN_LOG, out=tmp_path / "out") for a in args))
    assert (result.exit_code, result.stdout) == (EXIT_USAGE, "")
    assert result.stderr.startswith("kseg: error: ") and result.stderr.count("\n") == 1
    assert not (tmp_path / "out").exists()


def test_progress_is_nothing_in_a_pipe_and_a_bar_on_a_terminal():
    import io

    from kseg.render import progress

    assert progress.wanted(False, io.StringIO()) is None
    piped = progress.wanted(True, io.StringIO())
    assert piped is not None and not piped.live

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    screen = Terminal()
    line = progress.wanted(False, screen)
    assert line is not None and line.live
    line.label, line.total = "convert", 4 << 30
    line.start -= 2
    line.next = 0
    line.advance(1 << 30)
    line.clear()
    assert screen.getvalue().startswith("\rconvert [######..................]  25%  1 GiB of 4 GiB  ")
    drawn, wiped = screen.getvalue()[1:].split("\r", 1)
    assert drawn.endswith("/s") and wiped == " " * len(drawn) + "\r"  # the bar is wiped before the report
