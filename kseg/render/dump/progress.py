"""Feeding events to a renderer, with the progress line on a terminal (or with --progress) for long dumps."""

from __future__ import annotations

from collections.abc import Iterable
from typing import BinaryIO, Protocol

from kseg.ops.dump import BatchEvent, Event, FileStart
from kseg.render.progress import EncodedStream, ProgressLine

DELAY = 1.0  # seconds before the line is first drawn: short dumps stay silent


class DumpRenderer(Protocol):
    """What :func:`render` needs of a renderer (text, JSON lines or table)."""

    problems: int

    def handle(self, event: Event) -> None: ...

    def close(self) -> None: ...


class Progress:
    """Dump's progress on kseg's one progress line (:mod:`kseg.render.progress`), fed from the events.

    One line for the whole run: the file being dumped, then the bytes of the run done (the files
    finished and the current batch's position), the total and the rate.  Wiped as each file starts,
    so a file's header is never printed over it.  A run of fewer than ``min_size`` bytes shows nothing;
    ``every=0`` draws at every batch, from the first (tests).  ``live=False`` (``--progress`` in a
    pipe): plain lines.
    """

    def __init__(
        self, err: BinaryIO, sizes: dict[str, int], *, min_size: int = 64 << 20, every: float = 0.25,
        live: bool = True,
    ) -> None:
        self.sizes = sizes
        total = sum(sizes.values())
        stream = EncodedStream(err.write, err.flush, terminal=live)
        self.line = None if total < min_size else ProgressLine(
            "kseg:", total, stream, live=live, delay=DELAY if every else 0.0, ansi=True, every=every if live else None)
        self._path: str | None = None
        self._base = 0  # bytes of the files before the current one

    def update(self, event: Event) -> None:
        if self.line is None:
            return
        if isinstance(event, FileStart):
            self.clear()
            if self._path is not None:
                self._base += self.sizes.get(self._path, 0)
            self._path = event.path
        elif isinstance(event, BatchEvent):
            self.line.label = f"kseg: {event.path}:"
            self.line.update(self._base + event.batch.position, self.line.total)

    def clear(self) -> None:
        if self.line is not None:
            self.line.clear()


def render(events: Iterable[Event], renderer: DumpRenderer, progress: Progress | None = None) -> int:
    """Feed every event to ``renderer``; returns the number of problems reported."""
    handle = renderer.handle
    try:
        if progress is None:
            for event in events:
                handle(event)
        else:
            for event in events:
                progress.update(event)
                handle(event)
            progress.clear()
    finally:
        renderer.close()
    return renderer.problems
