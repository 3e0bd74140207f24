"""Which files ``kseg dump`` reads, how it shows their paths, and which handler each one gets.

Kafka's tool dispatches on the text from the last ``.`` of a name and prints
paths as ``java.io.File`` does; kseg also dumps the side files Kafka ignores,
by exact name.  Shared by the walk over files and the side-file reader, so it
sits below both.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from kseg.ops.discover import PLAIN_FILES, expand_paths
from kseg.ops.dump.events import Problem

#: suffix (text from the last ".") -> handler kind, as DumpLogSegments.main dispatches
HANDLED_SUFFIXES = {
    ".log": "log",
    ".checkpoint": "log",
    ".index": "index",
    ".timeindex": "timeindex",
    ".snapshot": "snapshot",
    ".txnindex": "txnindex",
}
CLEAN_SHUTDOWN_FILE = ".kafka_cleanshutdown"
#: Files kafka-dump-log ignores or crashes on and kseg dumps (kseg.ops.dump.sidefiles), by exact name.
SIDE_FILE_NAMES = (*PLAIN_FILES, CLEAN_SHUTDOWN_FILE)
_JAVA_LONG = re.compile(r"^[+-]?\d+$")


@dataclass(frozen=True, slots=True)
class DumpTarget:
    """One file to dump: ``display`` is the path as Kafka would print it, ``path`` where it is."""

    display: str
    path: Path

    @property
    def absolute(self) -> str:
        """``File.getAbsolutePath``: the cwd joined on, nothing resolved (Kafka keys summaries by it)."""
        return java_absolute_path(self.display)


def java_path(text: str) -> str:
    """How ``new File(text).toString()`` prints a path: repeated and trailing ``/`` removed."""
    text = re.sub(r"/+", "/", text)
    return text[:-1] if len(text) > 1 and text.endswith("/") else text


def java_absolute_path(display: str) -> str:
    if display.startswith("/"):
        return display
    cwd = os.getcwd()
    return f"{cwd}/{display}" if display else cwd


def targets_for(args: Iterable[str]) -> list[DumpTarget]:
    """Files meant by the arguments: files as given, directories expanded in Kafka's load order."""
    out: list[DumpTarget] = []
    for arg in args:
        path = Path(arg)
        shown = java_path(arg)
        if path.is_dir():
            for child in expand_paths([path]):
                relative = child.relative_to(path).as_posix()
                out.append(DumpTarget(f"{shown.rstrip('/')}/{relative}", child))
        else:
            out.append(DumpTarget(shown, path))
    return out


def handler_kind(name: str) -> str | None:
    """The handler for a file name: a side file by its exact name (the kind is the name), else, as
    Kafka dispatches, by the text from the last ``.`` (None: ignored)."""
    if name in SIDE_FILE_NAMES:
        return name
    dot = name.rfind(".")
    return None if dot < 0 else HANDLED_SUFFIXES.get(name[dot:])


def parse_java_long(text: str) -> int | None:
    """``Long.parseLong``, or None where it would throw."""
    if not _JAVA_LONG.match(text):
        return None
    value = int(text)
    return value if -(2**63) <= value < 2**63 else None


def name_offset(target: DumpTarget) -> int | Problem:
    """The number before the first ``.`` of the name (``Long.parseLong``, as Kafka's tool reads it), or the
    problem its NumberFormatException is."""
    stem = target.path.name.split(".")[0]
    value = parse_java_long(stem)
    if value is None:
        return Problem(target.display, None, f"cannot read a base offset from the file name: {stem!r} is not a number")
    return value
