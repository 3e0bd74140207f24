"""A live line while a Spark session starts: ``starting Spark (local[*])... 3 s``, then wiped.

Starting a JVM and a SparkContext takes seconds (a minute when a standalone
master is slow to answer) with nothing else to show.  The line is kseg's one
progress line (:mod:`kseg.render.progress`, redrawn by :func:`~kseg.render.progress.ticking`),
written to a duplicate of the terminal's stderr taken before the JVM's stderr
is pointed at Spark's log, and only when stderr is a terminal (or the caller
asks): a pipe gets nothing.
"""

from __future__ import annotations

import contextlib
import os
from types import TracebackType

from kseg.render.progress import ERASE, EncodedStream, ProgressLine, ticking

CLEAR = ("\r" + ERASE).encode()


class StartProgress:
    """``with StartProgress("local[*]"):`` around the session start; silent unless stderr is a terminal.

    The first line is drawn after ``every`` seconds (a session already running shows nothing).
    """

    def __init__(self, master: str, *, show: bool | None = None, every: float = 1.0) -> None:
        self.master = master
        self.show = os.isatty(2) if show is None else show
        self.every = every
        self._fd = -1
        self._ticking: contextlib.AbstractContextManager[None] | None = None

    def __enter__(self) -> StartProgress:
        if self.show:
            self._fd = os.dup(2)  # the terminal, whatever fd 2 points at while the JVM starts
            stream = EncodedStream.of_fd(self._fd, terminal=True)
            line = ProgressLine(self.line(0), 0, stream, delay=self.every, ansi=True)
            self._ticking = ticking(line, self.line, self.every)
            self._ticking.__enter__()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, err: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self._ticking is None:
            return
        self._ticking.__exit__(None, None, None)
        os.close(self._fd)

    def line(self, seconds: float) -> str:
        return f"starting Spark ({self.master})... {int(seconds)} s"
