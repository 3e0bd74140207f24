"""Where a byte string first occurs in a buffer range: the compiled core's SIMD ``memmem`` when it has it.

``kseg grep`` looks for what a matching record must contain (kseg.ops.grep.search) before it reads any
record; at memory speed that skips most of a segment.  The core's ``find_bytes`` (rust/kseg-py/src/grep.rs,
memchr's ``memmem``) answers what ``bytes.find(needle, start, end)`` answers (tests/core/test_core_find.py);
without it (``KSEG_PURE=1``, or a core built before it existed) Python's ``find`` does.
"""

from __future__ import annotations

from mmap import mmap

from kseg.format._core import CORE, call

_CORE_FIND = getattr(CORE, "find_bytes", None)


def find_bytes(buf: bytes | bytearray | mmap, needle: bytes, start: int, end: int) -> int:
    """The first position in ``[start, end)`` where ``needle`` lies wholly inside the range, or -1."""
    if _CORE_FIND is not None and start >= 0 and end >= 0:
        found = call(_CORE_FIND, start, buf, needle, start, end)
        if found is not NotImplemented:
            return -1 if found is None else int(found)
    return buf.find(needle, start, end)
