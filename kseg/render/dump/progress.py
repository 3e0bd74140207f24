"""Feeding events to a renderer, with a progress note on a terminal for long dumps."""

from __future__ import annotations

import time
from collections.abc import Iterable
from typing import BinaryIO, Protocol

from kseg.ops.dump import BatchEvent, Event, FileStart


class DumpRenderer(Protocol):
    """What :func:`render` needs of a renderer (text, JSON lines or table)."""

    problems: int

    def handle(self, event: Event) -> None: ...

    def close(self) -> None: ...


class Progress:
    """A one-line progress note on stderr for long dumps, only when stderr is a terminal."""

    def __init__(self, err: BinaryIO, sizes: dict[str, int], *, min_size: int = 64 << 20, every: float = 0.5) -> None:
        self.err = err
        self.sizes = sizes
        self.min_size = min_size
        self.every = every
        self._next = 0.0
        self._shown = False

    def update(self, event: Event) -> None:
        if not isinstance(event, BatchEvent):
            if isinstance(event, FileStart):
                self.clear()
            return
        size = self.sizes.get(event.path, 0)
        if size < self.min_size:
            return
        now = time.monotonic()
        if now < self._next:
            return
        self._next = now + self.every
        percent = 100 * event.batch.position // size
        self.err.write(f"\rkseg: {event.path}: {percent}%\x1b[K".encode("utf-8", "surrogateescape"))
        self.err.flush()
        self._shown = True

    def clear(self) -> None:
        if self._shown:
            self.err.write(b"\r\x1b[K")
            self.err.flush()
            self._shown = False


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
