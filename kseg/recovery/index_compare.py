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


def _entries(kind: str, data: bytes, base_offset: int) -> tuple[tuple, int, int]:
    """(whole slots, live slots, trailing bytes) of an index file's bytes."""
    if kind == "index":
        slots = read_offset_index(data, base_offset)
        return slots.entries, slots.live, slots.trailing_bytes
    if kind == "timeindex":
        slots = read_time_index(data, base_offset)
        return slots.entries, slots.live, slots.trailing_bytes
    entries = tuple(read_txn_index(data))
    return entries, len(entries), len(data) % TXN_ENTRY.size


def compare_index(kind: str, old: bytes | None, new: bytes, base_offset: int) -> Difference | None:
    """None when ``old`` holds exactly what recovery writes, else the first differing slot.

    ``old`` None means there is no file.  A missing .txnindex equals an empty
    one (Kafka creates it only for an aborted transaction); a missing .index
    or .timeindex always differs (Kafka's loader would recover the segment).
    """
    new_entries = _entries(kind, new, base_offset)[0]
    if old is None:
        if kind == "txnindex" and not new:
            return None
        first = new_entries[0] if new_entries else None
        return Difference(0, None, first, 0, len(new_entries), 0, 0, old_missing=True)
    if old == new:
        return None
    old_entries, old_live, trailing = _entries(kind, old, base_offset)
    slot = 0
    while slot < len(old_entries) and slot < len(new_entries) and old_entries[slot] == new_entries[slot]:
        slot += 1
    return Difference(
        slot,
        old_entries[slot] if slot < len(old_entries) else None,
        new_entries[slot] if slot < len(new_entries) else None,
        len(old_entries),
        len(new_entries),
        old_live,
        trailing,
    )
