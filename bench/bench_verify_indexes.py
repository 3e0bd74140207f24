"""``kseg verify`` of a healthy partition with its ``.index`` / ``.timeindex`` against verify without them.

Writes one V2 segment of 16 KiB batches (``--size`` MiB, default 1024) whose timestamps go up batch
by batch (so the ``.timeindex`` has an entry per index point, as a broker's has), has ``kseg reindex``
write its indexes, and times whole processes side by side in one run, best of ``--runs``:

* ``log alone``: ``kseg verify loose/00000000000000000000.log``: the same .log (a hard link) in a
  directory that is not a partition, so nothing but the log is checked (``verify orders-0/...log``
  also runs the load model for its partition, which walks the file a second time);
* ``with indexes``: ``kseg verify orders-0`` (the healthy partition: the log walked once, both indexes
  checked against it);
* ``no index files``: ``kseg verify bare-0`` (the same .log alone in a partition directory; the load
  model rebuilds the indexes in the same walk);
* ``cat``: ``cat`` of the .log into /dev/null.

Reported: CPU time (user + system of the child; the machine is shared, so wall time is noisy) and
the ratio ``with indexes`` / ``log alone`` (target: at most 1.3).  ``--tree DIR`` (repeatable)
times another checkout in the same run (e.g. the commit before the change); ``--jobs`` is passed to
verify.

Usage: python bench/bench_verify_indexes.py [--size 1024] [--runs 3] [--jobs 1] [--tree DIR]
"""

from __future__ import annotations

import argparse
import os
import resource
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from kseg.format import RecordSpec, encode_batch  # noqa: E402
from kseg.format.crc import crc32c  # noqa: E402

BATCH_BYTES = 16 * 1024
NAME = "00000000000000000000.log"


def make_segment(path: Path, size: int) -> int:
    """``size`` bytes of 16 KiB batches of ~100-byte records, each batch 1 s after the one before."""
    records: list[RecordSpec] = []
    ts = 1_700_000_000_000
    while True:
        i = len(records)
        records.append(RecordSpec(i, ts + i, b"key-%06d" % i, (b"%06d" % i) * 17))
        if len(encode_batch(records)) > BATCH_BYTES:
            records.pop()
            break
    template = bytearray(encode_batch(records))
    batches = 0
    with open(path, "wb") as out:
        while (batches + 1) * len(template) <= size:
            struct.pack_into(">q", template, 0, batches * len(records))
            struct.pack_into(">qq", template, 27, ts + batches * 1000, ts + batches * 1000 + len(records) - 1)
            struct.pack_into(">I", template, 17, crc32c(memoryview(template)[21:]))
            out.write(template)
            batches += 1
    return batches


def cpu_of(argv: list[str], env: dict[str, str], cwd: str) -> float:
    """CPU seconds (user + system) of one child process run to its end."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(argv, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size", type=int, default=1024, help="MiB of the segment")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--tree", action="append", default=[], help="another checkout to time in the same run")
    args = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.1f}, {os.cpu_count()} cores; "
          f"{time.strftime('%Y-%m-%d %H:%M:%S UTC', time.gmtime())}")
    with tempfile.TemporaryDirectory() as tmp:
        orders, bare, loose = Path(tmp) / "orders-0", Path(tmp) / "bare-0", Path(tmp) / "loose"
        for directory in (orders, bare, loose):
            directory.mkdir()
        batches = make_segment(orders / NAME, args.size << 20)
        os.link(orders / NAME, bare / NAME)
        os.link(orders / NAME, loose / NAME)
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        subprocess.run([sys.executable, "-m", "kseg", "reindex", str(orders)], env=env | {"PYTHONPATH": str(HERE.parent)},
                       cwd=HERE.parent, check=True, stdout=subprocess.DEVNULL)
        sizes = {p.suffix: p.stat().st_size for p in orders.iterdir()}
        print(f"{batches:,} batches; files: {sizes}")
        cat = min(cpu_of(["cat", str(orders / NAME)], env, tmp) for _ in range(args.runs + 1))
        print(f"cat: {cat:.3f} s")
        for tree in [str(HERE.parent), *args.tree]:
            tree_env = env | {"PYTHONPATH": tree}
            times = {}
            for label, target in (("log alone", loose / NAME), ("with indexes", orders), ("no index files", bare)):
                argv = [sys.executable, "-m", "kseg", "verify", "--jobs", str(args.jobs), str(target)]
                cpu_of(argv, tree_env, tree)  # warm-up: bytecode, page cache
                times[label] = min(cpu_of(argv, tree_env, tree) for _ in range(args.runs))
            ratio = times["with indexes"] / times["log alone"]
            print(f"{tree}: " + ", ".join(f"{k} {v:.3f} s" for k, v in times.items())
                  + f"; with indexes / log alone {ratio:.2f}x")


if __name__ == "__main__":
    main()
