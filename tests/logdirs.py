"""Builders for small whole log directories, written into tmp_path as Kafka 4.3.0 would leave them.

A partition is written as a clean shutdown leaves it: each segment's .log
with the .index/.timeindex that ``LogSegment.recover`` writes (Kafka's own
index rules, kseg.recovery.indexes), a producer snapshot at the log end,
``leader-epoch-checkpoint`` and ``partition.metadata``; the log directory gets
``.kafka_cleanshutdown`` and the three offset checkpoints.  Tests then damage
what their path needs.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from kseg.format import encode_batch
from kseg.format.model import RecordSpec
from kseg.format.snapshot import encode_snapshot
from kseg.recovery.indexes import build_indexes

TOPIC_ID = "AAAAAAAAAAAAAAAAAAAAAQ"


def batch(offset: int, count: int = 1, epoch: int = 0, size: int = 10, **kw: object) -> bytes:
    """One V2 batch of ``count`` records from ``offset``, leader epoch ``epoch``."""
    records = [RecordSpec(offset + i, 1_700_000_000_000 + offset + i, b"k", b"v" * size) for i in range(count)]
    return encode_batch(records, partition_leader_epoch=epoch, **kw)  # type: ignore[arg-type]


def control_batch(offset: int, key: bytes, producer_id: int = 7, epoch: int = 0) -> bytes:
    """A transactional control batch whose one record has ``key`` (a 1-byte key is what R6.4 is about)."""
    value = b"\x00\x00\x00\x00\x00\x00"
    record = RecordSpec(offset, 1_700_000_000_000 + offset, key, value)
    return encode_batch([record], producer_id=producer_id, producer_epoch=0, is_transactional=True,
                        is_control=True, partition_leader_epoch=epoch)


def name(base: int, suffix: str) -> str:
    return f"{base:020d}{suffix}"


def checkpoint(entries: list[tuple[object, ...]]) -> str:
    lines = "".join(" ".join(str(x) for x in e) + "\n" for e in entries)
    return f"0\n{len(entries)}\n{lines}"


@dataclass
class Partition:
    path: Path
    topic: str
    partition: int
    segments: dict[int, bytes] = field(default_factory=dict)

    @property
    def log_end(self) -> int:
        last = max(self.segments)
        data = self.segments[last]
        end = last
        pos = 0
        while pos < len(data):
            base = int.from_bytes(data[pos : pos + 8], "big")
            size = int.from_bytes(data[pos + 8 : pos + 12], "big")
            last_delta = int.from_bytes(data[pos + 23 : pos + 27], "big")
            end = base + last_delta + 1
            pos += 12 + size
        return end

    def file(self, suffix: str, base: int = 0) -> Path:
        return self.path / name(base, suffix)


class LogDir:
    """A log directory under construction."""

    def __init__(self, path: Path) -> None:
        self.path = path
        path.mkdir(parents=True, exist_ok=True)
        self.partitions: list[Partition] = []

    def partition(self, topic: str, number: int, segments: dict[int, list[bytes]],
                  epochs: list[tuple[int, int]] | None = None, snapshot: bool = True,
                  base_snapshots: bool = False) -> Partition:
        """A partition as a clean shutdown leaves it.

        ``base_snapshots``: also the empty producer snapshot Kafka takes at each roll (at every
        segment base above 0), so that a load that rewrites snapshots finds the same bytes.
        """
        part = Partition(self.path / f"{topic}-{number}", topic, number)
        part.path.mkdir()
        for base, batches in segments.items():
            data = b"".join(batches)
            part.segments[base] = data
            (part.path / name(base, ".log")).write_bytes(data)
            build = build_indexes(data, base)
            (part.path / name(base, ".index")).write_bytes(build.offset_index_bytes())
            (part.path / name(base, ".timeindex")).write_bytes(build.time_index_bytes())
        if snapshot and part.log_end > 0:
            (part.path / name(part.log_end, ".snapshot")).write_bytes(encode_snapshot([]))
        for base in segments if base_snapshots else ():
            if base > 0:
                (part.path / name(base, ".snapshot")).write_bytes(encode_snapshot([]))
        (part.path / "leader-epoch-checkpoint").write_text(checkpoint(list(epochs or [(0, 0)])))
        (part.path / "partition.metadata").write_text(f"version: 0\ntopic_id: {TOPIC_ID}")
        self.partitions.append(part)
        return part

    def finish(self, clean: bool = True, recovery_points: dict[tuple[str, int], int] | None = None,
               log_starts: dict[tuple[str, int], int] | None = None,
               high_watermarks: dict[tuple[str, int], int] | None = None) -> Path:
        """Marker and checkpoints; the recovery point and high watermark default to each log end."""
        ends = {(p.topic, p.partition): p.log_end for p in self.partitions}
        rps = ends if recovery_points is None else recovery_points
        hws = ends if high_watermarks is None else high_watermarks
        if clean:
            (self.path / ".kafka_cleanshutdown").write_text('{"version":0,"brokerEpoch":5}')
        for file, values in (("recovery-point-offset-checkpoint", rps), ("replication-offset-checkpoint", hws),
                             ("log-start-offset-checkpoint", log_starts or {})):
            (self.path / file).write_text(checkpoint([(t, p, o) for (t, p), o in sorted(values.items())]))
        return self.path


def tree(root: Path) -> dict[str, tuple[int, int, int, bytes]]:
    """Every path under ``root`` with (size, mtime_ns, atime_ns, bytes): to prove the model changes nothing."""
    found = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for entry in dirnames + filenames:
            path = Path(dirpath) / entry
            stat = path.stat()
            data = path.read_bytes() if path.is_file() else b""
            found[str(path.relative_to(root))] = (stat.st_size, stat.st_mtime_ns, stat.st_atime_ns, data)
    return found


