"""Convert benchmark (issue 7): V1-gzip -> V2-zstd and V2 -> V2-lz4 on a 256 MiB segment.

Generates two segments in a temporary directory, each made of one template
batch repeated with increasing offsets (only the offset field changes, which
no CRC covers): a magic-1 segment of gzip wrappers and a magic-2 segment of
uncompressed batches, both of ~16 KiB of records (Kafka's default producer
``batch.size``) with JSON-like values that compress about 4:1.  It reads each
once so it sits in the page cache, then times :func:`kseg.ops.convert.convert_path`
end to end (walk, CRC checks, decompression, record decoding, re-encoding,
compression, writing, index build) and reports MB/s of input and records/s.

For scale it also times the codecs alone on the same bytes: gzip
decompression of every wrapper's value, zstd and lz4 compression of every
batch's records (the floor set by the codec libraries, without any Kafka
format work).

Usage: python bench/bench_convert.py [size_mib] [--repeat N]
Speed numbers live here, never in tests.
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import struct
import tempfile
import time
from pathlib import Path

from kseg.format import RecordSpec, encode_batch
from kseg.format import compression as codecs
from kseg.format.v0v1 import LegacyBatch
from kseg.ops.convert import Target, convert_path

TS = 1_700_000_000_000
BATCH_BYTES = 16 * 1024
NAME = "00000000000000000000.log"


def value(rng: random.Random, i: int) -> bytes:
    """A JSON-ish event of ~200 bytes: repetitive keys, varying numbers and ids (compresses ~4:1)."""
    event = {
        "event_id": f"{rng.getrandbits(64):016x}",
        "user": f"user-{rng.randrange(100000):05d}",
        "action": rng.choice(["view", "click", "purchase", "scroll", "search"]),
        "amount": round(rng.random() * 1000, 2),
        "ts": TS + i,
        "tags": rng.sample(["a", "b", "c", "d", "e", "f", "g"], 3),
    }
    return json.dumps(event).encode()


def template_records() -> list[RecordSpec]:
    rng = random.Random(7)
    records, size = [], 0
    while size < BATCH_BYTES:
        i = len(records)
        spec = RecordSpec(i, TS + i, b"user-%05d" % rng.randrange(100000), value(rng, i))
        records.append(spec)
        size += len(spec.key) + len(spec.value) + 30
    return records


def write_segment(path: Path, template: bytes, per_batch: int, size: int, offset_is_last: bool) -> int:
    """Repeat ``template`` up to ``size`` bytes, patching its offset; returns the record count."""
    batch = bytearray(template)
    count = 0
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as out:
        written = 0
        while written + len(batch) <= size:
            first = count
            struct.pack_into(">q", batch, 0, first + per_batch - 1 if offset_is_last else first)
            out.write(batch)
            written += len(batch)
            count += per_batch
    return count


def warm(path: Path) -> None:
    with open(path, "rb", buffering=0) as f:
        while f.read(8 * 1024 * 1024):
            pass


def peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def time_convert(src: Path, out: Path, target: Target, repeat: int) -> float:
    best = float("inf")
    for i in range(repeat):
        dest = out / str(i)
        start = time.perf_counter()
        convert_path(src, dest, target)
        best = min(best, time.perf_counter() - start)
        for p in dest.iterdir():
            p.unlink()
    return best


def codec_floor(v1_wrapper: bytes, v2_records: bytes, batches: int) -> dict[str, float]:
    """Seconds the codecs alone take for the whole segment (one batch timed, times the batch count)."""
    # a V1 wrapper: 12-byte log overhead, crc, magic, attributes, timestamp, key length -1, value length
    assert LegacyBatch(v1_wrapper, 0).codec == "gzip"
    value_bytes = v1_wrapper[12 + 4 + 1 + 1 + 8 + 4 + 4 :]
    timings = {}
    for name, fn in {
        "gzip decompress (V1 wrappers)": lambda: codecs.decompress(codecs.CODEC_GZIP, value_bytes, magic=1),
        "zstd compress (V2 records)": lambda: codecs.compress(codecs.CODEC_ZSTD, v2_records, magic=2),
        "lz4 compress (V2 records)": lambda: codecs.compress(codecs.CODEC_LZ4, v2_records, magic=2),
    }.items():
        runs = 50
        start = time.perf_counter()
        for _ in range(runs):
            fn()
        timings[name] = (time.perf_counter() - start) / runs * batches
    return timings


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("size_mib", nargs="?", type=int, default=256)
    parser.add_argument("--repeat", type=int, default=1)
    args = parser.parse_args()
    size = args.size_mib * 1024 * 1024
    records = template_records()
    v1 = encode_batch(records, magic=1, codec="gzip")
    v2 = encode_batch(records)
    with tempfile.TemporaryDirectory(prefix="kseg-bench-convert-") as tmp:
        root = Path(tmp)
        cases = {
            "V1-gzip -> V2-zstd": (root / "v1-0" / NAME, v1, True, Target(2, codecs.CODEC_ZSTD)),
            "V2-none -> V2-lz4": (root / "v2-0" / NAME, v2, False, Target(2, codecs.CODEC_LZ4)),
        }
        print(f"{len(records)} records per batch; V1 gzip wrapper {len(v1)} bytes, V2 batch {len(v2)} bytes")
        for label, (path, template, offset_is_last, target) in cases.items():
            count = write_segment(path, template, len(records), size, offset_is_last)
            warm(path)
            seconds = time_convert(path, root / "out", target, args.repeat)
            mib = path.stat().st_size / 2**20
            print(
                f"{label:<20} {mib:7.1f} MiB in {seconds:6.2f} s: {mib / seconds:7.1f} MiB/s, "
                f"{count / seconds / 1e3:7.1f} k records/s"
            )
            path.unlink()
        batches = size // len(v1)
        for name, seconds in codec_floor(v1, v2[61:], batches).items():
            print(f"  codec alone: {name:<32} {seconds:6.2f} s for the same {batches} batches")
        print(f"peak RSS {peak_rss_mib():.0f} MiB")


if __name__ == "__main__":
    main()
