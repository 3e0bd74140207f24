"""Every command is documented in README and has help text (sqlite-utils' docs test)."""

import pytest
from click.testing import CliRunner
from support import REPO

from kseg.cli import COMMANDS, cli

README = (REPO / "README.md").read_text()


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_command_is_in_readme_and_has_help(name):
    assert f"kseg {name}" in README
    result = CliRunner().invoke(cli, [name, "--help"])
    assert result.exit_code == 0, result.output
    assert "Usage: " in result.stdout and len(result.stdout.splitlines()) > 3


def test_readme_gives_the_two_setup_commands_and_ci_runs_the_second():
    install_run = "python3 -m venv .venv && .venv/bin/pip install -e . && .venv/bin/kseg verify fixtures/real/kafka-logs"
    tests = "python3 -m venv .venv && .venv/bin/pip install -e '.[test]' && .venv/bin/python -m pytest"
    assert install_run in README and tests in README
    ci = (REPO / ".ci" / "run").read_text()
    assert "python3 -m venv .venv && .venv/bin/pip install -q -e '.[test]' && .venv/bin/python -m pytest" in ci
