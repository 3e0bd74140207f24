"""Runs of clean V0/V1 messages: verify's fast path for legacy segments.

A legacy segment holds one entry per message (or per compressed wrapper), about a hundred
times as many entries as a V2 segment of the same size holds batches, so an entry cannot
cost a Python call.  :func:`clean_legacy_run` takes, in one call, the messages verify has
nothing to say about -- whole, CRC-32 valid, magic 0 or 1, usual attributes (codec none, gzip,
snappy or lz4, no unused bits, the timestamp-type bit only in magic 1), offsets strictly above
the previous message's and below the segment's 2^31 ceiling -- and stops before anything
else, which the walk's slow path reports as before.

The compiled core (``kseg._core.clean_legacy_run``, docs/core.md) runs the loop;
:func:`python_clean_legacy_run` is the reference (tests/core/test_core_legacy_run.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kseg.format._core import CORE
from kseg.format._core import call as call_core
from kseg.format.crc import crc32
from kseg.format.layout import (
    CODEC_MASK,
    ENTRY_PREFIX,
    LEGACY_TIMESTAMP,
    LEGACY_TIMESTAMP_OFFSET,
    LOG_OVERHEAD,
    MAGIC_OFFSET,
    MIN_ENTRY_SIZE,
    TIMESTAMP_TYPE_MASK,
    Buffer,
)

#: The bytes a message header holds through its attributes (offset, size, crc, magic, attributes).
_HEADER = 18
_INT64_MIN, _INT64_MAX = -(1 << 63), (1 << 63) - 1
#: The codec ids a legacy message may carry without a finding (none, gzip, snappy, lz4).
_LEGACY_CODECS = 3


@dataclass(slots=True)
class LegacyRun:
    """What one run took: ``end`` (where it stopped), ``count`` messages, the first and last
    offsets, the last message's position, and with ``each`` every (position, offset, timestamp)."""

    end: int
    count: int = 0
    first_offset: int = 0
    last_offset: int = 0
    last_position: int | None = None
    messages: list[tuple[int, int, int]] | None = field(default=None)


def clean_legacy_run(
    buf: Buffer, start: int, limit: int, until: int, floor: int, overflow_at: int, each: bool
) -> LegacyRun:
    """The clean V0/V1 messages from ``start`` (see the module docstring), until one reaches ``until``.

    ``floor``: the offset the first message must be above; ``overflow_at``: the offset no message
    may reach.  Both are clamped to int64 (a message at the very edge is left to the slow path).
    """
    floor, overflow_at = max(floor, _INT64_MIN), min(overflow_at, _INT64_MAX)
    if CORE is not None and hasattr(CORE, "clean_legacy_run") and start >= 0:
        ran = call_core(CORE.clean_legacy_run, start, buf, start, limit, until, floor, overflow_at, each)
        if ran is not NotImplemented:
            end, count, first, last, last_position, messages = ran
            return LegacyRun(end, count, first, last, last_position, messages)
    return python_clean_legacy_run(buf, start, limit, until, floor, overflow_at, each)


def python_clean_legacy_run(
    buf: Buffer, start: int, limit: int, until: int, floor: int, overflow_at: int, each: bool
) -> LegacyRun:
    """:func:`clean_legacy_run` in Python: the reference."""
    limit = min(limit, len(buf))
    run = LegacyRun(start, messages=[] if each else None)
    pos = start
    while pos < until:
        taken = _clean_message(buf, pos, limit, floor, overflow_at)
        if taken is None:
            break
        offset, timestamp, nxt = taken
        if run.count == 0:
            run.first_offset = offset
        run.count += 1
        run.last_offset, run.last_position, floor = offset, pos, offset
        if run.messages is not None:
            run.messages.append((pos, offset, timestamp))
        pos = nxt
    run.end = pos
    return run


def _clean_message(buf: Buffer, pos: int, limit: int, floor: int, overflow_at: int) -> tuple[int, int, int] | None:
    """(offset, timestamp, next position) of the message at ``pos`` if a clean run takes it."""
    if limit - pos < _HEADER:
        return None
    offset, size, magic = ENTRY_PREFIX.unpack_from(buf, pos)
    if magic not in (0, 1) or size < MIN_ENTRY_SIZE[magic] or size > limit - pos - LOG_OVERHEAD:
        return None
    attributes = buf[pos + MAGIC_OFFSET + 1]
    usual = attributes & CODEC_MASK <= _LEGACY_CODECS and not attributes & 0xF0 and (
        magic == 1 or not attributes & TIMESTAMP_TYPE_MASK
    )
    if offset <= floor or offset >= overflow_at or not usual:
        return None
    end = pos + LOG_OVERHEAD + size
    with memoryview(buf) as view, view[pos + MAGIC_OFFSET : end] as covered:
        if crc32(covered) != int.from_bytes(buf[pos + 12 : pos + 16], "big"):
            return None
    timestamp = -1 if magic == 0 else LEGACY_TIMESTAMP.unpack_from(buf, pos + LEGACY_TIMESTAMP_OFFSET)[0]
    return offset, timestamp, end
