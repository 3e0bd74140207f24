"""Verify a .log file (or a KRaft .checkpoint, which holds the same batches), batch by batch.

The walk has two speeds.  The fast path handles the overwhelmingly common
case -- a whole V2 batch whose CRC-32C matches and whose header says nothing
unusual -- with one ``struct`` unpack of the 61-byte header, one CRC call over
a memoryview slice and a handful of integer comparisons, and builds no
objects.  Everything else takes the slow path:

* a header that is unusual (control batch, odd attributes, offsets out of
  order, producer fields that do not fit) gets :meth:`LogWalk._check_v2_header`;
* anything that is not a whole, CRC-valid V2 batch goes to
  :func:`kseg.format.scan.scan`, which yields either a valid V0/V1 message
  (checked by :meth:`LogWalk._check_legacy`) or the :class:`~kseg.format.scan.Gap`
  up to the next batch that checks out -- so one run reports all the damage
  in a file and how many bytes were skipped.

With ``deep`` every record is decoded too (decompression, record count,
offset deltas, maxTimestamp, inner CRCs of V0/V1 wrappers).  Control batches
are decoded at every level: they are tiny, and Kafka's own recovery reads them.

This module imports neither ``kseg.format`` nor ``kseg.segment`` at module
level: a clean V2 segment never needs them, and their codec imports would
cost more start-up time than verifying a large segment takes
(bench/bench_verify.py).
"""

from __future__ import annotations

import mmap
import os
import re
import struct
from collections.abc import Callable
from typing import TYPE_CHECKING, NamedTuple

from kseg.ops.verify import ERROR, INFO, WARNING, Collector

if TYPE_CHECKING:  # for annotations only: importing these costs start-up time a clean walk never needs
    from kseg.errors import KsegError
    from kseg.format.scan import Gap
    from kseg.format.v0v1 import LegacyBatch

V2_HEADER = struct.Struct(  # the same layout as kseg.format.v2.BATCH_HEADER, without importing the codecs
    ">q"  # base_offset
    "i"  # batch_length: bytes after this field
    "i"  # partition_leader_epoch (not covered by the CRC)
    "b"  # magic
    "I"  # crc: CRC-32C of [attributes, end of batch)
    "h"  # attributes (only the low byte is read by Kafka)
    "i"  # last_offset_delta
    "q"  # base_timestamp
    "q"  # max_timestamp
    "q"  # producer_id
    "h"  # producer_epoch
    "i"  # base_sequence
    "i"  # records_count
)
V2_OVERHEAD = V2_HEADER.size  # 61
LOG_OVERHEAD = 12
CRC_START = struct.calcsize(">qiibI")  # 21: the V2 CRC covers from the attributes to the end
MIN_V2_LENGTH = V2_OVERHEAD - LOG_OVERHEAD  # 49
INT32_MAX = 0x7FFFFFFF
NO_OFFSET = -(1 << 63) - 1  # below every int64: "no batch seen yet"

CODEC_MASK = 0x07
TIMESTAMP_TYPE_MASK = 0x08
TRANSACTIONAL_MASK = 0x10
CONTROL_MASK = 0x20
#: Attribute values the fast path takes without a closer look: a known codec, either
#: timestamp type, transactional or not, delete horizon or not -- not control, no unused bits.
USUAL_V2_ATTRIBUTES = frozenset(
    codec | timestamp_type | transactional | horizon
    for codec in range(5)
    for timestamp_type in (0, TIMESTAMP_TYPE_MASK)
    for transactional in (0, TRANSACTIONAL_MASK)
    for horizon in (0, 0x40)
)
CODEC_NAMES = ("none", "gzip", "snappy", "lz4", "zstd")
CODEC_ZSTD = 4
MIN_LEGACY_SIZE = {0: 14, 1: 22}  # size field of the smallest V0 / V1 message

PROGRESS_STEP = 64 << 20  # report progress every 64 MiB of a large file
_NONZERO = re.compile(rb"[^\x00]")

