"""The one progress line on stderr, for every command whose work can take more than a second.

Why one: every command must show progress the same way, and did not (dump,
triage and Spark's start-up each drew their own).  A terminal gets a live bar
redrawn in place, with the bytes done, the total and the rate, starting only
after a second so short runs stay silent.  A pipe or a file gets nothing,
unless ``--progress`` asks for it: then one plain line every few seconds,
with no carriage returns to litter a log.  The bar is always wiped before the
command prints its report, and output never goes to stdout.

The users, all thin:

* convert, recover, reindex (and triage): :func:`watching` -- bytes come from
  :data:`kseg.segment.read_observer`, which every long walk reaches as it
  releases the pages behind it; triage also names the log directory being
  read (:meth:`ProgressLine.note`);
* verify: :func:`wanted` and :meth:`ProgressLine.update` (its ops count bytes
  themselves, across worker processes);
* dump: :class:`kseg.render.dump.progress.Progress`, one line per large file,
  fed from the batch events (:meth:`ProgressLine.update`);
* Spark's start-up: :func:`ticking` (seconds, not bytes) on the terminal
  saved before the JVM's stderr is pointed at Spark's log (:class:`EncodedStream`).
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
import time
from collections.abc import Callable, Iterator
from typing import Protocol

from kseg import segment

WIDTH = 24  # characters of the bar itself
ERASE = "\x1b[K"  # ANSI: erase to the end of the line


class Stream(Protocol):
    """Where a line is drawn: stderr, or an :class:`EncodedStream`."""

    def write(self, text: str, /) -> object: ...

    def flush(self) -> object: ...


class EncodedStream:
    """A text stream over a binary sink: dump's binary stderr, or a file descriptor (:meth:`of_fd`)."""

    def __init__(self, write: Callable[[bytes], object], flush: Callable[[], object] | None = None,
                 *, terminal: bool = False) -> None:
        self._write = write
        self._flush = flush
        self.terminal = terminal

    @classmethod
    def of_fd(cls, fd: int, *, terminal: bool) -> EncodedStream:
        return cls(lambda data: os.write(fd, data), terminal=terminal)

    def write(self, text: str) -> None:
        self._write(text.encode("utf-8", "surrogateescape"))

    def flush(self) -> None:
        if self._flush is not None:
            self._flush()

    def isatty(self) -> bool:
        return self.terminal


def size_text(n: float) -> str:
    """Bytes in binary units, three significant digits (``812 MiB``, ``1.27 GiB``)."""
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if n < 1024 or unit == "TiB":
            return f"{n:.0f} {unit}" if unit == "B" or n >= 100 else f"{n:.3g} {unit}"
        n /= 1024
    raise AssertionError("unreachable")


