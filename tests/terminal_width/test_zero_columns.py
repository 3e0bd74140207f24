"""A terminal that reports 0 columns still gets the findings table and the ``next:`` commands.

``stty cols 0``, some ``docker exec -t`` sessions and CI pseudo-terminals
report a width of 0; a table drawn for 0 columns lost every cell (the
findings and the commands to run next).  kseg draws for 80 columns there
(``kseg.render.terminal.FALLBACK_COLUMNS``), and for the terminal's width
otherwise.  Each command runs here in a real pseudo-terminal whose window
size is set with ``TIOCSWINSZ``, as ``stty cols N`` does, with ``COLUMNS``
unset.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from logdirs import LogDir, batch
from ptyrun import on_pty


def on_terminal(*args: str, cwd: Path, columns: int, env_columns: str | None = None) -> tuple[int, str]:
    """``kseg ARGS`` on a pseudo-terminal ``columns`` wide (0: a terminal that reports no width)."""
    return on_pty(*args, cwd=cwd, window_columns=columns, env_columns=env_columns, stdin_on_terminal=True)


@pytest.fixture(scope="module")
def logdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One partition whose last batch is torn (40 of its bytes kept) below its high watermark 5."""
    root = tmp_path_factory.mktemp("zero") / "ld"
    ld = LogDir(root)
    part = ld.partition("pay", 0, {0: [batch(0, 3), batch(3, 2)]}, snapshot=False)
    ld.finish(clean=False, recovery_points={("pay", 0): 0})
    log = part.file(".log")
    data = log.read_bytes()
    log.write_bytes(data[: len(batch(0, 3)) + 40])
    return root


TABLE_80 = """\
outcome    partition  what the next start does; what to run next
────────────────────────────────────────────────────────────────────────────────
truncated  ld/pay-0   40 bytes of tail cut (no offset lost); log end 3, 2 below
                      the high watermark 5
                      $ kseg verify ld/pay-0  # where the damage is and what it
                      is
                      $ kseg recover --dry-run --salvage ld/pay-0  # committed
                      data is cut: the intact batches after the damage that can
                      still be saved
"""


def test_triage_on_a_zero_column_terminal_is_drawn_for_80_columns(logdir):
    code, zero = on_terminal("triage", "ld", cwd=logdir.parent, columns=0)
    assert code == 1, zero
    assert TABLE_80 in zero, zero
    assert on_terminal("triage", "ld", cwd=logdir.parent, columns=80) == (1, zero)


def test_columns_zero_in_the_environment_counts_as_unset(logdir):
    code, screen = on_terminal("triage", "ld", cwd=logdir.parent, columns=0, env_columns="0")
    assert (code, TABLE_80 in screen) == (1, True), screen


@pytest.mark.parametrize("width", [40, 80, 200])
def test_triage_keeps_the_table_and_the_next_commands_at_every_width(logdir, width):
    code, screen = on_terminal("triage", "ld", cwd=logdir.parent, columns=width)
    assert code == 1, screen
    table = screen[screen.index("outcome"):screen.index("healthy:")]
    assert max(len(line) for line in table.splitlines()) <= width, table
    joined = " ".join(part.strip() for part in table.split())
    assert "$ kseg verify ld/pay-0" in joined
    assert "$ kseg recover --dry-run --salvage ld/pay-0" in joined


@pytest.mark.parametrize("command", [["txn", "--format", "table", "--now", "newest"], ["verify"],
                                     ["recover", "--dry-run"]])
def test_other_commands_on_a_zero_column_terminal_match_80_columns(logdir, command):
    zero = on_terminal(*command, "ld", cwd=logdir.parent, columns=0)
    assert zero == on_terminal(*command, "ld", cwd=logdir.parent, columns=80)
    assert zero[1].strip() and "Traceback" not in zero[1], zero
