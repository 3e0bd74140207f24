"""Reindex benchmark: rebuild .index/.timeindex of a 256 MiB segment.

Generates a V2 segment of ~16 KiB batches (Kafka's default producer
``batch.size``) with increasing timestamps, so both indexes get an entry at
every index point, in a temporary directory; reads it once so it sits in the
page cache; then times :func:`kseg.ops.reindex.run.build_indexes` over the mapped
file (the header walk, a CRC-32C of every batch, the index rules) and reports
GB/s and the peak resident set size of this process before and after.  For
scale it also times one CRC-32C over the whole freshly mapped file: the
floor set by mapping the pages and checksumming them, without any per-batch work.

Usage: python bench/bench_reindex.py [size_mib] [--batch-kib N] [--repeat N]
Speed targets live here, never in tests (target: >= 4 GB/s, memory flat).
"""

from __future__ import annotations

import argparse
import os
import resource
import struct
import tempfile
import time
from pathlib import Path

from kseg.format import RecordSpec, encode_batch
from kseg.format.crc import crc32c
from kseg.recovery.indexes import build_indexes
from kseg.segment import MappedFile

RECORD_VALUE = 100
BASE_TIMESTAMP_AT, MAX_TIMESTAMP_AT, CRC_AT, CRC_FROM = 27, 35, 17, 21


def template_batch(batch_bytes: int) -> tuple[bytearray, int]:
    """One uncompressed batch of ~``batch_bytes`` and its record count."""
    records: list[RecordSpec] = []
    ts = 1_700_000_000_000
    while True:
        i = len(records)
        value = os.urandom(RECORD_VALUE // 2).hex().encode()
        records.append(RecordSpec(i, ts + i, b"key-%06d" % i, value))
        if len(encode_batch(records)) > batch_bytes:
            records.pop()
            break
    return bytearray(encode_batch(records)), len(records)


def make_segment(path: Path, size: int, batch_bytes: int) -> int:
    """Write ``size`` bytes of batches whose offsets and timestamps increase; returns the batch count."""
    batch, per_batch = template_batch(batch_bytes)
    first_ts, max_ts = struct.unpack_from(">qq", batch, BASE_TIMESTAMP_AT)
    span = max_ts - first_ts
    batches = 0
    with open(path, "wb") as out:
        written = 0
        while written + len(batch) <= size:
            ts = 1_700_000_000_000 + batches * (span + 1)
            struct.pack_into(">q", batch, 0, batches * per_batch)
            struct.pack_into(">qq", batch, BASE_TIMESTAMP_AT, ts, ts + span)
            struct.pack_into(">I", batch, CRC_AT, crc32c(memoryview(batch)[CRC_FROM:]))
            out.write(batch)
            written += len(batch)
            batches += 1
    return batches


def warm_page_cache(path: Path) -> None:
    """Read the file once, in chunks, so it is in the page cache without being held in memory."""
    with open(path, "rb", buffering=0) as f:
        while f.read(8 * 1024 * 1024):
            pass


def peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("size_mib", nargs="?", type=int, default=256)
    parser.add_argument("--batch-kib", type=int, default=16)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "00000000000000000000.log"
        batches = make_segment(path, args.size_mib * 1024 * 1024, args.batch_kib * 1024)
        size = path.stat().st_size
        warm_page_cache(path)
        rss_before = peak_rss_mib()
        best = float("inf")
        for _ in range(args.repeat):
            with MappedFile(path) as mapped:
                start = time.perf_counter()
                build = build_indexes(mapped.buf, 0)
                best = min(best, time.perf_counter() - start)
        rss_after = peak_rss_mib()
        floor = float("inf")
        for _ in range(args.repeat):
            with MappedFile(path) as mapped:
                view = memoryview(mapped.buf)
                start = time.perf_counter()
                crc32c(view)
                floor = min(floor, time.perf_counter() - start)
                view.release()
        assert build.valid_bytes == size and build.batches == batches
        print(f"segment: {size / 2**20:.0f} MiB, {batches} batches of ~{args.batch_kib} KiB")
        print(f"entries: {len(build.offset_entries)} offset, {len(build.time_entries)} time")
        print(f"reindex: {size / best / 1e9:.2f} GB/s ({best * 1000:.1f} ms, best of {args.repeat})")
        print(f"floor:   {size / floor / 1e9:.2f} GB/s (one CRC-32C over the whole fresh mapping: page faults + CRC)")
        print(f"peak RSS: {rss_before:.0f} MiB before the reindex walks, {rss_after:.0f} MiB after")


if __name__ == "__main__":
    main()
