"""One large value under ``spark export``: a driver heap sized for it, and one line when the JVM still dies.

The attack as found: a partition with one 120 MiB value (a batch under the
128 MiB read cap) made ``kseg spark export`` on ``local[*]`` die: the JVM ran
out of its default 1 GiB heap writing the Parquet page
(``java.lang.OutOfMemoryError: Java heap space``), Spark's uncaught-exception
handler ended it, and kseg printed pyspark's accumulator-server traceback and
``kseg: error: Connection refused``.  Now a local master gets a heap sized by
the read cap (:func:`kseg.spark.session.local_driver_memory`), and a JVM that
runs out anyway ends the run with one line naming what, the input's largest
batch and the setting to raise, exit 2.

The JVM runs are subprocesses with their own JVM (an out-of-memory death must
not take the suite's shared session with it).  The out-of-memory run uses a
small heap (``spark.driver.memory=512m``) and a 64 MiB value, so it costs one
JVM start; the 120 MiB and 100 MiB-of-escape-bytes exports at the default
heap (about 2.3 GB of JVM each; numbers in docs/spark.md, "Memory") run when
``KSEG_SPARK_LARGE_VALUES=1``.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from test_failures import kseg_process, spark_log

from kseg.format import encode_batch
from kseg.format.compression import DEFAULT_MAX_DECOMPRESSED
from kseg.format.model import RecordSpec
from kseg.spark import failures, scratch
from kseg.spark.session import local_driver_memory, session_conf

needs_java = pytest.mark.skipif(shutil.which("java") is None, reason="needs Java to start Spark")
LARGE = os.environ.get("KSEG_SPARK_LARGE_VALUES") == "1"
GIB = 1 << 30

#: Spark's log of the run as found (kseg 0.1.0, pyspark 4.3.0, 1 GiB heap, one 120 MiB value): the lines
#: that matter, as Spark wrote them.
OOM_LOG = """\
WARNING: Using incubator modules: jdk.incubator.vector
26/11/27 07:14:37 ERROR Utils: Aborting task
org.apache.spark.SparkException: [TASK_WRITE_FAILED] Task failed while writing rows to file:/tmp/out1/part-00000.snappy.parquet. SQLSTATE: 58030
\tat org.apache.spark.executor.Executor$TaskRunner.run(Executor.scala:906)
Caused by: java.lang.OutOfMemoryError: Java heap space
\tat java.base/java.util.Arrays.copyOfRange(Arrays.java:3822)
26/11/27 07:14:37 ERROR SparkUncaughtExceptionHandler: Uncaught exception in thread Thread[Executor task launch worker for task 0.0 in stage 1.0 (TID 1),5,main]
"""


def one_value_partition(directory: Path, value: bytes) -> Path:
    """``big-0`` holding one batch of one record: key ``k``, ``value``."""
    part = directory / "big-0"
    part.mkdir(parents=True)
    (part / "00000000000000000000.log").write_bytes(encode_batch([RecordSpec(0, 1_700_000_000_000, b"k", value, ())]))
    return part


def test_a_local_master_gets_a_heap_for_the_read_cap():
    assert local_driver_memory(DEFAULT_MAX_DECOMPRESSED, physical=24 * GIB) == "3072m"
    assert local_driver_memory(DEFAULT_MAX_DECOMPRESSED, physical=4 * GIB) == "2048m"  # at most half the machine
    assert local_driver_memory(DEFAULT_MAX_DECOMPRESSED, physical=GIB) == "1024m"  # never below Spark's default
    assert local_driver_memory(512 << 20, physical=64 * GIB) == "9216m"  # --max-batch-bytes 512 MiB
    assert session_conf("local[*]")["spark.driver.memory"] == local_driver_memory(DEFAULT_MAX_DECOMPRESSED)
    assert "spark.driver.memory" not in session_conf("spark://10.0.0.7:7077")  # a cluster: the user's to size
    assert session_conf("local[2]", [("spark.driver.memory", "6g")])["spark.driver.memory"] == "6g"


def test_the_log_of_a_jvm_that_ran_out_of_memory_makes_one_line(tmp_path, monkeypatch):
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path))
    monkeypatch.setitem(scratch._state, "dir", None)
    assert failures.jvm_out_of_memory() is None  # no log yet
    scratch.log_file().write_text(OOM_LOG)
    assert failures.jvm_out_of_memory() == "java.lang.OutOfMemoryError: Java heap space"
    part = one_value_partition(tmp_path / "in", b"v" * 1000)
    largest = failures.largest_batch([part])
    assert largest == (str(part / "00000000000000000000.log"), 0, (part / "00000000000000000000.log").stat().st_size)
    line = str(failures.SparkFailed.out_of_memory("java.lang.OutOfMemoryError: Java heap space", largest, "3072m"))
    assert line == (
        f"spark: the JVM ran out of memory (java.lang.OutOfMemoryError: Java heap space) on the largest batch of the "
        f"input, {largest[2]:,} bytes at byte 0 of {largest[0]}: give Spark more with --conf "
        f"spark.driver.memory=8g (it had 3072m) on a local master, --conf spark.executor.memory=8g on a cluster "
        f"(Spark's log: {spark_log(tmp_path)})")


@needs_java
def test_an_export_the_jvm_runs_out_of_memory_on_is_one_line_and_exit_2(tmp_path):
    part = one_value_partition(tmp_path / "in", b"v" * (64 << 20))
    log = part / "00000000000000000000.log"
    result = kseg_process(tmp_path, "spark", "export", str(part), "-o", str(tmp_path / "out"),
                          "--conf", "spark.driver.memory=512m", timeout=600)
    assert (result.returncode, result.stdout) == (2, ""), result.stderr[-3000:]
    assert result.stderr == (
        "kseg: error: spark: the JVM ran out of memory (java.lang.OutOfMemoryError: Java heap space) on the "
        f"largest batch of the input, {log.stat().st_size:,} bytes at byte 0 of {log}: give Spark more with "
        "--conf spark.driver.memory=8g (it had 512m) on a local master, --conf spark.executor.memory=8g on a "
        f"cluster (Spark's log: {spark_log(tmp_path)})\n")
    assert "OutOfMemoryError" in Path(spark_log(tmp_path)).read_text()


@needs_java
@pytest.mark.skipif(not LARGE, reason="two JVMs of ~2.3 GB and ~2 minutes each: set KSEG_SPARK_LARGE_VALUES=1")
@pytest.mark.parametrize(("value", "size"), [(b"v", 120 << 20), (b"\x1b", 100 << 20)], ids=["120MiB", "100MiB-escapes"])
def test_one_large_value_exports_at_the_default_heap(tmp_path, value, size):
    import pyarrow.parquet as pq

    part = one_value_partition(tmp_path / "in", value * size)
    out = tmp_path / "out"
    result = kseg_process(tmp_path, "spark", "export", str(part), "-o", str(out), timeout=900)
    assert (result.returncode, result.stderr) == (0, ""), result.stderr[-3000:]
    assert result.stdout == f"exported 1 record from 1 file to {out} (parquet)\n"
    table = pq.read_table(out, columns=["key", "value"])
    assert table.num_rows == 1
    assert table.column("key")[0].as_py() == b"k"
    assert table.column("value")[0].as_py() == value * size
