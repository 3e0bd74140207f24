"""One segment through the load: ``readNextOffset``, ``recover``, the producer replay, and what they leave.

``LogSegment`` (storage, 4.3.0).  :func:`read_next_offset` is R5.5 -- the
whole log-end computation on a clean start, trusting the last ``.index``
slot; :func:`recover` is R5.1/R5.2 (through
:func:`kseg.recovery.indexes.build_indexes`) plus the files it rewrites;
:func:`replay` is the read side of ``UnifiedLog.rebuildProducerState``
(R6.3b, R6.4), which catches nothing.
"""

from __future__ import annotations

import mmap
import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from kseg.errors import Corrupt, InvalidRecord, LimitExceeded
from kseg.format.layout import MAX_RELATIVE_OFFSET
from kseg.format.v2 import V2Batch
from kseg.format.walk import BatchWalk, Frame
from kseg.index import OFFSET_ENTRY
from kseg.recovery.indexes import IndexBuild, RecoveryFailure, build_indexes
from kseg.recovery.loading.model import BROKER_STOPS, LoadError, LoadFailed
from kseg.recovery.loading.state import PartitionDir
from kseg.recovery.producer_state import RecoveryAbort, TxnTracker, track_producer_batch
from kseg.segment import MappedFile

CORRUPT_RECORD = "org.apache.kafka.common.errors.CorruptRecordException"
INVALID_RECORD = "org.apache.kafka.common.InvalidRecordException"
OVERFLOW = "LogSegmentOffsetOverflowException"
INVALID_OFFSET = "InvalidOffsetException"
INDEX_SUFFIXES = (".index", ".timeindex", ".txnindex")
_WARM_ENTRIES = 8192 // OFFSET_ENTRY.size  # AbstractIndex.warmEntries()

Buf = bytes | mmap.mmap


def file_name(base: int, suffix: str) -> str:
    """``LogFileUtils.filenamePrefixFromOffset``: 20 digits, zero padded."""
    return f"{base:020d}{suffix}"


@dataclass(slots=True)
class Seg:
    """A segment of the load's ``LogSegments`` map; ``suffix`` is ``.swap`` for R2.2's swap segments."""

    base: int
    suffix: str = ""

    def name(self, kind: str) -> str:
        return file_name(self.base, kind + self.suffix)


@contextmanager
def log_bytes(pdir: PartitionDir, name: str) -> Iterator[tuple[Buf, MappedFile | None]]:
    """The current bytes of ``name`` (read ``[:pdir.size(name)]``) and the mapped file behind them, if any.

    A file the load wrote is held in memory (``VFile.data``: the later parts of an overflow split,
    R4.4) or is empty (a new active segment); every other file is mapped read-only.
    """
    vfile = pdir.files.get(name)
    if vfile is None or vfile.source is None:
        data = b"" if vfile is None or vfile.data is None else vfile.data
        yield data, None
        return
    with MappedFile(vfile.source) as mapped:
        yield mapped.buf, mapped


def _stops(exception: str, message: str, rule: str, method: str) -> LoadFailed:
    return LoadFailed(LoadError(exception, message, BROKER_STOPS, rule, method))


def _slot(index: bytes, n: int, base: int) -> tuple[int, int]:
    relative, position = OFFSET_ENTRY.unpack_from(index, n * OFFSET_ENTRY.size)
    return base + relative, position


def _binary_search(index: bytes, base: int, target: int, lo: int, hi: int) -> int:
    """``AbstractIndex.binarySearch``: the largest slot whose offset is <= target (sorted slots assumed)."""
    while lo < hi:
        mid = (lo + hi + 1) >> 1
        offset = _slot(index, mid, base)[0]
        if offset > target:
            hi = mid - 1
        elif offset < target:
            lo = mid
        else:
            return mid
    return lo


def index_lookup(index: bytes, base: int, target: int) -> tuple[int, int]:
    """``OffsetIndex.lookup``: (offset, position) of the largest lower bound, ``(base, 0)`` if none."""
    entries = len(index) // OFFSET_ENTRY.size
    if entries == 0:
        return base, 0
    first_hot = max(0, entries - 1 - _WARM_ENTRIES)
    if _slot(index, first_hot, base)[0] < target:
        return _slot(index, _binary_search(index, base, target, first_hot, entries - 1), base)
    if _slot(index, 0, base)[0] > target:
        return base, 0
    return _slot(index, _binary_search(index, base, target, 0, first_hot), base)


def last_index_offset(index: bytes, base: int) -> int:
    """``OffsetIndex.lastOffset``: the last whole slot, trusted as it is (R5.5)."""
    entries = len(index) // OFFSET_ENTRY.size
    return base if entries == 0 else _slot(index, entries - 1, base)[0]


