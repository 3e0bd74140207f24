"""``kseg spark`` and another local user: nothing at a predictable name in the shared temp directory.

The attack as found: a second account pre-created the log4j2 configuration
kseg would point the root JVM at (``$TMPDIR/kseg-spark-log4j2-0-WARN.properties``;
log4j can be told to run code) and planted a symlink at the Spark log's name
(``$TMPDIR/kseg-spark-0.log``), which made kseg truncate a root-owned file.
Here the planted names stay untouched, the files kseg writes live in a 0700
directory made by ``mkdtemp``, and the other account cannot write into it.
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from support import FIXTURES, REPO
from threatkit import kseg

CLEAN_LOG = str(FIXTURES / "verify" / "clean" / "v2-codecs.log")
EVIL = "rootLogger.level = TRACE\n# a configuration another account wrote\n"
SECRET = b"root's own file, which a symlink at a guessed name used to truncate\n"


@pytest.fixture
def shared_tmp(tmp_path: Path, other_user) -> Iterator[Path]:
    """A world-writable, sticky temp directory (as /tmp is) where the other account planted its files.

    Made in /tmp itself: pytest's own temp directories are closed to other accounts.
    """
    shared = Path(tempfile.mkdtemp(prefix="kseg-threat-", dir="/tmp"))
    shared.chmod(0o1777)
    victim = tmp_path / "victim"
    victim.write_bytes(SECRET)
    victim.chmod(0o600)
    uid = os.getuid()
    assert other_user.run("ln", "-s", str(victim), str(shared / f"kseg-spark-{uid}.log")).returncode == 0
    for level in ("WARN", "INFO", "ERROR"):
        planted = other_user.run("sh", "-c", f"printf '%s' \"$1\" > {shared}/kseg-spark-log4j2-{uid}-{level}.properties",
                                 "sh", EVIL)
        assert planted.returncode == 0, planted.stderr
    yield shared
    shutil.rmtree(shared)


def _planted(shared: Path) -> dict[str, str]:
    return {p.name: (os.readlink(p) if p.is_symlink() else p.read_text()) for p in sorted(shared.iterdir())
            if not p.is_dir()}


SHOW_CONF = """
import sys
from kseg.spark import session
option = session.session_conf("local[1]")["spark.driver.extraJavaOptions"]
with session._stderr_to_log():
    pass
print(option.removeprefix("-Dlog4j2.configurationFile=file:"), flush=True)
sys.stdin.read()
"""


def test_the_log4j_configuration_and_log_are_in_a_private_directory(shared_tmp, other_user, tmp_path):
    before = _planted(shared_tmp)
    child = subprocess.Popen([sys.executable, "-c", SHOW_CONF], env={**os.environ, "TMPDIR": str(shared_tmp),
                             "PYTHONPATH": str(REPO)}, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert child.stdout is not None and child.stdin is not None
    config = Path(child.stdout.readline().strip())
    private = config.parent
    try:
        assert private.parent == shared_tmp and private.name.startswith("kseg-spark-")
        info = private.stat()
        assert (stat.S_IMODE(info.st_mode), info.st_uid) == (0o700, os.getuid())
        assert config.read_text().startswith("rootLogger.level = WARN\n")
        assert stat.S_IMODE(config.stat().st_mode) == 0o600
        assert (private / "spark.log").is_file() and not (private / "spark.log").is_symlink()
        # the other account cannot put a configuration (or anything) where kseg's JVM looks
        attempt = other_user.run("sh", "-c", f"printf x > {private}/log4j2-INFO.properties")
        assert attempt.returncode != 0 and "Permission denied" in attempt.stderr
    finally:
        child.stdin.close()
        child.wait(timeout=30)
    assert not private.exists()  # a run without a failure leaves nothing behind
    assert _planted(shared_tmp) == before
    assert (tmp_path / "victim").read_bytes() == SECRET


def test_a_failed_spark_run_keeps_its_log_in_the_private_directory(shared_tmp, tmp_path):
    """A Java that exits at launch: the log the error names is kseg's own; the planted symlink is not followed."""
    pytest.importorskip("pyspark")
    java = tmp_path / "jdk" / "bin" / "java"
    java.parent.mkdir(parents=True)
    java.write_text("#!/bin/sh\necho 'Error: this Java exits at once' >&2\nexit 1\n")
    java.chmod(0o755)
    before = _planted(shared_tmp)
    result = kseg("spark", "verify", CLEAN_LOG, env={"TMPDIR": str(shared_tmp), "JAVA_HOME": str(java.parents[1])})
    (private,) = (p for p in shared_tmp.iterdir() if p.name not in before)
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr == (
        "kseg: error: spark: Java exited while Spark was starting: Error: this Java exits at once "
        f"(Spark's log: {private / 'spark.log'})\n"
    )
    assert stat.S_IMODE(private.stat().st_mode) == 0o700
    assert "Error: this Java exits at once" in (private / "spark.log").read_text()
    assert _planted(shared_tmp) == before
    assert (tmp_path / "victim").read_bytes() == SECRET
