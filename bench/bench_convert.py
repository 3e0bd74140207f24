"""Convert benchmark (issues 7, 16): V1-gzip -> V2-zstd and V2 -> V2-lz4 on a 256 MiB segment.

Generates two segments in a temporary directory, each made of one template
batch repeated with increasing offsets (only the offset field changes, which
no CRC covers): a magic-1 segment of gzip wrappers and a magic-2 segment of
uncompressed batches, both of ~16 KiB of records (Kafka's default producer
``batch.size``) with JSON-like values that compress about 4:1.  It reads each
once so it sits in the page cache, then times :func:`kseg.ops.convert.run.convert_path`
end to end (walk, CRC checks, decompression, record decoding, re-encoding,
compression, writing, index build) in a child process, with the compiled core
and with ``KSEG_PURE=1``, and reports MiB/s of input, CPU time (user + system)
beside wall time, and the load average.

In the same run it times the codecs alone on the same bytes: gzip
decompression of every wrapper's value and zstd compression of every batch's
records (the V1 case), lz4 compression of every batch's records (the V2 case)
-- the floor set by the codec libraries, without any Kafka format work.

Usage: python bench/bench_convert.py [size_mib] [--repeat N] [--no-pure]
Speed numbers live here, never in tests.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # this tree's kseg, whatever is installed

from kseg.format import RecordSpec, encode_batch  # noqa: E402
from kseg.format import compression as codecs  # noqa: E402
from kseg.format.v0v1 import LegacyBatch  # noqa: E402

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


#: The child: convert once, print its own wall and CPU seconds (start-up and imports left out).
CHILD = """
import json, resource, sys, time
from kseg.format._core import STATUS
from kseg.ops.convert.run import Target, convert_path
src, out, magic, codec = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
usage = resource.getrusage(resource.RUSAGE_SELF)
cpu, start = usage.ru_utime + usage.ru_stime, time.perf_counter()
convert_path(src, out, Target(magic, codec))
wall = time.perf_counter() - start
usage = resource.getrusage(resource.RUSAGE_SELF)
print(json.dumps({"wall": wall, "cpu": usage.ru_utime + usage.ru_stime - cpu, "status": STATUS,
                  "rss_mib": usage.ru_maxrss / 1024}))
"""


def time_convert(src: Path, out: Path, magic: int, codec: int, repeat: int, pure: bool) -> dict[str, float | str]:
    """Best wall and CPU time of ``repeat`` conversions in a child process (core, or KSEG_PURE=1)."""
    env = {k: v for k, v in os.environ.items() if k not in ("KSEG_PURE", "PYTHONDONTWRITEBYTECODE")}
    env["PYTHONPATH"] = str(ROOT)
    if pure:
        env["KSEG_PURE"] = "1"
    best: dict[str, float | str] = {}
    for i in range(repeat):
        dest = out / f"{'pure' if pure else 'core'}-{i}"
        argv = [sys.executable, "-c", CHILD, str(src), str(dest), str(magic), str(codec)]
        done = subprocess.run(argv, capture_output=True, text=True, env=env, check=False)
        if done.returncode != 0:
            sys.exit(f"convert exited {done.returncode}: {done.stderr[-800:]}")
        result = json.loads(done.stdout)
        if not best or result["wall"] < best["wall"]:
            best = result
        for p in dest.iterdir():
            p.unlink()
    return best


def codec_floor(v1_wrapper: bytes, v2_records: bytes, batches: int, repeat: int) -> dict[str, tuple[float, float]]:
    """(wall, CPU) seconds the codecs alone take for the whole segment, each of its batches done once."""
    # a V1 wrapper: 12-byte log overhead, crc, magic, attributes, timestamp, key length -1, value length
    assert LegacyBatch(v1_wrapper, 0).codec == "gzip"
    value_bytes = v1_wrapper[12 + 4 + 1 + 1 + 8 + 4 + 4 :]
    jobs = {
        "gzip decompress (V1 wrappers)": lambda: codecs.decompress(codecs.CODEC_GZIP, value_bytes, magic=1),
        "zstd compress (V2 records)": lambda: codecs.compress(codecs.CODEC_ZSTD, v2_records, magic=2),
        "lz4 compress (V2 records)": lambda: codecs.compress(codecs.CODEC_LZ4, v2_records, magic=2),
    }
    timings = {}
    for name, fn in jobs.items():
        best = (float("inf"), float("inf"))
        for _ in range(repeat):
            cpu, start = time.process_time(), time.perf_counter()
            for _ in range(batches):
                fn()
            best = min(best, (time.perf_counter() - start, time.process_time() - cpu))
        timings[name] = best
    return timings


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("size_mib", nargs="?", type=int, default=256)
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--no-pure", action="store_true", help="leave out the (slow) KSEG_PURE=1 runs")
    args = parser.parse_args()
    size = args.size_mib * 1024 * 1024
    records = template_records()
    v1 = encode_batch(records, magic=1, codec="gzip")
    v2 = encode_batch(records)
    batches = size // len(v1)
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    floor = codec_floor(v1, v2[61:], batches, args.repeat)
    with tempfile.TemporaryDirectory(prefix="kseg-bench-convert-") as tmp:
        root = Path(tmp)
        cases = {
            "V1-gzip -> V2-zstd": (root / "v1-0" / NAME, v1, True, codecs.CODEC_ZSTD,
                                   ("gzip decompress (V1 wrappers)", "zstd compress (V2 records)")),
            "V2-none -> V2-lz4": (root / "v2-0" / NAME, v2, False, codecs.CODEC_LZ4, ("lz4 compress (V2 records)",)),
        }
        print(f"{len(records)} records per batch; V1 gzip wrapper {len(v1)} bytes, V2 batch {len(v2)} bytes")
        for label, (path, template, offset_is_last, codec, codec_names) in cases.items():
            count = write_segment(path, template, len(records), size, offset_is_last)
            warm(path)
            mib = path.stat().st_size / 2**20
            n = size // len(template)
            wall = sum(floor[c][0] for c in codec_names) * n / batches
            cpu = sum(floor[c][1] for c in codec_names) * n / batches
            print(f"{label}: {mib:.1f} MiB, {count} records, {n} batches")
            print(f"  codecs alone ({' + '.join(codec_names)}): {cpu:6.2f} s CPU ({wall:6.2f} wall): "
                  f"{mib / wall:7.1f} MiB/s")
            for pure in (False, True) if not args.no_pure else (False,):
                run = time_convert(path, root / "out", 2, codec, args.repeat, pure)
                assert isinstance(run["wall"], float) and isinstance(run["cpu"], float)
                print(f"  {'KSEG_PURE=1' if pure else 'core':<12} {run['cpu']:6.2f} s CPU ({run['wall']:6.2f} wall): "
                      f"{mib / run['wall']:7.1f} MiB/s wall, {mib / run['cpu']:7.1f} MiB/s CPU, "
                      f"{count / run['wall'] / 1e3:7.1f} k records/s; {run['cpu'] / cpu:4.2f}x the codecs' CPU; "
                      f"peak RSS {run['rss_mib']:.0f} MiB [{run['status']}]")
            path.unlink()
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
