"""Rebuild a segment's .index, .timeindex and .txnindex from its .log, as Kafka's recovery does.

The rules are those of ``LogSegment.recover`` (reference §3.7, §4.2), read
from Kafka's source:

* Batches are walked as ``FileLogInputStream`` frames them (§4.1) and each one
  must pass ``ensureValid()`` (size and CRC).  Recovery keeps ``valid_bytes``
  up to the first batch that does not: a partial tail, 17 or fewer trailing
  bytes, a size field below 14, a V2 batch under 61 bytes or a CRC mismatch.
* Per batch, in file order: the running max timestamp becomes
  ``(batch.max_timestamp, batch.last_offset)`` when it strictly grows; when
  ``valid_bytes - position of the last indexed batch > index.interval.bytes``
  the offset index gets ``(batch.last_offset, batch position)`` and the time
  index is offered ``(max timestamp, its offset)`` -- appended only if the
  timestamp is strictly greater than the last entry's (so magic-0 data, whose
  timestamps are -1, never gets one).  The first batch is never indexed.
* After the loop the time index is offered the running max once more (the
  entry a clean close writes), and both files are trimmed: no preallocated
  zeros, an empty index is a zero-byte file.
* Legacy (magic 0/1) batches are taken shallowly: the wrapper's offset field
  is the last offset and its timestamp the max timestamp (-1 for magic 0).
* Magic-2 batches with a producer id feed the producer-state tracking
  (``ProducerAppendInfo``/``ProducerStateManager``, §3.8); every ABORT marker
  that ends a non-empty transaction adds an :class:`~kseg.index.AbortedTxn`.

Where Kafka's ``recover`` throws something it does not catch (an offset that
does not fit the segment, offsets going backwards at an index point, an
impossible transaction state), the build carries a :class:`RecoveryFailure`
and callers must not write its indexes: Kafka would not have written them.

This module is part of the recovery core: ``reindex``, ``recover``,
``verify`` and ``convert`` all build indexes through :func:`build_indexes`;
it never touches a file.
"""

from __future__ import annotations

import mmap
import struct
from dataclasses import dataclass

from kseg.errors import Corrupt, InvalidRecord
from kseg.format.crc import crc32c
from kseg.format.layout import HEADER_SIZE_UP_TO_MAGIC, LOG_OVERHEAD, MAX_RELATIVE_OFFSET, MIN_RECORD_OVERHEAD
from kseg.format.v0v1 import LegacyBatch
from kseg.format.v2 import RECORD_BATCH_OVERHEAD, V2Batch
from kseg.index import (
    OFFSET_ENTRY,
    TIME_ENTRY,
    TXN_ENTRY,
    AbortedTxn,
    OffsetEntry,
    TimeEntry,
    encode_txn_index,
    read_offset_index,
    read_time_index,
    read_txn_index,
)
from kseg.recovery.producer_state import FAILS_TO_LOAD, RecoveryAbort, TxnTracker, track_producer_batch
from kseg.segment import RELEASE_EVERY, release_pages

DEFAULT_INDEX_INTERVAL_BYTES = 4096  # index.interval.bytes
DEFAULT_MAX_INDEX_SIZE = 10 * 1024 * 1024  # segment.index.bytes: recovery resizes both indexes to it

ENTRY_PREFIX = struct.Struct(
    ">q"  # offset (V0/V1) or base_offset (V2)
    "i"  # size: bytes after this field
    "4x"  # crc (V0/V1) or partition_leader_epoch (V2)
    "b"  # magic
)
V2_HEADER = struct.Struct(
    ">q"  # base_offset
    "i"  # batch_length: bytes after this field
    "4x"  # partition_leader_epoch
    "b"  # magic
    "I"  # crc: CRC-32C of [attributes, end of batch)
    "2x"  # attributes
    "i"  # last_offset_delta
    "8x"  # base_timestamp
    "q"  # max_timestamp
    "q"  # producer_id
)
V2_CRC_FROM = 21  # attributes: where the V2 CRC starts

