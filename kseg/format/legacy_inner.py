"""A V0/V1 wrapper's inner messages walked as they are decompressed: nothing per message kept.

A wrapper under the 128 MiB read cap can hold about 3.6 million one-byte messages; read as a list
of records it costs gigabytes.  :mod:`kseg.format.v0v1` therefore reads a wrapper in two passes
over :func:`kseg.format.compression.decompress_chunks`, each walking the decompressed bytes once,
entry by entry, as they come (:class:`Regions` keeps only the entry a chunk boundary cut):

1. :func:`inner_walk` -- the framing ``DataLogInputStream.nextBatch`` applies (a size below the V0
   minimum is corrupt, an entry cut short by the end of the stream ends the set), the count, the
   first and last inner offsets (the last gives a magic-1 wrapper's absolute base), and the first
   message kseg's reader refuses (codec bits, a key or value running past its message).  Every
   error a wrapper's records can raise is known after it, before the first record is handed out.
2. the records themselves (:meth:`kseg.format.v0v1.LegacyBatch.iter_records`), or
   :func:`inner_check`: what ``verify --deep`` checks of each inner message (CRC-32, magic, offsets
   in order, the largest timestamp), answered as a few numbers and the exceptions.

Both functions work on a region of whole entries and are stateless; the compiled core
(``kseg._core.legacy_inner_walk``/``legacy_inner_check``, docs/core.md) runs the loops,
:func:`python_inner_walk` and :func:`python_inner_check` are the references
(tests/core/test_core_legacy_inner.py).
"""

from __future__ import annotations

import struct
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from kseg.format._core import CORE
from kseg.format._core import call as call_core
from kseg.format.crc import crc32
from kseg.format.layout import CODEC_MASK, LOG_OVERHEAD, RECORD_OVERHEAD_V0, Buffer
from kseg.format.model import CREATE_TIME, LOG_APPEND_TIME, NO_TIMESTAMP_TYPE, Record, wrap_int64

_ENTRY = struct.Struct(">qi")  # offset, size
_INT32 = struct.Struct(">i")
_INT64 = struct.Struct(">q")
_UINT32 = struct.Struct(">I")
#: From an entry's start: the crc, the magic, the attributes, a magic-1 timestamp.
_CRC_AT, _MAGIC_AT, _ATTRIBUTES_AT, _TIMESTAMP_AT = 12, 16, 17, 18
#: From an entry's start: the key length of magic 0, and of every other magic (V1 layout).
_KEY_AT_V0, _KEY_AT_V1 = LOG_OVERHEAD + 6, LOG_OVERHEAD + 14

#: What :func:`inner_check` reports of one inner message (kinds, in verify's order within a message).
BAD_CRC, OTHER_MAGIC, OUT_OF_ORDER = 0, 1, 2


@dataclass(frozen=True, slots=True)
class Walked:
    """What :func:`inner_walk` found in a region: where it stopped (the first entry not yet whole,
    or the one too small to be an entry, ``size_problem``), how many whole entries, the first and
    last offsets as stored, whether the first has codec bits, and the position and number (from 0
    in the region) of the first entry kseg's reader refuses (``record_problem``, ``record_index``)."""

    stop: int
    count: int
    first: int
    last: int
    first_compressed: bool
    size_problem: int | None
    record_problem: int | None
    record_index: int


def _record_problem(buf: Buffer, pos: int, end: int) -> bool:
    """Whether kseg's reader refuses the whole message at ``pos`` (ending at ``end``): codec bits,
    or a key or value length that runs past the message (``_check_inner_uncompressed``, ``key_and_value``)."""
    if buf[pos + _ATTRIBUTES_AT] & CODEC_MASK:
        return True
    at = pos + (_KEY_AT_V0 if buf[pos + _MAGIC_AT] == 0 else _KEY_AT_V1)
    for _ in range(2):  # the key, then the value
        if at + 4 > end:
            return True
        (size,) = _INT32.unpack_from(buf, at)
        at += 4
        if size >= 0:
            if size > end - at:
                return True
            at += size
    return False


