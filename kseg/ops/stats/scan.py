"""One partition directory walked once: batch headers always, records of a sample with ``--records``.

The header pass is verify's fast path -- :meth:`kseg.format.walk.BatchWalk.frames`, one tuple
per batch from the compiled core -- so ``kseg stats`` reads at verify's speed.  Record-level
counts (tombstones, keys, header keys, compression ratio) go through the core's record
scanner (:meth:`kseg.format.v2.V2Batch.scan`) for every ``sample``-th batch.  Control
batches are always read (a marker's type is in its record key): they are few.
"""

from __future__ import annotations

import os
from pathlib import Path

from kseg.format.control import decode_control_key
from kseg.format.layout import (
    CODEC_MASK,
    CONTROL_MASK,
    RECORD_BATCH_OVERHEAD,
    TIMESTAMP_TYPE_MASK,
    TRANSACTIONAL_MASK,
)
from kseg.format.model import codec_name
from kseg.format.records import KEY_LENGTH, VALUE_LENGTH
from kseg.format.v0v1 import LegacyBatch
from kseg.format.v2 import V2Batch
from kseg.format.walk import BatchWalk
from kseg.ops.discover import file_kind, partition_files, segment_logs
from kseg.ops.stats.hll import HyperLogLog
from kseg.ops.stats.model import BUCKET_MS, SegmentStats, Tally
from kseg.segment import MappedFile, base_offset_from_name

CONTROL_ABORT, CONTROL_COMMIT = 0, 1
TIME_ENTRY_SIZE = 12


class _Txns:
    """Per producer, whether its transaction is open: a transactional batch with no marker after it yet."""

    def __init__(self) -> None:
        self.open: dict[int, bool] = {}

    def data(self, producer_id: int) -> None:
        self.open[producer_id] = True

    def marker(self, producer_id: int) -> None:
        self.open[producer_id] = False

    def count(self) -> int:
        return sum(self.open.values())


def scan_partition(directory: Path, tally: Tally, *, now_ms: int, max_message_bytes: int, records: bool,
                   sample: int, only: frozenset[Path] | None = None,
                   recovered_from: int | None = None) -> list[SegmentStats]:
    """Count every batch of the partition into ``tally``; the per-segment facts retention needs.

    ``only``: the segment ``.log`` files named on the command line, when not the whole directory: then
    ``bytes`` counts those segments' own files (``.log``, its indexes, its snapshot).
    ``recovered_from``: after an unclean shutdown, the base offset from which the next start recovers
    the segments (:func:`recovered_largest_timestamp` then applies to them).
    """
    logs = [log for log in segment_logs(directory) if only is None or log in only]
    bases = {log.name[:20] for log in logs}
    tally.bytes = sum(p.stat().st_size for p in partition_files(directory) if only is None or p.name[:20] in bases)
    if records:
        tally.keys = HyperLogLog()
    txns = _Txns()
    segments = []
    for log in logs:
        segment = _scan_segment(log, tally, txns, now_ms=now_ms, max_message_bytes=max_message_bytes,
                                records=records, sample=sample)
        if recovered_from is not None and segment.base_offset >= recovered_from:
            segment.largest_timestamp, segment.largest_timestamp_from = recovered_largest_timestamp(segment)
        segments.append(segment)
    tally.segments = len(segments)
    tally.open_transactions = txns.count()
    return segments