#: Why recovery stopped where it did (``IndexBuild.stop``).
STOP_END = "end"  # every byte belongs to a valid batch
STOP_SHORT_TAIL = "short-tail"  # 17 or fewer bytes left: the reader stops quietly
STOP_PARTIAL = "partial-batch"  # the last batch declares more bytes than remain: the reader stops quietly
STOP_BAD_SIZE = "bad-size"  # a size field below 14: CorruptRecordException from the reader
STOP_CORRUPT = "corrupt-batch"  # ensureValid(): V2 batch under 61 bytes, or CRC mismatch
STOP_INVALID_RECORD = "invalid-record"  # a transaction marker that cannot be decoded (InvalidRecordException)
STOP_FAILED = "recovery-fails"  # Kafka's recover throws an exception it does not catch


# -- results ------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class RecoveryFailure:
    """An exception that escapes ``LogSegment.recover``: Kafka writes no index for this segment."""

    exception: str  # Kafka's exception class, e.g. "InvalidOffsetException"
    message: str
    position: int  # byte position of the batch being recovered
    consequence: str  # what the broker does about it


@dataclass(frozen=True, slots=True)
class IndexBuild:
    """What ``LogSegment.recover`` leaves behind for one segment.

    The indexes are kept as the exact bytes of the trimmed files; the
    ``*_entries`` properties decode them.
    """

    base_offset: int
    offset_index: bytes  # the .index file
    time_index: bytes  # the .timeindex file
    aborted: tuple[AbortedTxn, ...]  # the .txnindex entries
    batches: int  # batches recovery accepted
    size: int  # bytes examined (the .log size, or ``end``)
    valid_bytes: int  # where recovery truncates the .log
    stop: str  # one of the STOP_* reasons
    stop_detail: str | None = None  # why the batch at ``valid_bytes`` (or before it) was refused
    failure: RecoveryFailure | None = None

    @property
    def truncated_bytes(self) -> int:
        return self.size - self.valid_bytes

    @property
    def offset_entries(self) -> tuple[OffsetEntry, ...]:
        return read_offset_index(self.offset_index, self.base_offset).entries

    @property
    def time_entries(self) -> tuple[TimeEntry, ...]:
        return read_time_index(self.time_index, self.base_offset).entries

    def offset_index_bytes(self) -> bytes:
        return self.offset_index

    def time_index_bytes(self) -> bytes:
        return self.time_index

    def txn_index_bytes(self) -> bytes:
        return encode_txn_index(self.aborted)


# -- the recovery walk ------------------------------------------------------------


class _Indexes:
    """The offset and time index as ``recover`` appends to them, with their checks, as file bytes."""

    __slots__ = (
        "base_offset",
        "last_offset",
        "last_time_offset",
        "last_time_timestamp",
        "max_offset_entries",
        "max_time_entries",
        "offset_count",
        "offsets",
        "time_count",
        "times",
    )

    def __init__(self, base_offset: int, max_index_size: int) -> None:
        self.base_offset = base_offset
        self.offsets = bytearray()
        self.times = bytearray()
        self.offset_count = self.time_count = 0
        self.max_offset_entries = max_index_size // OFFSET_ENTRY.size
        self.max_time_entries = max_index_size // TIME_ENTRY.size
        self.last_offset = -1
        self.last_time_timestamp, self.last_time_offset = -1, base_offset  # lastEntry of an empty TimeIndex

    def room(self) -> bool:
        """Neither index is full (``OffsetIndex.isFull``, ``TimeIndex.isFull`` keeps one slot spare)."""
        return self.offset_count < self.max_offset_entries and self.time_count < self.max_time_entries - 1

    def append_offset(self, offset: int, position: int) -> None:
        """``OffsetIndex.append``."""
        if self.offset_count >= self.max_offset_entries:
            raise RecoveryAbort(
                "IllegalArgumentException",
                f"Attempt to append to a full index (size = {self.offset_count}).",
                FAILS_TO_LOAD,
            )
        if self.offset_count and offset <= self.last_offset:
            raise RecoveryAbort(
                "InvalidOffsetException",
                f"Attempt to append an offset {offset} to position {self.offset_count} no larger than "
                f"the last offset appended ({self.last_offset})",
                "the broker empties this segment and deletes the later ones",
            )
        self.offsets += OFFSET_ENTRY.pack(offset - self.base_offset, position)
        self.offset_count += 1
        self.last_offset = offset

    def maybe_append_time(self, timestamp: int, offset: int, skip_full_check: bool = False) -> None:
        """``TimeIndex.maybeAppend``: only a strictly greater timestamp makes an entry."""
        if not skip_full_check and self.time_count >= self.max_time_entries - 1:
            raise RecoveryAbort(
                "IllegalArgumentException",
                f"Attempt to append to a full time index (size = {self.time_count}).",
                FAILS_TO_LOAD,
            )
        if self.time_count and offset < self.last_time_offset:
            raise RecoveryAbort(
                "InvalidOffsetException",
                f"Attempt to append an offset ({offset}) to slot {self.time_count} no larger than "
                f"the last offset appended ({self.last_time_offset})",
                "the broker empties this segment and deletes the later ones",
            )
        if timestamp > self.last_time_timestamp:
            self.times += TIME_ENTRY.pack(timestamp, offset - self.base_offset)
            self.time_count += 1
            self.last_time_timestamp, self.last_time_offset = timestamp, offset


