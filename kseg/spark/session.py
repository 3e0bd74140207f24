"""A SparkSession that works out of the box: local[*], loopback, kseg's interpreter, a quiet terminal.

What a laptop needs and nobody should have to know:

* ``SPARK_LOCAL_IP=127.0.0.1`` (when unset) and ``spark.driver.host=127.0.0.1``
  in local mode, so Spark binds to loopback only and does not stall resolving
  the host name;
* ``PYSPARK_PYTHON`` = this interpreter in local mode, so Python workers can
  import kseg (on a cluster a value the user set is kept: executors may keep
  their Python elsewhere);
* no web UI, no console progress bar, log4j at WARN, and the JVM's own
  stderr (its startup warnings, its log) sent to a log file, not the terminal;
* in local mode a driver heap that holds the largest batch the read cap lets
  through (:func:`local_driver_memory`): Spark's 1 GiB died of
  ``OutOfMemoryError`` exporting one 120 MiB value (docs/spark.md, "Memory").

The log file is ``spark.log`` in this run's private directory
``$TMPDIR/kseg-spark-XXXXXXXX`` (mode 0700, :mod:`kseg.spark.scratch`; kept
after the run only when an error names it), as is the log4j configuration:
nothing is written at a name another local user could create first.
Before a JVM is launched, :mod:`kseg.spark.preflight` checks that there is a
Java and that a standalone master answers; while it starts, a terminal shows
a live line (:mod:`kseg.spark.progress`).  A standalone master on loopback
(``spark://127.0.0.1:7077``) gets the loopback settings of local mode.
"""

from __future__ import annotations

import contextlib
import os
import sys
import traceback
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from kseg.format.compression import DEFAULT_MAX_DECOMPRESSED
from kseg.spark.failures import SparkFailed, is_spark_error, jvm_out_of_memory, largest_batch, log_path
from kseg.spark.preflight import check_java, check_master, is_loopback_master
from kseg.spark.progress import StartProgress
from kseg.spark.scratch import append_to_log, create_private, log_file, scratch_dir, write_private

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

__all__ = ["SparkFailed", "command_session", "get_session", "is_spark_error", "log_path", "register"]

DEFAULT_MASTER = "local[*]"
LOOPBACK = "127.0.0.1"
LOG4J = """\
rootLogger.level = {level}
rootLogger.appenderRef.stderr.ref = console
appender.console.type = Console
appender.console.name = console
appender.console.target = SYSTEM_ERR
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = %d{{yy/MM/dd HH:mm:ss}} %p %c{{1}}: %m%n
"""


def is_local(master: str) -> bool:
    return master == "local" or master.startswith(("local[", "local-cluster"))


def on_loopback(master: str) -> bool:
    """Local mode, or a standalone master on 127.0.0.1: everything then binds to loopback only."""
    return is_local(master) or is_loopback_master(master)


def prepare_environment(master: str) -> None:
    """The environment variables Spark reads at launch (see the module docstring)."""
    if on_loopback(master):
        os.environ.setdefault("SPARK_LOCAL_IP", LOOPBACK)
    if is_local(master):
        os.environ["PYSPARK_PYTHON"] = sys.executable
    else:
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable


