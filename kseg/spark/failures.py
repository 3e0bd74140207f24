"""Spark's failures as one line: what went wrong, in words a user can act on, and where Spark's log is.

Spark's own messages are long and say where in Spark, not what to do: a
py4j error opens with "An error occurred while calling None.org.apache...",
a Python worker's error comes with two stack traces, and a JVM that exits at
launch only says that it exited.  The one line is picked out of that text
(the Java exception's message, the Python exception's last line, the last
thing the JVM printed before it exited); the whole story stays in the log.

No pyspark import here: these run before Spark is importable or started.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from pathlib import Path

from kseg.errors import KsegError
from kseg.segment import MappedFile, open_segment, read_small_file
from kseg.spark import scratch

#: How a py4j error names the Java exception: ``: org.apache.spark.SparkException: Could not parse ...``.
_JAVA_CLASS = re.compile(r"^:?\s*(?:[a-z_$][\w$]*\.)+[A-Z][\w$]*(?::\s*|$)")
_PY4J_OPENING = "An error occurred while calling "
_TRACEBACK = "Traceback (most recent call last):"
#: A module an executor's Python must be able to import for kseg's tasks.
_EXECUTOR_MODULES = ("kseg", "pyarrow", "pyspark")
MAX_LINE = 300


def log_path() -> Path:
    """Spark's log, as an error message names it: ``spark.log`` in the run's private directory, kept at exit."""
    scratch.keep()
    return scratch.log_file()


class SparkFailed(KsegError):
    """Spark could not start, or a job failed: one line naming Spark's log (exit 2 at the CLI edge)."""

    @classmethod
    def from_error(cls, err: BaseException) -> SparkFailed:
        """The one line for an exception raised by pyspark or py4j."""
        pick = _pick_line(str(err)) or type(err).__name__
        return cls(f"spark: {pick}{_hint(pick)} (Spark's log: {log_path()})")

    @classmethod
    def at_start(cls, err: BaseException) -> SparkFailed:
        """A failure to start a session: the reason is in the log, not in the exception.

        A JVM that exited at launch printed why last; a SparkContext that
        stopped while starting (a standalone master that never registered
        the application) logged why as its first ERROR.
        """
        text = str(err)
        if "JAVA_GATEWAY_EXITED" in text:
            reason = _log_lines(last=True)
            if reason:
                return cls(f"spark: Java exited while Spark was starting: {reason} (Spark's log: {log_path()})")
        elif "stopped SparkContext" in text:
            reason = _log_lines(last=False)
            if reason:
                return cls(f"spark: Spark stopped while starting: {reason} (Spark's log: {log_path()})")
        return cls.from_error(err)


    @classmethod
    def out_of_memory(cls, error: str, largest: tuple[str, int, int] | None, memory: str | None) -> SparkFailed:
        """The JVM died of ``OutOfMemoryError``: what, the input's largest batch, and the setting to raise.

        ``largest``: (file, byte position, size) of the largest batch in the input, the likeliest cause;
        ``memory``: the ``spark.driver.memory`` the run had.
        """
        where = f" on the largest batch of the input, {largest[2]:,} bytes at byte {largest[1]} of {largest[0]}" \
            if largest is not None else ""
        now = f" (it had {memory})" if memory else ""
        return cls(f"spark: the JVM ran out of memory ({error}){where}: give Spark more with "
                   f"--conf spark.driver.memory=8g{now} on a local master, --conf spark.executor.memory=8g on a "
                   f"cluster (Spark's log: {log_path()})")


#: What a JVM that ran out of heap logs (``java.lang.OutOfMemoryError: Java heap space``).
_OOM = re.compile(rb"java\.lang\.OutOfMemoryError(?:: ([^\r\n]{1,200}))?")


def jvm_out_of_memory() -> str | None:
    """``java.lang.OutOfMemoryError: <what>`` if Spark's log says the JVM ran out of memory, else None.

    A JVM that runs out of heap in a task is ended by Spark's uncaught-exception handler; Python then
    only sees the connection refused, or a job aborted: the log is where the cause is.
    """
    try:
        with MappedFile(scratch.log_file()) as log:
            match = _OOM.search(bytes(log.buf))
    except (OSError, KsegError):
        return None
    if match is None:
        return None
    what = (match.group(1) or b"").decode("utf-8", "replace").strip()
    return "java.lang.OutOfMemoryError" + (f": {what}" if what else "")


