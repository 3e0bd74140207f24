"""``kseg stats --format table`` in a pseudo-terminal at widths 0, 40, 80 and 200.

Run as a person runs it (python's ``pty``, ``NO_COLOR`` so any ESC byte could only come from the
input): every line fits the width (rich folds names, the bars shrink, below 60 columns only names,
sizes and pictures are kept; a width of 0 -- the terminal does not say -- is taken as 80), the bars and the records-over-time sparkline are there, and a directory name
holding escape sequences is shown escaped.
"""

from __future__ import annotations

import os
import pty
import subprocess
import sys
from pathlib import Path

import pytest
from logdirs import LogDir, batch
from support import FIXTURES, REPO

HOSTILE = "evil\x1b[2J\x1b]0;owned\x07"
HOSTILE_SHOWN = "evil\\x1b[2J\\x1b]0;owned\\x07"


def on_terminal(*args: str, columns: int) -> tuple[int, str]:
    primary, secondary = pty.openpty()
    env = {**os.environ, "PYTHONPATH": str(REPO), "NO_COLOR": "1", "COLUMNS": str(columns), "TERM": "xterm"}
    child = subprocess.Popen([sys.executable, "-m", "kseg", *args], stdin=subprocess.DEVNULL, stdout=secondary,
                             stderr=secondary, env=env)
    os.close(secondary)
    chunks = []
    while True:
        try:
            chunk = os.read(primary, 65536)
        except OSError:
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(primary)
    return child.wait(timeout=120), b"".join(chunks).decode("utf-8", "surrogateescape").replace("\r\n", "\n")


@pytest.fixture(scope="module")
def logdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = LogDir(tmp_path_factory.mktemp("term") / "logs")
    root.partition(HOSTILE, 0, {0: [batch(0, 5, size=400)]})
    root.partition("small", 0, {0: [batch(0)]})
    return root.finish()


@pytest.mark.parametrize("columns", [0, 40, 80, 200])
def test_table_fits_every_width(logdir: Path, columns: int) -> None:
    code, screen = on_terminal("stats", "--format", "table", "--now", "1800000000000", str(logdir),
                               str(FIXTURES / "real" / "kafka-logs"), columns=columns)
    assert code == 0, screen
    width = 80 if columns == 0 else max(columns, 20)  # 0: the terminal does not say
    lines = screen.splitlines()
    assert lines and max(len(line) for line in lines) <= width, "\n".join(lines)
    assert "\x1b" not in screen and "\x07" not in screen
    assert "\\x1b" in screen  # the name is shown escaped (folded across lines when narrow)
    if columns >= 200:
        assert f"{HOSTILE_SHOWN}-0" in screen
    assert "█" in screen  # the size bars
    assert "partitions" in screen and "topics" in screen
    if columns >= 80:
        assert "__consumer_offsets-12" in screen and "63.6 KiB" in screen
        assert any(ch in screen for ch in "▁▂▃▄▅▆▇")  # a records-over-time sparkline


def test_text_is_escaped_on_a_terminal(logdir: Path) -> None:
    code, screen = on_terminal("stats", "--now", "1800000000000", str(logdir), columns=80)
    assert code == 0
    assert f"topic {HOSTILE_SHOWN}: 1 partitions" in screen
    assert "\x1b" not in screen