def local_driver_memory(max_batch_bytes: int, physical: int | None = None) -> str:
    """The driver heap of a local master: 1 GiB plus 16 times the read cap, at most half the machine's memory.

    In local mode the driver is the only executor: one task holds a batch's rows as Arrow, as Spark's
    rows, and as the output format's page (and its compressed copy).  Measured (docs/spark.md, "Memory"):
    one 120 MiB value needs more than Spark's default 1 GiB and fits in 3 GiB, the size this gives for
    the default cap of 128 MiB.  ``physical``: the machine's memory in bytes (default: asked of the system).
    """
    if physical is None:
        try:
            physical = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
        except (ValueError, OSError):
            physical = 0
    mib = (1 << 10) + 16 * max_batch_bytes // (1 << 20)
    if physical:
        mib = min(mib, physical // 2 // (1 << 20))
    return f"{max(mib, 1 << 10)}m"


def session_conf(master: str, conf: Sequence[tuple[str, str]] = (), log_level: str = "WARN",
                 max_batch_bytes: int = DEFAULT_MAX_DECOMPRESSED) -> dict[str, str]:
    """Spark settings for a kseg session; ``conf`` (``--conf k=v``) overrides them."""
    settings = {
        "spark.master": master,
        "spark.app.name": "kseg",
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "false",
    }
    if is_local(master):
        settings["spark.driver.memory"] = local_driver_memory(max_batch_bytes)
    if on_loopback(master):
        settings["spark.driver.host"] = LOOPBACK
        settings["spark.driver.bindAddress"] = LOOPBACK
    java_options = f"-Dlog4j2.configurationFile=file:{_log4j_file(log_level)}"
    for key, value in conf:
        if key == "spark.driver.extraJavaOptions":  # the caller's JVM flags, and still our log settings
            value = f"{java_options} {value}"
        settings[key] = value
    settings.setdefault("spark.driver.extraJavaOptions", java_options)
    return settings


def _log4j_file(level: str) -> Path:
    """log4j's configuration for ``level``, written once per run into the private directory.

    The JVM runs as kseg's user (root on a broker host) and log4j can be told
    to run code: the file must be one nobody else could have written.
    """
    name = f"log4j2-{level}.properties"
    path = scratch_dir() / name
    if not path.is_file():  # the directory is ours alone: a file there is one this run wrote
        write_private(name, LOG4J.format(level=level))
    return path


@contextlib.contextmanager
def _stderr_to_log() -> Iterator[None]:
    """Point fd 2 at the private log while the JVM starts: the child keeps it, we get ours back.

    The log is created anew (0600, ``O_EXCL | O_NOFOLLOW``) for each session.
    """
    target = create_private(log_file().name, replace=True)
    try:
        sys.stderr.flush()
        saved = os.dup(2)
        try:
            os.dup2(target, 2)
            yield
        finally:
            sys.stderr.flush()
            os.dup2(saved, 2)
            os.close(saved)
    finally:
        os.close(target)


def get_session(
    master: str | None = None, conf: Sequence[tuple[str, str]] = (), log_level: str = "WARN",
    progress: bool | None = None, max_batch_bytes: int = DEFAULT_MAX_DECOMPRESSED,
) -> tuple[SparkSession, bool]:
    """(session, created): the active session if there is one, else a new quiet one.

    ``created`` tells the caller whether it owns the session (and should stop it).
    ``progress``: show the start-up line (default: when stderr is a terminal).
    A new session is preceded by the preflight checks (:class:`SparkFailed`).
    """
    from pyspark.sql import SparkSession

    active = SparkSession.getActiveSession()
    if active is not None:
        register(active)
        return active, False
    settings = session_conf(master or DEFAULT_MASTER, conf, log_level, max_batch_bytes)
    master = settings["spark.master"]  # --conf spark.master=... wins, as it does in Spark
    if "PYSPARK_GATEWAY_PORT" not in os.environ:  # else pyspark joins a JVM that is already running
        check_java()
    check_master(master)
    prepare_environment(master)
    builder = SparkSession.builder
    for key, value in settings.items():
        builder = builder.config(key, value)
    with StartProgress(master, show=progress), _stderr_to_log():
        spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel(log_level)
    _quiet_update_server(spark)
    register(spark)
    return spark, True


def _quiet_update_server(spark: SparkSession) -> None:
    """pyspark's accumulator server prints a Python traceback on stderr when the JVM dies under it: to Spark's log.

    Its ``handle_error`` (``socketserver``'s) runs on the server's thread; what it would print is appended to
    the private log the error line names.
    """
    server = getattr(spark.sparkContext, "_accumulatorServer", None)
    if server is None:
        return

    def handle_error(request: object, client_address: object) -> None:
        append_to_log(f"kseg: the accumulator server's connection failed:\n{traceback.format_exc()}")

    server.handle_error = handle_error


def register(spark: SparkSession) -> None:
    """Make ``spark.read.format("kseg")`` available in this session."""
    from kseg.spark.source import KsegDataSource

    if getattr(spark, "_kseg_registered", False):
        return  # registering again works, but Spark logs a warning each time
    spark.dataSource.register(KsegDataSource)
    spark._kseg_registered = True  # type: ignore[attr-defined]


@contextlib.contextmanager
def command_session(master: str | None, conf: Sequence[tuple[str, str]],
                    inputs: Sequence[str | os.PathLike[str]] = (),
                    max_batch_bytes: int = DEFAULT_MAX_DECOMPRESSED) -> Iterator[SparkSession]:
    """The session for one command: started quietly, stopped only if this command started it.

    A failure to start, or an error from Spark while the command runs,
    becomes :class:`SparkFailed`; so does a JVM that died under the command
    (the connection refused), and when Spark's log says it ran out of memory
    the line says so, names the largest batch of ``inputs`` and the setting to raise.
    """
    try:
        spark, created = get_session(master, conf, max_batch_bytes=max_batch_bytes)
    except SparkFailed:
        raise
    except Exception as err:  # JVM launch failures come in many types
        raise SparkFailed.at_start(err) from err
    failed = False
    try:
        yield spark
    except Exception as err:
        failed = True
        if not (is_spark_error(err) or isinstance(err, ConnectionError)):
            raise
        oom = jvm_out_of_memory()
        if oom is not None:
            memory = dict(conf).get("spark.driver.memory") or (
                local_driver_memory(max_batch_bytes) if created and is_local(master or DEFAULT_MASTER) else None)
            raise SparkFailed.out_of_memory(oom, largest_batch(inputs), memory) from err
        raise SparkFailed.from_error(err) from err
    finally:
        if created:
            try:
                spark.stop()
            except Exception:  # the JVM is gone: nothing to stop, and the error in flight is the one to show
                if not failed:
                    raise

