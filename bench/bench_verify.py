"""``kseg verify`` benchmark: a whole verify run as a process, against kafka-python and cat.

Generates a V2 segment of 16 KiB batches (default 1 GiB) in a temporary
directory, reads it once so it sits in the page cache, then measures in the
same run, best of ``--runs``:

* ``kseg verify FILE`` as a process (start-up included);
* kafka-python's CRC walk as a process (``kafka.record.MemoryRecords`` over an
  mmap of the file, ``validate_crc()`` per batch);
* ``cat FILE > /dev/null``;
* ``kseg --help`` (start-up alone);
* in-process batch-level verify (``kseg.ops.verify.verify_paths``), in GB/s.

Targets: in-process >= 5 GB/s; the kseg process >= 2x faster than
kafka-python's and <= ~3x as long as cat; ``kseg --help`` well under 200 ms.
Speed targets live here, never in tests.

Processes run without ``PYTHONDONTWRITEBYTECODE`` so that, as in any normal
install, modules load from cached bytecode (one warm-up run writes it).

Usage: python bench/bench_verify.py [size_mib] [--runs N]
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BATCH_BYTES = 16 * 1024
RECORD_VALUE = 100
HERE = Path(__file__).resolve().parent

KAFKA_PYTHON_WALK = """
import mmap, sys
from kafka.record import MemoryRecords
with open(sys.argv[1], "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as mm:
    data = memoryview(mm)
    records = MemoryRecords(data)
    batches = 0
    while records.has_next():
        batch = records.next_batch()
        if not batch.validate_crc():
            sys.exit("kafka-python: invalid CRC")
        batches += 1
    del data, records, batch
print(batches)
"""


def make_segment(path: Path, size: int) -> int:
    """Write ``size`` bytes of 16 KiB V2 batches of ~100-byte records; returns the batch count.

    One batch is encoded with kseg's writer, then copied with new base
    offsets: the base offset is outside the CRC, so every copy stays valid.
    """
    from kseg.format import RecordSpec, encode_batch

    records: list[RecordSpec] = []
    ts = 1_700_000_000_000
    while True:
        i = len(records)
        value = (b"%06d" % i) * (RECORD_VALUE // 6 + 1)
        records.append(RecordSpec(i, ts + i, b"key-%06d" % i, value[:RECORD_VALUE]))
        if len(encode_batch(records)) > BATCH_BYTES:
            records.pop()
            break
    template = bytearray(encode_batch(records))
    batches = 0
    with open(path, "wb") as out:
        written = 0
        while written + len(template) <= size:
            struct.pack_into(">q", template, 0, batches * len(records))
            out.write(template)
            written += len(template)
            batches += 1
    return batches


def best_of(runs: int, fn) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def process(argv: list[str], env: dict[str, str], stdout=subprocess.DEVNULL) -> None:
    subprocess.run(argv, env=env, stdout=stdout, stderr=subprocess.DEVNULL, check=False)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("size_mib", nargs="?", type=int, default=1024)
    parser.add_argument("--runs", type=int, default=5, help="best of this many runs (default 5)")
    args = parser.parse_args()
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    kseg = shutil.which("kseg", path=str(Path(sys.executable).parent)) or "kseg"
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "00000000000000000000.log"
        batches = make_segment(path, args.size_mib * 1024 * 1024)
        size = path.stat().st_size
        path.read_bytes()  # into the page cache
        print(f"segment: {size / 2**20:.0f} MiB, {batches} batches of 16 KiB, CPUs: {os.cpu_count()}")

        # in-process, batch level
        from kseg.ops.verify import verify_paths

        result = verify_paths([path])
        assert result.exit_code() == 0 and result.summary().batches == batches, result.summary()
        inproc = best_of(args.runs, lambda: verify_paths([path]))
        print(f"kseg verify in-process      : {size / inproc / 1e9:6.2f} GB/s  ({inproc * 1000:5.0f} ms)")

        # processes, interleaved round by round so that a busy moment hits all of them alike
        process([kseg, "verify", str(path)], env)  # warm-up (writes bytecode caches)
        commands = {
            "kseg": [kseg, "verify", str(path)],
            "help": [kseg, "--help"],
            "cat": ["cat", str(path)],
        }
        if importlib.util.find_spec("kafka") is not None:
            commands["kafka-python"] = [sys.executable, "-c", KAFKA_PYTHON_WALK, str(path)]
        best = {name: float("inf") for name in commands}
        for _ in range(args.runs):
            for name, argv in commands.items():
                best[name] = min(best[name], best_of(1, lambda argv=argv: process(argv, env)))
        t_kseg, t_help, t_cat, t_kp = best["kseg"], best["help"], best["cat"], best.get("kafka-python")
        print(f"kseg verify (process)       : {size / t_kseg / 1e9:6.2f} GB/s  ({t_kseg * 1000:5.0f} ms)")
        if t_kp is not None:
            print(f"kafka-python CRC walk (proc): {size / t_kp / 1e9:6.2f} GB/s  ({t_kp * 1000:5.0f} ms)")
        print(f"cat > /dev/null             : {size / t_cat / 1e9:6.2f} GB/s  ({t_cat * 1000:5.0f} ms)")
        print(f"kseg --help                 :               ({t_help * 1000:5.0f} ms)")
        if t_kp is not None:
            print(f"kseg vs kafka-python        : {t_kp / t_kseg:5.2f}x faster  (target >= 2x)")
        print(f"kseg vs cat                 : {t_kseg / t_cat:5.2f}x as long (target <= ~3x)")


if __name__ == "__main__":
    main()
