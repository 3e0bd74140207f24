"""The one progress line on stderr, for any command whose work can take more than a second.

Why here: convert, recover and reindex (and whatever comes next) must show
progress the same way.  A terminal gets a live bar redrawn in place, with the
bytes read, the total and the rate, starting only after a second so short runs
stay silent.  A pipe or a file gets nothing, unless ``--progress`` asks for it:
then one plain line every few seconds, with no carriage returns to litter a
log.  The bar is always wiped before the command prints its report, and output
never goes to stdout.

Bytes come from :data:`kseg.segment.read_observer`, which every long walk
reaches as it releases the pages behind it; :func:`watching` installs the
observer for the length of one command.
"""

from __future__ import annotations

import contextlib
import sys
import time
from collections.abc import Iterator
from typing import TextIO

from kseg import segment

WIDTH = 24  # characters of the bar itself


def size_text(n: float) -> str:
    """Bytes in binary units, three significant digits (``812 MiB``, ``1.27 GiB``)."""
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if n < 1024 or unit == "TiB":
            return f"{n:.0f} {unit}" if unit == "B" or n >= 100 else f"{n:.3g} {unit}"
        n /= 1024
    raise AssertionError("unreachable")


class ProgressLine:
    """``label [#####.....]  42%  1.2 GiB of 2.9 GiB  310 MiB/s`` on stderr, redrawn at most 4 times a second."""

    def __init__(
        self, label: str, total: int, stream: TextIO | None = None, *, live: bool = True, delay: float = 1.0
    ) -> None:
        self.label = label
        self.total = total
        self.stream = stream if stream is not None else sys.stderr
        self.live = live  # a terminal: redraw in place; otherwise: whole lines, less often
        self.every = 0.25 if live else 5.0
        self.start = time.monotonic()
        self.next = self.start + delay
        self.done = 0
        self.width = 0  # of the line on screen, to wipe it

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

    def text(self, now: float) -> str:
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
        with contextlib.suppress(OSError, ValueError):  # a closed stderr must not end the work
            if self.live:
                self.stream.write("\r" + line.ljust(self.width))
                self.width = max(self.width, len(line))
            else:
                self.stream.write(line + "\n")
            self.stream.flush()

    def clear(self) -> None:
        """Wipe the live line (nothing to do for whole lines)."""
        if self.live and self.width:
            with contextlib.suppress(OSError, ValueError):
                self.stream.write("\r" + " " * self.width + "\r")
                self.stream.flush()
            self.width = 0


def wanted(forced: bool, stream: TextIO | None = None) -> ProgressLine | None:
    """Nothing unless stderr is a terminal or ``--progress`` was given."""
    stream = stream if stream is not None else sys.stderr
    try:
        terminal = stream.isatty()
    except (AttributeError, ValueError):
        terminal = False
    if not (terminal or forced):
        return None
    return ProgressLine("", 0, stream, live=terminal)


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
