"""``--schemas`` and the registry ``--decode`` reads: one option and one lookup for dump, grep and spark export.

The three commands once each spelt the option and the ``_schemas-0``-beside-the-PATHS search
themselves; now they share ``kseg.commands.options.schemas`` and ``schema_registry``.  What a user
sees must therefore be the same in all three: the option's help, and the usage error when no
registry is found.
"""

from __future__ import annotations

from pathlib import Path

import click
import pytest
from click.testing import CliRunner
from support import FIXTURES

from kseg.cli import cli
from kseg.commands import options
from kseg.commands.dump import dump
from kseg.commands.grep import grep
from kseg.commands.spark import spark

LOGS = FIXTURES / "decode" / "logs"
COMMANDS = {"dump": ["dump"], "grep": ["grep"], "spark export": ["spark", "export", "-o", "OUT"]}


def _schemas_option(command: click.Command) -> click.Option:
    return next(p for p in command.params if isinstance(p, click.Option) and p.name == "schemas")


def test_the_three_commands_take_the_same_schemas_option():
    export = spark.commands["export"]
    found = [_schemas_option(c) for c in (dump, grep, export)]
    assert {(o.opts[0], o.help, o.metavar) for o in found} == {("--schemas", _schemas_option(
        options.schemas(click.Command("x"))).help, "PATH")}


@pytest.mark.parametrize("name", COMMANDS)
def test_no_registry_beside_the_paths_is_the_same_usage_error(name: str, tmp_path: Path):
    copied = tmp_path / "orders-json-0"
    copied.mkdir()
    (copied / "00000000000000000000.log").write_bytes((LOGS / "orders-json-0" / "00000000000000000000.log").read_bytes())
    argv = [str(tmp_path / a) if a == "OUT" else a for a in COMMANDS[name]]
    result = CliRunner().invoke(cli, [*argv, "--decode", str(copied)])
    assert result.exit_code == 2
    assert result.stderr == (f"kseg: error: no _schemas-0 beside the PATHS: give the registry with --schemas "
                             f"(see 'kseg {name} --help')\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["orders-json-0"]  # nothing written


def test_schemas_beside_a_segment_a_partition_or_the_log_directory():
    beside = LOGS / "_schemas-0"
    for given in (LOGS, LOGS / "orders-avro-0", LOGS / "orders-avro-0" / "00000000000000000000.log"):
        assert options.schemas_beside((given,)) == beside
    assert options.schemas_beside((FIXTURES,)) is None


@pytest.mark.parametrize("name", COMMANDS)
def test_schemas_without_decode_is_the_same_usage_error(name: str, tmp_path: Path):
    """Alone, --schemas would be ignored without a word (grep and dump once did): every command refuses it."""
    argv = [str(tmp_path / a) if a == "OUT" else a for a in COMMANDS[name]]
    result = CliRunner().invoke(cli, [*argv, "--schemas", str(LOGS / "_schemas-0"), str(LOGS / "orders-avro-0")])
    assert result.exit_code == 2
    assert result.stderr == (f"kseg: error: --schemas is the registry of --decode: give --decode too "
                             f"(see 'kseg {name} --help')\n")
    assert list(tmp_path.iterdir()) == []  # nothing written
