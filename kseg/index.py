"""Offset index (.index), time index (.timeindex) and transaction index (.txnindex).

No header, no checksum, big-endian fixed-size entries::

    .index      relativeOffset int32 | position int32                      8 bytes
    .timeindex  timestamp int64      | relativeOffset int32                12 bytes
    .txnindex   version int16 | producerId int64 | firstOffset int64 |
                lastOffset int64 | lastStableOffset int64                   34 bytes

``relativeOffset`` is ``offset - base offset of the segment`` (the number in
the file name).  Kafka preallocates the active segment's .index/.timeindex
(10 MiB of zeros) and, for an existing file, takes every whole slot as an
entry.  Offline we cannot know which slots were written; two rules say where
the preallocated tail begins, each for its readers:

* **live** (:func:`live_count`, ``kafka-dump-log``'s rule, used to read and
  seek): the entries before the first slot ``i > 0`` whose relative offset is 0;
* **written** (:func:`written_slots`, verify's forensic rule): the slots before
  the all-zero tail -- a non-zero slot with relative offset 0 after the first
  is shown as the damage it is rather than taken as the end.

Kafka's own checks of an index it opens (``sanityCheck`` of ``OffsetIndex``,
``TimeIndex`` and ``TransactionIndex``) are here too, with its messages:
:func:`offset_index_sanity`, :func:`time_index_sanity`, :func:`txn_entry_sanity`.
"""

from __future__ import annotations

import mmap
import struct
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from kseg.errors import LimitExceeded

if TYPE_CHECKING:  # annotations only: index.py stays free of the format package's imports
    from kseg.format.layout import Buffer

DEFAULT_INDEX_INTERVAL_BYTES = 4096  # index.interval.bytes: bytes of log between two index entries
DEFAULT_MAX_INDEX_SIZE = 10 * 1024 * 1024  # segment.index.bytes: recovery resizes both indexes to it

OFFSET_ENTRY = struct.Struct(
    ">i"  # relative_offset
    "i"  # position: byte position of a batch in the .log
)
TIME_ENTRY = struct.Struct(
    ">q"  # timestamp: largest timestamp seen up to and including the offset
    "i"  # relative_offset
)
TXN_ENTRY = struct.Struct(
    ">h"  # version (Kafka reads only its first byte as the version)
    "q"  # producer_id
    "q"  # first_offset
    "q"  # last_offset: offset of the ABORT marker
    "q"  # last_stable_offset
)


@dataclass(frozen=True, slots=True)
class OffsetEntry:
    """One .index slot: an absolute offset and the byte position of its batch in the .log."""

    offset: int  # absolute
    position: int


@dataclass(frozen=True, slots=True)
class TimeEntry:
    """One .timeindex slot: a timestamp and the absolute offset it points to."""

    timestamp: int
    offset: int  # absolute


@dataclass(frozen=True, slots=True)
class AbortedTxn:
    """One .txnindex entry: an aborted transaction's producer, offsets and the LSO when it was aborted."""

    version: int
    producer_id: int
    first_offset: int
    last_offset: int
    last_stable_offset: int


@dataclass(frozen=True, slots=True)
class IndexSlots:
    """All whole slots of an index file, and how many of them are live."""

    entries: tuple  # every whole slot, as Kafka would see them
    live: int  # slots before the preallocated tail
    trailing_bytes: int  # bytes after the last whole slot (Kafka: not a multiple -> corrupt)

    @property
    def live_entries(self) -> tuple:
        return self.entries[: self.live]


def live_count(relative_offsets: Sequence[int]) -> int:
    """The live entries: those before the first slot ``i > 0`` whose relative offset is 0 (``kafka-dump-log``)."""
    for i, rel in enumerate(relative_offsets):
        if i > 0 and rel == 0:
            return i
    return len(relative_offsets)


#: Bytes looked at in one step when looking for the end of the written slots, from the end backwards.
_TAIL_STEP = 1 << 20
_ZERO_TAIL = bytes(_TAIL_STEP)


