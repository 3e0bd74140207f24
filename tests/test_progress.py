"""Every command's progress goes through the one implementation, ``kseg.render.progress.ProgressLine``.

Each command runs in-process with ``--progress`` (stderr is no terminal under CliRunner, so without it
nothing is drawn) while ``ProgressLine`` is watched: every line the command draws must be drawn by a
``ProgressLine`` and land on stderr, and stdout must be what it is without ``--progress``.  The one-second
delay before the first drawing is taken away for the test (short runs on the fixtures end well before it).
"""

from __future__ import annotations

import io
import shutil
import time

import pytest
from click.testing import CliRunner
from support import FIXTURES

from kseg import segment
from kseg.cli import cli
from kseg.recovery import indexes, salvage
from kseg.render import progress
from kseg.render.dump.progress import Progress as DumpProgress
from kseg.spark.progress import StartProgress

LOGDIR = FIXTURES / "recover" / "logdir"
PARTITION = LOGDIR / "orders-0"
SEGMENT = PARTITION / "00000000000000000000.log"


@pytest.fixture
def drawn(monkeypatch):
    """The texts every ProgressLine draws, with the delay before the first drawing taken away."""
    texts: list[str] = []
    init, draw = progress.ProgressLine.__init__, progress.ProgressLine.draw

    def no_delay(self, *args, **kwargs):
        init(self, *args, **kwargs)
        self.after = self.next = self.start

    def recorded(self, now):
        texts.append(self.text(now))
        draw(self, now)

    monkeypatch.setattr(progress.ProgressLine, "__init__", no_delay)
    monkeypatch.setattr(progress.ProgressLine, "draw", recorded)
    monkeypatch.setitem(DumpProgress.__init__.__kwdefaults__, "min_size", 0)  # dump: any size of run
    for module in (segment, indexes, salvage):  # the writers' walks report their bytes at every batch
        monkeypatch.setattr(module, "RELEASE_EVERY", 1)
    return texts


def _commands(tmp_path):
    part = tmp_path / "orders-0"
    shutil.copytree(PARTITION, part)
    return {
        "verify": (["verify", str(SEGMENT)], "verify "),
        "dump": (["dump", str(SEGMENT)], "kseg: "),
        "triage": (["triage", str(LOGDIR)], f"triage: reading log directory 1 of 1: {LOGDIR}"),
        "reindex": (["reindex", "--dry-run", str(part)], "reindex "),
        "recover": (["recover", "--dry-run", str(part)], "recover "),
        "convert": (["convert", str(part), "-o", "{out}", "--to-magic", "2", "--skip-corrupt"], "convert "),
    }


@pytest.mark.parametrize("command", ["verify", "dump", "triage", "reindex", "recover", "convert"])
def test_each_command_draws_its_progress_with_the_one_progress_line(command, drawn, tmp_path):
    args, start = _commands(tmp_path)[command]
    quiet = CliRunner().invoke(cli, [a.format(out=tmp_path / "quiet") for a in args])
    assert quiet.stderr == "" or command == "dump"  # nothing drawn without --progress in a pipe
    assert drawn == []
    shown = CliRunner().invoke(cli, [args[0], "--progress", *(a.format(out=tmp_path / "shown") for a in args[1:])])
    assert shown.exit_code == quiet.exit_code and shown.stdout == quiet.stdout.replace("quiet", "shown")
    assert drawn and all(text.startswith(start) for text in drawn), drawn
    assert all(text + "\n" in shown.stderr for text in drawn)  # in a pipe: whole lines, no carriage return
    assert "\r" not in shown.stderr


def test_spark_start_up_draws_with_the_one_progress_line(drawn, capfd):
    with StartProgress("local[2]", show=True, every=0.02):
        time.sleep(0.2)
    assert drawn and all(t.startswith("starting Spark (local[2])... ") for t in drawn)
    assert capfd.readouterr().err.endswith("\r\x1b[K")


def test_a_pipe_gets_nothing_a_terminal_a_bar_and_progress_plain_lines():
    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    assert progress.wanted(False, io.StringIO()) is None
    piped = progress.wanted(True, io.StringIO(), label="verify")
    live = progress.wanted(False, Terminal(), label="verify")
    assert piped is not None and not piped.live and piped.every == 5.0
    assert live is not None and live.live and live.every == 0.25
    piped.note("triage: reading log directory 1 of 2: d1", done=0, total=1 << 20)
    assert piped.stream.getvalue() == ""  # within the first second: nothing yet
    piped.after = piped.next = 0
    piped.note("triage: reading log directory 2 of 2: d2", done=512 << 10, total=1 << 20)
    text = piped.stream.getvalue()
    assert text.startswith("triage: reading log directory 2 of 2: d2 [############............]  50%  512 KiB of 1 MiB")
    assert text.endswith("/s\n") and text.count("\n") == 1
