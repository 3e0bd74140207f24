"""Kafka 4.3.0's own metadata replay, run from the tests: ``KafkaImage.java`` against ``../shared/kafka``'s broker jar.

The driver is compiled once per source digest into a cache directory; one JVM
runs every job (``run``).  The classpath is the broker's (``kafka.sh classpath``,
which needs this Python to import pyspark -- the test extra).  Without Java the
tests skip locally and fail under ``CI=true`` (support.IN_CI).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from support import IN_CI, SHARED

DRIVER = Path(__file__).with_name("KafkaImage.java")
GENERATOR = Path(__file__).with_name("GenMetadataLog.java")
KAFKA_SH = SHARED / "kafka" / "kafka.sh"
CACHE = Path(os.environ.get("KSEG_JAR_CACHE", Path.home() / ".cache" / "kseg"))


class KafkaImage:
    """Compiled driver + classpath; :meth:`run` takes jobs ``(log file, "log" | snapshot, offsets)``."""

    def __init__(self, java: str, classpath: str) -> None:
        self.java, self.classpath = java, classpath

    @classmethod
    def create(cls) -> KafkaImage:
        java, javac = shutil.which("java"), shutil.which("javac")
        if java is None or javac is None or not KAFKA_SH.is_file():
            message = f"Java 17 or {KAFKA_SH} not found: Kafka's metadata replay cannot run here"
            if IN_CI:
                pytest.fail(message)
            pytest.skip(message)
        env = {**os.environ, "PYTHON": sys.executable}
        proc = subprocess.run(["bash", str(KAFKA_SH), "classpath"], capture_output=True, text=True, env=env)
        if proc.returncode != 0:
            pytest.fail(f"kafka.sh classpath: {proc.stderr[-2000:]}")
        jars = proc.stdout.strip()
        digest = hashlib.sha256(DRIVER.read_bytes() + GENERATOR.read_bytes() + jars.encode()).hexdigest()[:16]
        classes = CACHE / f"kafka-image-driver-{digest}"
        if not (classes / "GenMetadataLog.class").is_file():
            classes.mkdir(parents=True, exist_ok=True)
            made = subprocess.run([javac, "-nowarn", "--release", "17", "-cp", jars, "-d", str(classes), str(DRIVER),
                                   str(GENERATOR)], capture_output=True, text=True)
            if made.returncode != 0:
                pytest.fail(f"javac KafkaImage.java: {made.stderr[-3000:]}")
        return cls(java, f"{classes}{os.pathsep}{jars}")

    def generate(self, log: Path, seed: int, steps: int) -> None:
        """A metadata log of churn written by Kafka's record classes (``GenMetadataLog.java``)."""
        log.parent.mkdir(parents=True, exist_ok=True)
        proc = subprocess.run([self.java, "-cp", self.classpath, "GenMetadataLog", str(log), str(seed), str(steps)],
                              capture_output=True, text=True, timeout=300)
        if proc.returncode != 0:
            pytest.fail(f"GenMetadataLog failed (exit {proc.returncode}): {proc.stderr[-3000:]}")

    def run(self, jobs: Sequence[tuple[Path, Path | None, Sequence[int]]]) -> list[dict[int, list[dict[str, Any]]]]:
        """Per job, offset -> the entities of Kafka's image there (plus ``fault`` objects under -1)."""
        args: list[str] = []
        for log, start, offsets in jobs:
            args += [str(log), "log" if start is None else str(start), str(len(offsets)), *map(str, offsets)]
        proc = subprocess.run([self.java, "-Xmx512m", "-cp", self.classpath, "KafkaImage", *args],
                              capture_output=True, text=True, timeout=900)
        if proc.returncode != 0:
            pytest.fail(f"KafkaImage failed (exit {proc.returncode}): {proc.stderr[-3000:]}")
        results: list[dict[int, list[dict[str, Any]]]] = []
        at: int | None = None
        for line in proc.stdout.splitlines():
            obj = json.loads(line)
            if obj["type"] == "job":
                results.append({})
            elif obj["type"] == "image":
                at = obj["at"]
                results[-1][obj["at"]] = []
            elif obj["type"] == "end":
                at = None
            elif obj["type"] == "fault" or at is None:
                results[-1].setdefault(-1, []).append(obj)
            else:
                results[-1][at].append(obj)
        return results
