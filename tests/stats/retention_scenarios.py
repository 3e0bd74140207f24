"""Log directories whose next retention pass exercises every rule of ``UnifiedLog.deleteOldSegments``.

One log directory, one topic per scenario, each with its own configs (``--topic-config``), so one
JVM judges them all.  Segments are written as a clean shutdown leaves them (tests/logdirs.py):
indexes as ``LogSegment.recover`` writes them.  Where a ``.timeindex`` is empty Kafka falls back to
the ``.log`` file's modification time, which the scenarios set.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from logdirs import LogDir

from kseg.format import encode_batch
from kseg.format.model import RecordSpec

NOW = 1_800_000_000_000
DAY = 86_400_000


def data_batch(offset: int, count: int, timestamp: int, size: int = 3000, key: bytes | None = b"k") -> bytes:
    """``count`` records from ``offset`` stamped ``timestamp`` (CreateTime), each with a ``size``-byte value."""
    return encode_batch([RecordSpec(offset + i, timestamp, key, b"v" * size) for i in range(count)])


@dataclass
class Scenario:
    topic: str
    config: dict[str, str]
    #: per segment: (timestamp of its batches, number of batches, records per batch, record size)
    segments: list[tuple[int, int, int, int]]
    mtimes: dict[int, int] = field(default_factory=dict)  # segment index -> .log mtime (ms)
    log_start: int | None = None  # the log-start-offset-checkpoint entry
    empty_timeindex: bool = False  # truncate every .timeindex to 0 bytes (Kafka then reads the .log's mtime)


SCENARIOS = [
    # time: two old segments go, the recent active one stays
    Scenario("time", {"retention.ms": str(DAY)}, [(NOW - 9 * DAY, 3, 2, 1000), (NOW - 5 * DAY, 3, 2, 1000),
                                                  (NOW - 1000, 3, 2, 1000)]),
    # a future timestamp in the second segment pins the (old) third one
    Scenario("future", {"retention.ms": str(DAY)}, [(NOW - 9 * DAY, 3, 2, 1000), (NOW + 3 * DAY, 3, 2, 1000),
                                                    (NOW - 9 * DAY, 3, 2, 1000), (NOW - 1000, 3, 2, 1000)]),
    # every segment old, the active one too: all go and Kafka rolls a new one at the log end
    Scenario("all-old", {"retention.ms": str(DAY)}, [(NOW - 9 * DAY, 3, 2, 1000), (NOW - 8 * DAY, 3, 2, 1000)]),
    # size: retention.bytes leaves the newest segments within it
    Scenario("size", {"retention.bytes": "15000", "retention.ms": "-1"},
             [(NOW - 1000, 3, 2, 1000)] * 4),
    # size and time together: size takes one, time the next
    Scenario("size-time", {"retention.bytes": "20000", "retention.ms": str(2 * DAY)},
             [(NOW - 4 * DAY, 3, 2, 1000), (NOW - 3 * DAY, 3, 2, 1000), (NOW - 1 * DAY, 3, 2, 1000),
              (NOW - 1000, 3, 2, 1000)]),
    # compact: only segments wholly below the log start offset go
    Scenario("compact", {"cleanup.policy": "compact", "retention.ms": "1"},
             [(NOW - 9 * DAY, 3, 2, 1000)] * 3, log_start=13),
    # delete with infinite retention: the log start offset still deletes
    Scenario("logstart", {"retention.ms": "-1"}, [(NOW - 9 * DAY, 3, 2, 1000)] * 3, log_start=6),
    # empty time indexes: the file's mtime decides, whatever the records say (a future mtime pins)
    Scenario("mtime", {"retention.ms": str(DAY)}, [(NOW - 9 * DAY, 1, 1, 10)] * 4,
             mtimes={0: NOW - 9 * DAY, 1: NOW + DAY, 2: NOW - 9 * DAY, 3: NOW - 9 * DAY}, empty_timeindex=True),
    # an empty cleanup.policy: like compact, only the log start deletes
    Scenario("nopolicy", {"cleanup.policy": "", "retention.ms": "1"}, [(NOW - 9 * DAY, 3, 2, 1000)] * 2),
]


def build(root: Path) -> Path:
    """The log directory of every scenario, as a clean shutdown leaves it."""
    logdir = LogDir(root / "retention-logs")
    log_starts = {}
    for sc in SCENARIOS:
        segments: dict[int, list[bytes]] = {}
        offset = 0
        for ts, batches, per_batch, size in sc.segments:
            base = offset
            segments[base] = []
            for _ in range(batches):
                segments[base].append(data_batch(offset, per_batch, ts, size))
                offset += per_batch
        part = logdir.partition(sc.topic, 0, segments)
        if sc.log_start is not None:
            log_starts[(sc.topic, 0)] = sc.log_start
        bases = sorted(segments)
        for i, base in enumerate(bases):
            if sc.empty_timeindex:
                part.file(".timeindex", base).write_bytes(b"")
            mtime = sc.mtimes.get(i, NOW - 1000)
            os.utime(part.file(".log", base), ns=(mtime * 1_000_000, mtime * 1_000_000))
    return logdir.finish(log_starts=log_starts)


def per_topic_configs() -> dict[str, dict[str, str]]:
    return {sc.topic: sc.config for sc in SCENARIOS}