def python_inner_walk(buf: Buffer, start: int, end: int) -> Walked:
    """:func:`inner_walk` in Python: the reference."""
    pos, count, first, last, first_compressed, problem, problem_index = start, 0, 0, 0, False, None, 0
    while end - pos >= LOG_OVERHEAD:
        offset, size = _ENTRY.unpack_from(buf, pos)
        if size < RECORD_OVERHEAD_V0:
            return Walked(pos, count, first, last, first_compressed, pos, problem, problem_index)
        if size > end - pos - LOG_OVERHEAD:
            break
        nxt = pos + LOG_OVERHEAD + size
        if count == 0:
            first, first_compressed = offset, bool(buf[pos + _ATTRIBUTES_AT] & CODEC_MASK)
        if problem is None and _record_problem(buf, pos, nxt):
            problem, problem_index = pos, count
        last = offset
        count += 1
        pos = nxt
    return Walked(pos, count, first, last, first_compressed, None, problem, problem_index)


def inner_walk(buf: Buffer, start: int, end: int) -> Walked:
    """The whole inner entries of ``buf[start:end]`` (see the module docstring, pass 1)."""
    if CORE is not None and hasattr(CORE, "legacy_inner_walk"):
        ran = call_core(CORE.legacy_inner_walk, start, buf, start, end)
        if ran is not NotImplemented:
            return Walked(*ran)
    return python_inner_walk(buf, start, end)


@dataclass(frozen=True, slots=True)
class Wrapper:
    """How a wrapper gives its inner messages their offsets and timestamps (``_deep_records``):
    ``base`` is added to each inner offset (None: as stored); a magic-1 inner message under a
    magic-1 LogAppendTime wrapper takes the wrapper's timestamp."""

    magic: int
    base: int | None
    log_append: bool
    timestamp: int


@dataclass(slots=True)
class Checked:
    """What :func:`inner_check` found: where it stopped, how many messages, the first and last
    absolute offsets, the largest timestamp, and (index, kind, offset, value) of each message that
    fails its CRC (value: the stored crc), has another magic than the wrapper (the magic) or an
    offset not above the previous (the previous offset), in message order."""

    stop: int
    count: int
    first: int
    last: int
    largest: int
    events: list[tuple[int, int, int, int]] = field(default_factory=list)


def python_inner_check(
    buf: Buffer, start: int, end: int, wrapper: Wrapper, index: int, previous: int | None, largest: int
) -> Checked:
    """:func:`inner_check` in Python: the reference."""
    out = Checked(start, 0, 0, 0, largest)
    pos = start
    while end - pos >= LOG_OVERHEAD:
        stored, size = _ENTRY.unpack_from(buf, pos)
        if size < RECORD_OVERHEAD_V0 or size > end - pos - LOG_OVERHEAD:
            break
        nxt = pos + LOG_OVERHEAD + size
        offset = stored if wrapper.base is None else wrap_int64(wrapper.base + stored)
        magic = buf[pos + _MAGIC_AT]
        magic = magic - 256 if magic > 127 else magic
        (crc,) = _UINT32.unpack_from(buf, pos + _CRC_AT)
        at = index + out.count
        with memoryview(buf) as view, view[pos + _MAGIC_AT : nxt] as covered:
            if crc32(covered) != crc:
                out.events.append((at, BAD_CRC, offset, crc))
        if magic != wrapper.magic:
            out.events.append((at, OTHER_MAGIC, offset, magic))
        if previous is not None and offset <= previous:
            out.events.append((at, OUT_OF_ORDER, offset, previous))
        if magic == 0:
            timestamp = -1
        elif magic == 1 and wrapper.magic == 1 and wrapper.log_append:
            timestamp = wrapper.timestamp
        else:
            (timestamp,) = _INT64.unpack_from(buf, pos + _TIMESTAMP_AT)
        if out.count == 0:
            out.first = offset
        out.largest = max(out.largest, timestamp)
        out.last = previous = offset
        out.count += 1
        pos = nxt
    out.stop = pos
    return out