def largest_batch(paths: Sequence[str | os.PathLike[str]]) -> tuple[str, int, int] | None:
    """(file, byte position, size) of the largest batch framed in the segments under ``paths``; None: none.

    Asked only after the JVM ran out of memory, to name the likeliest cause: a header walk, nothing decoded.
    """
    from kseg.spark.splits import segment_files

    found = [batch for path in segment_files(paths) if (batch := _largest_in(path)) is not None]
    return max(found, key=lambda batch: batch[2], default=None)


def _largest_in(path: Path) -> tuple[str, int, int] | None:
    """(file, position, size) of the largest batch framed in one segment; None: none, or unreadable."""
    best: tuple[str, int, int] | None = None
    try:
        with open_segment(path) as segment:
            for batch in segment.walk(strict=False):
                if best is None or batch.size > best[2]:
                    best = (str(path), batch.position, batch.size)
    except (OSError, KsegError):
        return None
    return best


def is_spark_error(err: BaseException) -> bool:
    """Raised by pyspark or py4j (a job, the JVM), not by kseg's own code."""
    module = type(err).__module__ or ""
    return module.startswith(("pyspark", "py4j"))


def _pick_line(text: str) -> str:
    """The line that says what went wrong: a Python traceback's exception, else the Java exception's message."""
    lines = [line.rstrip() for line in text.splitlines()]
    marks = [i for i, line in enumerate(lines) if _TRACEBACK in line]
    if marks:  # a Python worker's error: the exception line of the last traceback
        for line in lines[marks[-1] + 1:]:
            if line.strip() and not line[0].isspace():
                return _clip(line)
    shown = [line.strip() for line in lines if line.strip()]
    if len(shown) > 1 and shown[0].startswith(_PY4J_OPENING):
        message = _JAVA_CLASS.sub("", shown[1], count=1).strip()
        return _clip(message or shown[1].lstrip(": "))
    return _clip(shown[0]) if shown else ""


def _hint(line: str) -> str:
    """What to do when an executor's Python lacks a module kseg's tasks need."""
    match = re.match(r"(?:ModuleNotFoundError|ImportError): No module named '([\w.]+)'", line)
    if match and match.group(1).split(".")[0] in _EXECUTOR_MODULES:
        return " on an executor: install kseg[spark] in the executors' Python, or set PYSPARK_PYTHON to one that has it"
    return ""


#: A log4j line as kseg's Spark log has them: ``26/11/23 05:20:51 ERROR StandaloneSchedulerBackend: ...``.
_LOG_ERROR = re.compile(r"^\S+ \S+ ERROR [\w$.]+: (.+)$")
#: What bash says about the launcher script itself when java failed under it (``spark-class: line 97: ...``).
_SHELL = re.compile(r"^\S+: line \d+: ")


def _log_lines(*, last: bool) -> str:
    """From Spark's log: what the JVM said before it exited (``last``), else the first ERROR's message.

    A JVM that exits at launch prints an ``Error: ...`` line (then a stack);
    the launcher script only says that its command failed.  Without an error
    line, the last thing printed (``JAVA_HOME is not set``) is the reason.
    """
    try:
        text = read_small_file(log_path()).decode("utf-8", "replace")
    except (OSError, KsegError):  # none yet, or empty
        return ""
    lines = text.splitlines()
    if not last:
        first = next((match.group(1) for match in map(_LOG_ERROR.match, lines) if match), "")
        return _clip(first.strip())
    said = [line.strip() for line in lines if line.strip() and not line[0].isspace() and not _SHELL.match(line)]
    errors = [line for line in said if "Error" in line or "Exception" in line]
    line = (errors or said or [""])[0 if errors else -1]
    # 'Exception in thread "main" org.apache.spark.SparkException: Master must ...' -> 'Master must ...'
    return _clip(_JAVA_CLASS.sub("", line.removeprefix('Exception in thread "main" '), count=1) or line)


def _clip(line: str) -> str:
    return line if len(line) <= MAX_LINE else line[: MAX_LINE - 3] + "..."
