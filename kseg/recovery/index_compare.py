"""How an index file on disk compares with what ``LogSegment.recover`` writes.

``kseg reindex --check`` (and the other modes, to say what they replace)
shows the first slot where the two differ.  Kafka's rules on what counts as
the same file: a missing ``.txnindex`` equals an empty one (Kafka creates it
only for an aborted transaction); a missing ``.index`` or ``.timeindex``
always differs (Kafka's loader would recover the segment); an index never
trimmed after a clean close holds the rebuild followed by zero slots.
"""

from __future__ import annotations

from dataclasses import dataclass

from kseg.index import (
    OFFSET_ENTRY,
    TIME_ENTRY,
    TXN_ENTRY,
    AbortedTxn,
    OffsetEntry,
    TimeEntry,
    read_offset_index,
    read_time_index,
    read_txn_index,
)
from kseg.recovery.indexes import IndexBuild

INDEX_KINDS = ("index", "timeindex", "txnindex")
ENTRY_SIZES = {"index": OFFSET_ENTRY.size, "timeindex": TIME_ENTRY.size, "txnindex": TXN_ENTRY.size}
IndexEntry = OffsetEntry | TimeEntry | AbortedTxn


@dataclass(frozen=True, slots=True)
class Difference:
    """The first slot where an existing index file and the rebuild disagree."""

    slot: int
    old: IndexEntry | None  # None: the old file has no entry there
    new: IndexEntry | None  # None: the rebuild has no entry there
    old_entries: int  # whole slots in the old file
    new_entries: int
    old_live: int  # old slots before a preallocated zero tail
    old_trailing_bytes: int  # bytes after the old file's last whole slot
    old_missing: bool = False  # there is no old file

    @property
    def preallocated_tail(self) -> bool:
        """The old file holds the rebuild followed by zero slots: an index that was never trimmed."""
        return not self.old_missing and self.old_live == self.new_entries == self.slot < self.old_entries


def index_bytes(build: IndexBuild, kind: str) -> bytes:
    """The bytes Kafka's recovery leaves in the file of ``kind``."""
    if kind == "index":
        return build.offset_index_bytes()
    if kind == "timeindex":
        return build.time_index_bytes()
    return build.txn_index_bytes()


#: Where a slot's relative offset sits, in 4-byte words: (word within the slot, words per slot)
#: -- ``.index`` slots are ``relativeOffset | position``, ``.timeindex`` slots ``timestamp | relativeOffset``
#: (kseg.index: OFFSET_ENTRY, TIME_ENTRY).  Only "is it zero" is asked, so the words' byte order does not matter.
_RELATIVE_WORD = {"index": (0, OFFSET_ENTRY.size // 4), "timeindex": (2, TIME_ENTRY.size // 4)}
#: Bytes compared in one step when looking for the first slot where two files differ.
_COMPARE_STEP = 1 << 16


def _decode_slot(kind: str, data: bytes, slot: int, base_offset: int) -> IndexEntry:
    """The entry in whole slot ``slot`` of an index file's bytes (one slot decoded, not the file)."""
    size = ENTRY_SIZES[kind]
    piece = data[slot * size : (slot + 1) * size]
    if kind == "index":
        return read_offset_index(piece, base_offset).entries[0]
    if kind == "timeindex":
        return read_time_index(piece, base_offset).entries[0]
    return read_txn_index(piece)[0]


def _live(kind: str, data: bytes, count: int) -> int:
    """:func:`kseg.index.live_count` of the first ``count`` slots, over the relative-offset words in bulk."""
    if kind == "txnindex":
        return count
    word, stride = _RELATIVE_WORD[kind]
    with memoryview(data) as view, view[: count * ENTRY_SIZES[kind]] as whole, whole.cast("I") as words:
        relatives = words[word::stride].tolist()
    try:
        return relatives.index(0, 1)
    except ValueError:
        return count


def _first_different_byte(old: bytes, new: bytes, start: int, end: int) -> int:
    """The first position in ``[start, end)`` where ``old`` and ``new`` differ, or ``end``.

    Compared a step at a time without copying, then halved within the step that differs.
    """
    with memoryview(old) as a, memoryview(new) as b:
        lo = start
        while lo < end and a[lo : min(end, lo + _COMPARE_STEP)] == b[lo : min(end, lo + _COMPARE_STEP)]:
            lo += _COMPARE_STEP
        if lo >= end:
            return end
        hi = min(end, lo + _COMPARE_STEP)
        while hi - lo > 1:  # a[lo:hi] differs somewhere
            mid = (lo + hi) // 2
            if a[lo:mid] == b[lo:mid]:
                lo = mid
            else:
                hi = mid
        return lo


def _first_different_slot(kind: str, old: bytes, new: bytes, common: int, base_offset: int) -> int:
    """The first of the ``common`` whole slots whose entries differ, or ``common``.

    Bytes first: an ``.index`` or ``.timeindex`` entry decodes from all of its
    bytes, so the first slot whose bytes differ is the first whose entries do.
    A ``.txnindex`` entry's version is read from its first byte only
    (``AbortedTxn.version``), so there a slot whose bytes differ only in the
    second byte is the same entry, and the search goes on after it.
    """
    size = ENTRY_SIZES[kind]
    slot = _first_different_byte(old, new, 0, common * size) // size
    while (
        kind == "txnindex"
        and slot < common
        and _decode_slot(kind, old, slot, base_offset) == _decode_slot(kind, new, slot, base_offset)
    ):
        slot = _first_different_byte(old, new, (slot + 1) * size, common * size) // size
    return slot


def compare_index(kind: str, old: bytes | None, new: bytes, base_offset: int) -> Difference | None:
    """None when ``old`` holds exactly what recovery writes, else the first differing slot.

    ``old`` None means there is no file.  A missing .txnindex equals an empty
    one (Kafka creates it only for an aborted transaction); a missing .index
    or .timeindex always differs (Kafka's loader would recover the segment).
    Only the slots the answer names are decoded: a rebuilt index of a large
    segment holds an entry per few KiB of log, and decoding them all cost
    more than rebuilding them (docs/core.md).
    """
    size = ENTRY_SIZES[kind]
    new_count = len(new) // size
    if old is None:
        if kind == "txnindex" and not new:
            return None
        first = _decode_slot(kind, new, 0, base_offset) if new_count else None
        return Difference(0, None, first, 0, new_count, 0, 0, old_missing=True)
    if old == new:
        return None
    old_count = len(old) // size
    slot = _first_different_slot(kind, old, new, min(old_count, new_count), base_offset)
    return Difference(
        slot,
        _decode_slot(kind, old, slot, base_offset) if slot < old_count else None,
        _decode_slot(kind, new, slot, base_offset) if slot < new_count else None,
        old_count,
        new_count,
        _live(kind, old, old_count),
        len(old) % size,
    )
