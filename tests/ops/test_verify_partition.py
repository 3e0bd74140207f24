"""verify on partition and log directories: cross-segment checks, side files, jobs, read-only."""

from __future__ import annotations

import hashlib
import importlib.util
import os
from pathlib import Path

import pytest
from support import FIXTURES

from kseg.ops.verify import run as verify  # the orchestration: POOL_MIN_BYTES lives there
from kseg.ops.verify import verify_paths

_spec = importlib.util.spec_from_file_location("make_verify_fixtures", FIXTURES / "verify" / "make_fixtures.py")
gen = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(gen)  # type: ignore[union-attr]


def seg(directory: Path, base: int, first: int, count: int, *, epoch: int = 0, indexes: bool = True) -> bytes:
    """Write a segment named ``base`` holding ``count`` 1-record batches from offset ``first``."""
    data = b"".join(gen.v2_batch(first + i, 1, epoch=epoch) for i in range(count))
    (directory / gen.name(base, ".log")).write_bytes(data)
    if indexes:
        index, timeindex = gen.kafka_indexes(data, base)
        (directory / gen.name(base, ".index")).write_bytes(index)
        (directory / gen.name(base, ".timeindex")).write_bytes(timeindex)
    return data


def found(*paths: Path, **kw) -> list[tuple]:
    result = verify_paths(list(paths), jobs=1, **kw)
    return [(Path(f.path).name, f.kind, f.severity, f.position, f.offset) for f in result.findings()]


@pytest.fixture
def part(tmp_path: Path) -> Path:
    directory = tmp_path / "orders-0"
    directory.mkdir()
    return directory


def test_contiguous_segments_are_clean(part):
    seg(part, 0, 0, 5)
    seg(part, 5, 5, 5)
    assert found(part) == []


def test_overlapping_segments_and_offsets_missing_between_them(part):
    seg(part, 0, 0, 5)  # 0-4
    seg(part, 3, 3, 5)  # 3-7: overlaps
    seg(part, 20, 20, 2)  # 8-19 are in no segment
    assert found(part) == [
        (gen.name(3, ".log"), "segment-overlap", "error", 0, 3),
        (gen.name(20, ".log"), "segment-gap", "warning", 0, 20),
    ]
    messages = [f.message for f in verify_paths([part]).findings()]
    assert messages == [
        f"{gen.name(0, '.log')} holds offsets up to 4, at or beyond this segment's base offset 3",
        (f"offsets 8..19 are in no segment: {gen.name(3, '.log')} ends at 7 (normal for a compacted topic; "
         "otherwise data is missing)"),
    ]


def test_file_names_missing_indexes_and_leftovers(part):
    seg(part, 0, 0, 3, indexes=False)
    (part / "123.log").write_bytes(b"")
    (part / "abc.index").write_bytes(b"")
    (part / f"{gen.name(0, '.log')}.deleted").write_bytes(b"x")
    (part / f"{gen.name(0, '.index')}.swap").write_bytes(b"x")
    (part / "notes.txt").write_bytes(b"ignored: not a Kafka file")
    got = found(part)
    assert got == [
        (gen.name(0, ".index"), "missing-index", "warning", None, 0),
        (gen.name(0, ".timeindex"), "missing-index", "warning", None, 0),
        (f"{gen.name(0, '.index')}.swap", "stray-file", "warning", None, 0),
        (f"{gen.name(0, '.log')}.deleted", "stray-file", "warning", None, 0),
        ("123.log", "segment-name", "warning", None, 123),
        ("123.index", "missing-index", "warning", None, 123),
        ("123.timeindex", "missing-index", "warning", None, 123),
        ("abc.index", "segment-name", "error", None, None),
        ("abc.index", "missing-log", "warning", None, None),
        # the name Long.parseLong refuses stops the broker (R2.6), said by the log-loading model
        ("orders-0", "load-fails", "error", None, None),
    ]


