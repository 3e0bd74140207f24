"""``kseg spark verify`` on a real standalone cluster (a master and two workers on 127.0.0.1).

The cluster is started here from pyspark's own launcher (see ``standalone.py``),
bound to loopback, and stopped at the end of the module whatever happened,
with a check that none of its processes is left.  kseg runs as a user runs it,
in a subprocess, so each run starts its own driver: local[2] (on a terminal,
to see the start-up line) and the cluster must give the same findings and
exit code as ``kseg verify``.  About a minute in all.
"""

from __future__ import annotations

import json
import os
import pty
import shutil
import subprocess
import sys
import time
import venv
from pathlib import Path

import pytest
from support import FIXTURES, IN_CI

pytest.importorskip("pyspark")
pytest.importorskip("pyarrow")

from standalone import Standalone, group_alive  # noqa: E402

VERIFY = FIXTURES / "verify"
ARGS = ["--format", "json", "corrupt", "clean"]
#: Small, quick JVMs for the driver and the executors; one failure is enough to fail a job.
CONF = [
    "--conf", "spark.driver.extraJavaOptions=-XX:TieredStopAtLevel=1 -XX:+UseSerialGC",
    "--conf", "spark.executor.extraJavaOptions=-XX:TieredStopAtLevel=1 -XX:+UseSerialGC",
    "--conf", "spark.executor.memory=512m",
    "--conf", "spark.task.maxFailures=1",
]
RUN_TIMEOUT = 180


def _java() -> bool:
    home = os.environ.get("JAVA_HOME")
    return os.access(os.path.join(home, "bin", "java"), os.X_OK) if home else shutil.which("java") is not None


if not _java() and not IN_CI:
    pytest.skip("no Java (JAVA_HOME or java on PATH): a standalone cluster needs Java 17+", allow_module_level=True)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    root = tmp_path_factory.mktemp("standalone")
    with Standalone(root, workers=2) as running:
        groups = [process.pid for process in running.processes]
        yield running
    deadline = time.monotonic() + 20
    while any(map(group_alive, groups)) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not any(map(group_alive, groups)), "a process of the test cluster outlived it"


def kseg(tmp_path: Path, *args: str, env: dict[str, str] | None = None, tty_stderr: bool = False):
    """(exit code, stdout, stderr) of ``kseg ARGS`` run from fixtures/verify; stderr on a terminal if asked."""
    environ = {**os.environ, "TMPDIR": str(tmp_path), "NO_COLOR": "1", **(env or {})}
    for name in ("PYSPARK_GATEWAY_PORT", "SPARK_LOCAL_IP"):
        environ.pop(name, None)
    command = [sys.executable, "-m", "kseg", *args]
    if not tty_stderr:
        done = subprocess.run(command, capture_output=True, text=True, env=environ, cwd=VERIFY,
                              timeout=RUN_TIMEOUT, stdin=subprocess.DEVNULL)
        return done.returncode, done.stdout, done.stderr
    leader, follower = pty.openpty()
    out_path = tmp_path / "stdout"
    with out_path.open("wb") as out, subprocess.Popen(command, stdout=out, stderr=follower, stdin=subprocess.DEVNULL,
                                                      env=environ, cwd=VERIFY) as process:
        os.close(follower)
        err = _drain(leader)
        code = process.wait(RUN_TIMEOUT)
    return code, out_path.read_text(), err


def _drain(fd: int) -> str:
    """All a pseudo-terminal shows until its last writer closes it (EIO on Linux)."""
    chunks = []
    try:
        while chunk := os.read(fd, 4096):
            chunks.append(chunk)
    except OSError:
        pass
    finally:
        os.close(fd)
    return b"".join(chunks).decode(errors="replace")


def findings(stdout: str) -> list[dict]:
    return [json.loads(line) for line in stdout.splitlines()]


def test_a_standalone_cluster_gives_the_findings_and_exit_code_of_local_mode(cluster, tmp_path):
    local = kseg(tmp_path, "spark", "verify", "--master", "local[2]", *CONF, *ARGS, tty_stderr=True)
    spread = kseg(tmp_path, "spark", "verify", "--master", cluster.url, *CONF, *ARGS)
    alone = kseg(tmp_path, "verify", *ARGS)
    assert alone[0] == 1 and len(findings(alone[1])) > 60
    assert (spread[0], findings(spread[1])) == (local[0], findings(local[1])) == (alone[0], findings(alone[1]))
    assert spread[2] == ""  # stderr in a pipe: no progress line, no Spark chatter
    # on a terminal: a live start-up line (first drawn after 1 s, kseg.spark.progress), wiped before the findings
    assert "\rstarting Spark (local[2])... 1 s" in local[2] and local[2].endswith("\r\x1b[K")


def test_an_executor_whose_python_lacks_kseg_fails_in_one_line(cluster, tmp_path):
    """PYSPARK_PYTHON pointing at a bare virtualenv: pyspark runs there (from Spark's pyspark.zip), kseg cannot."""
    bare = tmp_path / "bare"
    venv.EnvBuilder(with_pip=False).create(bare)
    env = {"PYSPARK_PYTHON": str(bare / "bin" / "python")}
    code, out, err = kseg(tmp_path, "spark", "verify", "--master", cluster.url, *CONF, *ARGS, env=env)
    assert (code, out) == (2, "")
    assert err == (
        "kseg: error: spark: ModuleNotFoundError: No module named 'kseg' on an executor: install kseg[spark] "
        "in the executors' Python, or set PYSPARK_PYTHON to one that has it "
        f"(Spark's log: {next(tmp_path.glob('kseg-spark-*')) / 'spark.log'})\n"
    )
