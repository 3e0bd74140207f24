"""The compiled core side by side with the pure-Python path and ``cat``, in one run.

Generates V2 segments of 16 KiB batches of ~100-byte records (bench_reindex.make_segment:
offsets and timestamps increase) in a temporary directory -- by default 1 GiB for verify and
reindex, 256 MiB for dump -- reads each once so it sits in the page cache, then times whole
processes (start-up included), best of ``--runs``:

* ``cat FILE > /dev/null``: the reference (target: kseg verify and kseg reindex >= 0.8x its speed);
* ``kseg verify FILE``;
* ``kseg verify PARTITION``: the same file (a hard link) alone in a partition directory ``orders-0``
  without its ``.index``, so the log-loading model recovers it too (since the walk-once
  change verify's own walk runs that recovery's loop, and the model does not walk it again);
* ``kseg reindex -o OUTDIR FILE`` (a fresh OUTDIR each run);
* ``kseg dump --deep-iteration FILE`` (text) and ``--format json``, output to /dev/null;

each with the core ("core") and with ``KSEG_PURE=1`` ("pure": the code path before the core).
kseg's bytecode is compiled first and ``PYTHONDONTWRITEBYTECODE`` is dropped for the timed runs:
with it set and no ``__pycache__``, every run compiles kseg's ~100 modules from source, which
doubles start-up (0.09 -> 0.18 s CPU) -- a cost an installed kseg (pip compiles) never pays.
Each row gives the best wall time and the best CPU time (user + system of the process and its
children): on a machine shared with other work the CPU time is the steadier figure of the two.
Speed targets live here, never in tests.

The page cache is timed in two shapes, because mapping costs differ fivefold between them:
"small folios", the file as written batch by batch (as a broker appends: 4 KiB pages, a fault per
64 KiB), and "large folios", the same bytes rewritten in 64 MiB writes (as after ``cp``, or as
readahead fills the cache on a cold read: a fault maps up to 2 MiB). ``cat`` is timed on each.

Usage: python bench/bench_core.py [--size-mib 1024] [--dump-mib 256] [--runs 3] [--skip-dump]
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from bench_reindex import make_segment, warm_page_cache  # noqa: E402

KSEG = [sys.executable, "-m", "kseg"]


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def best_of(runs: int, argv: list[str], *, pure: bool = False, fresh_dir: Path | None = None) -> tuple[float, float]:
    """Best wall and best CPU time of ``runs`` runs of ``argv`` (stdout to /dev/null); fails on a non-zero exit."""
    env = dict(os.environ)
    env.pop("KSEG_PURE", None)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    if pure:
        env["KSEG_PURE"] = "1"
    best = cpu = float("inf")
    for _ in range(runs):
        if fresh_dir is not None:
            shutil.rmtree(fresh_dir, ignore_errors=True)
        cpu_before = _children_cpu()
        start = time.perf_counter()
        done = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env, check=False)
        elapsed = time.perf_counter() - start
        if done.returncode != 0:
            sys.exit(f"{' '.join(argv)} exited {done.returncode}: {done.stderr.decode()[-500:]}")
        best, cpu = min(best, elapsed), min(cpu, _children_cpu() - cpu_before)
    return best, cpu


def compile_kseg() -> None:
    """Write the bytecode of the kseg that ``python -m kseg`` runs, as ``pip install`` does."""
    code = "import compileall, os, kseg; compileall.compile_dir(os.path.dirname(kseg.__file__), quiet=1)"
    subprocess.run([sys.executable, "-c", code], check=True)


def rewrite_in_large_writes(path: Path) -> None:
    """Rewrite ``path`` in 64 MiB writes, so its page cache holds large folios (docstring)."""
    copy = path.with_name(path.name + ".tmp")
    with open(path, "rb", buffering=0) as src, open(copy, "wb", buffering=0) as dst:
        while chunk := src.read(64 << 20):
            dst.write(chunk)
    copy.replace(path)


def row(name: str, times: tuple[float, float], size: int, cat: tuple[float, float] | None = None) -> str:
    (wall, cpu), speed = times, f"{size / times[0] / 1e9:5.2f} GB/s"
    versus = f"  = {cat[0] / wall:.2f}x cat (CPU: {cat[1] / cpu:.2f}x)" if cat is not None else ""
    return f"{name:<50} {wall:7.3f} s wall {cpu:7.3f} s CPU  {speed}{versus}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size-mib", type=int, default=1024)
    parser.add_argument("--dump-mib", type=int, default=256)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--skip-dump", action="store_true")
    args = parser.parse_args()
    version = subprocess.run([*KSEG, "--version"], capture_output=True, text=True, check=True).stdout.strip()
    print(version)
    with tempfile.TemporaryDirectory() as tmp:
        big = Path(tmp) / "big" / "00000000000000000000.log"
        big.parent.mkdir()
        make_segment(big, args.size_mib << 20, 16 * 1024)
        size = big.stat().st_size
        warm_page_cache(big)
        compile_kseg()
        out = Path(tmp) / "out"
        partition = Path(tmp) / "logs" / "orders-0"
        partition.mkdir(parents=True)
        for shape in ("small folios", "large folios"):
            if shape == "large folios":
                rewrite_in_large_writes(big)
            (partition / big.name).unlink(missing_ok=True)
            os.link(big, partition / big.name)  # the same inode: the same page cache
            cat = best_of(args.runs, ["sh", "-c", f"cat '{big}' > /dev/null"])
            print(f"segment {size / 2**20:.0f} MiB of 16 KiB V2 batches, best of {args.runs}, page cache warm ({shape})")
            print(row("cat FILE > /dev/null", cat, size))
            commands = (("verify", ["verify", str(big)]), ("verify PARTITION", ["verify", str(partition)]),
                        ("reindex -o OUT", ["reindex", "-o", str(out), str(big)]))
            for name, argv in commands:
                for pure in (True, False):
                    fresh = out if "reindex" in name else None
                    seconds = best_of(args.runs, [*KSEG, *argv], pure=pure, fresh_dir=fresh)
                    print(row(f"kseg {name} ({'pure' if pure else 'core'})", seconds, size, cat))
            print(row("cat FILE > /dev/null (again)", best_of(args.runs, ["sh", "-c", f"cat '{big}' > /dev/null"]), size))
        if args.skip_dump:
            return
        big.unlink()
        small = Path(tmp) / "small" / "00000000000000000000.log"
        small.parent.mkdir()
        make_segment(small, args.dump_mib << 20, 16 * 1024)
        size = small.stat().st_size
        warm_page_cache(small)
        print(f"segment {size / 2**20:.0f} MiB for dump")
        for label, extra in (("text", []), ("--format json", ["--format", "json"])):
            for pure in (True, False):
                seconds = best_of(args.runs, [*KSEG, "dump", "--deep-iteration", *extra, str(small)], pure=pure)
                print(row(f"kseg dump --deep-iteration {label} ({'pure' if pure else 'core'})", seconds, size))


if __name__ == "__main__":
    main()