Observer = Callable[[int, int, int, int], None]  # (position, base_offset, last_offset, max_timestamp)


def _load_crc32c() -> Callable[[object], int]:
    """The ``crc32c`` package's C function, loaded without running the package's ``__init__``.

    That ``__init__`` imports ``importlib.metadata`` just to read its own
    version, which costs ~40 ms of start-up -- a fifth of verifying a 1 GiB
    segment.  Falls back to the normal import if the layout is unexpected.
    """
    import importlib.machinery
    import importlib.util

    try:
        spec = importlib.util.find_spec("crc32c")
        for location in (spec.submodule_search_locations or []) if spec else []:
            for suffix in importlib.machinery.EXTENSION_SUFFIXES:
                candidate = os.path.join(location, "_crc32c" + suffix)
                if os.path.isfile(candidate):
                    loader = importlib.machinery.ExtensionFileLoader("crc32c._crc32c", candidate)
                    module_spec = importlib.util.spec_from_file_location("crc32c._crc32c", candidate, loader=loader)
                    module = importlib.util.module_from_spec(module_spec)  # type: ignore[arg-type]
                    loader.exec_module(module)
                    return module.crc32c
    except (ImportError, OSError, AttributeError):
        pass
    from crc32c import crc32c

    return crc32c


crc32c = _load_crc32c()


# -- opening files read-only ------------------------------------------------------------------


class ReadOnlyMap:
    """A whole file mapped read-only (``b""`` when empty); never creates, locks or changes anything.

    ``O_NOATIME`` keeps even the access time of evidence unchanged where the
    kernel allows it (it is refused for files we do not own).
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        flags = os.O_RDONLY | getattr(os, "O_NOATIME", 0)
        try:
            fd = os.open(path, flags)
        except PermissionError:
            fd = os.open(path, os.O_RDONLY)
        try:
            self.size = os.fstat(fd).st_size
            self._map = mmap.mmap(fd, 0, access=mmap.ACCESS_READ) if self.size > 0 else None
        finally:
            os.close(fd)

    @property
    def buf(self) -> bytes | mmap.mmap:
        return self._map if self._map is not None else b""

    def close(self) -> None:
        if self._map is not None:
            try:
                self._map.close()
            except BufferError:  # a view is still alive somewhere; the GC unmaps it later
                pass
            self._map = None

    def __enter__(self) -> ReadOnlyMap:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def read_file(path: str | os.PathLike[str]) -> bytes:
    """A small file's bytes, opened read-only."""
    with ReadOnlyMap(path) as mapped:
        return bytes(mapped.buf)


# -- what a walk learns, for the partition checks ---------------------------------------------


class SegmentFacts(NamedTuple):
    """What the partition-level checks need to know about one segment."""

    path: str
    name_base: int | None
    size: int
    batches: int
    first_offset: int | None
    last_offset: int | None
    epochs: list[tuple[int, int]]  # (leader epoch, first offset) wherever the epoch rises
    damaged: bool
    aborts: int  # ABORT markers seen (a .txnindex must then exist)


# -- the walk ---------------------------------------------------------------------------------


