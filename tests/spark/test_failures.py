"""Spark failures as one line and exit 2, and the start-up progress line, without a Spark session.

The set-up mistakes run ``kseg`` in a subprocess, as a user would meet them:
no Java, a Java that exits at launch, a master nobody answers at.  They fail
before a JVM runs (or when it exits at once), so they are fast.  The way a
py4j or Python worker error is boiled down to one line is checked on the
texts Spark really produces (captured from pyspark 4.x).
"""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
from support import FIXTURES

from kseg.spark import failures, preflight, scratch
from kseg.spark.failures import SparkFailed
from kseg.spark.progress import CLEAR, StartProgress

CLEAN_LOG = str(FIXTURES / "verify" / "clean" / "v2-codecs.log")


def kseg_process(tmp_path: Path, *args: str, timeout: float = 60, **env: str) -> subprocess.CompletedProcess[str]:
    """``kseg ARGS`` in a fresh interpreter; Spark's log goes under ``tmp_path`` (TMPDIR), not the shared /tmp."""
    environ = {**os.environ, "TMPDIR": str(tmp_path), "NO_COLOR": "1", **env}
    environ.pop("PYSPARK_GATEWAY_PORT", None)
    return subprocess.run([sys.executable, "-m", "kseg", *args], capture_output=True, text=True, env=environ,
                          timeout=timeout, stdin=subprocess.DEVNULL)


def spark_log(tmp_path: Path) -> str:
    """The log a failed run names: ``spark.log`` in its one private directory under TMPDIR (kept, mode 0700)."""
    (private,) = tmp_path.glob("kseg-spark-*")
    assert stat.S_IMODE(private.stat().st_mode) == 0o700
    return str(private / "spark.log")


# -- no Java, a Java that exits, a master nobody answers at ------------------------------------------------


@pytest.mark.parametrize("command", ["verify", "export"])
def test_no_java_home_is_one_line_and_exit_2(tmp_path, command):
    home = tmp_path / "no-such-jdk"
    to = ["--to", str(tmp_path / "out")] if command == "export" else []
    result = kseg_process(tmp_path, "spark", command, *to, CLEAN_LOG, JAVA_HOME=str(home))
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr == (
        f"kseg: error: spark: no Java: JAVA_HOME={home} has no bin/java (Spark needs Java 17 or later)\n"
    )


def test_no_java_on_path_is_one_line_and_exit_2(tmp_path):
    empty = tmp_path / "bin"
    empty.mkdir()
    environ = {k: v for k, v in os.environ.items() if k != "JAVA_HOME"}
    result = subprocess.run([sys.executable, "-m", "kseg", "spark", "verify", CLEAN_LOG], capture_output=True,
                            text=True, timeout=60, env={**environ, "PATH": str(empty), "TMPDIR": str(tmp_path)})
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr == (
        "kseg: error: spark: no Java: java is not on PATH and JAVA_HOME is not set (Spark needs Java 17 or later)\n"
    )


def test_a_java_that_exits_at_launch_says_why(tmp_path):
    """A too-old Java (faked: a bin/java printing what Java 8 prints) -- the reason comes from Spark's log."""
    why = ("Error: LinkageError occurred while loading main class org.apache.spark.launcher.Main "
           "(class file version 61.0, this runtime recognizes up to 52.0)")
    java = tmp_path / "old-jdk" / "bin" / "java"
    java.parent.mkdir(parents=True)
    java.write_text(f"#!/bin/sh\necho '{why}' >&2\necho '\tat java.lang.ClassLoader.defineClass1' >&2\nexit 1\n")
    java.chmod(0o755)
    result = kseg_process(tmp_path, "spark", "verify", CLEAN_LOG, JAVA_HOME=str(java.parents[1]))
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr == (
        f"kseg: error: spark: Java exited while Spark was starting: {why} (Spark's log: {spark_log(tmp_path)})\n"
    )


def test_a_master_url_spark_does_not_know_is_one_line(tmp_path):
    result = kseg_process(tmp_path, "spark", "verify", "--master", "yran", CLEAN_LOG)
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr == (
        "kseg: error: spark: Java exited while Spark was starting: Master must either be yarn or start with "
        f"spark, k8s, or local (Spark's log: {spark_log(tmp_path)})\n"
    )


def test_an_unreachable_master_fails_at_once(tmp_path):
    started = time.monotonic()
    result = kseg_process(tmp_path, "spark", "verify", "--master", "spark://127.0.0.1:1", CLEAN_LOG, timeout=30)
    assert time.monotonic() - started < 20  # Spark alone retries for a minute, then blames a stopped context
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr == (
        "kseg: error: spark: cannot reach the master spark://127.0.0.1:1: 127.0.0.1:1: Connection refused\n"
    )


def test_a_master_given_by_conf_is_checked_too(tmp_path):
    result = kseg_process(tmp_path, "spark", "verify", "--conf", "spark.master=spark://127.0.0.1:1", CLEAN_LOG)
    assert result.returncode == 2
    assert result.stderr.startswith("kseg: error: spark: cannot reach the master spark://127.0.0.1:1: ")


