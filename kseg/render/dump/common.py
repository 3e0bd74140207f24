"""Pieces every ``kseg dump`` renderer shares: Java's spellings, the stderr lines, buffered output.

Output is written as UTF-8 bytes in chunks; anything for stderr first flushes
stdout, so a terminal shows both in order.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable
from typing import BinaryIO

from kseg.ops.dump import DEFAULT_DIALECT, Dialect, Problem, Summary
from kseg.render.terminal import escape_controls


class Sink:
    """Buffered UTF-8 line output to stdout (flushed every ``chunk`` characters), lines to stderr.

    ``escaping`` (stdout is a terminal): every control character the input
    put in a line is spelt out (:func:`~kseg.render.terminal.escape_controls`);
    into a pipe or a file the text is Kafka's, byte for byte.  Lines to stderr
    are always escaped: each must stay one line.
    """

    def __init__(self, out: BinaryIO, err: BinaryIO, chunk: int = 1 << 16, *, escaping: bool = False) -> None:
        self.out = out
        self.err = err
        self.chunk = chunk
        self.escaping = escaping
        self._lines: list[str] = []
        self._size = 0

    def line(self, text: str) -> None:
        if self.escaping:
            text = escape_controls(text)
        self._lines.append(text)
        self._size += len(text) + 1
        if self._size >= self.chunk:
            self.flush()

    def flush(self) -> None:
        if self._lines:
            data = "\n".join(self._lines) + "\n"
            self._lines.clear()
            self._size = 0
            self.out.write(data.encode("utf-8", "surrogateescape"))
        self.out.flush()

    def part(self, text: str) -> None:
        """Text of a line still being written (a large batch's records): out now, the line ended later."""
        if self._lines:
            self.out.write(("\n".join(self._lines) + "\n").encode("utf-8", "surrogateescape"))
            self._lines.clear()
            self._size = 0
        if self.escaping:
            text = escape_controls(text)
        self.out.write(text.encode("utf-8", "surrogateescape"))

    def raw(self, data: bytes) -> None:
        """Bytes already encoded (whole lines, or part of one after :meth:`part`): after the pending lines.

        Escaping, a newline in ``data`` is taken to end a line (the text renderer
        does not hand the core's records here then; JSON has its own ``\n``).
        """
        if self.escaping:
            data = escape_controls(data.decode("utf-8", "surrogateescape"), keep_newlines=True).encode(
                "utf-8", "surrogateescape")
        if self._lines:
            self.out.write(("\n".join(self._lines) + "\n").encode("utf-8", "surrogateescape"))
            self._lines.clear()
            self._size = 0
        self.out.write(data)

    def err_line(self, text: str) -> None:
        self.flush()
        self.err.write((escape_controls(text) + "\n").encode("utf-8", "surrogateescape"))
        self.err.flush()


def binary_streams() -> tuple[BinaryIO, BinaryIO]:
    """stdout and stderr as byte streams (also under click's test runner)."""
    return sys.stdout.buffer, sys.stderr.buffer


def tf(value: bool) -> str:
    return "true" if value else "false"


def optional_long(value: int | None) -> str:
    """Java's ``OptionalLong.toString()``."""
    return "OptionalLong.empty" if value is None else f"OptionalLong[{value}]"


_JACKSON_ESCAPES = re.compile(r'["\\\x00-\x1f]')
_SHORT_ESCAPES = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f", "\r": "\\r"}


def _jackson_string(text: str) -> str:
    return '"' + _JACKSON_ESCAPES.sub(lambda m: _SHORT_ESCAPES.get(m[0], f"\\u{ord(m[0]):04X}"), text) + '"'


def jackson_json(value: object) -> str:
    """Compact JSON the way Jackson writes Kafka's generated converters' trees."""
    if isinstance(value, dict):
        return "{" + ",".join(f"{_jackson_string(k)}:{jackson_json(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ",".join(jackson_json(v) for v in value) + "]"
    if isinstance(value, str):
        return _jackson_string(value)
    if isinstance(value, bool):
        return tf(value)
    if value is None:
        return "null"
    return str(value)


def problem_line(event: Problem) -> str:
    """``kseg: <path>: byte N: message`` (or Kafka's own stderr text for what Kafka itself reports)."""
    if event.kafka_text:
        return event.message
    where = f"byte {event.position}: " if event.position is not None else ""
    return f"kseg: {event.path}: {where}{event.message}"


SUMMARY_TEXT: dict[str, tuple[Callable[[str], str], str]] = {
    "index_mismatch": (lambda p: f"Mismatches in :{p}", "  Index offset: {}, log offset: {}"),
    "time_index_mismatch": (lambda p: f"Found timestamp mismatch in :{p}", "  Index timestamp: {}, log timestamp: {}"),
    "time_index_out_of_order": (
        lambda p: f"Found out of order timestamp in :{p}",
        "  Index timestamp: {}, Previously indexed timestamp: {}",
    ),
    # Scala (<= 4.2) prints one fixed header per file; 4.3's TimeIndexDumpErrors.printErrors names it
    "time_index_offset_not_found": (
        lambda p: "The following indexed offsets are not found in the log.",
        "Indexed offset: {}, found log offset: {}",
    ),
    "non_consecutive_offsets": (lambda p: f"Non-consecutive offsets in {p}", "  {} is followed by {}"),
}


JAVA_NOT_FOUND_HEADER = "The following indexed offsets are not found in :{}"  # DumpLogSegments.java 4.3


def summary_lines(event: Summary, dialect: Dialect = DEFAULT_DIALECT) -> list[str]:
    """A summary section as Kafka prints it on stderr: the header, then one line per pair."""
    header, template = SUMMARY_TEXT[event.kind]
    if event.kind == "time_index_offset_not_found" and dialect.java_port:
        header = JAVA_NOT_FOUND_HEADER.format
    return [header(event.path), *(template.format(first, second) for first, second in event.pairs)]
