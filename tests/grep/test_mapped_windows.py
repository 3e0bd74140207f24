"""The literal path's mapped windows: a file another process cuts short mid-search ends with kseg's one error.

``kseg grep`` maps a literal search's windows (kseg/ops/grep/search.py, ``_mapped_walk``).  Two moments
of a truncation by another process are fixed here and the cut is real (``os.truncate``): between two
windows (the next mapping would lie past the file's end) and inside a mapped window (its pages vanish:
``SIGBUS``, which kseg.mapguard turns into zeros and a count).  Both end in ``FileShrank`` -- file and the
size it now has -- never in a traceback or a signal, and through the CLI in one line and exit 2.
"""

from __future__ import annotations

import mmap
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from kseg import mapguard
from kseg.cli import cli
from kseg.format import RecordSpec, encode_batch
from kseg.ops.grep import search
from kseg.ops.grep.query import Query
from kseg.ops.grep.search import Match, search_segment

pytestmark = pytest.mark.skipif(not mapguard.supported(), reason="kseg.mapguard knows Linux x86_64/aarch64 only")


def _segment(tmp_path: Path) -> Path:
    """100 batches of 20 records (37 KB): values hit-0 .. hit-1999."""
    path = tmp_path / "t-0" / "00000000000000000000.log"
    path.parent.mkdir()
    path.write_bytes(b"".join(
        encode_batch([RecordSpec(b + i, 1_700_000_000_000, b"k", b"hit-%d" % (b + i)) for i in range(20)], base_offset=b)
        for b in range(0, 2000, 20)))
    return path


def test_small_windows_find_what_one_window_finds(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = _segment(tmp_path)
    query = Query(value=b"hit-1234")
    whole = [f.record.offset for f in search_segment(path, query, None, 1 << 20) if isinstance(f, Match)]
    monkeypatch.setattr(search, "MAPPED_WINDOW", 1000)  # a window per batch or two, each mapped from a page
    assert [f.record.offset for f in search_segment(path, query, None, 1 << 20) if isinstance(f, Match)] == whole
    assert whole == [1234]


def test_a_cut_between_windows_is_file_shrank(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = _segment(tmp_path)
    size = path.stat().st_size
    monkeypatch.setattr(search, "MAPPED_WINDOW", 8192)
    found = search_segment(path, Query(value_regex=re.compile(b"hit-1")), None, 1 << 20)
    assert next(found).record.offset == 1  # in the first window
    path.write_bytes(path.read_bytes()[:20000])
    with pytest.raises(mapguard.FileShrank, match=f"shrank from {size} to 20000 bytes") as err:
        list(found)
    assert (err.value.path, err.value.offset) == (str(path), 20000)


def test_a_cut_inside_a_mapped_window_is_file_shrank(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The window is mapped (and populated) first; then the file loses every page past the first."""
    path = _segment(tmp_path)
    real = search.grep_candidates
    cut: list[bool] = []

    def cut_then_search(window, *args):
        if not cut:
            cut.append(True)
            with open(path, "r+b") as file:
                file.truncate(mmap.PAGESIZE)
        return real(window, *args)

    monkeypatch.setattr(search, "grep_candidates", cut_then_search)
    with pytest.raises(mapguard.FileShrank, match=f"to {mmap.PAGESIZE} bytes"):
        list(search_segment(path, Query(value=b"hit-1999"), None, 1 << 20))
    assert cut


def test_the_cli_ends_a_cut_search_with_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = _segment(tmp_path)
    real = search.grep_candidates

    def cut_then_search(window, *args):
        path.write_bytes(path.read_bytes()[:mmap.PAGESIZE])
        return real(window, *args)

    monkeypatch.setattr(search, "grep_candidates", cut_then_search)
    result = CliRunner().invoke(cli, ["grep", "--value", "hit-1999", "-c", str(path)])
    assert result.exit_code == 2
    assert result.stderr.splitlines()[-1].startswith(f"kseg: error: {path}")
    assert "shrank" in result.stderr and len(result.stderr.splitlines()) == 1
