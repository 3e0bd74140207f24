"""Python side of the Apache Kafka oracle: runs KafkaOracle.java (kafka-clients 4.3.0) on job lists.

Interop tests write and read log files with Kafka's own record code and compare with kseg::

    oracle = KafkaOracle.create()          # fetch jars (jars.py) + compile KafkaOracle.java if needed
    oracle.write(path, [make_batch([make_record(0, 1700000000000, b"k", b"v")])])
    info = oracle.read(path)               # what FileRecords.batches() sees
    info = oracle.write_read(path, batches)  # both in one JVM
    results = oracle.run([job, job, ...])  # many jobs, one JVM

In pytest use the session fixture ``kafka_oracle`` (conftest.py), which calls ``oracle_or_skip()``.

Python values are ``bytes``/``None`` for keys, values and header values; this module turns them into
base64 for the JSON wire and back, in both directions.

Jobs (dicts; ``path`` values may be str or os.PathLike):

* ``{"op": "write", "out": PATH, "batches": [BATCH, ...]}``
  -> ``{"ok": True, "size": int, "batch_sizes": [int, ...]}`` or
     ``{"ok": False, "error": "ExceptionClass: message", "batch_index": int}`` (nothing is written).
  BATCH keys (all optional; defaults in brackets): ``magic`` [2], ``codec`` none|gzip|snappy|lz4|zstd [none],
  ``level`` [None = codec default], ``timestamp_type`` CreateTime|LogAppendTime [CreateTime],
  ``log_append_time`` [-1], ``base_offset`` [first record's offset, else the marker's, else 0],
  ``producer_id`` [-1], ``producer_epoch`` [-1], ``base_sequence`` [-1], ``is_transactional`` [False],
  ``is_control_batch`` [True iff end_txn_marker], ``partition_leader_epoch`` [-1],
  ``delete_horizon_ms`` [-1], ``records`` [[]], ``end_txn_marker`` [None].
  RECORD keys: ``offset`` [previous + 1], ``timestamp`` [-1], ``key`` [None], ``value`` [None],
  ``headers`` [[]] as ``[(str, bytes | None), ...]``.
  END_TXN_MARKER keys: ``type`` COMMIT|ABORT, ``coordinator_epoch`` [0], ``offset`` [next offset of the
  batch; must equal it], ``timestamp`` [-1]; appended with ``MemoryRecordsBuilder.appendEndTxnMarker``.
  A batch with no records and no marker builds to 0 bytes (Kafka's builder returns MemoryRecords.EMPTY).
* ``{"op": "read", "in": PATH}`` -> ``{"ok", "file_size", "valid_bytes", "error", "batches"}``;
  ``valid_bytes`` = sum of the sizes of the batches the iterator returned, ``error`` = exception raised
  by the batch iterator itself (or None). Each batch: ``position, sizeInBytes, magic, baseOffset,
  lastOffset, countOrNull, compressionType`` (e.g. "gzip"), ``timestampType`` ("CreateTime",
  "LogAppendTime", "NoTimestampType"), ``maxTimestamp, checksum`` (unsigned), ``isValid, producerId,
  producerEpoch, baseSequence, lastSequence, partitionLeaderEpoch, isTransactional, isControlBatch,
  deleteHorizonMs`` (None if absent), ``records``, ``records_error`` (exception text or None), and
  ``field_errors`` {name: exception text} only when an accessor threw (that field is then None).
  Each record: ``offset, timestamp, sequence, sizeInBytes, keySize, valueSize, key, value`` (bytes|None),
  ``headers`` [(str, bytes|None)]; legacy (V0/V1) records also ``magic, timestampType, isValid,
  checksumOrNull``; records of control batches also ``control`` = {``type`` (ControlRecordType name),
  ``typeId`` (raw id from the key), ``coordinatorEpoch`` (COMMIT/ABORT only)} or {``error``};
  ``field_errors`` as for batches.
* ``{"op": "validate", "in": PATH}`` -> ``{"ok", "file_size", "valid_bytes", "error", "all_valid",
  "batches"}``; each batch ``position, sizeInBytes, magic, error`` (``ensureValid()``, None = accepted),
  ``record_count``, ``records_error`` (iteration with ``Record.ensureValid()`` on each record).
  ``all_valid`` = every batch and record accepted, no iterator error and valid_bytes == file_size.

Any job that cannot run (unknown op, missing file, malformed job) gives ``{"ok": False, "error": ...}``.
Kafka's exceptions are reported as "SimpleClassName: message[; caused by ...]".
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

try:
    from . import jars as _jars
except ImportError:  # imported as a top-level module (pytest rootdir-relative sys.path)
    import jars as _jars  # type: ignore[no-redef]

JAVA_SOURCE = Path(__file__).with_name("KafkaOracle.java")
MAIN_CLASS = "KafkaOracle"
JVM_OPTIONS = ["-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Xss4m"]
MIN_JAVA = 17
SKIP_MESSAGE = "Java 17 not found: interop tests need java and javac on PATH"


class OracleError(RuntimeError):
    """The harness itself failed (JVM crash, compile error, unreadable results)."""


class KafkaRefused(AssertionError):
    """Kafka's builder refused a write job that the test expected to succeed."""


