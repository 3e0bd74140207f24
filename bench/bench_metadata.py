"""``kseg metadata`` benchmark: a generated metadata log of churn (about a million records) replayed whole.

Generates, once, a ``__cluster_metadata-0`` log with tests/metadata/GenMetadataLog.java (Kafka 4.3.0's own
record classes and ``MetadataRecordSerde``: topics created, deleted and re-created, reassignments, ISR/ELR,
fencing, configs, ACLs, quotas, metadata transactions, one record in sixteen one Kafka rejects; lz4 and plain
batches), ``--steps`` churn steps (default 700,000: 1,001,579 records, 88 MB, seed 7), then times, each as a
whole process, its CPU seconds and peak RSS:

* ``kseg metadata DIR --format json`` with the compiled core;
* the same with ``KSEG_PURE=1`` (the pure-Python path);
* with ``--before DIR``, the same command from another checkout of kseg (PYTHONPATH=DIR): the before of a change.

Needs Java 17 and ../shared/kafka (the generator runs on the broker's classpath).  CPU time, not wall time: on a
shared machine wall time measures the load.  Usage: python bench/bench_metadata.py [--steps 700000]
[--work /tmp/kseg-bench-metadata] [--before /path/to/old/kseg/checkout]
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))


def _generate(work: Path, steps: int) -> Path:
    from metadata.kafka_image import KafkaImage

    log = work / f"gen-{steps}" / "__cluster_metadata-0" / "00000000000000000000.log"
    if not log.is_file():
        KafkaImage.create().generate(log, 7, steps)
    return log.parent.parent


def _timed(label: str, env: dict[str, str], directory: Path) -> None:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "kseg", "metadata", str(directory), "--format", "json"],
                          env=env, cwd=directory.parent, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                          check=False)  # not from the checkout: ``-m`` puts the working directory first on the path
    wall = time.monotonic() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    lines = proc.stdout.count(b"\n")
    print(f"{label:<34} cpu {cpu:7.2f} s  wall {wall:7.2f} s  peak RSS {after.ru_maxrss / 1024:6.0f} MB  "
          f"exit {proc.returncode}  {lines} lines")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=700_000)
    parser.add_argument("--work", type=Path, default=Path("/tmp/kseg-bench-metadata"))
    parser.add_argument("--before", type=Path, help="another kseg checkout to time the same way")
    args = parser.parse_args()
    directory = _generate(args.work, args.steps)
    size = sum(p.stat().st_size for p in (directory / "__cluster_metadata-0").iterdir())
    print(f"{directory}: {size / 1e6:.1f} MB")
    base = {k: v for k, v in os.environ.items() if k not in ("KSEG_PURE", "PYTHONPATH")}
    if args.before is not None:
        _timed("before (--before checkout)", {**base, "PYTHONPATH": str(args.before)}, directory)
    _timed("kseg, compiled core", {**base, "PYTHONPATH": str(REPO)}, directory)
    _timed("kseg, KSEG_PURE=1", {**base, "PYTHONPATH": str(REPO), "KSEG_PURE": "1"}, directory)


if __name__ == "__main__":
    main()
