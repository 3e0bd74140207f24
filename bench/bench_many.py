"""Many segments, many partitions, legacy segments: whole ``kseg`` processes side by side (issue "no cliffs").

Generates, in a temporary directory (or ``--keep DIR``):

* ``segments``: one partition of ``--segments`` segments (one 1 KiB V2 batch each, empty
  ``.index``/``.timeindex``, as a broker with a small ``segment.bytes`` leaves them after a clean
  shutdown), and the same with ten times fewer: the loading model must be linear in segments;
* ``partitions``: ``--partitions`` partitions of one small segment each, run with ``--jobs 1`` and
  ``--jobs N``;
* ``legacy``: a ``--mib`` MiB V2 segment and its ``kseg convert --to-magic 1`` and ``0`` copies
  (each in a partition of its own): verify and the other commands must walk them at V2 speed;
* ``copies``: ``--copies`` copies of the real ``fixtures/real/kafka-logs/foo-0`` (204 batches,
  8,730 bytes, no indexes, no checkpoints) in one log directory, each command with ``--jobs 1`` and
  ``--jobs N`` run through ``bench/cpu_split.py``: the main process's CPU before the first pool,
  while pools run and after the last, and the workers' CPU -- the serial part Amdahl's law
  charges (``--baseline DIR`` runs another checkout beside this one, for before/after figures).

Every command runs as a process, best of ``--runs``; CPU (user + system of the child) and wall
time are printed, with the machine's core count.  Speed targets live here, never in tests.

Usage: python bench/bench_many.py [--segments N] [--partitions N] [--mib N] [--copies N] [--jobs N] [--runs N]
       [--only segments,partitions,legacy,copies] [--keep DIR] [--baseline DIR]
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
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(HERE))

COMMANDS = ("verify", "triage", "txn", "recover --dry-run")


def _batch(offset: int, count: int = 8) -> bytes:
    from kseg.format import RecordSpec, encode_batch

    specs = [RecordSpec(offset + i, 1_700_000_000_000 + offset + i, b"k", b"v" * 100) for i in range(count)]
    return encode_batch(specs, base_offset=offset)


def write_partition(directory: Path, segments: int, per_segment: int = 8) -> None:
    """``segments`` segments of one batch of ``per_segment`` records, with empty indexes."""
    directory.mkdir(parents=True, exist_ok=True)
    for n in range(segments):
        base = n * per_segment
        name = f"{base:020d}"
        (directory / f"{name}.log").write_bytes(_batch(base, per_segment))
        (directory / f"{name}.index").write_bytes(b"")
        (directory / f"{name}.timeindex").write_bytes(b"")


def finish_logdir(logdir: Path) -> None:
    """A clean shutdown marker and the checkpoints a stopped broker leaves (recovery point at the end)."""
    parts = sorted(p for p in logdir.iterdir() if p.is_dir())
    lines = []
    for part in parts:
        topic, _, number = part.name.rpartition("-")
        logs = sorted(part.glob("*.log"))
        end = int(logs[-1].name.split(".")[0]) + 8 if logs else 0
        lines.append(f"{topic} {number} {end}")
    body = f"0\n{len(lines)}\n" + "".join(line + "\n" for line in lines)
    for name in ("recovery-point-offset-checkpoint", "log-start-offset-checkpoint", "replication-offset-checkpoint"):
        (logdir / name).write_text(body if name != "log-start-offset-checkpoint" else f"0\n{len(lines)}\n" + "".join(
            f"{line.rsplit(' ', 1)[0]} 0\n" for line in lines))
    (logdir / ".kafka_cleanshutdown").write_text("")


def kseg(argv: list[str], runs: int) -> tuple[float, float, int]:
    """Best (wall seconds, CPU seconds) of ``runs`` runs of ``kseg argv``, and the exit code."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    best_wall, best_cpu, code = float("inf"), float("inf"), 0
    for _ in range(runs):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        done = subprocess.run([sys.executable, "-m", "kseg", *argv], env=env, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL, check=False)
        wall = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        best_wall, best_cpu, code = min(best_wall, wall), min(best_cpu, cpu), done.returncode
    return best_wall, best_cpu, code


def row(label: str, argv: list[str], runs: int) -> None:
    wall, cpu, code = kseg(argv, runs)
    print(f"  {label:<58} {wall:8.2f} s wall {cpu:8.2f} s CPU  exit {code}", flush=True)