# --------------------------------------------------------------------------- job builders


def make_record(
    offset: int,
    timestamp: int = -1,
    key: bytes | None = None,
    value: bytes | None = None,
    headers: Iterable[tuple[str, bytes | None]] = (),
) -> dict:
    return {"offset": offset, "timestamp": timestamp, "key": key, "value": value,
            "headers": [list(h) for h in headers]}


def make_batch(records: Sequence[dict] = (), **fields: Any) -> dict:
    """A BATCH dict; ``fields`` are any of the batch keys listed in the module doc."""
    return {"records": list(records), **fields}


def make_marker_batch(
    kind: str, offset: int, timestamp: int, producer_id: int, producer_epoch: int,
    coordinator_epoch: int = 0, **fields: Any,
) -> dict:
    """A transactional control batch holding one COMMIT or ABORT marker, as the broker writes it."""
    marker = {"type": kind, "coordinator_epoch": coordinator_epoch, "offset": offset, "timestamp": timestamp}
    return {"base_offset": offset, "producer_id": producer_id, "producer_epoch": producer_epoch,
            "is_transactional": True, "end_txn_marker": marker, **fields}


# --------------------------------------------------------------------------- bytes <-> base64


def _b64(value: bytes | None) -> str | None:
    if value is None:
        return None
    if not isinstance(value, (bytes, bytearray, memoryview)):
        raise TypeError(f"keys, values and header values must be bytes or None, got {type(value).__name__}")
    return base64.b64encode(bytes(value)).decode("ascii")


def _unb64(value: str | None) -> bytes | None:
    return None if value is None else base64.b64decode(value)


def _encode_record(record: dict) -> dict:
    out = dict(record)
    for name in ("key", "value"):
        if name in out:
            out[name] = _b64(out[name])
    out["headers"] = [[k, _b64(v)] for k, v in out.get("headers", [])]
    return out


def _encode_job(job: dict) -> dict:
    out = {k: os.fspath(v) if k in ("in", "out") else v for k, v in job.items()}
    if "batches" in out:
        out["batches"] = [
            {**b, "records": [_encode_record(r) for r in b.get("records", [])]} for b in out["batches"]
        ]
    return out


def _decode_record(record: dict) -> dict:
    for name in ("key", "value"):
        if name in record:
            record[name] = _unb64(record[name])
    if record.get("headers") is not None:
        record["headers"] = [(k, _unb64(v)) for k, v in record["headers"]]
    return record


def _decode_result(result: dict) -> dict:
    for batch in result.get("batches", []):
        for record in batch.get("records") or []:
            _decode_record(record)
    return result


# --------------------------------------------------------------------------- java toolchain


def _java_major(javac: str) -> int | None:
    proc = subprocess.run([javac, "-version"], capture_output=True, text=True)
    match = re.search(r"javac (\d+)", proc.stdout + proc.stderr)
    return int(match.group(1)) if match else None


def find_java() -> tuple[str, str]:
    """(java, javac) from PATH; raises OracleError with SKIP_MESSAGE when absent or older than 17."""
    java, javac = shutil.which("java"), shutil.which("javac")
    if not java or not javac:
        raise OracleError(SKIP_MESSAGE)
    major = _java_major(javac)
    if major is None or major < MIN_JAVA:
        raise OracleError(f"{SKIP_MESSAGE} (found javac version {major})")
    return java, javac


def _source_sha256() -> str:
    return hashlib.sha256(JAVA_SOURCE.read_bytes()).hexdigest()


