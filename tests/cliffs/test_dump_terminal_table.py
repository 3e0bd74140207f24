"""``dump --format table`` on a terminal: drawn without rich, byte for byte what rich's ``Table`` writes.

On a console with a colour system rich styles one thing of dump's tables, the header row (its
``table.header`` style, bold): :func:`kseg.render.dump.plain_table.plain_table` with
``bold_header`` writes the same escape sequences.  Compared with rich over the random tables of
tests/cliffs/test_dump_plain_table.py for each colour system, and through the command with a
terminal forced (``FORCE_COLOR``): the same bytes as rich's own table, and no rich row built.

Size: ``KSEG_TABLE_EXAMPLES`` (default 150, fixed seed under the ``ci`` profile).
"""

from __future__ import annotations

import io

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from rich.console import Console
from test_dump_plain_table import EXAMPLES, tables

from kseg.format import RecordSpec, encode_batch
from kseg.render.dump import plain_table as plain_module
from kseg.render.dump.plain_table import plain_table
from kseg.render.dump.table import rich_table

SYSTEMS = ("standard", "256", "truecolor")


def _rich_terminal(columns, rows, justify, caps, floors, width, system) -> str:
    out = io.StringIO()
    console = Console(file=out, width=width, force_terminal=True, color_system=system)
    assert console.is_terminal and console.color_system is not None
    console.print(rich_table(columns, rows, justify, caps, floors))
    return out.getvalue()


@settings(max_examples=EXAMPLES, deadline=None)
@given(tables())
def test_the_terminal_table_is_richs_table(table):
    drawn = plain_table(*table, bold_header=True)
    if drawn is None:  # wider than the console, or a control character: rich's own, kept
        return
    for system in SYSTEMS:
        assert drawn == _rich_terminal(*table, system)


def test_known_terminal_table_exactly():
    args = (("offset", "key"), [("7", "界界界界界"), ("12", "k")], ["right", "left"], [None, 8], [None, None], 80)
    bold = "\x1b[1m{}\x1b[0m".format
    assert plain_table(*args, bold_header=True) == (
        bold("offset") + bold(" ") + " " + bold(" ") + bold("key     ") + "\n" + "─" * 17 + "\n"
        "     7   界界界 …\n    12   k       \n")
    assert plain_table(*args, bold_header=True) == _rich_terminal(*args, "truecolor")


def test_a_table_wider_than_the_terminal_is_left_to_rich():
    args = (("a", "b"), [("x" * 50, "y" * 50)], ["left", "left"], [None, None], [60, 60], 80)
    assert plain_table(*args) is not None  # cropped as rich crops plain text
    assert plain_table(*args, bold_header=True) is None


@pytest.fixture
def log(tmp_path):
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(b"".join(encode_batch([RecordSpec(o, 1_700_000_000_000 + o, b"k%d" % o, b"v" * o)], base_offset=o)
                              for o in range(300)))
    return path


def test_a_dump_on_a_terminal_is_richs_and_builds_no_rich_row(log, monkeypatch):
    from kseg.cli import cli

    args = ["dump", "--format", "table", "--deep-iteration", str(log)]
    env = {"FORCE_COLOR": "1", "COLUMNS": "100", "TERM": "xterm-256color", "NO_COLOR": None}
    import rich.table

    rows: list[int] = []
    real = rich.table.Table.add_row
    monkeypatch.setattr(rich.table.Table, "add_row", lambda self, *cells, **kw: (rows.append(1), real(self, *cells, **kw))[1])
    drawn = CliRunner().invoke(cli, args, env=env)
    assert drawn.exit_code == 0
    assert rows == []  # every chunk drawn without rich
    assert "\x1b[1moffset\x1b[0m" in drawn.output and drawn.output.count("\n") > 600  # styled: a terminal
    monkeypatch.setattr(plain_module, "plain_table", lambda *a, **kw: None)  # rich draws every chunk
    by_rich = CliRunner().invoke(cli, args, env=env)
    assert rows  # rich built the rows this time
    assert by_rich.output == drawn.output
