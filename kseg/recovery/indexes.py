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
from collections.abc import Callable
from dataclasses import dataclass

from kseg.errors import Corrupt, InvalidRecord
from kseg.format.layout import LOG_OVERHEAD, MAX_RELATIVE_OFFSET, MIN_RECORD_OVERHEAD, Buffer
from kseg.format.model import wrap_int64
from kseg.format.v0v1 import LegacyBatch
from kseg.format.v2 import V2Batch
from kseg.format.walk import (
    BAD_SIZE,
    PARTIAL_BATCH,
    BatchWalk,
    core_index_run,
    core_legacy_index_run,
)
from kseg.index import (
    DEFAULT_INDEX_INTERVAL_BYTES,
    DEFAULT_MAX_INDEX_SIZE,
    OFFSET_ENTRY,
    TIME_ENTRY,
    AbortedTxn,
    OffsetEntry,
    TimeEntry,
    encode_txn_index,
    read_offset_index,
    read_time_index,
    refuse_oversized,
)
from kseg.recovery.clean_prefix import NONE, CleanPrefix, fresh_state, read_clean_run
from kseg.recovery.producer_state import FAILS_TO_LOAD, RecoveryAbort, TxnTracker, track_producer_batch
from kseg.recovery.stops import (  # where and why recovery stops, and what the broker then does
    INVALID_OFFSET_CONSEQUENCE,
    OVERFLOW_CONSEQUENCE,
    STOP_CORRUPT,
    STOP_END,
    STOP_FAILED,
    STOP_INVALID_RECORD,
)
from kseg.segment import RELEASE_EVERY, release_pages

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
    #: (partition leader epoch, base offset) of each V2 batch recover passed whose epoch differs
    #: from the V2 batch before it: what ``LeaderEpochFileCache.assign`` is offered (R7.3)
    epochs: tuple[tuple[int, int], ...] = ()
    #: ``updateMapEndOffset``: the last offset + 1 of the last V2 batch whose producer-state
    #: update went through (None: no such batch)
    map_end: int | None = None

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

_pack_offset, _pack_time = OFFSET_ENTRY.pack, TIME_ENTRY.pack
PAGE = mmap.PAGESIZE  # pages released behind a walk start at a page boundary


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

    def index_point(self, last_offset: int, position: int, max_timestamp: int, offset_of_max: int) -> None:
        """``OffsetIndex.append`` then ``TimeIndex.maybeAppend``, at an index point of the recovery loop.

        The common case (offsets grow, room left, a greater timestamp) is
        inline; every other case goes through the methods that raise what
        Kafka throws -- they give the same result whenever the inline test fails.
        """
        count = self.offset_count
        if 0 < count < self.max_offset_entries and last_offset > self.last_offset:
            self.offsets += _pack_offset(last_offset - self.base_offset, position)
            self.offset_count = count + 1
            self.last_offset = last_offset
        else:
            self.append_offset(last_offset, position)
        if (
            max_timestamp > self.last_time_timestamp
            and offset_of_max >= self.last_time_offset
            and self.time_count < self.max_time_entries - 1
        ):
            self.times += _pack_time(max_timestamp, offset_of_max - self.base_offset)
            self.time_count += 1
            self.last_time_timestamp, self.last_time_offset = max_timestamp, offset_of_max
        else:
            self.maybe_append_time(max_timestamp, offset_of_max)

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
                INVALID_OFFSET_CONSEQUENCE,
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
                INVALID_OFFSET_CONSEQUENCE,
            )
        if timestamp > self.last_time_timestamp:
            self.times += TIME_ENTRY.pack(timestamp, offset - self.base_offset)
            self.time_count += 1
            self.last_time_timestamp, self.last_time_offset = timestamp, offset


def _legacy_fields(buf: Buffer, pos: int) -> tuple[int, int]:
    """(last offset, max timestamp) of a valid magic 0/1 batch; raises what ``ensureValid`` throws."""
    batch = LegacyBatch(buf, pos)
    batch.ensure_valid()
    return batch.last_offset, batch.max_timestamp


def _v2_refusal(buf: Buffer, pos: int) -> str:
    """The message ``DefaultRecordBatch.ensureValid`` throws for the batch at ``pos``."""
    try:
        V2Batch(buf, pos).ensure_valid()
    except Corrupt as err:
        return err.message
    return "Record batch is corrupt"  # pragma: no cover - only called for batches that fail


#: Where the loop starts: (position, valid bytes, batches, max timestamp, its offset, next index
#: point, pages released up to, the last batch's epoch, map end) -- the start of the file, or where
#: the core's clean run stopped (``NONE``: no epoch or map end yet).
_Start = tuple[int, int, int, int, int, int, int, int, int]


