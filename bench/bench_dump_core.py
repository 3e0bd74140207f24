"""``kseg dump --deep-iteration`` with the compiled core's record rendering, beside Kafka's own JVM reader.

Generates a V2 segment of 16 KiB uncompressed batches of ~100-byte records (bench_reindex.make_segment,
256 MiB by default), reads it once so it sits in the page cache, then times whole processes (start-up
included), best of ``--runs``, output to /dev/null:

* ``kseg dump --deep-iteration`` (text), ``--print-data-log`` (text), ``--format json --deep-iteration``,
  each with the core ("core") and with ``KSEG_PURE=1`` ("pure");
* the reference: Kafka's own record reader (kafka-clients 4.3.0 ``FileRecords`` -> batches -> records)
  writing every record as a JSON line to a buffered stdout (bench/KafkaJsonReader.java, compiled here
  with javac against the jars of tests/interop/jars.py), JVM start-up included. The target: kseg
  at least 2x faster than it.

Rows give the best wall time and the best CPU time (user + system of the process and its children), and
the ratio to the JVM reference of the same run; the load average is printed before and after (on a shared
machine the CPU column is the steadier). Speed targets live here, never in tests.

Usage: python bench/bench_dump_core.py [--dump-mib 256] [--runs 3] [--no-jvm]
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "tests" / "interop"))

from bench_core import KSEG, best_of, compile_kseg  # noqa: E402
from bench_reindex import make_segment, warm_page_cache  # noqa: E402

JAVA_SOURCE = HERE / "KafkaJsonReader.java"


def jvm_reference(workdir: Path) -> list[str] | None:
    """The java command line of the reference, compiled now; None (with a note) without Java or the jars."""
    java, javac = shutil.which("java"), shutil.which("javac")
    if not java or not javac:
        print("no java/javac on PATH: no JVM reference")
        return None
    import jars  # tests/interop/jars.py: the kafka-clients 4.3.0 jars, cached and checked

    jar_paths = jars.ensure_jars()
    classes = workdir / "classes"
    classes.mkdir()
    classpath = os.pathsep.join(map(str, jar_paths))
    subprocess.run([javac, "-encoding", "UTF-8", "-nowarn", "-cp", classpath, "-d", str(classes), str(JAVA_SOURCE)],
                   check=True)
    return [java, "-cp", os.pathsep.join([str(classes), classpath]), "KafkaJsonReader"]


def line(name: str, times: tuple[float, float], size: int, reference: tuple[float, float] | None) -> str:
    wall, cpu = times
    versus = ""
    if reference is not None:
        versus = f"  {reference[0] / wall:5.2f}x the JVM reference (CPU: {reference[1] / cpu:.2f}x)"
    return f"{name:<52} {wall:7.3f} s wall {cpu:7.3f} s CPU  {size / wall / 1e6:6.0f} MB/s{versus}"


def _load() -> str:
    return "load average " + " ".join(f"{x:.2f}" for x in os.getloadavg())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dump-mib", type=int, default=256)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--no-jvm", action="store_true")
    args = parser.parse_args()
    print(subprocess.run([*KSEG, "--version"], capture_output=True, text=True, check=True).stdout.strip())
    with tempfile.TemporaryDirectory() as tmp:
        segment = Path(tmp) / "orders-0" / "00000000000000000000.log"
        segment.parent.mkdir()
        make_segment(segment, args.dump_mib << 20, 16 * 1024)
        size = segment.stat().st_size
        warm_page_cache(segment)
        compile_kseg()
        java = None if args.no_jvm else jvm_reference(Path(tmp))
        print(f"segment {size / 2**20:.0f} MiB of 16 KiB uncompressed V2 batches, ~100-byte records, "
              f"best of {args.runs}, page cache warm; {_load()}")
        reference = None
        if java is not None:
            reference = best_of(args.runs, [*java, str(segment)])
            print(line("JVM: kafka-clients 4.3.0 FileRecords -> JSON lines", reference, size, None))
        cases = (
            ("dump --deep-iteration", ["--deep-iteration"]),
            ("dump --print-data-log", ["--print-data-log"]),
            ("dump --deep-iteration --format json", ["--deep-iteration", "--format", "json"]),
        )
        for pure in (False, True):
            for name, flags in cases:
                seconds = best_of(args.runs, [*KSEG, "dump", *flags, str(segment)], pure=pure)
                print(line(f"kseg {name} ({'pure' if pure else 'core'})", seconds, size, reference))
        if java is not None:
            print(line("JVM reference (again)", best_of(args.runs, [*java, str(segment)]), size, None))
        print(_load())


if __name__ == "__main__":
    main()