def _frame_offsets(buf: Buf, pos: int, magic: int, header: tuple | None) -> tuple[int, int]:
    """(base offset, last offset) of a framed entry, as ``FileChannelRecordBatch`` reads them (no CRC)."""
    first = int.from_bytes(buf[pos : pos + 8], "big", signed=True)
    if magic < 2:
        return first, first
    if header is None:
        return first, first
    return header[0], header[0] + header[6]


def _walk(buf: Buf, start: int, end: int, path: Path) -> Iterator[Frame]:
    """Frames from ``start``; a size below 14 raises Kafka's ``CorruptRecordException`` (R5.4)."""
    walk = BatchWalk(buf, start, end, strict=True)
    try:
        yield from walk.frames()
    except Corrupt:
        size = walk.end.declared_size if walk.end is not None else None
        message = f"Found record size {size} smaller than minimum record overhead (14) in file {path}."
        raise _stops(CORRUPT_RECORD, message, "R5.4", "FileLogInputStream.nextBatch") from None


def search_position(buf: Buf, start: int, end: int, target: int, path: Path) -> int | None:
    """``FileRecords.searchForOffsetFromPosition``: the first batch from ``start`` whose last offset >= target.

    ``start`` is an index slot's position; ``LogSegment.translateOffset`` passes
    ``Math.max(mapping.position, 0)``, so a garbage slot with a negative position searches from 0.
    """
    start = max(start, 0)
    for pos, _, magic, header, _ in _walk(buf, start, end, path):
        if _frame_offsets(buf, pos, magic, header)[1] >= target:
            return pos
    return None


def next_offset_of(buf: Buf, size: int, index: bytes, base: int, path: Path) -> int:
    """``LogSegment.readNextOffset`` over ``buf[:size]`` with ``index`` as the offset index (R5.5)."""
    target = last_index_offset(index, base)
    start = search_position(buf, index_lookup(index, base, target)[1], size, target, path)
    if start is None:
        return base
    last = None
    for pos, _, magic, header, _ in _walk(buf, start, size, path):
        last = _frame_offsets(buf, pos, magic, header)[1]
    return base if last is None else last + 1


def read_next_offset(pdir: PartitionDir, seg: Seg) -> int:
    """``readNextOffset`` of a segment of the picture (its ``.index`` as the load left it)."""
    if not pdir.exists(seg.name(".log")):
        return seg.base
    index = pdir.current(seg.name(".index")) or b""
    path = (pdir.path / seg.name(".log")).absolute()
    with log_bytes(pdir, seg.name(".log")) as (buf, _):
        return next_offset_of(buf, pdir.size(seg.name(".log")), index, seg.base, path)


@dataclass(frozen=True, slots=True)
class Recovered:
    """What one ``LogSegment.recover`` did: the build, the epochs it assigned, and its failure if any."""

    build: IndexBuild
    epochs: list[tuple[int, int]]  # (partition leader epoch, base offset) of each V2 batch it passed
    map_end: int | None  # updateMapEndOffset: last offset + 1 of the last V2 batch it took

    @property
    def failure(self) -> RecoveryFailure | None:
        return self.build.failure


def run_recover(pdir: PartitionDir, seg: Seg, tracker: TxnTracker) -> Recovered:
    """``LogSegment.recover``'s loop over the segment's current bytes (nothing recorded yet).

    One walk: the build carries the epochs ``recover`` assigned and its map end.  Where the
    caller walked these bytes already (verify), the loop goes on from the clean prefix it ran
    (``pdir.prefixes``, :mod:`kseg.recovery.clean_prefix`) rather than from byte 0.
    """
    source = pdir.source(seg.name(".log"))
    size = pdir.size(seg.name(".log")) if pdir.exists(seg.name(".log")) else 0
    if size == 0:
        return Recovered(build_indexes(b"", seg.base, txn=tracker), [], None)
    where = str(source) if source is not None else f"memory:{seg.name('.log')}"
    key = (seg.base, where, size, tracker.state())
    if key in pdir.recoveries:  # the same bytes from the same producer state: the same recovery
        recovered, after = pdir.recoveries[key]
        tracker.restore(after)
        return recovered
    try:
        if source is None:  # written by this load (an overflow split's later part)
            build = build_indexes(pdir.files[seg.name(".log")].data or b"", seg.base, txn=tracker, end=size)
        else:
            prefix = pdir.prefixes.get(os.path.abspath(source))
            with MappedFile(source, readable=True) as mapped:
                build = build_indexes(mapped.buf, seg.base, txn=tracker, end=size, prefix=prefix,
                                      read_into=mapped.read_into)
    except LimitExceeded as err:  # kseg's read cap, not Kafka's: the model cannot go on
        raise err.with_path(where) from None
    recovered = Recovered(build, list(build.epochs), build.map_end)
    pdir.recoveries[key] = (recovered, tracker.state())
    return recovered