def compile_oracle(javac: str, jar_paths: Sequence[Path], cache: Path) -> Path:
    """Compile KafkaOracle.java into <cache>/classes unless the stamp shows this source is compiled."""
    classes, stamp = cache / "classes", cache / "classes" / ".source-sha256"
    digest = _source_sha256()
    with _jars.cache_lock(cache):
        if stamp.is_file() and stamp.read_text().strip() == digest:
            return classes
        shutil.rmtree(classes, ignore_errors=True)
        classes.mkdir(parents=True)
        command = [javac, "-encoding", "UTF-8", "--release", str(MIN_JAVA), "-nowarn",
                   "-cp", os.pathsep.join(map(str, jar_paths)), "-d", str(classes), str(JAVA_SOURCE)]
        proc = subprocess.run(command, capture_output=True, text=True)
        if proc.returncode != 0:
            raise OracleError(f"javac failed (exit {proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
        stamp.write_text(digest + "\n")
    return classes


# --------------------------------------------------------------------------- the oracle


class KafkaOracle:
    """Runs jobs through KafkaOracle.java; one JVM per run() call."""

    def __init__(self, java: str, classpath: Sequence[Path], timeout: float = 600.0) -> None:
        self.java = java
        self.classpath = os.pathsep.join(map(str, classpath))
        self.timeout = timeout

    @classmethod
    def create(cls, timeout: float = 600.0) -> KafkaOracle:
        """Find Java, fetch the jars, compile if needed. Raises OracleError / jars.JarFetchError."""
        java, javac = find_java()
        jar_paths = _jars.ensure_jars()
        classes = compile_oracle(javac, jar_paths, _jars.cache_dir())
        return cls(java, [classes, *jar_paths], timeout)

    def run(self, jobs: list[dict]) -> list[dict]:
        """Run all jobs in one JVM; returns one result dict per job, in order."""
        if not jobs:
            return []
        with tempfile.TemporaryDirectory(prefix="kseg-oracle-") as tmp:
            jobs_file, results_file = Path(tmp, "jobs.json"), Path(tmp, "results.json")
            jobs_file.write_text(json.dumps([_encode_job(j) for j in jobs]), encoding="utf-8")
            command = [self.java, *JVM_OPTIONS, f"-Djava.io.tmpdir={tmp}", "-cp", self.classpath,
                       MAIN_CLASS, str(jobs_file), str(results_file)]
            proc = subprocess.run(command, capture_output=True, text=True, timeout=self.timeout)
            if proc.returncode != 0 or not results_file.is_file():
                raise OracleError(f"KafkaOracle JVM failed (exit {proc.returncode}):\n{proc.stderr[-4000:]}")
            results = json.loads(results_file.read_text(encoding="utf-8"))
        if len(results) != len(jobs):
            raise OracleError(f"{len(jobs)} jobs but {len(results)} results")
        return [_decode_result(r) for r in results]

    def write(self, path: str | os.PathLike, batches: list[dict], *, check: bool = True) -> dict:
        """Build ``batches`` with Kafka's MemoryRecordsBuilder into ``path``.

        With check=True a refusal raises KafkaRefused; with check=False the result dict is returned as is.
        """
        result = self.run([{"op": "write", "out": path, "batches": batches}])[0]
        if check and not result["ok"]:
            raise KafkaRefused(f"Kafka refused batch {result.get('batch_index')}: {result['error']}")
        return result

    def write_read(self, path: str | os.PathLike, batches: list[dict]) -> dict:
        """write() then read() in one JVM; raises KafkaRefused if Kafka refuses a batch."""
        jobs = [{"op": "write", "out": path, "batches": batches}, {"op": "read", "in": path}]
        written, read = self.run(jobs)
        if not written["ok"]:
            raise KafkaRefused(f"Kafka refused batch {written.get('batch_index')}: {written['error']}")
        return self._checked(read)

    def read(self, path: str | os.PathLike) -> dict:
        """What FileRecords.batches() and the record iterators report for ``path``."""
        return self._checked(self.run([{"op": "read", "in": path}])[0])

    def validate(self, path: str | os.PathLike) -> dict:
        """ensureValid() of every batch and record of ``path``."""
        return self._checked(self.run([{"op": "validate", "in": path}])[0])

    @staticmethod
    def _checked(result: dict) -> dict:
        if not result["ok"]:
            raise OracleError(result["error"])
        return result


def oracle_or_skip() -> KafkaOracle:
    """A ready KafkaOracle for pytest; skips without Java or jars, but fails when CI=true."""
    import pytest

    try:
        return KafkaOracle.create()
    except (OracleError, _jars.JarFetchError) as error:
        unavailable = str(error).startswith(SKIP_MESSAGE) or isinstance(error, _jars.JarFetchError)
        if unavailable and os.environ.get("CI", "").lower() != "true":
            pytest.skip(str(error))
        pytest.fail(f"Kafka oracle unavailable: {error}", pytrace=False)