def test_master_addresses():
    assert preflight.standalone_addresses("spark://h1:7078,h2") == [("h1", 7078), ("h2", 7077)]
    assert preflight.standalone_addresses("spark://[::1]:7077") == [("::1", 7077)]
    assert preflight.standalone_addresses("local[2]") == preflight.standalone_addresses("yarn") == []
    assert preflight.is_loopback_master("spark://127.0.0.1:7077,localhost:7078")
    assert not preflight.is_loopback_master("spark://head:7077")
    preflight.check_master("yarn")  # nothing to check: no exception


# -- Spark's texts, boiled down ----------------------------------------------------------------------------


class Py4JJavaError(Exception):
    """Stands in for py4j's: str() is what py4j gives, ``__module__`` what is_spark_error looks at."""

    __module__ = "py4j.protocol"


def test_a_py4j_error_shows_the_java_exception_message(tmp_path, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    monkeypatch.setitem(scratch._state, "dir", None)
    err = Py4JJavaError(
        "An error occurred while calling None.org.apache.spark.sql.classic.SparkSession.\n"
        ": org.apache.spark.SparkException: Could not parse Master URL: 'nope://x'\n"
        "\tat org.apache.spark.SparkContext$.createTaskScheduler(SparkContext.scala:3300)\n"
    )
    assert failures.is_spark_error(err)
    assert str(SparkFailed.from_error(err)) == (
        f"spark: Could not parse Master URL: 'nope://x' (Spark's log: {spark_log(tmp_path)})"
    )


def test_a_failed_executor_shows_the_python_exception_and_what_to_do(tmp_path, monkeypatch):
    """A job aborted on a cluster: the Python traceback sits inside the Java one."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    monkeypatch.setitem(scratch._state, "dir", None)
    err = Py4JJavaError(
        "An error occurred while calling z:org.apache.spark.api.python.PythonRDD.collectAndServe.\n"
        ": org.apache.spark.SparkException: Job aborted due to stage failure: Task 0 in stage 0.0 failed 4 "
        "times, most recent failure: Lost task 0.3 in stage 0.0 (TID 3) (127.0.0.1 executor 1): "
        "org.apache.spark.api.python.PythonException: Traceback (most recent call last):\n"
        '  File "/opt/pyspark.zip/pyspark/serializers.py", line 483, in loads\n'
        "    return cloudpickle.loads(obj, encoding=encoding)\n"
        "ModuleNotFoundError: No module named 'kseg'\n"
        "\n\tat org.apache.spark.api.python.BasePythonRunner$ReaderIterator.handlePythonException(...)\n"
    )
    assert str(SparkFailed.from_error(err)) == (
        "spark: ModuleNotFoundError: No module named 'kseg' on an executor: install kseg[spark] in the "
        f"executors' Python, or set PYSPARK_PYTHON to one that has it (Spark's log: {spark_log(tmp_path)})"
    )


def test_a_context_stopped_at_start_shows_the_first_error_of_the_log(tmp_path, monkeypatch):
    """A port that answers but is no Spark master: Spark gives up after a minute; its log says why."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    monkeypatch.setitem(scratch._state, "dir", None)
    scratch.log_file().write_text(
        "26/11/23 05:22:10 WARN StandaloneAppClient$ClientEndpoint: Failed to connect to master 127.0.0.1:47011\n"
        "26/11/23 05:23:10 ERROR StandaloneSchedulerBackend: Application has been killed. "
        "Reason: All masters are unresponsive! Giving up.\n"
        "26/11/23 05:23:10 ERROR SparkContext: Error initializing SparkContext.\n"
    )
    err = Py4JJavaError(
        "An error occurred while calling None.org.apache.spark.sql.classic.SparkSession.\n"
        ": java.lang.IllegalStateException: Cannot call methods on a stopped SparkContext.\n"
    )
    assert str(SparkFailed.at_start(err)) == (
        "spark: Spark stopped while starting: Application has been killed. Reason: All masters are "
        f"unresponsive! Giving up. (Spark's log: {spark_log(tmp_path)})"
    )


def test_a_long_message_is_clipped():
    line = str(SparkFailed.from_error(RuntimeError("x" * 1000)))
    assert len(line) < failures.MAX_LINE + 100 and "xxx... (Spark's log: " in line


# -- the start-up line ---------------------------------------------------------------------------------------


def test_progress_is_a_live_line_then_wiped(capfd):
    with StartProgress("local[2]", show=True, every=0.05):
        time.sleep(0.3)
    err = capfd.readouterr().err.encode()
    assert err.startswith(b"\rstarting Spark (local[2])... 0 s\x1b[K")
    assert err.endswith(CLEAR) and err.count(b"\rstarting Spark") >= 3


def test_progress_is_silent_when_stderr_is_not_a_terminal(capfd):
    with StartProgress("local[2]", every=0.05):  # pytest's capture: not a terminal
        time.sleep(0.1)
    assert capfd.readouterr().err == ""
    assert StartProgress("local[2]").line(3.7) == "starting Spark (local[2])... 3 s"
