"""Kafka 4.3.0's own ``UnifiedLog.deleteOldSegments`` (tests/stats/java/Retention.java), run on copies.

The driver is compiled once per source digest into the jar cache, against the storage oracle
(``../shared/oracle/kafka-4.3.0-oracle.jar``) and the runtime jars of tests/interop/jars.py, as
tests/interop/kafka_storage.py compiles the oracle's own drivers.  One JVM per call, for many log
directories.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path

import jars as _jars
from kafka_storage import ORACLE_JAR
from oracle import JVM_OPTIONS, OracleError, find_java

SOURCE = Path(__file__).resolve().parent / "java" / "Retention.java"


def _classes(javac: str, classpath: Sequence[Path]) -> Path:
    digest = hashlib.sha256(SOURCE.read_bytes() + hashlib.sha256(ORACLE_JAR.read_bytes()).digest()).hexdigest()
    cache = _jars.cache_dir()
    classes = cache / f"retention-driver-{digest[:16]}"
    stamp = classes / ".complete"
    with _jars.cache_lock(cache):
        if not stamp.is_file():
            shutil.rmtree(classes, ignore_errors=True)
            classes.mkdir(parents=True)
            proc = subprocess.run([javac, "-encoding", "UTF-8", "--release", "17", "-nowarn", "-cp",
                                   os.pathsep.join(map(str, classpath)), "-d", str(classes), str(SOURCE)],
                                  capture_output=True, text=True)
            if proc.returncode != 0:
                raise OracleError(f"javac Retention.java failed:\n{proc.stderr}")
            stamp.write_text(digest + "\n")
    return classes


class KafkaRetention:
    """Runs Retention.java: ``run(logdirs, now_ms, config, topic_config)`` -> one dict per partition."""

    def __init__(self) -> None:
        if not ORACLE_JAR.is_file():
            raise OracleError(f"no Kafka oracle at {ORACLE_JAR}")
        self.java, javac = find_java()
        jars = [ORACLE_JAR, *_jars.ensure_jars()]
        self.classpath = [_classes(javac, jars), *jars]

    def run(self, logdirs: Sequence[Path], now_ms: int, config: dict[str, str] | None = None,
            topic_config: dict[str, dict[str, str]] | None = None) -> list[dict]:
        args = ["--now", str(now_ms)]
        for key, value in (config or {}).items():
            args += ["--config", f"{key}={value}"]
        for topic, values in (topic_config or {}).items():
            for key, value in values.items():
                args += ["--topic-config", f"{topic}:{key}={value}"]
        command = [self.java, *JVM_OPTIONS, "-cp", os.pathsep.join(map(str, self.classpath)), "Retention", *args,
                   *map(str, logdirs)]
        proc = subprocess.run(command, capture_output=True, text=True, timeout=600)
        if proc.returncode != 0:
            raise OracleError(f"Retention failed (exit {proc.returncode}):\n{proc.stderr[-4000:]}")
        return [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]


def retention_or_skip() -> KafkaRetention:
    """A ready driver; skips without Java (fails under CI=true, as the interop fixtures do)."""
    import pytest

    try:
        return KafkaRetention()
    except (OracleError, _jars.JarFetchError) as error:
        if os.environ.get("CI", "").lower() != "true":
            pytest.skip(str(error))
        pytest.fail(f"Kafka retention oracle unavailable: {error}", pytrace=False)
