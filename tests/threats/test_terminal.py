"""Escape sequences from the evidence never reach a terminal; pipes and files keep the text byte for byte.

The attack as found: a record key ``ESC ] 0 ; ... BEL`` retitled the
terminal, a value with ``ESC [ 2 J`` cleared it, and a newline in a value or
a directory name forged a line of output.  Each command runs here in a
pseudo-terminal (python's ``pty``), as a person would run it, with
``NO_COLOR`` so that any ESC byte on the screen can only have come from the
input; the same command into a pipe must still print the input's bytes.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from logdirs import LogDir, batch
from ptyrun import on_pty
from support import FIXTURES, REPO
from threatkit import kseg

from kseg.format import encode_batch
from kseg.format.model import RecordSpec

TITLE = b"\x1b]0;owned\x07"
CLEAR = b"\x1b[2J"
#: What those bytes look like once escaped.
TITLE_SHOWN = "\\x1b]0;owned\\x07"
CLEAR_SHOWN = "\\x1b[2J"
HOSTILE_DIR = "evil\x1b[2J\x1b]0;owned\x07-0"
HOSTILE_DIR_SHOWN = "evil\\x1b[2J\\x1b]0;owned\\x07-0"


def on_terminal(*args: str, cwd: Path, columns: int = 200) -> tuple[int, str]:
    """``kseg ARGS`` with stdout and stderr on a pseudo-terminal: (exit code, what the screen got)."""
    return on_pty(*args, cwd=cwd, env_columns=str(columns))


def _no_control_bytes(screen: str) -> None:
    """Nothing on the screen a terminal would act on (the progress line's \\r and ESC[K are absent without a bar)."""
    assert "\x1b" not in screen and "\x07" not in screen and "\x9b" not in screen, screen


def _hostile_segment(directory: Path) -> Path:
    directory.mkdir(parents=True)
    record = RecordSpec(0, 1_700_000_000_000, TITLE + b"k", b"v\nforged line " + CLEAR, ((b"h" + TITLE, CLEAR),))
    log = directory / "00000000000000000000.log"
    log.write_bytes(encode_batch([record]))
    return log


def test_text_dump_escapes_on_a_terminal_and_keeps_kafkas_bytes_in_a_pipe(tmp_path):
    log = _hostile_segment(tmp_path / "seg")
    code, screen = on_terminal("dump", "--print-data-log", str(log), cwd=tmp_path)
    assert code == 0 and "Traceback" not in screen, screen
    _no_control_bytes(screen)
    record = next(line for line in screen.splitlines() if "key:" in line)
    assert record.endswith(f"headerKeys: [h{TITLE_SHOWN}] key: {TITLE_SHOWN}k payload: v\\nforged line {CLEAR_SHOWN}")
    assert "\nforged line" not in screen
    piped = subprocess.run([sys.executable, "-m", "kseg", "dump", "--print-data-log", str(log)], capture_output=True,
                           env={**os.environ, "PYTHONPATH": str(REPO)}, check=True, timeout=120).stdout
    assert (f"headerKeys: [h{TITLE.decode()}] key: {TITLE.decode()}k payload: v\nforged line {CLEAR.decode()}\n"
            .encode()) in piped


def _hostile_partition(root: Path) -> Path:
    """A log directory whose one partition directory's name holds escape sequences, its last batch damaged."""
    logs = LogDir(root / "kafka-logs")
    damaged = batch(2, 2)
    damaged = damaged[:-1] + bytes([damaged[-1] ^ 1])
    logs.partition(HOSTILE_DIR.rsplit("-", 1)[0], 0, {0: [batch(0, 2), damaged]})
    return logs.finish(clean=False, recovery_points={})


def test_verify_text_and_table_escape_names_on_a_terminal(tmp_path):
    logs = _hostile_partition(tmp_path)
    for fmt in ("text", "table"):
        code, screen = on_terminal("verify", "--format", fmt, str(logs), cwd=tmp_path)
        assert code == 1 and "Traceback" not in screen, screen
        _no_control_bytes(screen)
        assert HOSTILE_DIR_SHOWN in screen
    piped = kseg("verify", "--format", "json", str(logs), cwd=tmp_path)
    assert piped.returncode == 1
    assert json.dumps(HOSTILE_DIR)[1:-1] in piped.stdout  # JSON's own escapes: \u001b, \u0007


def test_triage_table_escapes_names_on_a_terminal(tmp_path):
    logs = _hostile_partition(tmp_path)
    code, screen = on_terminal("triage", str(logs), cwd=tmp_path)  # a terminal gets the table
    assert code == 1 and "Traceback" not in screen, screen
    _no_control_bytes(screen)
    assert HOSTILE_DIR_SHOWN in screen
    header = [line for line in screen.splitlines() if "outcome" in line and "partition" in line]
    assert header, screen  # the table's header: this was the table, not the text screen


def test_txn_table_and_text_escape_names_on_a_terminal(tmp_path):
    logs = tmp_path / "logs"
    shutil.copytree(FIXTURES / "txn" / "logs", logs)
    (logs / "orders-1").rename(logs / HOSTILE_DIR.replace("-0", "-1"))
    for fmt in ("table", "text"):
        code, screen = on_terminal("txn", "--format", fmt, "logs", cwd=tmp_path)
        assert code == 1 and "Traceback" not in screen, screen
        _no_control_bytes(screen)
        assert HOSTILE_DIR_SHOWN.replace("-0", "-1") in screen


def test_recover_and_reindex_reports_escape_names_on_a_terminal(tmp_path):
    part = _hostile_partition(tmp_path) / HOSTILE_DIR
    for args in (["recover", "--dry-run"], ["reindex", "--check"]):
        code, screen = on_terminal(*args, str(part), cwd=tmp_path)
        assert code == 1 and "Traceback" not in screen, screen
        _no_control_bytes(screen)
        assert HOSTILE_DIR_SHOWN in screen
