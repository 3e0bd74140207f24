"""Whole-command benchmark: kseg's CLI as processes, against another checkout of kseg in the same run.

Used to show that a change makes no command slower: generate the inputs once
(a 1 GiB V2 segment of 16 KiB batches for the batch-level commands, a 64 MiB
one of ~100-byte records for the record-level ones; both read once so they sit
in the page cache), then run each command of this tree and of ``--against``
(another checkout, e.g. ``git worktree add /tmp/kseg-before <commit>``)
alternately, best and median of ``--runs``, with ``cat`` as the floor.
Start-up is included, as a user sees it.

Usage: python bench/bench_cli.py --against /tmp/kseg-before [--runs 5] [--verify-mib 1024] [--dump-mib 64]

Speed targets live here, never in tests.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from bench_dump import make_segment as make_record_segment  # noqa: E402
from bench_verify import make_segment as make_batch_segment  # noqa: E402

SEGMENT = "00000000000000000000.log"


def commands(batches: Path, records: Path, out: Path) -> dict[str, list[str]]:
    """Name -> kseg arguments; ``out`` is emptied before every run."""
    return {
        "verify 1 GiB": ["verify", str(batches)],
        "reindex --check 1 GiB": ["reindex", "--check", str(batches)],
        "recover --dry-run 1 GiB": ["recover", "--dry-run", str(batches)],
        "dump (batches) 64 MiB": ["dump", str(records)],
        "dump --format json --deep-iteration 64 MiB": ["dump", "--format", "json", "--deep-iteration", str(records)],
        "dump --print-data-log 64 MiB": ["dump", "--print-data-log", str(records)],
        "convert -> V2 lz4 64 MiB": ["convert", "--to-magic", "2", "--compression", "lz4", "-o", str(out), str(records)],
    }


def timed(argv: list[str], env: dict[str, str], out: Path) -> float:
    shutil.rmtree(out, ignore_errors=True)
    start = time.perf_counter()
    # run from the checkout itself: ``python -m`` puts the working directory first on sys.path
    subprocess.run(argv, env=env, cwd=env["PYTHONPATH"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                   check=False)
    return time.perf_counter() - start


def environment(tree: Path) -> dict[str, str]:
    """The environment that makes ``python -m kseg`` import the kseg of ``tree``."""
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPATH"] = str(tree.resolve())
    return env


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--against", type=Path, required=True, help="another kseg checkout to compare with")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--verify-mib", type=int, default=1024)
    parser.add_argument("--dump-mib", type=int, default=64)
    parser.add_argument("--only", help="run only commands whose name contains this")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="kseg-bench-cli-") as tmp:
        work = Path(tmp)
        batches = work / "bench" / SEGMENT  # not a partition directory: the walk alone
        records = work / "bench-records" / SEGMENT
        batches.parent.mkdir()
        records.parent.mkdir()
        make_batch_segment(batches, args.verify_mib << 20)
        make_record_segment(records, args.dump_mib << 20)
        for path in (batches, records):
            subprocess.run(["cat", str(path)], stdout=subprocess.DEVNULL, check=True)
        out = work / "out"
        here, there = environment(HERE.parent), environment(args.against)
        python = sys.executable
        cat = [timed(["cat", str(batches)], here, out) for _ in range(args.runs)]
        print(f"cat 1 GiB > /dev/null: best {min(cat):.3f} s, median {statistics.median(cat):.3f} s")
        print(f"{'command':45} {'this tree':>18} {'--against':>18} {'ratio':>7}")
        for name, argv in commands(batches, records, out).items():
            if args.only and args.only not in name:
                continue
            mine, theirs = [], []
            full = [python, "-m", "kseg", *argv]
            timed(full, here, out)  # warm-up: byte-compile, page cache
            timed(full, there, out)
            for _ in range(args.runs):
                mine.append(timed(full, here, out))
                theirs.append(timed(full, there, out))
            ratio = statistics.median(m / t for m, t in zip(mine, theirs, strict=True))
            print(
                f"{name:45} {min(mine):7.3f} / {statistics.median(mine):7.3f}  "
                f"{min(theirs):7.3f} / {statistics.median(theirs):7.3f}  {ratio:6.2f}x"
            )
        print("(seconds: best / median; ratio: median of this tree / --against, pair by pair)")


if __name__ == "__main__":
    main()
