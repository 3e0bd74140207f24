"""Time and peak memory of ``kseg diff`` on two large replicas of one partition, with ``cat`` of the two as reference.

Generates, in a private temporary directory, two log directories holding partition ``t-0``:

* ``a``: ``--batches`` V2 batches of 5 keyed records each (``--value`` bytes a value, keys
  ``k<offset>``: every key distinct, the worst case of the per-key state), epoch 0, in 8 segments;
* ``b``: the same bytes up to 90 % of the batches, then -- an unclean election -- its own batches
  under epoch 1 (other values), so every part of ``kseg diff`` runs: the range comparison, both
  truncations, and the read_committed state of both replicas (the replicas diverge).

then runs ``cat`` of both replicas' segments (the cost of reading both logs once) and ``kseg diff a/t-0 b/t-0``
as subprocesses, each child's wall time, CPU time and peak RSS (``ru_maxrss`` from ``wait4``).
``KSEG_PURE=1`` in the environment measures the pure-Python path.

Usage: python bench/bench_diff.py [--batches 200000] [--value 40] [--keep DIR]
Numbers and targets live in docs/diff.md, never in tests.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

from logdirs import LogDir  # noqa: E402

from kseg.format import encode_batch  # noqa: E402
from kseg.format.model import RecordSpec  # noqa: E402

RECORDS = 5
SEGMENTS = 8
T0 = 1_700_000_000_000


def _batch(offset: int, epoch: int, value: int) -> bytes:
    tag = b"b" if epoch else b"a"
    records = [RecordSpec(o, T0 + o, b"k%d" % o, tag * value) for o in range(offset, offset + RECORDS)]
    return encode_batch(records, partition_leader_epoch=epoch)


def _log_dir(root: Path, batches: int, value: int, fork: int | None) -> None:
    """One log directory as a clean stop leaves it (tests/logdirs.py); ``fork``: the batch from which it led
    under epoch 1."""
    per = -(-batches // SEGMENTS)
    segments = {first * RECORDS: [_batch(i * RECORDS, 1 if fork is not None and i >= fork else 0, value)
                                  for i in range(first, min(batches, first + per))]
                for first in range(0, batches, per)}
    epochs = [(0, 0)] + ([(1, fork * RECORDS)] if fork is not None else [])
    logdir = LogDir(root)
    logdir.partition("t", 0, segments, epochs=epochs)
    logdir.finish()


def _run(argv: list[str]) -> dict[str, object]:
    """A child's exit code, wall seconds, CPU seconds and peak RSS (MB)."""
    started = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - started
    return {"argv": " ".join(argv[-3:]), "exit": os.waitstatus_to_exitcode(status), "wall_s": round(wall, 2),
            "cpu_s": round(usage.ru_utime + usage.ru_stime, 2), "peak_rss_mb": round(usage.ru_maxrss / 1024, 1)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--batches", type=int, default=200_000)
    parser.add_argument("--value", type=int, default=40)
    parser.add_argument("--keep", type=Path, help="build here (kept) instead of a removed temporary directory")
    parser.add_argument("--build-only", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    root = args.keep or Path(tempfile.mkdtemp(prefix="kseg-bench-diff-"))
    if args.build_only:
        _log_dir(root / "a", args.batches, args.value, None)
        _log_dir(root / "b", args.batches, args.value, args.batches * 9 // 10)
        return 0
    try:
        if not (root / "a").exists():  # built by a child: a child's peak RSS counts the parent it forked from
            subprocess.run([sys.executable, __file__, "--build-only", "--keep", str(root), "--batches",
                            str(args.batches), "--value", str(args.value)], check=True)
        size = sum(f.stat().st_size for f in (root / "a" / "t-0").glob("*.log"))
        reference = _run(["sh", "-c", f"cat {root}/a/t-0/*.log {root}/b/t-0/*.log > /dev/null"])
        diff = _run([sys.executable, "-m", "kseg", "diff", str(root / "a" / "t-0"), str(root / "b" / "t-0")])
        print(json.dumps({"batches": args.batches, "bytes_per_replica": size, "cmp": reference, "kseg_diff": diff,
                          "pure": bool(os.environ.get("KSEG_PURE")), "load_average": os.getloadavg()}, indent=1))
    finally:
        if args.keep is None:
            shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