def bench_segments(root: Path, segments: int, runs: int) -> None:
    print(f"one partition of N segments (1 batch each): N = {segments // 10} and {segments}; after a clean "
          "shutdown, then after an unclean one from recovery point 0 (every segment recovered)")
    for clean in (True, False):
        for n in (segments // 10, segments):
            logdir = root / f"segments-{n}-{'clean' if clean else 'unclean'}"
            if not logdir.exists():
                write_partition(logdir / "t-0", n)
                finish_logdir(logdir)
                if not clean:
                    (logdir / ".kafka_cleanshutdown").unlink()
                    (logdir / "recovery-point-offset-checkpoint").unlink()
            for command in COMMANDS:
                row(f"{command} ({n} segments, {'clean' if clean else 'unclean'})", [*command.split(), str(logdir)], runs)


def bench_partitions(root: Path, partitions: int, jobs: int, runs: int) -> None:
    logdir = root / f"partitions-{partitions}"
    if not logdir.exists():
        for p in range(partitions):
            write_partition(logdir / f"t-{p}", 1)
        finish_logdir(logdir)
    print(f"{partitions} partitions of one segment")
    for command in COMMANDS:
        for j in sorted({1, jobs}):
            row(f"{command} --jobs {j}", [*command.split(), "--jobs", str(j), str(logdir)], runs)


def bench_legacy(root: Path, mib: int, runs: int) -> None:
    from bench_verify import make_segment

    env = dict(os.environ, PYTHONPATH=str(ROOT))
    v2 = root / "legacy" / "v2-0"
    if not v2.exists():
        v2.mkdir(parents=True)
        make_segment(v2 / f"{0:020d}.log", mib << 20)
        for magic in (1, 0):
            subprocess.run([sys.executable, "-m", "kseg", "convert", str(v2), "-o", str(root / "legacy" / f"v{magic}-0"),
                            "--to-magic", str(magic)], env=env, stdout=subprocess.DEVNULL, check=True)
    print(f"a {mib} MiB V2 segment and its magic-1 and magic-0 conversions (each alone in a partition)")
    for name in ("v2-0", "v1-0", "v0-0"):
        logdir = root / f"legacy-{name}"
        if not logdir.exists():
            logdir.mkdir()
            shutil.copytree(root / "legacy" / name, logdir / name)
        log = logdir / name / f"{0:020d}.log"
        row(f"verify {name}/....log (file alone)", ["verify", str(log)], runs)
        for command in COMMANDS:
            row(f"{command} {name}", [*command.split(), str(logdir)], runs)
        row(f"dump {name}/....log", ["dump", str(log)], runs)


def write_copies(logdir: Path, copies: int) -> None:
    """``copies`` partitions ``foo-0`` .. ``foo-<copies - 1>``, each the real foo-0's one segment."""
    source = ROOT / "fixtures" / "real" / "kafka-logs" / "foo-0" / f"{0:020d}.log"
    data = source.read_bytes()
    for p in range(copies):
        (logdir / f"foo-{p}").mkdir(parents=True)
        (logdir / f"foo-{p}" / source.name).write_bytes(data)


def split(tree: Path, argv: list[str]) -> dict[str, float]:
    """One run of ``bench/cpu_split.py argv`` with ``tree``'s kseg: its JSON line."""
    import json

    env = dict(os.environ, PYTHONPATH=str(tree))
    done = subprocess.run([sys.executable, str(HERE / "cpu_split.py"), *argv], env=env, stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE, text=True, check=False)
    return json.loads(done.stderr.strip().splitlines()[-1])


def bench_copies(root: Path, copies: int, jobs: int, runs: int, baseline: Path | None) -> None:
    logdir = root / f"copies-{copies}"
    if not logdir.exists():
        write_copies(logdir, copies)
    print(f"{copies} copies of fixtures/real/kafka-logs/foo-0 in one log directory; CPU seconds (best of {runs}): "
          "main before the first pool / while pools ran / after the last, workers; the serial share (before + "
          f"after); the wall time {jobs} idle cores would take (before + after + (while + workers) / {jobs}: the "
          "main process's work in the pool competes for the same cores) and the speed-up over --jobs 1's CPU")
    trees = [("this", ROOT)] + ([("baseline", baseline)] if baseline is not None else [])
    for command in COMMANDS:
        for label, tree in trees:
            one = 0.0
            for j in sorted({1, jobs}):
                best = min((split(tree, [*command.split(), "--jobs", str(j), str(logdir)]) for _ in range(runs)),
                           key=lambda r: r["before"] + r["during"] + r["after"] + r["workers"])
                total = best["before"] + best["during"] + best["after"] + best["workers"]
                serial = best["before"] + best["after"]
                idle = serial + (best["during"] + best["workers"]) / j
                one = one or total
                print(f"  {label:<8} {command + ' --jobs ' + str(j):<28} {best['before']:6.2f} {best['during']:6.2f} "
                      f"{best['after']:6.2f} {best['workers']:6.2f}  total {total:6.2f}  serial {serial / total:4.0%}  "
                      f"idle {idle:6.2f} ({one / idle:4.2f}x)  wall {best['wall']:6.2f}  exit {best['exit']}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--segments", type=int, default=3000)
    parser.add_argument("--partitions", type=int, default=2000)
    parser.add_argument("--mib", type=int, default=64)
    parser.add_argument("--copies", type=int, default=5000)
    parser.add_argument("--baseline", type=Path, default=None, help="another checkout to run beside this one")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--only", default="segments,partitions,legacy,copies")
    parser.add_argument("--keep", type=Path, default=None, help="generate into (and reuse) this directory")
    args = parser.parse_args()
    print(f"machine: {os.uname().machine}, {os.cpu_count()} cores, load {os.getloadavg()[0]:.2f}; python {sys.version.split()[0]}")
    root = args.keep or Path(tempfile.mkdtemp(prefix="kseg-bench-many-"))
    root.mkdir(parents=True, exist_ok=True)
    try:
        only = set(args.only.split(","))
        if "legacy" in only:
            bench_legacy(root, args.mib, args.runs)
        if "segments" in only:
            bench_segments(root, args.segments, args.runs)
        if "partitions" in only:
            bench_partitions(root, args.partitions, args.jobs, args.runs)
        if "copies" in only:
            bench_copies(root, args.copies, args.jobs, args.runs, args.baseline)
    finally:
        if args.keep is None:
            shutil.rmtree(root)


if __name__ == "__main__":
    main()
