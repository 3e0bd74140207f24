"""Where a byte string first occurs in a buffer range: the compiled core's SIMD ``memmem`` when it has it.

``kseg grep`` looks for what a matching record must contain (kseg.ops.grep.search) before it reads any
record; at memory speed that skips most of a segment.  The core's ``find_bytes`` (rust/kseg-py/src/grep.rs,
memchr's ``memmem``) answers what ``bytes.find(needle, start, end)`` answers (tests/core/test_core_find.py);
without it (``KSEG_PURE=1``, or a core built before it existed) Python's ``find`` does.
"""

from __future__ import annotations

from mmap import mmap

from kseg.format._core import CORE, call
from kseg.format.layout import CODEC_MASK, CONTROL_MASK
from kseg.format.walk import BatchWalk, WalkEnd

_CORE_FIND = getattr(CORE, "find_bytes", None)


def find_bytes(buf: bytes | bytearray | mmap, needle: bytes, start: int, end: int) -> int:
    """The first position in ``[start, end)`` where ``needle`` lies wholly inside the range, or -1."""
    if _CORE_FIND is not None and start >= 0 and end >= 0:
        found = call(_CORE_FIND, start, buf, needle, start, end)
        if found is not NotImplemented:
            return -1 if found is None else int(found)
    return buf.find(needle, start, end)


_CORE_CANDIDATES = getattr(CORE, "grep_candidates", None)


def grep_candidates(buf: bytearray | mmap, limit: int, needles: tuple[bytes, ...], control: bool,
                    legacy: bool, start: int = 0) -> tuple[list[tuple[int, int]], WalkEnd]:
    """The entries of ``buf[start:limit]`` that may hold a match, as ``(position, next)`` (positions in
    ``buf``), and where the walk ended.

    A window of ``kseg grep``'s no-match path in one call: the entries framed as
    ``BatchWalk(strict=False)`` frames them, kept when the entry is a V2 batch
    whose control flag is ``control`` and that is compressed or holds every
    needle (each starting inside the batch and lying wholly before ``limit``),
    or a magic 0/1 entry when ``legacy``.  The core (rust/kseg-py/src/grep.rs)
    does it without a Python object per batch; :func:`_candidates` is the
    reference (tests/core/test_core_find.py compares them).
    """
    if _CORE_CANDIDATES is not None and limit >= 0 and start >= 0:
        found = call(_CORE_CANDIDATES, 0, buf, limit, list(needles), control, legacy, start)
        if found is not NotImplemented:
            kept, (position, remaining, reason, declared) = found
            return kept, WalkEnd(position, remaining, reason, declared)
    return _candidates(buf, limit, needles, control, legacy, start)


def _candidates(buf: bytearray | mmap, limit: int, needles: tuple[bytes, ...], control: bool,
                legacy: bool, start: int = 0) -> tuple[list[tuple[int, int]], WalkEnd]:
    """:func:`grep_candidates` in Python: one ``find`` per needle per batch, over the framed entries."""
    walk = BatchWalk(buf, min(start, limit), limit, strict=False)
    wanted = CONTROL_MASK if control else 0
    kept = []
    for pos, nxt, _, header, _ in walk.frames():
        if header is None:
            keep = legacy
        else:
            searched = not header[5] & CODEC_MASK
            keep = header[5] & CONTROL_MASK == wanted and not (
                searched and not all(_starts_within(buf, n, pos, nxt, walk.limit) for n in needles))
        if keep:
            kept.append((pos, nxt))
    assert walk.end is not None
    return kept, walk.end


def _starts_within(buf: bytearray | mmap, needle: bytes, pos: int, nxt: int, limit: int) -> bool:
    found = buf.find(needle, pos, limit)
    return 0 <= found < nxt
