"""Peak resident memory of every command on a partition of large segments (file-backed pages included).

A log directory holding ``orders-0``: ``--segments`` segments of ``--mib`` MiB each (16 KiB V2
batches of ~100-byte records, offsets continuing across segments), their ``.index``/``.timeindex``
written by ``kseg reindex``, checkpoints and a clean-shutdown marker as a broker's stop leaves them.
Each command runs as a child of a small interpreter, whose ``RUSAGE_CHILDREN`` ``ru_maxrss`` (the
kernel's high-water mark of the resident set, file-backed mapped pages included) is printed with
the exit code and CPU time.  The target (issue "no cliffs"): under 100 MB for every command on three
1 GiB segments, whatever the size.  Speed and memory targets live here, never in tests.

Usage: python bench/bench_rss.py [--segments 3] [--mib 1024] [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))

BATCH_BYTES = 16 * 1024
TS = 1_700_000_000_000

_CHILD = """
import json, resource, subprocess, sys, time
argv = json.loads(sys.argv[1])
start = time.monotonic()
code = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode
use = resource.getrusage(resource.RUSAGE_CHILDREN)
print(json.dumps([code, use.ru_maxrss / 1024, use.ru_utime + use.ru_stime, time.monotonic() - start]))
"""


def write_segment(path: Path, base: int, size: int) -> int:
    """``size`` bytes of batches from offset ``base``; returns the next offset."""
    from kseg.format.crc import crc32c
    from kseg.format.model import RecordSpec
    from kseg.format.v2_write import encode_batch

    records: list[RecordSpec] = []
    while True:
        i = len(records)
        records.append(RecordSpec(i, TS + i, b"key-%06d" % i, (b"%06d" % i) * 17))
        if len(encode_batch(records)) > BATCH_BYTES:
            records.pop()
            break
    template = bytearray(encode_batch(records))
    n, offset = 0, base
    with open(path, "wb") as out:
        while (n + 1) * len(template) <= size:
            struct.pack_into(">q", template, 0, offset)
            struct.pack_into(">qq", template, 27, TS + offset, TS + offset + len(records) - 1)
            struct.pack_into(">I", template, 17, crc32c(memoryview(template)[21:]))
            out.write(template)
            n += 1
            offset += len(records)
    return offset


def make_logdir(root: Path, segments: int, size: int) -> Path:
    logs = root / "kafka-logs"
    part = logs / "orders-0"
    part.mkdir(parents=True)
    offset = 0
    for _ in range(segments):
        offset = write_segment(part / f"{offset:020d}.log", offset, size)
    subprocess.run([sys.executable, "-m", "kseg", "reindex", "--in-place", str(part)], cwd=ROOT, check=True,
                   stdout=subprocess.DEVNULL, env=os.environ | {"PYTHONPATH": str(ROOT)})
    for name, value in (("recovery-point-offset-checkpoint", offset), ("replication-offset-checkpoint", offset),
                        ("log-start-offset-checkpoint", 0)):
        (logs / name).write_text(f"0\n1\norders 0 {value}\n")
    (part / "leader-epoch-checkpoint").write_text("0\n1\n0 0\n")
    (part / "partition.metadata").write_text("version: 0\ntopic_id: q80MkIH9TRe1cdVy6NcxlA\n")
    (logs / ".kafka_cleanshutdown").write_text("")
    return logs


def commands(logs: Path, out: Path) -> dict[str, list[str]]:
    part = logs / "orders-0"
    first = min(part.glob("*.log"))
    return {
        "verify DIR": ["verify", "--jobs", "1", str(part)],
        "verify --deep DIR": ["verify", "--deep", "--jobs", "1", str(part)],
        "verify LOGDIR --jobs 2": ["verify", "--jobs", "2", str(logs)],
        "triage LOGDIR": ["triage", str(logs)],
        "txn LOGDIR": ["txn", str(logs)],
        "recover --dry-run DIR": ["recover", "--dry-run", str(part)],
        "reindex --check DIR": ["reindex", "--check", str(part)],
        "dump FILE": ["dump", str(first)],
        "stats DIR": ["stats", str(part)],
        "grep --key (no match) DIR": ["grep", "--key", "no-such-key", str(part)],
        "recover DIR -o OUT": ["recover", str(part), "-o", str(out / "recovered")],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--segments", type=int, default=3)
    parser.add_argument("--mib", type=int, default=1024)
    parser.add_argument("--keep", type=Path, help="generate into (and reuse) this directory")
    parser.add_argument("--only", action="append", help="run only commands whose label starts with this")
    args = parser.parse_args()
    print(f"machine: {os.uname().machine}, {os.cpu_count()} cores, load {os.getloadavg()[0]:.2f}; "
          f"python {sys.version.split()[0]}; {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}")
    root = args.keep or Path(tempfile.mkdtemp(prefix="kseg-rss-"))
    logs = root / "kafka-logs"
    if not logs.exists():
        logs = make_logdir(root, args.segments, args.mib << 20)
    print(f"{args.segments} segments of {args.mib} MiB in {logs / 'orders-0'} (indexes, checkpoints, clean shutdown)")
    out = root / "out"
    try:
        for label, argv in commands(logs, out).items():
            if args.only and not any(label.startswith(o) for o in args.only):
                continue
            shutil.rmtree(out, ignore_errors=True)
            out.mkdir()
            full = [sys.executable, "-m", "kseg", *argv]
            done = subprocess.run([sys.executable, "-c", _CHILD, json.dumps(full)], capture_output=True, text=True,
                                  cwd=ROOT, env=os.environ | {"PYTHONPATH": str(ROOT)}, check=True)
            code, rss, cpu, wall = json.loads(done.stdout)
            print(f"  {label:30} peak RSS {rss:7.1f} MB  exit {code}  CPU {cpu:6.2f} s  wall {wall:6.2f} s")
    finally:
        shutil.rmtree(out, ignore_errors=True)
        if args.keep is None:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
