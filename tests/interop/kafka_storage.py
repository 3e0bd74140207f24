"""Kafka 4.3.0's own storage and tools code (``../shared/oracle/``), run from the tests.

``shared/oracle/kafka-4.3.0-oracle.jar`` holds Kafka 4.3.0's log loading, recovery, cleaning and
DumpLogSegments, compiled from the release commit; ``shared/oracle/drivers/`` has the small Java
drivers that run them (see ``shared/oracle/README.md``). This module compiles the drivers once per
source digest into the jar cache and runs them:

    storage = KafkaStorage.create()
    [partition_lines, ...] = storage.load([logdir, ...])          # LoadLogDir: a broker start, on copies
    result = storage.dump(["--files", path, "--deep-iteration"])  # DumpLogSegments in-process
    results = storage.dump_many([[...], [...]])                   # many dumps, one JVM

``load`` returns, per log directory given, the JSON objects ``LoadLogDir`` printed for it (one per
partition directory, then one ``{"type": "logdir"}``). The inputs are never changed: LoadLogDir works on
a copy unless asked otherwise. In pytest use the session fixture ``kafka_storage`` (conftest.py), which
skips without Java and fails under ``CI=true``.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

try:
    from . import jars as _jars
    from .oracle import JVM_OPTIONS, SKIP_MESSAGE, OracleError, find_java
except ImportError:  # imported as a top-level module (pytest rootdir-relative sys.path)
    import jars as _jars  # type: ignore[no-redef]
    from oracle import JVM_OPTIONS, SKIP_MESSAGE, OracleError, find_java  # type: ignore[no-redef]

REPO = Path(__file__).resolve().parents[2]
SHARED = Path(os.environ.get("KSEG_SHARED", REPO.parent / "shared"))
ORACLE_DIR = SHARED / "oracle"
ORACLE_JAR = ORACLE_DIR / "kafka-4.3.0-oracle.jar"
JOPT_JAR = ORACLE_DIR / "lib" / "jopt-simple-5.0.4.jar"
DRIVERS = ORACLE_DIR / "drivers"


def _drivers_digest() -> str:
    digest = hashlib.sha256()
    for source in sorted(DRIVERS.glob("*.java")):
        digest.update(source.name.encode() + b"\0" + source.read_bytes())
    digest.update(hashlib.sha256(ORACLE_JAR.read_bytes()).digest())
    return digest.hexdigest()


def compile_drivers(javac: str, classpath: Sequence[Path], cache: Path) -> Path:
    """The drivers' classes (and CaptureProvider's service file) under ``cache``, compiled once per digest."""
    digest = _drivers_digest()
    classes = cache / f"storage-drivers-{digest[:16]}"
    stamp = classes / ".complete"
    with _jars.cache_lock(cache):
        if stamp.is_file():
            return classes
        shutil.rmtree(classes, ignore_errors=True)
        classes.mkdir(parents=True)
        command = [javac, "-encoding", "UTF-8", "--release", "17", "-nowarn",
                   "-cp", os.pathsep.join(map(str, classpath)), "-d", str(classes),
                   *map(str, sorted(DRIVERS.glob("*.java")))]
        proc = subprocess.run(command, capture_output=True, text=True)
        if proc.returncode != 0:
            raise OracleError(f"javac of the oracle drivers failed (exit {proc.returncode}):\n{proc.stderr}")
        shutil.copytree(DRIVERS / "META-INF", classes / "META-INF")
        stamp.write_text(digest + "\n")
    return classes


@dataclass
class DumpResult:
    """What one DumpLogSegments run printed, its exit code and the files it created or changed."""

    args: list[str]
    exit: int
    stdout: str
    stderr: str
    sidefx: str


class KafkaStorage:
    """Runs the oracle drivers; one JVM per call."""

    def __init__(self, java: str, classpath: Sequence[Path], timeout: float = 1800.0) -> None:
        self.java = java
        self.classpath = os.pathsep.join(map(str, classpath))
        self.timeout = timeout

    @classmethod
    def create(cls) -> KafkaStorage:
        """Find Java 17, fetch the jars (jars.py), compile the drivers. Raises OracleError / JarFetchError."""
        if not ORACLE_JAR.is_file():
            raise OracleError(f"{SKIP_MESSAGE}: no Kafka oracle at {ORACLE_JAR} (set KSEG_SHARED)")
        java, javac = find_java()
        jars = [ORACLE_JAR, *_jars.ensure_jars(), JOPT_JAR]
        classes = compile_drivers(javac, jars, _jars.cache_dir())
        return cls(java, [classes, *jars])

    def _java(self, main: str, args: Sequence[str], cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
        with tempfile.TemporaryDirectory(prefix="kseg-storage-") as tmp:
            command = [self.java, *JVM_OPTIONS, f"-Djava.io.tmpdir={tmp}", "-cp", self.classpath, main, *args]
            return subprocess.run(command, capture_output=True, text=True, timeout=self.timeout,
                                  cwd=cwd, encoding="utf-8", errors="surrogateescape")

    def load(self, logdirs: Sequence[Path | str], *options: str) -> list[list[dict]]:
        """LoadLogDir on copies of ``logdirs`` (one JVM); per log directory, the objects it printed.

        ``options`` are LoadLogDir's (``--no-stray-check``, ``--config KEY=VALUE``, ``--work DIR``, ...).
        """
        if not logdirs:
            return []
        proc = self._java("LoadLogDir", [*options, *map(os.fspath, logdirs)])
        if proc.returncode != 0:
            raise OracleError(f"LoadLogDir failed (exit {proc.returncode}):\n{proc.stderr[-4000:]}")
        groups: list[list[dict]] = [[]]
        for line in proc.stdout.splitlines():
            obj = json.loads(line)
            groups[-1].append(obj)
            if obj.get("type") == "logdir":
                groups.append([])
        groups.pop()
        if len(groups) != len(logdirs):
            raise OracleError(f"LoadLogDir: {len(logdirs)} log directories but {len(groups)} results")
        return groups

    def dump(self, args: Sequence[str], cwd: Path | None = None) -> DumpResult:
        """kafka-dump-log.sh ARGS, run in-process (stdout, stderr, exit code)."""
        return self.dump_many([args], cwd=cwd)[0]

    def dump_many(self, runs: Sequence[Sequence[str]], cwd: Path | None = None) -> list[DumpResult]:
        """Many DumpLogSegments runs in one JVM; each job's side effects are undone before the next."""
        if not runs:
            return []
        with tempfile.TemporaryDirectory(prefix="kseg-dumpjobs-") as tmp:
            lines = []
            for i, args in enumerate(runs):
                if any("\t" in a or "\n" in a for a in args):
                    raise ValueError(f"a Dump job argument holds a tab or newline: {args!r}")
                lines.append("\t".join([os.path.join(tmp, str(i)), *args]))
            jobs = Path(tmp, "jobs")
            jobs.write_text("\n".join(lines) + "\n", encoding="utf-8")
            proc = self._java("Dump", ["--jobs", str(jobs)], cwd=cwd)
            if proc.returncode != 0:
                raise OracleError(f"Dump --jobs failed (exit {proc.returncode}):\n{proc.stderr[-4000:]}")
            out = []
            for i, args in enumerate(runs):
                d = Path(tmp, str(i))

                def read(name: str, d: Path = d) -> str:
                    p = d / name
                    return p.read_bytes().decode("utf-8", "surrogateescape") if p.exists() else ""  # no newline translation

                out.append(DumpResult(list(args), int(read("rc").strip() or -1), read("stdout"), read("stderr"),
                                      read("sidefx")))
        return out


def storage_or_skip() -> KafkaStorage:
    """A ready KafkaStorage for pytest; skips without Java, jars or the oracle, but fails when CI=true."""
    import pytest

    try:
        return KafkaStorage.create()
    except (OracleError, _jars.JarFetchError) as error:
        if os.environ.get("CI", "").lower() != "true":
            pytest.skip(str(error))
        pytest.fail(f"Kafka storage oracle unavailable: {error}", pytrace=False)
