"""``kseg report``'s page in a real browser: headless Chromium (Debian's ``chromium``, installed by .ci/run).

The page is opened from a file with no network: every panel must mark itself drawn
(``data-drawn="yes"`` in the DOM Chromium dumps after the scripts ran), and Chromium's log
(``--enable-logging=stderr``) must hold no console message at all -- an uncaught exception,
a blocked resource (the page's Content-Security-Policy forbids any fetch) or a log line.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from support import FIXTURES, IN_CI, REPO

PANELS = ("treemap", "timeline", "formats", "producers", "retention", "verdicts")


def chromium() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        if IN_CI:
            pytest.fail("chromium not found (.ci/run installs Debian's chromium package)")
        pytest.skip("chromium not found: apt-get install -y chromium")
    return found


def report(tmp_path: Path, *args: str) -> Path:
    out = tmp_path / "report.html"
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.run([sys.executable, "-m", "kseg", "report", *args, "-o", str(out)], capture_output=True,
                          text=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == f"wrote {out} ({out.stat().st_size:,} bytes)\n"
    return out


def browse(page: Path, tmp_path: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    command = [chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
               "--no-first-run", "--disable-extensions", "--enable-logging=stderr", "--v=0",
               f"--user-data-dir={tmp_path / 'profile'}", *extra, page.as_uri()]
    return subprocess.run(command, capture_output=True, text=True, timeout=180)


def console_messages(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if "CONSOLE" in line or "Uncaught" in line]


def assert_drawn(page: Path, tmp_path: Path) -> str:
    proc = browse(page, tmp_path, "--dump-dom")
    dom = proc.stdout
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert console_messages(proc.stderr) == []
    assert re.search(r'<body[^>]*data-drawn="yes"', dom), "the script did not finish"
    for panel in PANELS:
        assert re.search(rf'<section class="panel" id="{panel}" data-drawn="yes"', dom), panel
    return dom


@pytest.mark.parametrize("with_verify", [False, True])
def test_every_panel_draws_without_console_errors(tmp_path: Path, with_verify: bool) -> None:
    logdirs = [str(FIXTURES / "broker" / "restarted-clean"), str(FIXTURES / "txn" / "logs")]
    page = report(tmp_path, *logdirs, "--now", "1800000000000", *(["--with-verify"] if with_verify else []))
    html = page.read_text()
    assert "http://" not in html.replace("http://www.w3.org/2000/svg", "") and "https://" not in html
    dom = assert_drawn(page, tmp_path)
    assert dom.count("<rect") > 20  # the treemap's boxes and the time bars
    assert "orders-0" in dom and "__consumer_offsets-0" in dom
    verdicts = re.search(r'<section class="panel" id="verdicts".*?</section>', dom, re.S)
    assert verdicts is not None
    drawn = verdicts.group()
    assert bool(re.search(r'<p class="(ok|warning|error)">verify: \d+ files', drawn)) == with_verify
    assert bool(re.search(r'<p class="(ok|warning|error)">triage: ', drawn)) == with_verify
    assert ("Not run: kseg report --with-verify" in drawn) != with_verify


def test_a_name_from_the_evidence_cannot_inject_markup(tmp_path: Path) -> None:
    """A topic named like markup stays text: the page still draws, and nothing it names runs or loads."""
    from logdirs import LogDir, batch

    logdir = LogDir(tmp_path / "evil")
    logdir.partition("x<img src=x onerror=console.log(1)>", 0, {0: [batch(0)]})
    page = report(tmp_path, str(logdir.finish()))
    dom = assert_drawn(page, tmp_path)
    assert "x&lt;img src=x onerror=console.log(1)&gt;-0" in dom
    assert "<img" not in dom


@pytest.mark.parametrize("where", ["input", "logdir"])
def test_the_page_is_never_written_into_the_evidence(tmp_path: Path, where: str) -> None:
    """``-o`` inside an input, or inside a Kafka log directory, is refused before anything is written (exit 2)."""
    logdir = tmp_path / "logs"
    shutil.copytree(FIXTURES / "txn" / "logs", logdir)
    before = sorted(p.relative_to(logdir) for p in logdir.rglob("*"))
    target = logdir / "orders-0" / "r.html" if where == "input" else logdir / "r.html"
    inputs = [str(logdir / "orders-0")] if where == "logdir" else [str(logdir)]
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.run([sys.executable, "-m", "kseg", "report", *inputs, "-o", str(target)],
                          capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 2
    assert proc.stderr.startswith("kseg: error: ") and proc.stderr.count("\n") == 1
    assert sorted(p.relative_to(logdir) for p in logdir.rglob("*")) == before


@pytest.mark.corpus
def test_the_whole_corpus_draws(tmp_path: Path) -> None:
    """Every log directory of the real-data corpus in one page (V1 and V2, KRaft logs, empty partitions)."""
    from support import CORPUS_REAL, require_dir

    corpus = require_dir(CORPUS_REAL, "the real-data corpus")
    logdirs = sorted({p.parent.parent for p in corpus.rglob("*.log") if p.name[:20].isdigit()})
    assert len(logdirs) > 50
    page = report(tmp_path, *map(str, logdirs))
    dom = assert_drawn(page, tmp_path)
    assert dom.count("<rect") > 200