class LogWalk:
    """One pass over a .log or .checkpoint; findings go to ``findings``.

    ``name_base`` is the base offset from the file name (None when the name
    does not give one, or for KRaft snapshots whose batches start at 0);
    ``observe`` is called for every valid batch, in file order, by the index
    checks; ``progress(done_bytes)`` every 64 MiB.
    """

    def __init__(
        self,
        path: str,
        buf: bytes | mmap.mmap,
        *,
        name_base: int | None,
        deep: bool = False,
        observe: Observer | None = None,
        progress: Callable[[int], None] | None = None,
    ) -> None:
        self.path = path
        self.buf = buf
        self.view = memoryview(buf)
        self.limit = len(buf)
        self.name_base = name_base
        self.deep = deep
        self.observe = observe
        self.progress = progress
        self.findings = Collector(path)
        self.batches = 0
        self.records = 0
        self.skipped = 0
        self.first_offset: int | None = None
        self.last_offset: int | None = None
        self.epochs: list[tuple[int, int]] = []
        self.aborts: list[tuple[int, int]] = []  # (marker offset, producer id) of ABORT markers
        self.kafka_cut: int | None = None  # where Kafka's recovery would truncate
        # walk state shared between the fast loop and the slow paths
        self.name_floor = NO_OFFSET if name_base is None else name_base - 1
        self.floor = self.name_floor  # a batch must start above this offset
        self.prev_position: int | None = None
        self.max_epoch = -1
        self.overflow_at = (1 << 63) if name_base is None else name_base + INT32_MAX + 1
        self.max_last = NO_OFFSET  # largest last offset of the batches the slow paths saw

    def close(self) -> None:
        self.view.release()

    # -- the fast loop ------------------------------------------------------------------------

    def run(self) -> LogWalk:
        """Walk the whole file; returns self."""
        buf, view, limit = self.buf, self.view, self.limit
        unpack = V2_HEADER.unpack_from
        crc = crc32c
        observe, deep, epochs = self.observe, self.deep, self.epochs
        per_batch_extras = observe is not None or deep
        floor, max_epoch, overflow_at = self.floor, self.max_epoch, self.overflow_at
        # the module constants, as locals: this loop runs once per batch
        overhead, crc_start, min_length = LOG_OVERHEAD, CRC_START, MIN_V2_LENGTH
        usual_attributes = USUAL_V2_ATTRIBUTES
        fast_batches = 0
        last_header = limit - V2_OVERHEAD
        next_progress = PROGRESS_STEP if self.progress is not None else limit + 1
        prev_position = None
        pos = 0
        while pos < limit:
            if pos <= last_header:
                base, length, epoch, magic, stored, attrs, lod, _, max_ts, pid, p_epoch, seq, count = unpack(buf, pos)
                end = pos + overhead + length
                if magic == 2 and length >= min_length and end <= limit and crc(view[pos + crc_start : end]) == stored:
                    last = base + lod
                    if (
                        base > floor
                        and last < overflow_at
                        and attrs in usual_attributes
                        and 0 <= count <= lod + 1
                        and seq >= -1
                        and (p_epoch >= 0 if pid >= 0 else pid == -1 and not attrs & 0x10)  # 0x10: transactional
                    ):
                        floor = last
                    else:
                        self.prev_position = prev_position
                        floor = self._check_v2_header(pos, floor)
                    if epoch > max_epoch:
                        max_epoch = epoch
                        epochs.append((epoch, base))
                    if fast_batches == 0 and self.first_offset is None:
                        self.first_offset = base
                    if per_batch_extras:
                        if observe is not None:
                            observe(pos, base, last, max_ts)
                        if deep:
                            self._deep_v2(pos)
                    fast_batches += 1
                    prev_position = pos
                    pos = end
                    if pos >= next_progress:
                        self.progress(pos)  # type: ignore[misc]
                        next_progress = pos + PROGRESS_STEP
                    continue
            # not a whole, CRC-valid V2 batch: a legacy message, or damage
            self.floor, self.max_epoch, self.prev_position = floor, max_epoch, prev_position
            pos, was_batch = self._slow(pos)
            floor, max_epoch = self.floor, self.max_epoch
            if was_batch:
                prev_position = self.prev_position
        self.batches += fast_batches
        self.floor, self.max_epoch = floor, max_epoch
        if fast_batches:  # the fast path keeps ``floor`` at the largest last offset seen
            self.max_last = max(self.max_last, floor)
        if self.batches:
            self.last_offset = self.max_last
        return self

    # -- the slow paths -----------------------------------------------------------------------

    def _slow(self, pos: int) -> tuple[int, bool]:
        """Handle what is at ``pos`` when it is not a whole valid V2 batch; returns (next position, was a batch)."""
        from kseg.format.scan import BAD_CRC, Gap, scan

        item = next(scan(self.buf, pos, self.limit))
        if isinstance(item, Gap):
            item = self._plausible_resync(item)
            following = pos + LOG_OVERHEAD + (item.declared_size or 0)
            if item.reason == BAD_CRC and following < item.end == self.limit and self._torn_tail(following):
                # A damaged batch followed by a torn last batch: two problems, not one long gap.
                item = Gap(pos, following, BAD_CRC, item.declared_size, False)
            self._report_gap(item)
            return item.end, False
        self._check_legacy(item)
        self.prev_position = pos
        return pos + item.size, True

    def _plausible_resync(self, gap: Gap) -> Gap:
        """Extend a gap past "batches" whose offsets do not follow the data before the damage.

        A CRC-valid entry can sit inside the damaged bytes -- an uncompressed inner message
        stored as a literal in a torn snappy wrapper, a record value that is itself a batch --
        and resynchronising there would report its garbage offsets as more damage.  The next
        batch that checks out must also continue the offsets.
        """
        from kseg.format.scan import Gap, find_next_batch

        floor = max(self.floor, self._damaged_offset(gap.start))
        ceiling = self._ceiling()
        end = gap.end
        while end < self.limit and not floor < self._header_offset(end) < ceiling:
            found = find_next_batch(self.buf, end + 1, self.limit)
            end = found.position if found is not None else self.limit
        if end == gap.end:
            return gap
        zero = _NONZERO.search(self.buf, gap.start, end) is None
        return Gap(gap.start, end, gap.reason, gap.declared_size, zero)

    def _damaged_offset(self, pos: int) -> int:
        """The offset in the damaged header at ``pos``, when it is believable (else the floor).

        Believable: above the offsets before it, and within the 2^31 offsets a segment can hold.
        What resynchronisation finds must come after it: a V0 wrapper torn in the middle still
        carries its inner messages, with their offsets, inside its payload.
        """
        if pos + 17 > self.limit:
            return self.floor
        offset = self._header_offset(pos) or 0  # not covered by the CRC: intact when the CRC-covered bytes are not
        return offset if self.floor < offset < self._ceiling() else self.floor

    def _ceiling(self) -> int:
        """Offsets at or above this cannot be in this segment (relative offsets are int32)."""
        if self.name_base is not None:
            return self.overflow_at
        return self.floor + INT32_MAX + 1 if self.floor != NO_OFFSET else 1 << 63

    def _torn_tail(self, pos: int) -> bool:
        """Whether a batch header at ``pos`` (known magic, plausible size) runs past the end of the file."""
        if pos + 17 > self.limit:
            return pos < self.limit
        size = struct.unpack_from(">i", self.buf, pos + 8)[0]
        magic = self.buf[pos + 16]
        minimum = MIN_V2_LENGTH if magic == 2 else MIN_LEGACY_SIZE.get(magic)
        return minimum is not None and size >= minimum and pos + LOG_OVERHEAD + size > self.limit

    def _check_v2_header(self, pos: int, floor: int) -> int:
        """Say everything unusual about a CRC-valid V2 header; returns the new offset floor."""
        (base, _length, _epoch, _magic, _crc, attrs, lod, _bts, _mts, pid, p_epoch, seq, count) = V2_HEADER.unpack_from(
            self.buf, pos
        )
        add = self.findings.add
        last = base + lod
        self.max_last = max(self.max_last, last)
        self._check_offsets(pos, base, last, floor, "batch.base_offset")
        low = attrs & 0xFF
        codec = low & CODEC_MASK
        if codec > CODEC_ZSTD:
            add("bad-attributes", ERROR, pos, base,
                f"unknown compression codec id {codec} in attributes 0x{attrs & 0xFFFF:04x} "
                f"(Kafka: IllegalArgumentException: Unknown compression type id: {codec})", field="batch.attributes")
        if attrs & 0xFF80:
            add("bad-attributes", WARNING, pos, base,
                f"unused attribute bits set: 0x{attrs & 0xFF80:04x} of 0x{attrs & 0xFFFF:04x} "
                "(Kafka never writes them and ignores them when reading)", field="batch.attributes")
        if lod < 0:
            add("record-count", ERROR, pos, base, f"lastOffsetDelta {lod} is negative", field="batch.last_offset_delta")
        if count < 0:
            add("record-count", ERROR, pos, base,
                f"Found invalid record count {count} in magic v2 batch", field="batch.records_count")
        elif lod >= 0 and count > lod + 1:
            add("record-count", ERROR, pos, base,
                f"{count} records cannot have distinct offsets within lastOffsetDelta {lod} "
                f"(offsets {base}..{last})", field="batch.records_count")
        self._check_producer_fields(pos, base, attrs, pid, p_epoch, seq)
        if low & CONTROL_MASK and codec <= CODEC_ZSTD:
            self._check_control(pos)
        return last if last > floor else max(floor, self.name_floor)

    def _check_offsets(self, pos: int, base: int, last: int, floor: int, field_name: str) -> None:
        add = self.findings.add
        if self.name_base is not None and base < self.name_base:
            add("offset-below-base", ERROR, pos, base,
                f"batch offset {base} is below the segment's base offset {self.name_base} (from the file name)",
                field=field_name)
        elif base <= floor:
            where = f" at byte {self.prev_position}" if self.prev_position is not None else ""
            add("offset-order", ERROR, pos, base,
                f"batch offsets {base}..{last} do not follow the previous batch{where}, whose last offset is {floor}",
                field=field_name)
        if last >= self.overflow_at:
            add("offset-overflow", WARNING, pos, base,
                f"last offset {last} is more than 2^31-1 above the segment's base offset {self.name_base}: "
                "an index cannot address it (Kafka's loader would split this segment)", field=field_name)

    def _check_producer_fields(self, pos: int, base: int, attrs: int, pid: int, p_epoch: int, seq: int) -> None:
        add = self.findings.add
        if attrs & TRANSACTIONAL_MASK and pid < 0:
            add("producer-fields", ERROR, pos, base,
                f"transactional batch without a producer id (producerId {pid})", field="batch.producer_id")
        elif pid >= 0 and p_epoch < 0:
            add("producer-fields", WARNING, pos, base,
                f"producer id {pid} with producer epoch {p_epoch}", field="batch.producer_epoch")
        elif pid < -1:
            add("producer-fields", WARNING, pos, base, f"producer id {pid} is neither -1 nor a valid id",
                field="batch.producer_id")
        # (no producer id with an epoch or a sequence set is common in real data: brokers wrote
        # __consumer_offsets batches with base sequence 0; it means nothing to Kafka)
        if seq < -1:
            add("producer-fields", WARNING, pos, base, f"base sequence {seq} is neither -1 nor a valid sequence",
                field="batch.base_sequence")

    def _check_control(self, pos: int) -> None:
        """Control records: keys, end-transaction markers, and the batch fields they need."""
        from kseg.errors import KsegError
        from kseg.format.control import (
            ABORT,
            COMMIT,
            UNKNOWN_CONTROL_TYPE,
            decode_control_key,
            decode_end_txn_marker,
        )
        from kseg.format.v2 import V2Batch

        batch = V2Batch(self.buf, pos)
        add = self.findings.add
        try:
            records = list(batch.iter_records())
        except KsegError as err:
            add("control-record", ERROR, pos, batch.base_offset,
                f"control batch records cannot be decoded: {_describe(err)}", field=err.field)
            return
        markers = 0
        for i, record in enumerate(records):
            try:
                key = decode_control_key(record.key)
                if key.type_id in (ABORT, COMMIT):
                    decode_end_txn_marker(record.value)
            except KsegError as err:
                add("control-record", ERROR, pos, record.offset,
                    f"record {i}: {err.message} (Kafka's recovery reads this record and would stop with an exception)",
                    field=f"record[{i}].{err.field}" if err.field else f"record[{i}]")
                continue
            if key.type_id == UNKNOWN_CONTROL_TYPE:
                add("control-record", WARNING, pos, record.offset,
                    f"record {i}: unknown control record type {key.raw_type}", field=f"record[{i}].key")
            elif key.type_id in (ABORT, COMMIT):
                markers += 1
                if not batch.is_transactional or batch.producer_id < 0:
                    add("control-record", ERROR, pos, record.offset,
                        f"record {i}: a {key.name} marker needs a transactional batch with a producer id "
                        f"(transactional={batch.is_transactional}, producerId {batch.producer_id})",
                        field="batch.attributes")
                elif key.type_id == ABORT:
                    self.aborts.append((record.offset, batch.producer_id))
        if markers and len(records) != 1:
            add("control-record", WARNING, pos, batch.base_offset,
                f"control batch holds {len(records)} records; Kafka writes one end-transaction marker per batch")

    def _check_legacy(self, batch: LegacyBatch) -> None:
        """A CRC-valid V0/V1 message: attributes, codec, offsets, and with --deep its inner messages."""
        pos, magic, attrs, codec = batch.position, batch.magic, batch.attributes, batch.codec_id
        add = self.findings.add
        last = batch.last_offset
        if codec > CODEC_ZSTD:
            add("bad-attributes", ERROR, pos, last,
                f"unknown compression codec id {codec} in attributes 0x{attrs:02x} "
                f"(Kafka: IllegalArgumentException: Unknown compression type id: {codec})", field="message.attributes")
        elif codec == CODEC_ZSTD:
            add("codec-for-magic", ERROR, pos, last,
                f"zstd compression is not allowed in magic {magic} (Kafka: Invalid wrapper compressionType "
                f"found in legacy deep record iterator {magic})", field="message.attributes")
        if magic == 0 and attrs & TIMESTAMP_TYPE_MASK:
            add("bad-attributes", WARNING, pos, last,
                "timestamp-type bit set in a magic 0 message, which has no timestamp (Kafka ignores it)",
                field="message.attributes")
        if attrs & 0xF0:
            add("bad-attributes", WARNING, pos, last,
                f"unused attribute bits set: 0x{attrs & 0xF0:02x} (Kafka ignores them)", field="message.attributes")
        base = last
        if self.deep and codec < CODEC_ZSTD:
            base = self._deep_legacy(batch)
        self._check_offsets(pos, base, last, self.floor, "message.offset")
        self.floor = last if last > self.floor else max(self.floor, self.name_floor)
        if self.first_offset is None:
            self.first_offset = base
        self.max_last = max(self.max_last, last)
        self.batches += 1
        if self.observe is not None:
            self.observe(pos, base, last, batch.max_timestamp)

    def _report_gap(self, gap: Gap) -> None:
        """One finding for what is wrong where the gap starts, and one for any resynchronisation."""
        from kseg.format.scan import BAD_CRC, BAD_MAGIC, BAD_SIZE, PARTIAL, SHORT_TAIL

        start, end, size, declared = gap.start, gap.end, gap.end - gap.start, gap.declared_size
        trailing = end == self.limit
        self.skipped += size
        kafka = ""
        if self.kafka_cut is None:
            self.kafka_cut = start
            kafka = f" Kafka's recovery would truncate the segment here, dropping {self.limit - start} bytes."
        add = self.findings.add
        offset = self._header_offset(start)
        magic = self.buf[start + 16] if start + 16 < self.limit else None
        magic = magic - 256 if magic is not None and magic > 127 else magic
        expected_end = None
        if gap.zero_filled and gap.reason != SHORT_TAIL:
            where = "running to the end of the file" if trailing else f"up to byte {end}, with data after it"
            add("zero-filled", ERROR, start, None,
                f"{size} zero bytes {where}: a preallocated or never-written region (a batch size of 0 is a "
                f"CorruptRecordException to Kafka).{kafka}", field="batch.batch_length", size=size)
            return
        if gap.reason == SHORT_TAIL:
            zeros = ", all zero," if gap.zero_filled else ""
            add("partial-batch", ERROR, start, None,
                f"{size} bytes at the end of the file{zeros} are too few for a batch header (17 bytes): data that "
                f"was written is incomplete.{kafka}", size=size)
            return
        if gap.reason == PARTIAL:
            total = LOG_OVERHEAD + (declared or 0)
            if trailing:
                add("partial-batch", ERROR, start, offset,
                    f"partial trailing batch of {size} bytes: its header declares {total} bytes; data that was "
                    f"written is incomplete.{kafka}", field="batch.batch_length", size=size)
                return
            add("bad-size", ERROR, start, offset,
                f"batch length {declared} runs past the end of the file ({self.limit - start} bytes left), "
                f"yet a valid batch follows at byte {end}.{kafka}", field="batch.batch_length", size=size)
        elif gap.reason == BAD_SIZE:
            minimum = MIN_LEGACY_SIZE.get(magic, MIN_V2_LENGTH) if magic is not None else MIN_V2_LENGTH
            kafka_view = (
                "Kafka's reader throws CorruptRecordException" if (declared or 0) < 14 else "Kafka's ensureValid fails"
            )
            add("short-batch", ERROR, start, offset,
                f"batch length {declared} is below the minimum length {minimum} for magic {magic} "
                f"({kafka_view}).{kafka}",
                field="batch.batch_length", size=size)
        elif gap.reason == BAD_MAGIC:
            add("bad-magic", ERROR, start, offset, f"magic byte {magic} is not 0, 1 or 2{self._v2_view(start)}.{kafka}",
                field="batch.magic", size=size)
            expected_end = start + LOG_OVERHEAD + declared if declared is not None and declared >= 0 else None
        elif gap.reason == BAD_CRC:
            add("crc", ERROR, start, offset, f"{self._crc_message(start)}.{kafka}",
                field="batch.crc" if magic == 2 else "message.crc", size=LOG_OVERHEAD + (declared or 0))
            expected_end = start + LOG_OVERHEAD + (declared or 0)
        if end != expected_end:
            resumed = f"resynchronised on the next valid batch at byte {end}" if not trailing else (
                "no valid batch follows")
            add("skipped-bytes", INFO, start, None, f"{resumed}: {size} bytes from byte {start} skipped", size=size)

    def _header_offset(self, start: int) -> int | None:
        if start + 8 > self.limit:
            return None
        return struct.unpack_from(">q", self.buf, start)[0]

    def _crc_message(self, start: int) -> str:
        """Kafka's ensureValid() message for the entry at ``start``."""
        from kseg.errors import KsegError
        from kseg.format import read_batch

        try:
            read_batch(self.buf, start).ensure_valid()
        except KsegError as err:
            return err.message
        return "CRC mismatch"

    def _v2_view(self, start: int) -> str:
        """Whether Kafka, which reads any magic above 2 as V2, would accept this entry."""
        from kseg.format.v2 import V2Batch

        if self.buf[start + 16] > 127:
            return ""
        batch = V2Batch(self.buf, start)
        if start + batch.size <= self.limit and batch.is_valid():
            return " (Kafka reads any magic above 2 as V2, and as V2 its CRC matches: Kafka would accept it)"
        return ""

    # -- --deep -------------------------------------------------------------------------------

    def _deep_v2(self, pos: int) -> None:
        """Decode every record of a V2 batch: decompression, count, offset deltas, maxTimestamp."""
        from kseg.errors import KsegError
        from kseg.format.v2 import V2Batch

        batch = V2Batch(self.buf, pos, self.view)
        if batch.codec_id > CODEC_ZSTD or batch.records_count < 0:
            return  # already reported from the header
        add = self.findings.add
        base, last = batch.base_offset, batch.last_offset
        previous = base - 1
        largest = -1
        decoded = 0
        order_reported = False
        try:
            for record in batch.iter_records():
                offset = record.offset
                if not order_reported and (offset <= previous or offset > last):
                    order_reported = True
                    if offset < base:
                        text = f"record {decoded} has a negative offset delta ({offset - base})"
                    elif offset > last:
                        text = f"record {decoded} has offset {offset}, beyond lastOffsetDelta (last offset {last})"
                    else:
                        text = f"record {decoded} has offset {offset}, not above the previous record's {previous}"
                    add("record-structure", ERROR, pos, offset, text, field=f"record[{decoded}].offset_delta")
                previous = offset
                largest = max(largest, record.timestamp)
                decoded += 1
        except KsegError as err:
            kind, severity = _decode_kind(err)
            add(kind, severity, pos, base, _describe(err), field=err.field)
            self.records += decoded
            return
        self.records += decoded
        if decoded and batch.timestamp_type == "CreateTime" and largest != batch.max_timestamp:
            add("max-timestamp", ERROR, pos, base,
                f"maxTimestamp {batch.max_timestamp} is not the largest record timestamp {largest}",
                field="batch.max_timestamp")

    def _deep_legacy(self, batch: LegacyBatch) -> int:
        """Decode a V0/V1 message's records, checking every inner CRC; returns the first offset."""
        from kseg.errors import KsegError

        pos, last = batch.position, batch.last_offset
        add = self.findings.add
        try:
            records = batch.records()
        except KsegError as err:
            kind, severity = _decode_kind(err)
            add(kind, severity, pos, last, _describe(err), field=err.field)
            return last
        self.records += len(records)
        if batch.codec_id == 0:
            return last
        previous = None
        for i, record in enumerate(records):
            if record.valid is False:
                add("crc", ERROR, pos, record.offset,
                    f"inner message {i} (offset {record.offset}) fails its CRC-32 (stored crc = {record.crc})",
                    field=f"inner[{i}].crc")
            if record.magic != batch.magic:
                add("record-structure", WARNING, pos, record.offset,
                    f"inner message {i} has magic {record.magic} inside a magic {batch.magic} wrapper "
                    "(Kafka reads it; produce validation would reject it)", field=f"inner[{i}].magic")
            if previous is not None and record.offset <= previous:
                add("record-structure", ERROR, pos, record.offset,
                    f"inner message {i} has offset {record.offset}, not above the previous {previous}",
                    field=f"inner[{i}].offset")
            previous = record.offset
        if records[-1].offset != last:
            add("record-structure", ERROR, pos, last,
                f"wrapper offset {last} is not the last inner offset {records[-1].offset}", field="message.offset")
        if batch.magic == 1 and batch.timestamp_type == "CreateTime":
            largest = max(r.timestamp for r in records)
            if largest != batch.max_timestamp:
                add("max-timestamp", ERROR, pos, last,
                    f"wrapper timestamp {batch.max_timestamp} is not the largest inner timestamp {largest}",
                    field="message.timestamp")
        return records[0].offset


def _decode_kind(err: KsegError) -> tuple[str, str]:
    """Finding kind and severity for an error raised while decoding records."""
    from kseg.errors import CodecError, LimitExceeded, Unsupported

    if isinstance(err, LimitExceeded):
        return "decompress", WARNING
    if isinstance(err, (CodecError, Unsupported)):
        return "decompress", ERROR
    if err.message.startswith(("Incorrect declared batch size", "Found invalid record count")):
        return "record-count", ERROR
    return "record-structure", ERROR


def _describe(err: KsegError) -> str:
    """An error's message and, when it is more precise than the batch position, its byte."""
    where = f" (at byte {err.offset})" if err.offset is not None else ""
    return f"{err.message}{where}"


def walk_log(
    path: str,
    *,
    name_base: int | None,
    deep: bool = False,
    observe: Observer | None = None,
    progress: Callable[[int], None] | None = None,
) -> tuple[LogWalk, int]:
    """Map ``path`` read-only and walk it; returns the finished walk and the file size."""
    with ReadOnlyMap(path) as mapped:
        walk = LogWalk(path, mapped.buf, name_base=name_base, deep=deep, observe=observe, progress=progress)
        try:
            walk.run()
        finally:
            walk.close()
    return walk, mapped.size