class ProgressLine:
    """``label [#####.....]  42%  1.2 GiB of 2.9 GiB  310 MiB/s`` on stderr, redrawn at most 4 times a second.

    ``live``: a terminal, redrawn in place at most every 0.25 s (else whole lines, every 5 s; ``every``
    changes that).  ``delay``: nothing is drawn before it has passed.  ``ansi``: a redrawn line ends with ESC[K and is wiped with ``\\r ESC[K``
    (what dump and Spark's start-up line always drew) instead of being padded and wiped with spaces.
    """

    def __init__(
        self, label: str, total: int, stream: Stream | None = None, *, live: bool = True, delay: float = 1.0,
        ansi: bool = False, every: float | None = None,
    ) -> None:
        self.label = label
        self.total = total
        self.stream: Stream = stream if stream is not None else sys.stderr
        self.live = live
        self.ansi = ansi
        self.every = every if every is not None else 0.25 if live else 5.0
        self.start = time.monotonic()
        self.after = self.next = self.start + delay
        self.done = 0
        self.width = 0  # of the line on screen, to wipe it
        self.lock = threading.Lock()  # Spark's start-up line is drawn from a thread

    def advance(self, nbytes: int) -> None:
        """``nbytes`` more have been read; draw if it is time."""
        self.done += nbytes
        now = time.monotonic()
        if now >= self.next:
            self.next = now + self.every
            self.draw(now)

    def update(self, done: int, total: int) -> None:
        """``done`` of ``total`` bytes so far (for ops that count for themselves, as verify does)."""
        self.total = total
        self.advance(done - self.done)

    def note(self, label: str, done: int | None = None, total: int | None = None) -> None:
        """A new label (what is being read now; with ``done`` of ``total`` bytes when the caller counts them).

        On a terminal it is drawn at once, once the delay has passed; in a pipe at the usual pace.
        """
        self.label = label
        if total is not None:
            self.total = total
        if done is not None:
            self.done = done
        now = time.monotonic()
        if now >= self.after and (self.live or now >= self.next):
            self.next = now + self.every
            self.draw(now)

    def text(self, now: float) -> str:
        """The line: the label, then the bytes -- or the label alone while nothing is counted."""
        if not self.total and not self.done:
            return self.label
        done = min(self.done, self.total) if self.total else self.done
        rate = done / max(now - self.start, 1e-6)
        if self.total:
            filled = WIDTH * done // self.total
            bar = "#" * filled + "." * (WIDTH - filled)
            amount = f"[{bar}] {done / self.total:4.0%}  {size_text(done)} of {size_text(self.total)}"
        else:
            amount = size_text(done)
        return f"{self.label} {amount}  {size_text(rate)}/s"

    def draw(self, now: float) -> None:
        line = self.text(now)
        with self.lock, contextlib.suppress(OSError, ValueError):  # a closed stderr must not end the work
            if not self.live:
                self.stream.write(line + "\n")
            elif self.ansi:
                self.stream.write("\r" + line + ERASE)
                self.width = max(self.width, len(line))
            else:
                self.stream.write("\r" + line.ljust(self.width))
                self.width = max(self.width, len(line))
            self.stream.flush()

    def clear(self) -> None:
        """Wipe the live line (nothing to do for whole lines)."""
        if self.live and self.width:
            with self.lock, contextlib.suppress(OSError, ValueError):
                self.stream.write("\r" + ERASE if self.ansi else "\r" + " " * self.width + "\r")
                self.stream.flush()
            self.width = 0


def is_terminal(stream: object) -> bool:
    try:
        return bool(stream.isatty())  # type: ignore[attr-defined]
    except (AttributeError, OSError, ValueError):
        return False


def wanted(
    forced: bool, stream: Stream | None = None, *, label: str = "", delay: float = 1.0, ansi: bool = False
) -> ProgressLine | None:
    """Nothing unless ``stream`` (stderr) is a terminal or ``--progress`` was given."""
    stream = stream if stream is not None else sys.stderr
    terminal = is_terminal(stream)
    if not (terminal or forced):
        return None
    return ProgressLine(label, 0, stream, live=terminal, delay=delay, ansi=ansi)


@contextlib.contextmanager
def watching(label: str, total: int, *, forced: bool = False) -> Iterator[ProgressLine | None]:
    """Show progress of the bytes every walk reads while the body runs; wiped on the way out."""
    line = wanted(forced)
    if line is None:
        yield None
        return
    line.label, line.total = label, total
    previous = segment.read_observer
    segment.read_observer = line.advance
    try:
        yield line
    finally:
        segment.read_observer = previous
        line.clear()


@contextlib.contextmanager
def ticking(line: ProgressLine | None, label: Callable[[float], str], every: float = 1.0) -> Iterator[None]:
    """Redraw ``label(seconds so far)`` every ``every`` seconds from a thread while the body runs, then wipe it.

    For work that counts no bytes and cannot call back (a JVM starting): the line says how long it has taken.
    """
    if line is None:
        yield
        return
    done = threading.Event()

    def run() -> None:
        while True:
            line.note(label(time.monotonic() - line.start))
            if done.wait(every):
                return

    thread = threading.Thread(target=run, name="kseg-progress", daemon=True)
    thread.start()
    try:
        yield
    finally:
        done.set()
        thread.join()
        line.clear()
