"""``dump --format table`` into a pipe or a file: the table drawn without rich, byte for byte rich's.

* :func:`kseg.render.dump.plain_table.plain_table` against rich's ``Table`` (the one
  ``TableRenderer`` builds, ``rich_table``) over random tables: wide (CJK) and combining
  characters, cells longer than their cap, floors, narrow and wide consoles; where the table does
  not fit the drawer returns None (rich shrinks every column then, and stays in charge);
* the renderer builds no rich row for a dump into a file (rich's per-row measuring was about half
  a millisecond a row); the output is the same as the golden files of tests/test_cli_dump.py.

Size: ``KSEG_TABLE_EXAMPLES`` (default 150, fixed seed under the ``ci`` profile).
"""

from __future__ import annotations

import io
import os

from hypothesis import given, settings
from hypothesis import strategies as st
from rich.console import Console

from kseg.format import RecordSpec, encode_batch
from kseg.render.dump.plain_table import plain_table
from kseg.render.dump.table import rich_table

EXAMPLES = int(os.environ.get("KSEG_TABLE_EXAMPLES", "150"))

_cell = st.text(alphabet=st.sampled_from("ab z09.…·∅-界字é\u0301\u3000\t\n\x07"), max_size=30)


@st.composite
def tables(draw):
    count = draw(st.integers(1, 6))
    columns = tuple(draw(st.text(alphabet="abcdefghij ()界", min_size=1, max_size=12)) for _ in range(count))
    rows = draw(st.lists(st.tuples(*([_cell] * count)), max_size=8))
    justify = [draw(st.sampled_from(("left", "right"))) for _ in range(count)]
    caps = [draw(st.one_of(st.none(), st.integers(1, 20))) for _ in range(count)]
    floors = [draw(st.one_of(st.none(), st.integers(0, 12))) for _ in range(count)]
    floors = [f if f is None or c is None else min(f, c) for f, c in zip(floors, caps, strict=True)]
    width = draw(st.integers(20, 160))
    return columns, [tuple(r) for r in rows], justify, caps, floors, width


def _rich(columns, rows, justify, caps, floors, width) -> str:
    out = io.StringIO()
    console = Console(file=out, width=width)
    assert console.color_system is None and not console.is_terminal
    console.print(rich_table(columns, rows, justify, caps, floors))
    return out.getvalue()


@settings(max_examples=EXAMPLES, deadline=None)
@given(tables())
def test_the_plain_table_is_richs_table(table):
    drawn = plain_table(*table)
    if drawn is None:  # wider than the console: rich's own shrinking, kept
        return
    assert drawn == _rich(*table)


def test_a_table_that_does_not_fit_is_left_to_rich():
    assert plain_table(("a", "b"), [("x\n", "y")], ["left", "left"], [None, None], [None, None], 80) is None
    assert plain_table(("a", "b"), [("x" * 50, "y" * 27)], ["left", "left"], [None, None], [None, None], 80) is not None


def test_known_table_exactly():
    drawn = plain_table(("offset", "key"), [("7", "界界界界界"), ("12", "k")], ["right", "left"], [None, 8], [None, None], 80)
    # the cap of 8 cuts the fourth wide character in half: a space, then the ellipsis; left cells padded
    assert drawn == "offset   key     \n" + "─" * 17 + "\n     7   界界界 …\n    12   k       \n"
    assert drawn == _rich(("offset", "key"), [("7", "界界界界界"), ("12", "k")], ["right", "left"], [None, 8], [None, None], 80)


def test_a_dump_into_a_file_builds_no_rich_row(tmp_path, monkeypatch):
    from kseg.cli import cli

    log = tmp_path / "00000000000000000000.log"
    log.write_bytes(b"".join(encode_batch([RecordSpec(o, 1_700_000_000_000 + o, b"k%d" % o, b"v" * o)], base_offset=o)
                             for o in range(500)))
    from click.testing import CliRunner

    args = ["dump", "--format", "table", "--deep-iteration", str(log)]
    drawn = CliRunner().invoke(cli, args)
    rows: list[int] = []
    import rich.table

    real = rich.table.Table.add_row
    monkeypatch.setattr(rich.table.Table, "add_row", lambda self, *cells, **kw: (rows.append(1), real(self, *cells, **kw))[1])
    assert CliRunner().invoke(cli, args).output == drawn.output
    assert drawn.exit_code == 0
    assert drawn.output.count("\n") > 1_000  # 500 batches and 500 records
    assert rows == []  # was one rich row per batch and per record