def build_indexes(
    buf: Buffer,
    base_offset: int,
    *,
    index_interval_bytes: int = DEFAULT_INDEX_INTERVAL_BYTES,
    end: int | None = None,
    txn: TxnTracker | None = None,
    max_index_size: int = DEFAULT_MAX_INDEX_SIZE,
    prefix: CleanPrefix | None = None,
    read_into: Callable[[memoryview, int], int] | None = None,
) -> IndexBuild:
    """Run ``LogSegment.recover``'s loop over ``buf[:end]`` and return the indexes it writes.

    ``txn`` carries producer state from the earlier segments of the partition
    (a fresh tracker means "nothing open at this segment's base offset"); it
    is updated in place so the next segment can be built with it.  ``prefix``
    is the loop over the leading clean batches of these bytes, run during
    another walk (:mod:`kseg.recovery.clean_prefix`): the loop goes on from there.
    ``read_into`` (``MappedFile.read_into`` of ``buf``'s file) lets the core read the leading
    clean batches window by window instead of mapping them.
    """
    walk = BatchWalk(buf, 0, end, strict=False)
    refuse_oversized(walk.limit)
    indexes = _Indexes(base_offset, max_index_size)
    aborted: list[AbortedTxn] = []
    epochs: list[tuple[int, int]] = []
    tracker = txn if txn is not None else TxnTracker()
    first = _clean_start(buf, walk.limit, indexes, epochs, index_interval_bytes, max_index_size, prefix, read_into)
    if first[0] > 0:  # the loop goes on where the core's clean run stopped
        walk = BatchWalk(buf, first[0], end, strict=False)
    valid_bytes, batches, stop, detail, failure, map_end = _recover(
        walk, buf, indexes, tracker, aborted, index_interval_bytes, first, epochs
    )
    return IndexBuild(
        base_offset,
        bytes(indexes.offsets),
        bytes(indexes.times),
        tuple(aborted),
        batches,
        walk.limit,
        valid_bytes,
        stop,
        detail,
        failure,
        tuple(epochs),
        None if map_end == NONE else map_end,
    )


def _clean_start(
    buf: Buffer, limit: int, indexes: _Indexes, epochs: list[tuple[int, int]], interval: int, max_index_size: int,
    prefix: CleanPrefix | None, read_into: Callable[[memoryview, int], int] | None,
) -> _Start:
    """Where :func:`_recover`'s loop starts: after another walk's prefix (if it fits) or the core's
    run over windows read into memory, then the core's runs over the mapping (:func:`_clean_run`)."""
    base_offset = indexes.base_offset
    state = fresh_state(base_offset, interval, max_index_size)
    position = released = 0
    if prefix is not None and prefix.fits(limit, base_offset, interval, max_index_size):
        state, position = prefix.state, prefix.position
        indexes.offsets += prefix.offsets
        indexes.times += prefix.times
        epochs += prefix.epochs
    else:
        ran = read_clean_run(buf, limit, state, read_into) if read_into is not None and limit else None
        if ran is not None:
            position, state, offsets, times, changes = ran
            indexes.offsets += offsets
            indexes.times += times
            epochs += changes
            released = position - position % PAGE
    return _clean_run(buf, limit, indexes, state, epochs, position, released)


def _clean_run(
    buf: Buffer, limit: int, indexes: _Indexes, state: tuple[int, ...], epochs: list[tuple[int, int]],
    position: int = 0, released: int = 0,
) -> _Start:
    """The compiled core's run of :func:`_recover`'s loop over the clean batches from ``position``.

    Whole, CRC-valid V2 batches without a producer id and valid V0/V1 messages, offsets inside the
    segment, index appends that do not throw: the core builds their entries a ``RELEASE_EVERY``
    bytes per call (pages released between calls), switching between the V2 and the legacy run,
    and stops before the first entry the loop must see (tests/core/test_core_indexes.py,
    test_core_legacy_run.py).  Pure Python: nothing is run.  ``epochs`` gets the epoch changes.
    """
    while True:
        until = max(released, position) + RELEASE_EVERY  # beyond position: each call takes a batch or stops
        ran = core_index_run(buf, position, limit, until, state)
        if ran is None:
            break
        position, state, offsets, times, changes = ran
        indexes.offsets += offsets
        indexes.times += times
        epochs += changes
        if position < until:  # stopped before an entry the V2 run does not take, or at the end
            legacy = core_legacy_index_run(buf, position, limit, until, state)
            if legacy is None or legacy[0] == position:
                break  # the end, or an entry for the Python loop
            position, state, offsets, times = legacy
            indexes.offsets += offsets
            indexes.times += times
        if position >= until:
            released = release_pages(buf, released, position)
    return _take_state(state, position, released, indexes)

def _take_state(state: tuple[int, ...], position: int, released: int, indexes: _Indexes) -> _Start:
    """The core's loop state (:func:`~kseg.recovery.clean_prefix.fresh_state`'s fields) into ``indexes``
    and the start of :func:`_recover`'s loop."""
    (_, _, valid_bytes, batches, max_timestamp, offset_of_max, next_index_point, indexes.last_offset,
     indexes.offset_count, _, indexes.last_time_timestamp, indexes.last_time_offset, indexes.time_count, _,
     last_epoch, map_end) = state
    return (position, valid_bytes, batches, max_timestamp, offset_of_max, next_index_point, released,
            last_epoch, map_end)