def inner_check(
    buf: Buffer, start: int, end: int, wrapper: Wrapper, index: int, previous: int | None, largest: int
) -> Checked:
    """verify's checks of the whole inner messages of ``buf[start:end]`` under ``wrapper`` (pass 2);
    ``index`` is the first one's number in the wrapper, ``previous`` the offset before it (None for
    the first), ``largest`` the largest timestamp so far.  Only messages :func:`inner_walk` passed."""
    if CORE is not None and hasattr(CORE, "legacy_inner_check"):
        ran = call_core(CORE.legacy_inner_check, start, buf, start, end, wrapper.magic, wrapper.base,
                        wrapper.log_append, wrapper.timestamp, index, previous, largest)
        if ran is not NotImplemented:
            stop, count, first, last, largest, events = ran
            return Checked(stop, count, first, last, largest, events)
    return python_inner_check(buf, start, end, wrapper, index, previous, largest)


#: Records the core builds per call (a run's list is all that is held at once).
RECORDS_PER_RUN = 4096


def inner_records(buf: Buffer, start: int, end: int, wrapper: Wrapper) -> tuple[int, list[Record]] | None:
    """The core's run of records from the whole inner messages of ``buf[start:end]`` (at most
    :data:`RECORDS_PER_RUN`): (where it stopped, records), or None when it takes none there (no core,
    or a message the Python reader reads itself: an inner magic other than 0 and 1).  The records
    are exactly those ``_shallow_record`` builds (tests/core/test_core_legacy_inner.py)."""
    if CORE is None or not hasattr(CORE, "legacy_inner_records"):
        return None
    ran = call_core(CORE.legacy_inner_records, start, buf, start, end, wrapper.magic, wrapper.base,
                    wrapper.log_append, wrapper.timestamp, Record, _TYPES, RECORDS_PER_RUN)
    if ran is NotImplemented or not ran[1]:
        return None
    return ran[0], ran[1]


#: The timestamp-type names by the core's code (0 magic 0, 1 CreateTime, 2 LogAppendTime).
_TYPES = (NO_TIMESTAMP_TYPE, CREATE_TIME, LOG_APPEND_TIME)


class Regions:
    """The decompressed chunks of a wrapper as buffers of whole entries, each handed out once.

    Iterating gives ``(buffer, position in the stream of its byte 0)``; the consumer walks whole
    entries from byte 0 and sets :attr:`consumed` to where it stopped.  What it did not take (an
    entry a chunk boundary cut) is kept and completed by the next chunks -- an entry is handed
    out only once it is whole, so a large one is gathered once, never re-copied per chunk.
    """

    __slots__ = ("_chunks", "consumed", "held")

    def __init__(self, chunks: Iterable[bytes | memoryview]) -> None:
        self._chunks = chunks
        self.consumed = 0
        self.held = 0  # the bytes left at the end of the stream: an entry it cut short

    def __iter__(self) -> Iterator[tuple[bytearray, int]]:
        buf = bytearray()
        at = 0
        need = 0
        for chunk in self._chunks:
            buf += chunk
            if len(buf) < need:
                continue
            self.consumed = 0
            yield buf, at
            taken = self.consumed
            if taken:
                del buf[:taken]
                at += taken
            need = _needed(buf)
        self.held = len(buf)


def _needed(buf: bytearray) -> int:
    """How many bytes the first entry of ``buf`` needs to be whole (a size too small: walk it now)."""
    if len(buf) < LOG_OVERHEAD:
        return LOG_OVERHEAD
    (size,) = _INT32.unpack_from(buf, 8)
    return LOG_OVERHEAD + size if size >= RECORD_OVERHEAD_V0 else 0
