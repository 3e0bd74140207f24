"""The retention forecast against Kafka's ``deleteOldSegments`` on random partitions, one JVM for all.

Each case is a topic of 1-6 segments, in a log directory a clean or an unclean shutdown left, whose batches are stamped old, recent or in the future (and some
with emptied time indexes, so the ``.log``'s mtime counts), a random log-start checkpoint, and random
``retention.ms``, ``retention.bytes`` and ``cleanup.policy``. The cases come from a fixed seed;
``KSEG_STATS_RETENTION_CASES`` sets how many (default 40, a few seconds; any number runs in one JVM)
and ``KSEG_STATS_RETENTION_SEED`` the seed.
"""

from __future__ import annotations

import os
import random

import pytest
from logdirs import LogDir
from retention_oracle import retention_or_skip
from retention_scenarios import DAY, NOW, data_batch

from kseg.ops.stats import StatsOptions, collect_stats, topic_configs

CASES = int(os.environ.get("KSEG_STATS_RETENTION_CASES", "40"))
SEED = int(os.environ.get("KSEG_STATS_RETENTION_SEED", "29"))
STAMPS = (-30 * DAY, -8 * DAY, -2 * DAY, -1000, 5 * DAY)


def _case(rng: random.Random, logdir: LogDir, name: str, log_starts: dict) -> dict[str, str]:
    segments: dict[int, list[bytes]] = {}
    offset = 0
    for _ in range(rng.randint(1, 6)):
        base = offset
        segments[base] = []
        for _ in range(rng.randint(1, 3)):
            count = rng.randint(1, 3)
            segments[base].append(data_batch(offset, count, NOW + rng.choice(STAMPS), size=rng.choice((10, 2500))))
            offset += count
    part = logdir.partition(name, 0, segments)
    if rng.random() < 0.3:
        log_starts[(name, 0)] = rng.randint(0, offset)
    for base in segments:
        mtime = NOW + rng.choice(STAMPS)
        os.utime(part.file(".log", base), ns=(mtime * 1_000_000, mtime * 1_000_000))
        if rng.random() < 0.2:
            part.file(".timeindex", base).write_bytes(b"")
    total = sum(map(len, (b"".join(v) for v in segments.values())))
    return {
        "retention.ms": str(rng.choice((-1, 1, DAY, 3 * DAY, 10 * DAY, 40 * DAY))),
        "retention.bytes": str(rng.choice((-1, -1, 0, total // 3, total // 2, total, total + 1))),
        "cleanup.policy": rng.choice(("delete", "delete", "compact", "compact,delete", "")),
    }


@pytest.fixture(scope="module")
def judged(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict, dict]:
    """Half the cases in a log directory a clean shutdown left, half in one an unclean shutdown left
    (no marker, random recovery points: the next start recovers those segments from their batches)."""
    rng = random.Random(SEED)
    root = tmp_path_factory.mktemp("random")
    clean, unclean = LogDir(root / "clean-logs"), LogDir(root / "unclean-logs")
    log_starts: dict = {}
    configs = {f"r{i}": _case(rng, clean if i % 2 else unclean, f"r{i}", log_starts) for i in range(CASES)}
    points = {(p.topic, 0): rng.randint(0, p.log_end) for p in unclean.partitions}
    paths = [clean.finish(log_starts=log_starts),
             unclean.finish(clean=False, recovery_points=points, log_starts=log_starts)]
    kafka = {line["dir"]: line for line in retention_or_skip().run(paths, NOW, topic_config=configs)}
    result = collect_stats(paths, StatsOptions(now_ms=NOW), topic_configs(list(configs), per_topic=configs), jobs=1)
    ours = {f"{p.topic}-{p.partition}": (p, result.forecasts[p.path]) for p in result.partitions}
    return kafka, ours


def test_every_random_partition(judged: tuple[dict, dict]) -> None:
    kafka, ours = judged
    assert len(kafka) == len(ours) == CASES
    wrong = []
    deleted_somewhere = 0
    for name, line in sorted(kafka.items()):
        part, fc = ours[name]
        kafka_deleted = sorted({b for b, _, _ in line["before"]} - set(line["after"]))
        mine = ([[s.base_offset, s.log_bytes, s.largest_timestamp] for s in part.segments],
                sorted(s.base_offset for s in fc.deleted), fc.new_log_start_offset)
        theirs = (line["before"], kafka_deleted, line["log_start_offset"])
        if mine != theirs:
            wrong.append((name, mine, theirs))
        deleted_somewhere += bool(kafka_deleted)
    assert wrong == []
    assert 0 < deleted_somewhere < CASES  # the cases are neither all kept nor all deleted