def test_leader_epoch_checkpoint_against_the_batches(part):
    seg(part, 0, 0, 3, epoch=1)  # epoch 1 from offset 0
    seg(part, 3, 3, 3, epoch=4)  # epoch 4 from offset 3
    checkpoint = part / "leader-epoch-checkpoint"
    checkpoint.write_bytes(b"0\n2\n1 0\n4 3\n")
    assert found(part) == []
    checkpoint.write_bytes(b"0\n3\n1 0\n4 2\n7 40\n")
    assert found(part) == [
        ("leader-epoch-checkpoint", "leader-epoch", "warning", 8, 2),  # epoch 4 starts at 3, not 2
        ("leader-epoch-checkpoint", "leader-epoch", "warning", 12, 40),  # beyond the log end offset 6
    ]
    checkpoint.write_bytes(b"0\n2\n1 0\n0 3\n")
    assert found(part) == [
        ("leader-epoch-checkpoint", "leader-epoch", "error", 8, 3),  # epochs must increase
        ("leader-epoch-checkpoint", "leader-epoch", "warning", None, 3),  # no entry for epoch 4
    ]
    checkpoint.write_bytes(b"0\n3\n1 0\n")
    finding, load = verify_paths([part]).findings()
    assert (finding.kind, finding.severity, finding.position) == ("leader-epoch", "error", 8)
    assert finding.message == "Expected [3] entries in checkpoint file, but found only [1] (Kafka's loader refuses this file)"
    # what the next start does about it, from the log-loading model (R7.8)
    assert (load.kind, load.severity, load.path) == ("load-fails", "error", str(checkpoint))
    assert load.message.startswith("the next start fails: org.apache.kafka.common.errors.KafkaStorageException: "
                                   "Error while reading checkpoint file ")
    assert load.message.endswith(f"{checkpoint} (caused by java.io.IOException: Expected [3] entries in checkpoint file "
                                 f"[{checkpoint}], but found only [1]) -- the log directory goes offline "
                                 "[R7.8 CheckpointFileWithFailureHandler.read]")


def test_the_first_epoch_may_begin_before_the_oldest_segment(part):
    seg(part, 10, 10, 3, epoch=2)
    (part / "leader-epoch-checkpoint").write_bytes(b"0\n1\n2 4\n")
    assert found(part) == []


def test_log_directory_text_files(tmp_path):
    part = tmp_path / "t-0"
    part.mkdir()
    seg(part, 0, 0, 2)
    (tmp_path / "recovery-point-offset-checkpoint").write_bytes(b"0\n1\nt 0 2\n")
    (tmp_path / "replication-offset-checkpoint").write_bytes(b"0\n2\nt 0 2\n")
    (tmp_path / "meta.properties").write_bytes(b"version=1\n")
    (tmp_path / ".lock").write_bytes(b"")
    (part / "partition.metadata").write_bytes(b"version: 0\n")
    (part / "quorum-state").write_bytes(b"{not json")
    assert found(tmp_path) == [
        ("partition.metadata", "checkpoint-file", "error", 0, None),
        ("quorum-state", "checkpoint-file", "error", 1, None),
        ("replication-offset-checkpoint", "checkpoint-file", "error", 10, None),
        # the log-loading model says the log directory goes offline for it (R9.4)
        ("replication-offset-checkpoint", "load-fails", "error", None, None),
        # and partition.metadata without a topic_id line fails t-0's load: NullPointerException (R9.6)
        ("t-0", "load-fails", "error", None, None),
    ]


def test_a_log_directory_named_like_a_partition(tmp_path):
    log_dir = tmp_path / "kafka-logs-1"  # brokers' log dirs are often named like this
    for name in ("orders-0", "orders-1"):
        (log_dir / name).mkdir(parents=True)
        seg(log_dir / name, 0, 0, 2)
        (log_dir / name / "partition.metadata").write_text("version: 0\ntopic_id: q80MkIH9TRe1cdVy6NcxlA\n")
    result = verify_paths([log_dir], jobs=1)
    assert [Path(r.path).relative_to(log_dir).as_posix() for r in result.files] == [
        f"{part}/{name}" for part in ("orders-0", "orders-1")
        for name in (gen.name(0, ".log"), gen.name(0, ".index"), gen.name(0, ".timeindex"), "partition.metadata")
    ]
    assert list(result.findings()) == []


