"""Size and time of the differential run of kseg's loading model against Kafka's loader.

Runs what ``tests/interop/test_load_vs_kafka.py`` runs (``tests/interop/load_diff.py``): ``--n`` log
directories from ``--seed`` (logdir_gen recipes), Kafka's LoadLogDir writing their healthy state (one JVM),
the damage, ONE LoadLogDir JVM over all of them, kseg's model in-process on each.  Prints the log dirs,
partitions, files and bytes built, the seconds spent in the generator (kseg's encoder and the damage),
in Kafka (writing, then loading) and in kseg, the disagreements found, and the machine's load average.

Usage: KSEG_SHARED=../shared python bench/bench_load_diff.py [--n 500] [--seed 20261127]
Time targets live here and in docs/interop.md, never in tests (target: the CI default, 500 log dirs,
in under ~90 s on the 2-core machine).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO / "tests"), str(REPO / "tests" / "interop")]

import load_diff as ld  # noqa: E402
from kafka_storage import KafkaStorage  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n", type=int, default=500)
    parser.add_argument("--seed", type=int, default=ld.DEFAULT_SEED)
    args = parser.parse_args(argv)
    load_before = os.getloadavg()
    storage = KafkaStorage.create()
    root = ld.scratch_root(Path(tempfile.gettempdir()))
    timing = ld.Timing()
    started = time.perf_counter()
    try:
        cases = ld.run(storage, ld.recipes(args.seed, args.n), root, timing)
        total = time.perf_counter() - started
        built = [c.path for c in cases if c.path is not None]
        files = sum(1 for p in built for f in p.rglob("*") if f.is_file())
        size = sum(ld.tree_bytes(p) for p in built)
        diffs = sum(len(ld.compare(c)) for c in cases)
        report = {
            "log_dirs": len(built), "unbuildable": len(cases) - len(built),
            "partitions": sum(len(c.kafka) for c in cases), "files": files, "bytes": size,
            "seconds": {"total": round(total, 1), **timing.as_dict()},
            "disagreements": diffs, "seed": args.seed, "cpus": os.cpu_count(),
            "load_average_before": [round(x, 2) for x in load_before],
            "load_average_after": [round(x, 2) for x in os.getloadavg()],
            "scratch": str(root.parent),
        }
    finally:
        shutil.rmtree(root, ignore_errors=True)
    print(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