def apply_recovery(pdir: PartitionDir, seg: Seg, rec: Recovered, rule: str) -> int:
    """The files ``recover`` leaves: indexes rewritten, ``.txnindex`` reset, ``.log`` truncated (R5.1)."""
    build, method = rec.build, "LogSegment.recover"
    pdir.write(seg.name(".index"), build.offset_index_bytes(), rule, method, "offset index rebuilt")
    pdir.write(seg.name(".timeindex"), build.time_index_bytes(), rule, method, "time index rebuilt")
    txn = build.txn_index_bytes()
    if pdir.exists(seg.name(".txnindex")) or txn:
        pdir.write(seg.name(".txnindex"), txn, rule, method, "transaction index rebuilt")
    if build.failure is not None:
        return 0
    before = pdir.size(seg.name(".log"))
    pdir.truncate(seg.name(".log"), build.valid_bytes, rule, method,
                  f"cut at byte {build.valid_bytes}: {build.stop_detail or build.stop}")
    return before - build.valid_bytes


def replay(pdir: PartitionDir, seg: Seg, start_offset: int, end_offset: int | None, tracker: TxnTracker) -> None:
    """``UnifiedLog.loadProducersFromRecords`` over ``segment.read(start_offset, ...)`` (R6.3b, R6.4).

    Batches are not CRC-checked; a control record Kafka cannot parse, or a
    size below 14, throws out of the load: the broker stops.
    """
    if not pdir.exists(seg.name(".log")):
        return
    size = pdir.size(seg.name(".log"))
    path = (pdir.path / seg.name(".log")).absolute()
    index = pdir.current(seg.name(".index")) or b""
    with log_bytes(pdir, seg.name(".log")) as (buf, _):
        max_position = size
        if end_offset is not None:
            found = search_position(buf, index_lookup(index, seg.base, end_offset)[1], size, end_offset, path)
            max_position = size if found is None else found
        start = search_position(buf, index_lookup(index, seg.base, start_offset)[1], size, start_offset, path)
        if start is None:
            return
        try:
            for pos, _, _, header, _ in _walk(buf, start, max_position, path):
                if header is not None and header[9] >= 0:
                    _replay_batch(buf, pos, tracker)
        except LimitExceeded as err:  # kseg's read cap, not Kafka's: the model cannot go on
            raise err.with_path(str(path)) from None


def _replay_batch(buf: Buf, pos: int, tracker: TxnTracker) -> None:
    try:
        batch = V2Batch(buf, pos)
        track_producer_batch(tracker, batch)
    except InvalidRecord as err:
        raise _stops(INVALID_RECORD, err.message, "R6.4",
                     "UnifiedLog.loadProducersFromRecords -> ControlRecordType.parseTypeId") from None
    except RecoveryAbort as abort:
        raise _stops(abort.exception, abort.message, "R6.4", "UnifiedLog.loadProducersFromRecords") from None


def has_overflow(pdir: PartitionDir, seg: Seg, partial_index: bytes) -> bool:
    """``LogSegment.hasOverflow`` right after ``recover`` threw: the last batch's last offset past base + MAX_INT."""
    if not pdir.exists(seg.name(".log")):
        return False
    path = (pdir.path / seg.name(".log")).absolute()
    with log_bytes(pdir, seg.name(".log")) as (buf, _):
        next_offset = next_offset_of(buf, pdir.size(seg.name(".log")), partial_index, seg.base, path)
    return next_offset > seg.base and not 0 <= next_offset - 1 - seg.base <= MAX_RELATIVE_OFFSET


def framed_range(pdir: PartitionDir, seg: Seg, start: int, end: int | None, from_offset: int) -> tuple[int, int] | None:
    """(first, last) offsets that whole frames in ``[start, end)`` claim at or above ``from_offset`` (no CRC)."""
    if not pdir.exists(seg.name(".log")):
        return None
    first = last = None
    with log_bytes(pdir, seg.name(".log")) as (buf, mapped):
        for pos, _, magic, header, _ in BatchWalk(buf, start, end, strict=False).frames():
            if mapped is not None:  # the pages behind the walk go back (flat memory)
                mapped.release(pos)
            low, high = _frame_offsets(buf, pos, magic, header)
            if high < from_offset:
                continue
            first = max(from_offset, low) if first is None else min(first, max(from_offset, low))
            last = high if last is None else max(last, high)
    return None if first is None or last is None else (first, last)