def _scan_segment(log: Path, tally: Tally, txns: _Txns, *, now_ms: int, max_message_bytes: int, records: bool,
                  sample: int) -> SegmentStats:
    base = base_offset_from_name(log)
    assert base is not None  # segment_logs keeps only named segments
    stat = log.stat()
    seg = SegmentStats(str(log), base, stat.st_size, mtime_ms=stat.st_mtime_ns // 1_000_000)
    with MappedFile(log) as mapped:
        buf = mapped.buf
        walk = BatchWalk(buf, strict=False)
        view = memoryview(buf) if records else None
        try:
            for pos, nxt, magic, header, _ in walk.frames():
                mapped.release(pos)  # the pages walked past go back: flat memory, whatever the file's size
                size = nxt - pos
                if header is None:
                    _legacy(buf, pos, size, magic, tally, seg, now_ms)
                else:
                    _v2(header, size, tally, seg, txns, now_ms)
                    if header[5] & CONTROL_MASK:
                        _control(buf, pos, header, tally, txns)
                    elif records and (tally.batches - 1) % sample == 0:
                        _records(V2Batch(buf, pos, view), size, tally)
                tally.largest_batch = max(tally.largest_batch, size)
                if size > max_message_bytes:
                    tally.over_max_message_bytes += 1
                seg.batches += 1
        finally:
            if view is not None:
                view.release()
        tally.log_bytes += len(buf)  # a partial tail takes disk space too
        if walk.end is not None:
            tally.tail_bytes += walk.end.remaining
        seg.walk_end = walk.end.reason if walk.end is not None else "end"
    seg.largest_timestamp, seg.largest_timestamp_from = kafka_largest_timestamp(log, seg)
    return seg


def _timeline(tally: Tally, timestamp: int, records: int, size: int) -> None:
    if timestamp >= 0:
        bucket = timestamp - timestamp % BUCKET_MS
        tally.timeline[bucket] += records
        tally.timeline_bytes[bucket] += size


def _v2(header: tuple[int, ...], size: int, tally: Tally, seg: SegmentStats, txns: _Txns, now_ms: int) -> None:
    attributes, count, producer_id, max_ts = header[5], header[12], header[9], header[8]
    codec = codec_name(attributes & CODEC_MASK)
    tally.batches += 1
    count = max(count, 0)
    tally.records += count
    seg.records += count
    tally.codecs[codec] += 1
    tally.codec_bytes[codec] += size
    tally.magics["2"] += 1
    tally.timestamp_types["LogAppendTime" if attributes & TIMESTAMP_TYPE_MASK else "CreateTime"] += 1
    if producer_id >= 0:
        tally.producers.add(producer_id)
        tally.see_producer(producer_id, count, max_ts)
        tally.idempotent_batches += 1
        if attributes & TRANSACTIONAL_MASK:
            tally.transactional_batches += 1
            tally.transactional_producers.add(producer_id)
            if not attributes & CONTROL_MASK:
                txns.data(producer_id)
    tally.see_timestamp(max_ts)
    _timeline(tally, max_ts, count, size)
    seg.max_timestamp = max(seg.max_timestamp, max_ts)
    seg.next_offset = header[0] + header[6] + 1
    if max_ts > now_ms:
        tally.future_batches += 1
        seg.future_batches += 1


def _legacy(buf: object, pos: int, size: int, magic: int, tally: Tally, seg: SegmentStats, now_ms: int) -> None:
    """A magic 0/1 entry: one message, or a compressed wrapper whose inner count needs decompressing."""
    batch = LegacyBatch(buf, pos)  # type: ignore[arg-type]
    tally.batches += 1
    count = 1
    if batch.codec_id:
        try:
            count = batch.last_offset - batch.first_offset() + 1
        except Exception:  # a wrapper that does not decompress: counted as one entry, verify says why
            count = 1
    tally.records += count
    seg.records += count
    tally.codecs[batch.codec] += 1
    tally.codec_bytes[batch.codec] += size
    tally.magics[str(magic)] += 1
    tally.timestamp_types[batch.timestamp_type] += 1
    ts = batch.max_timestamp
    tally.see_timestamp(ts)
    _timeline(tally, ts, count, size)
    seg.max_timestamp = max(seg.max_timestamp, ts)
    seg.next_offset = batch.last_offset + 1
    if ts > now_ms:
        tally.future_batches += 1
        seg.future_batches += 1


def _control(buf: object, pos: int, header: tuple[int, ...], tally: Tally, txns: _Txns) -> None:
    """A control batch: COMMIT or ABORT (the key of its one record) ends the producer's transaction."""
    tally.control_batches += 1
    scan = V2Batch(buf, pos).scan()  # type: ignore[arg-type]
    if scan is None:
        return
    keys = scan.keys()
    for key in keys:
        try:
            kind = decode_control_key(key).type_id
        except Exception:  # an undecodable key: counted as a control batch only
            continue
        if kind == CONTROL_COMMIT:
            tally.commits += 1
        elif kind == CONTROL_ABORT:
            tally.aborts += 1
    txns.marker(header[9])


def _records(batch: V2Batch, size: int, tally: Tally) -> None:
    """Record-level counts of one (sampled) batch through the core's scanner."""
    scan = batch.scan()
    if scan is None:
        return
    tally.scanned_batches += 1
    tally.scanned_records += scan.count
    if batch.codec_id:
        tally.compressed_bytes += size
        tally.uncompressed_bytes += RECORD_BATCH_OVERHEAD + len(scan.buf)  # the records, decompressed
    key_lengths, value_lengths = scan.column(KEY_LENGTH), scan.column(VALUE_LENGTH)
    tally.tombstones += sum(1 for n in value_lengths if n < 0)
    tally.null_keys += sum(1 for n in key_lengths if n < 0)
    biggest = max((max(k, 0) + max(v, 0) for k, v in zip(key_lengths, value_lengths, strict=True)), default=0)
    tally.largest_record = max(tally.largest_record, biggest)
    assert tally.keys is not None
    keys = scan.keys()
    for key in keys:
        if key is not None:
            tally.keys.add(bytes(key))
    for headers in scan.headers():
        for name, _ in headers:
            tally.header_keys[bytes(name).decode("utf-8", "backslashreplace")] += 1


def kafka_largest_timestamp(log: Path, seg: SegmentStats) -> tuple[int, str]:
    """``LogSegment.largestTimestamp()`` as a broker that loaded this segment cleanly sees it.

    Kafka 4.3.0 reads it lazily from the last entry of the ``.timeindex`` (``TimeIndex.lastEntry``:
    the last whole 12-byte slot of the file; ``-1`` when the file is empty) and, when that is
    negative, falls back to the ``.log`` file's last-modified time.  A missing ``.timeindex`` is
    rebuilt at load (``LogSegment.recover``), after which the largest batch timestamp counts.
    """
    timeindex = log.with_suffix(".timeindex")
    if not timeindex.is_file() or file_kind(timeindex) != "timeindex":
        return recovered_largest_timestamp(seg)
    size = os.stat(timeindex).st_size
    slots = size // TIME_ENTRY_SIZE
    if slots == 0:
        return seg.mtime_ms, "mtime"
    with MappedFile(timeindex) as mapped:
        last = int.from_bytes(mapped.buf[(slots - 1) * TIME_ENTRY_SIZE : (slots - 1) * TIME_ENTRY_SIZE + 8], "big",
                              signed=True)
    if last < 0:
        return seg.mtime_ms, "mtime"
    return last, "timeindex"


def recovered_largest_timestamp(seg: SegmentStats) -> tuple[int, str]:
    """``LogSegment.largestTimestamp()`` of a segment the next start recovers (``LogSegment.recover``
    recomputes the largest timestamp from the batches; -1, no timestamp, falls back to the file's mtime)."""
    return (seg.max_timestamp, "batches") if seg.max_timestamp >= 0 else (seg.mtime_ms, "mtime")
