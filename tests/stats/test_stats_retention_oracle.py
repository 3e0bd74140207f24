"""The retention forecast against Kafka 4.3.0's own ``UnifiedLog.deleteOldSegments`` (Retention.java).

Every scenario of retention_scenarios.py -- time, size, both, log start, compact, empty policy,
future timestamps in a record or in a file's mtime, every segment old -- is judged by Kafka on a
copy; kseg's forecast must name the same segments deleted, the same log start offset after, and
see each segment's size and ``largestTimestamp`` as Kafka does.
"""

from __future__ import annotations

import pytest
from retention_oracle import retention_or_skip
from retention_scenarios import NOW, SCENARIOS, build, per_topic_configs

from kseg.ops.stats import StatsOptions, collect_stats, topic_configs


@pytest.fixture(scope="module")
def judged(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict, dict]:
    logdir = build(tmp_path_factory.mktemp("retention"))
    kafka = {line["dir"]: line for line in retention_or_skip().run([logdir], NOW, topic_config=per_topic_configs())}
    configs = topic_configs([sc.topic for sc in SCENARIOS], per_topic=per_topic_configs())
    result = collect_stats([logdir], StatsOptions(now_ms=NOW), configs=configs, jobs=1)
    ours = {f"{p.topic}-{p.partition}": (p, result.forecasts[p.path]) for p in result.partitions}
    return kafka, ours


@pytest.mark.parametrize("topic", [sc.topic for sc in SCENARIOS])
def test_forecast_is_kafkas_retention_pass(judged: tuple[dict, dict], topic: str) -> None:
    kafka, ours = judged
    line = kafka[f"{topic}-0"]
    part, fc = ours[f"{topic}-0"]
    assert [[s.base_offset, s.log_bytes, s.largest_timestamp] for s in part.segments] == line["before"]
    kafka_deleted = sorted({b for b, _, _ in line["before"]} - set(line["after"]))
    assert sorted(s.base_offset for s in fc.deleted) == kafka_deleted
    assert fc.new_log_start_offset == line["log_start_offset"]
    assert fc.log_start_offset == line["log_start_offset_before"]
    assert part.log_end_offset == line["log_end_offset"]
    assert fc.rolled == (line["after"] == [line["log_end_offset"]] and line["log_end_offset"] not in
                         [b for b, _, _ in line["before"]])


def test_scenarios_cover_every_rule(judged: tuple[dict, dict]) -> None:
    """The scenarios are not vacuous: each pass deletes somewhere, and a future timestamp pins somewhere."""
    _, ours = judged
    passes = {s.deleted_by for _, fc in ours.values() for s in fc.segments}
    assert passes >= {"log_start", "size", "time"}
    future = ours["future-0"][1]
    assert [s.base_offset for s in future.deleted] == [0]
    assert future.segments[1].held is not None and future.segments[1].held.startswith("future timestamp")
    assert future.segments[2].held is not None and future.segments[2].held.startswith("pinned by segment 6")
    assert ours["all-old-0"][1].rolled
    mtime = ours["mtime-0"][1]
    assert [s.largest_timestamp_from for s in mtime.segments] == ["mtime"] * 4
    assert [s.base_offset for s in mtime.deleted] == [0]
    assert mtime.segments[1].held is not None and mtime.segments[1].held.startswith("future timestamp")
