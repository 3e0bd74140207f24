"""Kafka 4.3.0's own follower truncation (DiffTruncate.java on the storage oracle), for ``kseg diff``'s tests.

``truncations(storage, jobs)`` compiles DiffTruncate.java once per source digest (next to the storage
drivers in the jar cache) and runs every job in one JVM. A job is (leader partition dir, follower
partition dir, follower high watermark, new leader epoch); each log is opened with the checkpoints of
its log directory, as LogManager opens it. Returns one dict per job: ``truncate_to``, ``restarted_at``,
``log_end_offset``, ``epochs`` and ``lost_batches`` ([base, last] of each batch the follower lost).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import tempfile
from collections.abc import Sequence
from pathlib import Path

try:
    from . import jars as _jars
    from .kafka_storage import KafkaStorage
    from .oracle import JVM_OPTIONS, OracleError, find_java, make_batch, make_record
except ImportError:  # imported as a top-level module
    import jars as _jars  # type: ignore[no-redef]
    from kafka_storage import KafkaStorage  # type: ignore[no-redef]
    from oracle import JVM_OPTIONS, OracleError, find_java, make_batch, make_record  # type: ignore[no-redef]

from kseg.recovery.indexes import build_indexes

SOURCE = Path(__file__).with_name("DiffTruncate.java")
T0 = 1_700_000_000_000


def _read_checkpoint(logdir: Path, name: str, topic: str, partition: int) -> int:
    path = logdir / name
    if not path.is_file():
        return 0
    for line in path.read_text().splitlines()[2:]:
        t, p, o = line.split()
        if (t, int(p)) == (topic, partition):
            return int(o)
    return 0


def _side(pdir: Path) -> list[str]:
    topic, _, number = pdir.name.rpartition("-")
    logdir = pdir.parent
    return [str(pdir), str(_read_checkpoint(logdir, "log-start-offset-checkpoint", topic, int(number))),
            str(_read_checkpoint(logdir, "recovery-point-offset-checkpoint", topic, int(number))),
            "true" if (logdir / ".kafka_cleanshutdown").exists() else "false"]


def _compiled(storage: KafkaStorage) -> Path:
    _, javac = find_java()
    digest = hashlib.sha256(SOURCE.read_bytes() + storage.classpath.encode()).hexdigest()[:16]
    cache = _jars.cache_dir()
    classes = cache / f"diff-truncate-{digest}"
    with _jars.cache_lock(cache):
        if (classes / ".complete").is_file():
            return classes
        shutil.rmtree(classes, ignore_errors=True)
        classes.mkdir(parents=True)
        proc = subprocess.run([javac, "-encoding", "UTF-8", "--release", "17", "-nowarn", "-cp", storage.classpath,
                               "-d", str(classes), str(SOURCE)], capture_output=True, text=True)
        if proc.returncode != 0:
            raise OracleError(f"javac DiffTruncate failed:\n{proc.stderr}")
        (classes / ".complete").write_text(digest)
    return classes


def truncations(storage: KafkaStorage, jobs: Sequence[tuple[Path, Path, int, int]]) -> list[dict]:
    """Kafka's truncation of each follower against each leader (one JVM for all jobs)."""
    classes = _compiled(storage)
    with tempfile.TemporaryDirectory(prefix="kseg-difftrunc-") as tmp:
        lines = ["\t".join([*_side(lead), *_side(follower), str(hw), str(epoch)])
                 for lead, follower, hw, epoch in jobs]
        jobs_file = Path(tmp, "jobs")
        jobs_file.write_text("\n".join(lines) + "\n")
        command = [storage.java, *JVM_OPTIONS, f"-Djava.io.tmpdir={tmp}",
                   "-cp", os.pathsep.join([str(classes), storage.classpath]), "DiffTruncate", str(jobs_file)]
        proc = subprocess.run(command, capture_output=True, text=True, timeout=900)
    if proc.returncode != 0:
        raise OracleError(f"DiffTruncate failed (exit {proc.returncode}):\n{proc.stderr[-4000:]}")
    results = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    if len(results) != len(jobs):
        raise OracleError(f"{len(jobs)} jobs, {len(results)} results:\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}")
    return results


def _batch(first: int, count: int, epoch: int, tag: str) -> dict:
    records = [make_record(first + i, T0 + first + i, f"k{(first + i) % 4}".encode(), f"{tag}{first + i}".encode())
               for i in range(count)]
    return make_batch(records, partition_leader_epoch=epoch)


def _checkpoint(entries: list[tuple[object, ...]]) -> str:
    return "0\n" + str(len(entries)) + "\n" + "".join(" ".join(map(str, e)) + "\n" for e in entries)


def build(kafka_oracle, root: Path, replicas: list) -> list[Path]:
    """Each replica as log directory ``root/r<n>`` holding partition ``t-0``; the .log files written by Kafka.

    ``replicas``: per replica ({segment base: [(first offset, records, epoch, value tag)]}, its
    leader-epoch-checkpoint entries, its high watermark, its log start offset or None), as a clean stop
    leaves it (marker, checkpoints, the indexes LogSegment.recover would write).
    """
    return build_many(kafka_oracle, [(root, replicas)])[0]


def build_many(kafka_oracle, sets: list[tuple[Path, list]]) -> list[list[Path]]:
    """:func:`build` for many replica sets, every .log written in one JVM."""
    jobs: list[dict] = []
    found = [_layout(root, replicas, jobs) for root, replicas in sets]
    results = kafka_oracle.run(jobs)
    assert all(r["ok"] for r in results), results
    for job in jobs:  # the indexes a clean stop leaves, so the load recovers nothing (LogSegment.recover's rules)
        log = Path(job["out"])
        built = build_indexes(log.read_bytes(), int(log.stem))
        log.with_suffix(".index").write_bytes(built.offset_index_bytes())
        log.with_suffix(".timeindex").write_bytes(built.time_index_bytes())
    return found


def _layout(root: Path, replicas: list, jobs: list[dict]) -> list[Path]:
    dirs = []
    for n, (segments, epochs, hw, log_start) in enumerate(replicas):
        logdir = root / f"r{n}"
        pdir = logdir / "t-0"
        pdir.mkdir(parents=True)
        for base, batches in segments.items():
            jobs.append({"op": "write", "out": pdir / f"{base:020d}.log", "batches": [_batch(*b) for b in batches]})
        (pdir / "leader-epoch-checkpoint").write_text(_checkpoint(epochs))
        end = max(b[0] + b[1] for bs in segments.values() for b in bs)
        (logdir / ".kafka_cleanshutdown").write_text('{"version":0,"brokerEpoch":1}')
        (logdir / "recovery-point-offset-checkpoint").write_text(_checkpoint([("t", 0, end)]))
        (logdir / "replication-offset-checkpoint").write_text(_checkpoint([("t", 0, hw)]))
        (logdir / "log-start-offset-checkpoint").write_text(
            _checkpoint([] if log_start is None else [("t", 0, log_start)]))
        dirs.append(pdir)
    return dirs
