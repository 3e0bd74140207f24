"""Format-core benchmark: batch walk with CRC-32C, and full record decode.

Generates a V2 segment of 16 KiB batches of ~100-byte records (default 256 MiB)
in a temporary directory, reads it once so it sits in the page cache, then
measures on one core, in the same run:

* kseg: walking batch headers with the CRC-32C check of every batch (GB/s);
* kseg: decoding every record (records/s);
* kafka-python's reader on the same bytes: its CRC walk and its record decode.

Usage: python bench/bench_format.py [size_mib] [--decode-mib N]
Speed targets live here, never in tests.
"""

from __future__ import annotations

import argparse
import mmap
import os
import struct
import tempfile
import time
from pathlib import Path

from kseg.format import RecordSpec, encode_batch
from kseg.segment import open_segment

BATCH_BYTES = 16 * 1024
RECORD_VALUE = 100


def make_segment(path: Path, size: int) -> int:
    """Write ``size`` bytes of 16 KiB batches; returns records per batch.

    One batch is encoded, then copied with a new base offset: the base offset is
    outside the CRC, so every copy stays valid.
    """
    records = []
    ts = 1_700_000_000_000
    while True:
        i = len(records)
        records.append(RecordSpec(i, ts + i, b"key-%06d" % i, os.urandom(RECORD_VALUE // 2).hex().encode()[:RECORD_VALUE]))
        if len(encode_batch(records)) > BATCH_BYTES:
            records.pop()
            break
    template = bytearray(encode_batch(records))
    per_batch = len(records)
    with open(path, "wb") as out:
        written, base = 0, 0
        while written + len(template) <= size:
            struct.pack_into(">q", template, 0, base)
            out.write(template)
            written += len(template)
            base += per_batch
    return per_batch


def bench_kseg_walk(path: Path) -> tuple[float, int]:
    start = time.perf_counter()
    batches = 0
    with open_segment(path) as seg:
        for batch in seg.walk():
            if not batch.is_valid():
                raise SystemExit(f"invalid batch at {batch.position}")
            batches += 1
    return time.perf_counter() - start, batches


def bench_kseg_decode(path: Path, limit: int) -> tuple[float, int]:
    start = time.perf_counter()
    records = 0
    with open_segment(path) as seg:
        for batch in seg.walk(0, limit):
            for _ in batch.iter_records():
                records += 1
    return time.perf_counter() - start, records


def bench_kafka_python(path: Path, limit: int, decode: bool) -> tuple[float, int] | None:
    try:
        from kafka.record import MemoryRecords
    except ImportError:
        return None
    with open(path, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as mm:
        data = memoryview(mm)[:limit] if decode else memoryview(mm)
        start = time.perf_counter()
        count = 0
        records = MemoryRecords(data)
        while records.has_next():
            batch = records.next_batch()
            if decode:
                for _ in batch:
                    count += 1
            else:
                if not batch.validate_crc():
                    raise SystemExit("kafka-python: invalid CRC")
                count += 1
        elapsed = time.perf_counter() - start
        del data, records, batch
    return elapsed, count


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("size_mib", nargs="?", type=int, default=256)
    parser.add_argument("--decode-mib", type=int, default=32, help="bytes to decode record by record")
    args = parser.parse_args()
    size = args.size_mib * 1024 * 1024
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "00000000000000000000.log"
        per_batch = make_segment(path, size)
        actual = path.stat().st_size
        path.read_bytes()  # into the page cache
        decode_limit = min(actual, args.decode_mib * 1024 * 1024)
        print(f"segment: {actual / 2**20:.0f} MiB, 16 KiB batches, {per_batch} records of ~{RECORD_VALUE} B each")
        t, n = min(bench_kseg_walk(path) for _ in range(3))
        print(f"kseg   batch walk + CRC-32C : {actual / t / 1e9:6.2f} GB/s   ({n} batches, {t * 1000:.0f} ms)")
        kp = bench_kafka_python(path, actual, decode=False)
        if kp:
            print(f"kafka-python CRC walk       : {actual / kp[0] / 1e9:6.2f} GB/s   ({kp[0] * 1000:.0f} ms)")
        t, n = bench_kseg_decode(path, decode_limit)
        print(f"kseg   record decode        : {n / t / 1e6:6.3f} M records/s ({n} records)")
        kp = bench_kafka_python(path, decode_limit, decode=True)
        if kp:
            print(f"kafka-python record decode  : {kp[1] / kp[0] / 1e6:6.3f} M records/s ({kp[1]} records)")


if __name__ == "__main__":
    main()
