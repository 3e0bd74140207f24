"""zstd batches padded with frames that hold nothing: walked in the core, never decoded one by one.

Writes three one-batch segments holding the same records (``--records``, 100-byte values, one zstd
frame as Kafka writes it) and times whole processes on each, side by side in one run:

* ``plain``: the records alone;
* ``skippable``: the records' frame then ``--frames`` skippable frames (8 bytes each: 1,000,000 are 7.7 MB);
* ``empty``: the records' frame then ``--frames / 2`` empty frames (9 bytes each, zstd's frame for no input);
* ``damaged``: ``--frames / 20`` frames of one record each, the last with a bad checksum (the error is
  the one a fresh context gives: the batch was decoded twice before, now only the last frame).

Commands: ``kseg verify --deep FILE`` and ``kseg dump --deep-iteration FILE`` (both decode every batch).
Reported: CPU time (user + system of the child; the machine is shared, so wall time is noisy), best of
``--runs``, and the ratio to ``plain``.  ``--tree DIR`` (repeatable) times another checkout's kseg in
the same run (e.g. the commit before the change); ``--pure`` adds ``KSEG_PURE=1`` runs.

Usage: python bench/bench_zstd_frames.py [--frames 1000000] [--records 2000] [--runs 3] [--tree DIR] [--pure]
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from kseg.format import compression  # noqa: E402
from kseg.format.v2_write import RecordSpec, assemble_batch, encode_record  # noqa: E402

SKIPPABLE = bytes.fromhex("502a4d1800000000")
EMPTY = bytes.fromhex("28b52ffd2000010000")
ZSTD_ATTRIBUTES = 4


def _batch(region: bytes, count: int) -> bytes:
    return assemble_batch(
        region, base_offset=0, partition_leader_epoch=0, attributes=ZSTD_ATTRIBUTES, last_offset_delta=count - 1,
        base_timestamp=1_700_000_000_000, max_timestamp=1_700_000_000_000 + count - 1, producer_id=-1,
        producer_epoch=-1, base_sequence=-1, records_count=count,
    )


def _records(count: int) -> bytes:
    return b"".join(encode_record(i, i, RecordSpec(i, 1_700_000_000_000 + i, b"k%d" % i, b"v" * 100))
                    for i in range(count))


def make_segments(root: Path, frames: int, count: int) -> dict[str, Path]:
    """The four segments (see the module docstring); returns name -> path."""
    import zstandard

    records = _records(count)
    data = compression.compress(compression.CODEC_ZSTD, records, magic=2)
    damaged_count = max(2, frames // 20)
    one = [zstandard.ZstdCompressor(write_checksum=True).compress(encode_record(
        i, i, RecordSpec(i, 1_700_000_000_000 + i, b"k", b"v" * 100))) for i in range(damaged_count)]
    bad = bytearray(one[-1])
    bad[-1] ^= 0xFF
    regions = {
        "plain": (data, count),
        "skippable": (data + SKIPPABLE * frames, count),
        "empty": (data + EMPTY * (frames // 2), count),
        "damaged": (b"".join(one[:-1]) + bytes(bad), damaged_count),
    }
    paths = {}
    for name, (region, n) in regions.items():
        directory = root / f"{name}-0"
        directory.mkdir()
        path = directory / "00000000000000000000.log"
        path.write_bytes(_batch(region, n))
        paths[name] = path
    return paths


def cpu_of(argv: list[str], env: dict[str, str], tree: str) -> float:
    """CPU seconds (user + system) of one child process run to its end, in ``tree`` (``-m kseg`` puts the
    working directory first on the path)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(argv, env=env, cwd=tree, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--frames", type=int, default=1_000_000)
    parser.add_argument("--records", type=int, default=2000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--tree", action="append", default=[], help="another checkout to time in the same run")
    parser.add_argument("--pure", action="store_true", help="also time KSEG_PURE=1")
    args = parser.parse_args()
    trees = [("this tree", str(HERE.parent), {})] + [(t, t, {}) for t in args.tree]
    if args.pure:
        trees.append(("this tree, KSEG_PURE=1", str(HERE.parent), {"KSEG_PURE": "1"}))
    commands = {"verify --deep": ["verify", "--deep"], "dump --deep-iteration": ["dump", "--deep-iteration"]}
    print(f"load average {os.getloadavg()[0]:.1f}, {os.cpu_count()} cores; {time.strftime('%Y-%m-%d %H:%M:%S UTC', time.gmtime())}")
    with tempfile.TemporaryDirectory() as tmp:
        paths = make_segments(Path(tmp), args.frames, args.records)
        for name, path in paths.items():
            print(f"{name}: {path.stat().st_size:,} bytes")
        for label, tree, extra in trees:
            env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
            env.update(extra, PYTHONPATH=tree)
            for command, words in commands.items():
                times = {}
                for name, path in paths.items():
                    argv = [sys.executable, "-m", "kseg", *words, str(path)]
                    cpu_of(argv, env, tree)  # warm-up: bytecode, page cache
                    times[name] = min(cpu_of(argv, env, tree) for _ in range(args.runs))
                plain = times["plain"]
                row = ", ".join(f"{n} {t:.2f} s ({t / plain:.1f}x)" for n, t in times.items())
                print(f"{label:24} {command:22} {row}")


if __name__ == "__main__":
    main()