def written_slots(data: Buffer, entry_size: int) -> int:
    """The slots before the all-zero tail: a preallocated index ends in slots of zero bytes only.

    Read backwards a step at a time, without copying the file: a sparse 2 GiB
    index costs one step of memory, and a mapped file's pages are given back
    (``MADV_DONTNEED``) as the steps pass.
    """
    end = len(data)
    while end > 0:
        start = max(0, end - _TAIL_STEP)
        step = data[start:end]
        if step != _ZERO_TAIL[: end - start]:
            end = start + len(bytes(step).rstrip(b"\0"))
            break
        _drop_pages(data, start, end)
        end = start
    return min(len(data) // entry_size, -(-end // entry_size))


def _drop_pages(data: Buffer, start: int, end: int) -> None:
    """Give a mapped file's pages in ``[start, end)`` back to the kernel (no-op for bytes)."""
    madvise = getattr(data, "madvise", None)
    if madvise is None:
        return
    page = mmap.PAGESIZE
    first = -(-start // page) * page
    if end - first >= page:
        madvise(mmap.MADV_DONTNEED, first, (end - first) // page * page)


#: Entries looked at in one step of :func:`zero_steps` (for a .txnindex, 34 * 64 Ki bytes: whole pages).
ZERO_STEP_ENTRIES = 1 << 16


def zero_steps(
    data: Buffer, count: int, entry_size: int, release: Callable[[Buffer, int, int], object] = _drop_pages,
) -> Iterator[tuple[int, int, bool]]:
    """(first entry, end entry, all zero) per step of :data:`ZERO_STEP_ENTRIES` entries of ``data``.

    An all-zero step (a sparse or zero-filled file) is recognised in one
    comparison instead of decoding 64 Ki entries, and ``release(data, start,
    end)`` gives each step's pages back as it is passed.  Only whole steps can
    be all zero: a short file is read entry by entry, as Kafka reads it.
    """
    step_bytes = ZERO_STEP_ENTRIES * entry_size
    zero_step = bytes(step_bytes)
    for first in range(0, count, ZERO_STEP_ENTRIES):
        end = min(count, first + ZERO_STEP_ENTRIES)
        zero = data[first * entry_size : end * entry_size] == zero_step
        release(data, first * entry_size, end * entry_size)
        yield first, end, zero


def read_offset_index(data: Buffer, base_offset: int) -> IndexSlots:
    """Decode every 8-byte slot of a .index file."""
    n = len(data) // OFFSET_ENTRY.size
    raw = [OFFSET_ENTRY.unpack_from(data, i * OFFSET_ENTRY.size) for i in range(n)]
    entries = tuple(OffsetEntry(base_offset + rel, pos) for rel, pos in raw)
    return IndexSlots(entries, live_count([rel for rel, _ in raw]), len(data) - n * OFFSET_ENTRY.size)


def read_time_index(data: Buffer, base_offset: int) -> IndexSlots:
    """Decode every 12-byte slot of a .timeindex file."""
    n = len(data) // TIME_ENTRY.size
    raw = [TIME_ENTRY.unpack_from(data, i * TIME_ENTRY.size) for i in range(n)]
    entries = tuple(TimeEntry(ts, base_offset + rel) for ts, rel in raw)
    return IndexSlots(entries, live_count([rel for _, rel in raw]), len(data) - n * TIME_ENTRY.size)


def txn_version(data: Buffer, pos: int) -> int:
    """``AbortedTxn.version()``: ``buffer.get(0)``, one *signed* byte (0x9b is -101, never above version 0)."""
    byte = data[pos]
    return byte - 256 if byte > 127 else byte


def read_txn_index(data: Buffer) -> list[AbortedTxn]:
    """Decode the whole 34-byte entries of a .txnindex (a partial trailing entry is ignored, as Kafka does)."""
    out = []
    for pos in range(0, len(data) - TXN_ENTRY.size + 1, TXN_ENTRY.size):
        _, pid, first, last, lso = TXN_ENTRY.unpack_from(data, pos)
        out.append(AbortedTxn(txn_version(data, pos), pid, first, last, lso))
    return out


# -- Kafka's sanity checks (``sanityCheck``: what kafka-dump-log --index-sanity-check and a broker run) ----------


@dataclass(frozen=True, slots=True)
class SanityFailure:
    """One check an index fails, with the message of the ``CorruptIndexException`` Kafka throws for it."""

    check: str  # "length", "last-offset", "last-timestamp" or (.txnindex) "version"
    position: int  # byte position in the index file of the slot (or the trailing bytes) at fault
    offset: int | None  # the absolute offset concerned, when there is one
    message: str
    size: int | None = None  # for "length": the bytes after the last whole slot


def _length_failure(data: Buffer, entry_size: int, what: str) -> SanityFailure | None:
    """``length % entrySize != 0`` (``what`` names the file as Kafka does: "Index file x", "Time index file x")."""
    extra = len(data) % entry_size
    if not extra:
        return None
    return SanityFailure(
        "length", len(data) - extra, None,
        f"{what} is corrupt, found {len(data)} bytes which is neither positive nor a multiple of {entry_size}",
        extra,
    )


def offset_index_sanity(data: Buffer, base_offset: int, name: str) -> list[SanityFailure]:
    """``OffsetIndex.sanityCheck`` of a file as Kafka opens it (every whole slot an entry); ``name``: the file's."""
    failures = []
    length = _length_failure(data, OFFSET_ENTRY.size, f"Index file {name}")
    if length is not None:
        failures.append(length)
    slots = len(data) // OFFSET_ENTRY.size
    if slots:
        where = (slots - 1) * OFFSET_ENTRY.size
        rel, _ = OFFSET_ENTRY.unpack_from(data, where)
        if rel < 0:
            failures.append(SanityFailure(
                "last-offset", where, base_offset + rel,
                f"Corrupt index found, index file {name} has non-zero size but the last offset is "
                f"{base_offset + rel} which is less than the base offset {base_offset}",
            ))
    return failures


def time_index_sanity(data: Buffer, base_offset: int, name: str) -> list[SanityFailure]:
    """``TimeIndex.sanityCheck`` of a file as Kafka opens it (every whole slot an entry); ``name``: the file's."""
    failures = []
    length = _length_failure(data, TIME_ENTRY.size, f"Time index file {name}")
    if length is not None:
        failures.append(length)
    slots = len(data) // TIME_ENTRY.size
    if not slots:
        return failures
    where = (slots - 1) * TIME_ENTRY.size
    first_ts, _ = TIME_ENTRY.unpack_from(data, 0)
    last_ts, last_rel = TIME_ENTRY.unpack_from(data, where)
    prefix = f"Corrupt time index found, time index file ({name}) has non-zero size but the last"
    if last_ts < first_ts:
        failures.append(SanityFailure(
            "last-timestamp", where, base_offset + last_rel,
            f"{prefix} timestamp is {last_ts} which is less than the first timestamp {first_ts}",
        ))
    if last_rel < 0:
        failures.append(SanityFailure(
            "last-offset", where, base_offset + last_rel,
            f"{prefix} offset is {base_offset + last_rel} which is less than the first offset {base_offset}",
        ))
    return failures


def txn_entry_sanity(entry: AbortedTxn, position: int, start_offset: int, name: str) -> list[SanityFailure]:
    """What Kafka throws for one .txnindex entry: an unknown version (while reading), and
    ``TransactionIndex.sanityCheck``'s last offset below the segment's start offset."""
    failures = []
    if entry.version > 0:
        failures.append(SanityFailure(
            "version", position, entry.last_offset,
            f"Unexpected aborted transaction version {entry.version} in transaction index {name}, "
            "current version is 0",
        ))
    if entry.last_offset < start_offset:
        text = (
            f"AbortedTxn(producerId={entry.producer_id}, firstOffset={entry.first_offset}, "
            f"lastOffset={entry.last_offset}, lastStableOffset={entry.last_stable_offset})"
        )
        failures.append(SanityFailure(
            "last-offset", position, entry.last_offset,
            f"Last offset of aborted transaction {text} in index {name} is less than start offset {start_offset}",
        ))
    return failures


def encode_offset_index(entries: Sequence[OffsetEntry], base_offset: int) -> bytes:
    return b"".join(OFFSET_ENTRY.pack(e.offset - base_offset, e.position) for e in entries)


def encode_time_index(entries: Sequence[TimeEntry], base_offset: int) -> bytes:
    return b"".join(TIME_ENTRY.pack(e.timestamp, e.offset - base_offset) for e in entries)


def encode_txn_index(entries: Sequence[AbortedTxn]) -> bytes:
    return b"".join(
        TXN_ENTRY.pack(e.version, e.producer_id, e.first_offset, e.last_offset, e.last_stable_offset) for e in entries
    )


class MappedSlots(Sequence):
    """The live entries of an index file, decoded one at a time from its bytes.

    Seeking needs O(log n) entries, not all of them: a preallocated 10 MiB
    .index has 1.3 million slots.  The live count is found by binary search for
    the preallocated tail (first slot ``i > 0`` with relative offset 0), which
    assumes what Kafka guarantees for a sound index -- increasing relative
    offsets, then zeros; callers that must not trust the file check what they
    find (``Segment.position_of_offset`` does).
    """

    def __init__(self, data: Buffer, entry: struct.Struct, make, base_offset: int, rel_index: int):
        self._data = data
        self._entry = entry
        self._make = make
        self._base = base_offset
        self._rel = rel_index
        self._len = self._live(len(data) // entry.size)

    def _relative(self, i: int) -> int:
        return self._entry.unpack_from(self._data, i * self._entry.size)[self._rel]

    def _live(self, slots: int) -> int:
        lo, hi = 1, slots  # slot 0 is always live when present; find the first i >= 1 with rel == 0
        if slots == 0:
            return 0
        while lo < hi:
            mid = (lo + hi) // 2
            if self._relative(mid) != 0:
                lo = mid + 1
            else:
                hi = mid
        return lo

    def __len__(self) -> int:
        return self._len

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(self._len))]
        if i < 0:
            i += self._len
        if not 0 <= i < self._len:
            raise IndexError(i)
        return self._make(self._entry.unpack_from(self._data, i * self._entry.size), self._base)


def offset_slots(data: Buffer, base_offset: int) -> MappedSlots:
    """Lazy live entries of a .index."""
    return MappedSlots(data, OFFSET_ENTRY, lambda f, b: OffsetEntry(b + f[0], f[1]), base_offset, 0)


def time_slots(data: Buffer, base_offset: int) -> MappedSlots:
    """Lazy live entries of a .timeindex."""
    return MappedSlots(data, TIME_ENTRY, lambda f, b: TimeEntry(f[0], b + f[1]), base_offset, 1)


def lookup_offset(entries: Sequence[OffsetEntry], target: int, base_offset: int) -> OffsetEntry:
    """``OffsetIndex.lookup``: the greatest entry with offset <= target, else (base offset, 0)."""
    lo, hi = 0, len(entries) - 1
    found = -1
    while lo <= hi:
        mid = (lo + hi) // 2
        if entries[mid].offset <= target:
            found = mid
            lo = mid + 1
        else:
            hi = mid - 1
    return entries[found] if found >= 0 else OffsetEntry(base_offset, 0)


def lookup_timestamp(entries: Sequence[TimeEntry], target: int, base_offset: int) -> TimeEntry:
    """``TimeIndex.lookup``: the greatest entry with timestamp <= target, else (-1, base offset)."""
    lo, hi = 0, len(entries) - 1
    found = -1
    while lo <= hi:
        mid = (lo + hi) // 2
        if entries[mid].timestamp <= target:
            found = mid
            lo = mid + 1
        else:
            hi = mid - 1
    return entries[found] if found >= 0 else TimeEntry(-1, base_offset)


#: ``Integer.MAX_VALUE``: the largest segment ``FileRecords`` opens, so the largest index position.
MAX_SEGMENT_SIZE = 2**31 - 1


def refuse_oversized(size: int, position: int | None = None) -> None:
    """Raise :class:`LimitExceeded` for a segment larger than Kafka can open (its positions are 32-bit).

    ``FileRecords.open`` throws ``KafkaException("The size of segment ... is
    larger than the maximum allowed segment size of 2147483647")`` before
    ``LogSegment.recover`` could run, so there are no indexes Kafka would write.
    ``position``: where in an input a segment being written passed the limit
    (``convert``); None for a segment read whole.
    """
    if size <= MAX_SEGMENT_SIZE:
        return
    if position is not None:
        raise LimitExceeded(
            f"the converted segment reaches {size} bytes here, more than the maximum allowed segment size of "
            f"{MAX_SEGMENT_SIZE} (Kafka's FileRecords refuses to open a larger one)",
            offset=position, field="segment.size")
    raise LimitExceeded(
        f"the segment is {size} bytes, larger than the maximum allowed segment size of {MAX_SEGMENT_SIZE} "
        "(Kafka's FileRecords refuses to open it; index positions are 32-bit): no index can be rebuilt",
        offset=MAX_SEGMENT_SIZE, field="segment.size")