def _legacy_fields(buf: bytes | memoryview | mmap.mmap, pos: int) -> tuple[int, int]:
    """(last offset, max timestamp) of a valid magic 0/1 batch; raises what ``ensureValid`` throws."""
    batch = LegacyBatch(buf, pos)
    batch.ensure_valid()
    return batch.last_offset, batch.max_timestamp


def _v2_refusal(buf: bytes | memoryview | mmap.mmap, pos: int) -> str:
    """The message ``DefaultRecordBatch.ensureValid`` throws for the batch at ``pos``."""
    try:
        V2Batch(buf, pos).ensure_valid()
    except Corrupt as err:
        return err.message
    return "Record batch is corrupt"  # pragma: no cover - only called for batches that fail


def build_indexes(
    buf: bytes | memoryview | mmap.mmap,
    base_offset: int,
    *,
    index_interval_bytes: int = DEFAULT_INDEX_INTERVAL_BYTES,
    end: int | None = None,
    txn: TxnTracker | None = None,
    max_index_size: int = DEFAULT_MAX_INDEX_SIZE,
) -> IndexBuild:
    """Run ``LogSegment.recover``'s loop over ``buf[:end]`` and return the indexes it writes.

    ``txn`` carries producer state from the earlier segments of the partition
    (a fresh tracker means "nothing open at this segment's base offset"); it
    is updated in place so the next segment can be built with it.

    This loop is the cost of reindexing (see bench/bench_reindex.py): one
    header unpack and one CRC-32C per batch; the index appends are methods
    called only at index points.
    """
    tracker = txn if txn is not None else TxnTracker()
    limit = len(buf) if end is None else min(end, len(buf))
    view = buf if isinstance(buf, memoryview) else memoryview(buf)
    indexes = _Indexes(base_offset, max_index_size)
    aborted: list[AbortedTxn] = []
    unpack_prefix, unpack_header = ENTRY_PREFIX.unpack_from, V2_HEADER.unpack_from
    pack_offset, pack_time = OFFSET_ENTRY.pack, TIME_ENTRY.pack
    checksum, release_every = crc32c, RELEASE_EVERY
    header_limit = limit - V2_HEADER.size  # positions where a whole V2 header can be unpacked at once
    max_timestamp, offset_of_max = -1, -1  # TimestampOffset.UNKNOWN
    valid_bytes = last_index_entry = batches = released = 0
    stop, detail, failure = STOP_END, None, None
    pos = start = 0
    try:
        while True:
            start = pos
            if pos >= limit - HEADER_SIZE_UP_TO_MAGIC:
                stop = STOP_END if pos == limit else STOP_SHORT_TAIL
                break
            if pos <= header_limit:
                (batch_base, size, magic, crc, last_delta, batch_max_timestamp, producer_id) = unpack_header(
                    buf, pos
                )
            else:
                batch_base, size, magic = unpack_prefix(buf, pos)
            if size < MIN_RECORD_OVERHEAD:
                stop = STOP_BAD_SIZE
                detail = (
                    f"Found record size {size} smaller than minimum record overhead ({MIN_RECORD_OVERHEAD})"
                )
                break
            if pos > limit - LOG_OVERHEAD - size:
                stop = STOP_PARTIAL
                detail = f"the last batch declares {LOG_OVERHEAD + size} bytes, {limit - pos} remain"
                break
            batch_end = pos + LOG_OVERHEAD + size
            if magic >= 2:
                # a whole batch of >= 61 bytes implies pos <= header_limit: the header fields were read
                too_small = LOG_OVERHEAD + size < RECORD_BATCH_OVERHEAD
                if too_small or checksum(view[pos + V2_CRC_FROM : batch_end]) != crc:
                    stop, detail = STOP_CORRUPT, _v2_refusal(buf, pos)
                    break
                last_offset = batch_base + last_delta
            else:
                producer_id = -1
                try:
                    last_offset, batch_max_timestamp = _legacy_fields(buf, pos)
                except Corrupt as err:
                    stop, detail = STOP_CORRUPT, err.message
                    break
            if not 0 <= last_offset - base_offset <= MAX_RELATIVE_OFFSET:
                raise RecoveryAbort(
                    "LogSegmentOffsetOverflowException",
                    f"offset {last_offset} does not fit a segment with base offset {base_offset}",
                    "the broker splits the segment",
                )
            if batch_max_timestamp > max_timestamp:
                max_timestamp, offset_of_max = batch_max_timestamp, last_offset
            if valid_bytes - last_index_entry > index_interval_bytes:
                # OffsetIndex.append + TimeIndex.maybeAppend; _Indexes raises what Kafka throws
                if indexes.offset_count and last_offset > indexes.last_offset and indexes.room():
                    indexes.offsets += pack_offset(last_offset - base_offset, valid_bytes)
                    indexes.offset_count += 1
                    indexes.last_offset = last_offset
                else:
                    indexes.append_offset(last_offset, valid_bytes)
                grows = max_timestamp > indexes.last_time_timestamp
                if grows and offset_of_max >= indexes.last_time_offset and indexes.room():
                    indexes.times += pack_time(max_timestamp, offset_of_max - base_offset)
                    indexes.time_count += 1
                    indexes.last_time_timestamp, indexes.last_time_offset = max_timestamp, offset_of_max
                else:
                    indexes.maybe_append_time(max_timestamp, offset_of_max)
                last_index_entry = valid_bytes
            valid_bytes = pos = batch_end
            batches += 1
            if producer_id >= 0:  # magic 2 only: legacy batches have no producer id
                try:
                    entry = track_producer_batch(tracker, V2Batch(buf, start))
                except InvalidRecord as err:  # caught by recover after the batch was counted as valid
                    stop, detail = STOP_INVALID_RECORD, err.message
                    break
                if entry is not None:
                    _append_aborted(aborted, entry)
            if pos - released >= release_every:
                released = release_pages(buf, released, pos)
        indexes.maybe_append_time(max_timestamp, offset_of_max, skip_full_check=True)
    except RecoveryAbort as abort:
        stop, detail = STOP_FAILED, abort.message
        failure = RecoveryFailure(abort.exception, abort.message, start, abort.consequence)
    return IndexBuild(
        base_offset,
        bytes(indexes.offsets),
        bytes(indexes.times),
        tuple(aborted),
        batches,
        limit,
        valid_bytes,
        stop,
        detail,
        failure,
    )


def _append_aborted(aborted: list[AbortedTxn], entry: AbortedTxn) -> None:
    """``TransactionIndex.append``: last offsets must strictly increase."""
    if aborted and aborted[-1].last_offset >= entry.last_offset:
        raise RecoveryAbort(
            "IllegalArgumentException",
            f"The last offset of appended transactions must increase sequentially, but "
            f"{entry.last_offset} is not greater than current last offset {aborted[-1].last_offset}",
            FAILS_TO_LOAD,
        )
    aborted.append(entry)


# -- comparing with the files on disk ----------------------------------------------

INDEX_KINDS = ("index", "timeindex", "txnindex")
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