def test_partitions_without_partition_metadata_are_renamed_stray(tmp_path):
    """The same log directory without partition.metadata: the next start renames both partitions -stray
    (R1.5), and verify says so against the missing file, as the verdict does."""
    log_dir = tmp_path / "kafka-logs-1"
    for name in ("orders-0", "orders-1"):
        (log_dir / name).mkdir(parents=True)
        seg(log_dir / name, 0, 0, 2)
    result = verify_paths([log_dir], jobs=1)
    assert [(Path(f.path).relative_to(log_dir).as_posix(), f.kind, f.severity) for f in result.findings()] == [
        (f"{part}/partition.metadata", "not-served", "error") for part in ("orders-0", "orders-1")
    ]
    assert result.exit_code() == 1


def test_unknown_and_missing_files_given_explicitly(tmp_path):
    other = tmp_path / "readme.txt"
    other.write_text("hello")
    result = verify_paths([other, tmp_path / "nope.log"])
    assert [(Path(f.path).name, f.kind, f.severity) for f in result.findings()] == [
        ("nope.log", "unreadable", "error"),
        ("readme.txt", "unknown-file", "info"),
    ]
    assert result.exit_code() == 2


def test_a_fifo_is_unreadable_input(tmp_path):
    fifo = tmp_path / "00000000000000000000.log"
    os.mkfifo(fifo)
    result = verify_paths([fifo])
    assert [f.kind for f in result.findings()] == ["unreadable"] and result.exit_code() == 2


def _snapshot(root: Path) -> dict[str, tuple]:
    """Every file and directory under root: content hash, size, mode and times."""
    out = {}
    for path in sorted(root.rglob("*")):
        stat = path.lstat()
        digest = hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else None
        out[str(path.relative_to(root))] = (digest, stat.st_size, stat.st_mode, stat.st_mtime_ns, stat.st_ctime_ns)
    return out


@pytest.mark.parametrize("jobs", [1, 2])
def test_verify_never_creates_or_changes_a_file(tmp_path, jobs, monkeypatch):
    monkeypatch.setattr(verify, "POOL_MIN_BYTES", 0)  # small fixtures: use the pool anyway
    for name in ("clean/partition", "corrupt/partition-problems", "corrupt/stale-index"):
        src = FIXTURES / "verify" / name
        for path in src.rglob("*"):
            if path.is_file():
                dest = tmp_path / name / path.relative_to(src)
                dest.parent.mkdir(parents=True, exist_ok=True)
                dest.write_bytes(path.read_bytes())
    before = _snapshot(tmp_path)
    for deep in (False, True):
        verify_paths([tmp_path / "clean", tmp_path / "corrupt" / "partition-problems" / "orders-0",
                      tmp_path / "corrupt" / "stale-index" / "orders-0"], jobs=jobs, deep=deep)
    assert _snapshot(tmp_path) == before


def test_jobs_give_the_same_result_in_the_same_order(monkeypatch):
    monkeypatch.setattr(verify, "POOL_MIN_BYTES", 0)
    paths = [FIXTURES / "verify" / "corrupt", FIXTURES / "verify" / "corrupt" / "partition-problems" / "orders-0",
             FIXTURES / "verify" / "clean" / "partition" / "orders-0", FIXTURES / "real" / "kafka-logs"]
    serial = verify_paths(paths, jobs=1)
    pooled = verify_paths(paths, jobs=3)
    assert [r.path for r in serial.files] == [r.path for r in pooled.files]
    assert list(serial.findings()) == list(pooled.findings())
    assert len(serial.files) > 40
