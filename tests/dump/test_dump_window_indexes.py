"""``kseg dump --from-offset/--to-offset`` on a partition limits the index dumps to the window too.

The partition (``tests/logdirs.py``, as a clean shutdown leaves it): 10 batches of 3071 bytes (one record)
at offsets 0-9 in one segment, so Kafka's ``LogSegment.recover`` rules (index.interval.bytes 4096: an entry
once more than 4096 bytes have passed since the last one) give ``.index`` and ``.timeindex`` entries at the
batches at offsets 2, 4, 6 and 8, and the time index its final entry at 9.  A
``.txnindex`` with three aborted ranges (0-1, 4-5, 8-9) is written beside it
(``kseg.index.encode_txn_index``).  The window 3..6 keeps the batches whose last offset is at least 3 up to
the first whose last offset reaches 6 (docs/dump.md, "Windows"); the index dumps keep the entries of those
batches: an entry before ``--from-offset`` is neither shown nor checked, and the first entry that reaches
``--to-offset`` is the last one; an aborted range is shown when it overlaps the window.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner
from logdirs import LogDir, batch

from kseg.cli import cli
from kseg.index import AbortedTxn, encode_txn_index


@pytest.fixture
def partition(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    ld = LogDir(tmp_path / "ld")
    part = ld.partition("p", 0, {0: [batch(i, size=3000) for i in range(10)]})
    ld.finish()
    part.file(".txnindex").write_bytes(encode_txn_index([AbortedTxn(0, 7, 0, 1, 2), AbortedTxn(0, 7, 4, 5, 6),
                                                         AbortedTxn(0, 7, 8, 9, 10)]))
    monkeypatch.chdir(tmp_path)
    return part.path


def index_lines(stdout: str) -> list[str]:
    """The index, time index and txn index sections of a dump, without the .log's batch lines."""
    keep, out = False, []
    for line in stdout.splitlines():
        if line.startswith("Dumping "):
            keep = not line.endswith(".log")
        if keep and not line.startswith("Dumping ld/p-0/00000000000000000010.snapshot"):
            out.append(line)
    return out


def test_the_whole_partition_dumps_every_entry(partition):
    result = CliRunner().invoke(cli, ["dump", "ld/p-0"])
    assert result.exit_code == 0
    assert index_lines(result.stdout)[:15] == [
        "Dumping ld/p-0/00000000000000000000.index",
        "offset: 2 position: 6142", "offset: 4 position: 12284", "offset: 6 position: 18426",
        "offset: 8 position: 24568",
        "Dumping ld/p-0/00000000000000000000.timeindex",
        "timestamp: 1700000000002 offset: 2", "timestamp: 1700000000004 offset: 4",
        "timestamp: 1700000000006 offset: 6", "timestamp: 1700000000008 offset: 8",
        "timestamp: 1700000000009 offset: 9",
        "Dumping ld/p-0/00000000000000000000.txnindex",
        "version: 0 producerId: 7 firstOffset: 0 lastOffset: 1 lastStableOffset: 2",
        "version: 0 producerId: 7 firstOffset: 4 lastOffset: 5 lastStableOffset: 6",
        "version: 0 producerId: 7 firstOffset: 8 lastOffset: 9 lastStableOffset: 10",
    ]


def test_an_offset_window_limits_the_index_dumps(partition):
    result = CliRunner().invoke(cli, ["dump", "--from-offset", "3", "--to-offset", "6", "ld/p-0"])
    assert result.exit_code == 0
    shown = [line.split(" position: ")[0] for line in result.stdout.splitlines() if line.startswith("baseOffset")]
    assert [line.split()[1] for line in shown] == ["3", "4", "5", "6"]  # the .log window
    assert index_lines(result.stdout)[:8] == [
        "Dumping ld/p-0/00000000000000000000.index",
        "offset: 4 position: 12284", "offset: 6 position: 18426",  # 2 is before 3; 6 reaches --to-offset
        "Dumping ld/p-0/00000000000000000000.timeindex",
        "timestamp: 1700000000004 offset: 4", "timestamp: 1700000000006 offset: 6",
        "Dumping ld/p-0/00000000000000000000.txnindex",
        "version: 0 producerId: 7 firstOffset: 4 lastOffset: 5 lastStableOffset: 6",  # 0-1 and 8-9 miss 3..6
    ]
    assert index_lines(result.stdout)[8] == "Dumping ld/p-0/leader-epoch-checkpoint"


def test_a_from_offset_alone_keeps_every_later_entry(partition):
    result = CliRunner().invoke(cli, ["dump", "--from-offset", "7", "ld/p-0/00000000000000000000.index",
                                      "ld/p-0/00000000000000000000.timeindex"])
    assert (result.exit_code, result.stdout) == (0, (
        "Dumping ld/p-0/00000000000000000000.index\n"
        "offset: 8 position: 24568\n"
        "Dumping ld/p-0/00000000000000000000.timeindex\n"
        "timestamp: 1700000000008 offset: 8\n"
        "timestamp: 1700000000009 offset: 9\n"))