def _recover(
    walk: BatchWalk,
    buf: Buffer,
    indexes: _Indexes,
    tracker: TxnTracker,
    aborted: list[AbortedTxn],
    interval: int,
    first: _Start,
    epochs: list[tuple[int, int]],
) -> tuple[int, int, str, str | None, RecoveryFailure | None, int]:
    """``LogSegment.recover``'s loop from ``first`` (:func:`_clean_run`): (valid bytes, batches, stop,
    detail, failure, map end).  Per batch: a header unpack, a CRC-32C, a few comparisons; a V2
    batch's epoch is offered before its producer-state update, the map end moves after it."""
    base_offset, release_every = indexes.base_offset, RELEASE_EVERY
    highest_offset = base_offset + MAX_RELATIVE_OFFSET  # the last offset a relative int32 can hold
    start, valid_bytes, batches, max_timestamp, offset_of_max, next_index_point, released, epoch, map_end = first
    release_at = released + release_every  # next_index_point starts at interval: the first batch is never indexed
    stop, detail = STOP_END, None
    try:
        for start, batch_end, magic, header, crc_ok in walk.frames(check_crc=True):
            if crc_ok and header is not None:  # a V2 batch whose CRC-32C holds
                last_offset, batch_max_timestamp, producer_id = header[0] + header[6], header[8], header[9]
            elif magic < 2:  # legacy: the wrapper's offset is the last offset, its timestamp the max
                try:
                    last_offset, batch_max_timestamp = _legacy_fields(buf, start)
                except Corrupt as err:
                    stop, detail = STOP_CORRUPT, err.message
                    break
            else:  # ensureValid(): too short for a V2 batch, or its CRC-32C does not hold
                stop, detail = STOP_CORRUPT, _v2_refusal(buf, start)
                break
            if not base_offset <= last_offset <= highest_offset:
                raise _offset_overflow(last_offset, base_offset)
            if batch_max_timestamp > max_timestamp:
                max_timestamp, offset_of_max = batch_max_timestamp, last_offset
            if valid_bytes > next_index_point:  # index.interval.bytes since the last entry
                indexes.index_point(last_offset, valid_bytes, max_timestamp, offset_of_max)
                next_index_point = valid_bytes + interval
            valid_bytes = batch_end
            batches += 1
            if header is not None:  # magic 2: the epoch, then producer state (legacy batches have neither)
                if header[2] != epoch:
                    epoch = header[2]
                    epochs.append((epoch, header[0]))
                if producer_id >= 0 and (detail := _producer_batch(buf, start, tracker, aborted)) is not None:
                    stop = STOP_INVALID_RECORD  # caught by recover after the batch was counted as valid
                    break
                map_end = last_offset + 1
            if batch_end >= release_at:
                released = release_pages(buf, released, batch_end)
                release_at = released + release_every
        else:
            stop, detail, start = _walk_end(walk)
        indexes.maybe_append_time(max_timestamp, offset_of_max, skip_full_check=True)  # a clean close
    except RecoveryAbort as abort:
        failure = RecoveryFailure(abort.exception, abort.message, start, abort.consequence)
        return valid_bytes, batches, STOP_FAILED, abort.message, failure, map_end
    return valid_bytes, batches, stop, detail, None, map_end


def _walk_end(walk: BatchWalk) -> tuple[str, str | None, int]:
    """(stop, detail, position) where Kafka's reader stopped framing batches."""
    end = walk.end
    assert end is not None  # set once frames() is exhausted
    if end.reason == BAD_SIZE:
        detail = f"Found record size {end.declared_size} smaller than minimum record overhead ({MIN_RECORD_OVERHEAD})"
    elif end.reason == PARTIAL_BATCH:
        assert end.declared_size is not None
        detail = f"the last batch declares {LOG_OVERHEAD + end.declared_size} bytes, {end.remaining} remain"
    else:
        detail = None
    return end.reason, detail, end.position


def _offset_overflow(last_offset: int, base_offset: int) -> RecoveryAbort:
    """``LogSegment.ensureOffsetInRange``: an offset that does not fit the int32 index (quoted as a Java long)."""
    return RecoveryAbort(
        "LogSegmentOffsetOverflowException",
        f"offset {wrap_int64(last_offset)} does not fit a segment with base offset {base_offset}",
        OVERFLOW_CONSEQUENCE,
    )


def _producer_batch(buf: Buffer, position: int, tracker: TxnTracker, aborted: list[AbortedTxn]) -> str | None:
    """``LogSegment.updateProducerState`` for the V2 batch at ``position``; the message if recovery stops.

    An undecodable transaction marker (InvalidRecordException) is caught by
    ``recover``, which stops after this batch; an aborted transaction it
    completes becomes a .txnindex entry.
    """
    try:
        entry = track_producer_batch(tracker, V2Batch(buf, position))
    except InvalidRecord as err:
        return err.message
    if entry is not None:
        _append_aborted(aborted, entry)
    return None


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
