"""A live line while a Spark session starts: ``starting Spark (local[*])... 3 s``, then wiped.

Starting a JVM and a SparkContext takes seconds (a minute when a standalone
master is slow to answer) with nothing else to show.  The line is written by
a thread to its own duplicate of the terminal's stderr, taken before the
JVM's stderr is pointed at Spark's log, and only when stderr is a terminal
(or the caller asks): a pipe gets nothing.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from types import TracebackType

CLEAR = b"\r\x1b[K"


class StartProgress:
    """``with StartProgress("local[*]"):`` around the session start; silent unless stderr is a terminal."""

    def __init__(self, master: str, *, show: bool | None = None, every: float = 1.0) -> None:
        self.master = master
        self.show = os.isatty(2) if show is None else show
        self.every = every
        self._fd = -1
        self._done = threading.Event()
        self._thread: threading.Thread | None = None

    def __enter__(self) -> StartProgress:
        if self.show:
            self._fd = os.dup(2)  # the terminal, whatever fd 2 points at while the JVM starts
            self._thread = threading.Thread(target=self._run, name="kseg-spark-progress", daemon=True)
            self._thread.start()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, err: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self._thread is None:
            return
        self._done.set()
        self._thread.join()
        self._write(CLEAR)
        os.close(self._fd)

    def line(self, seconds: float) -> str:
        return f"starting Spark ({self.master})... {int(seconds)} s"

    def _run(self) -> None:
        start = time.monotonic()
        while True:
            self._write(b"\r" + self.line(time.monotonic() - start).encode() + b"\x1b[K")
            if self._done.wait(self.every):
                return

    def _write(self, data: bytes) -> None:
        with contextlib.suppress(OSError):  # a terminal that went away: progress is not worth an error
            os.write(self._fd, data)
