"""kseg's image against Kafka 4.3.0's own replay (``MetadataBatchLoader`` + ``MetadataDelta``), entity by entity.

Every metadata log of fixtures/ and the real corpus is replayed by Kafka
(``KafkaImage.java``, one JVM) and by kseg, from the log's first record and
from a snapshot in the middle, and the two images are compared at batch ends
chosen at random (seeded; ``KSEG_METADATA_KAFKA_POINTS`` per log, default 8,
plus the log's last batch).  Kafka publishes images only at batch ends (and
holds them back inside a metadata transaction), so those are the points
where an image exists to compare.
"""

from __future__ import annotations

import json
import os
import random
import re
from pathlib import Path
from typing import Any

import pytest
from kafka_image import KafkaImage
from support import CORPUS_REAL, FIXTURES

from kseg.metadata.entities import entities
from kseg.metadata.image import RESOURCE_TYPES
from kseg.metadata.replay import Target, image_at
from kseg.metadata.source import MetaRecord, Snapshot, log_segments, records, snapshots

POINTS = int(os.environ.get("KSEG_METADATA_KAFKA_POINTS", "8"))
#: Generated logs: how many (seeds 1..N) and how many churn steps each (GenMetadataLog.java).
GENERATED = int(os.environ.get("KSEG_METADATA_GEN_LOGS", "3"))
GEN_STEPS = int(os.environ.get("KSEG_METADATA_GEN_STEPS", "400"))
FAULT_OFFSET = re.compile(r"^Error loading metadata log record from offset (\d+)")
COMPARED = ("feature", "broker", "topic", "partition", "config", "acl", "producer_ids")
BROKER_KEYS = ("type", "id", "epoch", "fenced", "in_controlled_shutdown", "log_dirs", "incarnation_id", "rack")
TYPE_IDS = {name: number for number, name in RESOURCE_TYPES.items()}


def _dirs() -> list[Path]:
    found = sorted(FIXTURES.glob("**/__cluster_metadata-0"))
    if CORPUS_REAL.is_dir():
        found += sorted(CORPUS_REAL.glob("**/__cluster_metadata-0"))
    return [d for d in found if log_segments(d) and log_segments(d)[0].name == "00000000000000000000.log"]


def _batch_ends(log: Path, after: int) -> list[int]:
    ends = {r.batch_last_offset for r in records(log) if isinstance(r, MetaRecord) and not r.control
            and r.batch_last_offset >= after}
    return sorted(ends)


def _kseg_view(image_entities: list[dict[str, Any]]) -> list[str]:
    out = []
    for e in image_entities:
        if e["type"] not in COMPARED:
            continue
        if e["type"] == "broker":
            e = {k: e[k] for k in BROKER_KEYS}
        elif e["type"] == "config":
            e = {"type": "config", "resource_type_id": TYPE_IDS[e["resource_type"]], "resource": e["resource"],
                 "key": e["key"], "value": e["value"]}
        out.append(json.dumps(e, sort_keys=True))
    return sorted(out)


def _jobs() -> list[tuple[Path, Snapshot | None, list[int]]]:
    rng = random.Random(0)
    jobs: list[tuple[Path, Snapshot | None, list[int]]] = []
    for metadata in _dirs():
        log = log_segments(metadata)[0]
        found = snapshots(metadata)
        starts: list[Snapshot | None] = [None] + ([found[len(found) // 2]] if found else [])
        for start in starts:
            ends = _batch_ends(log, 0 if start is None else start.end_offset)
            if not ends:
                continue
            points = sorted(set(rng.sample(ends, min(POINTS, len(ends))) + [ends[-1]]))
            jobs.append((log, start, points))
    return jobs


@pytest.fixture(scope="module")
def kafka_image() -> KafkaImage:
    return KafkaImage.create()


def test_kseg_image_equals_kafkas_at_random_batch_ends(kafka_image: KafkaImage) -> None:
    jobs = _jobs()
    assert len(jobs) >= 10
    results = kafka_image.run([(log, None if s is None else s.path, points) for log, s, points in jobs])
    compared = 0
    for (log, start, points), kafka in zip(jobs, results, strict=True):
        for at in points:
            replay = image_at(log.parent, Target(offset=at), from_snapshot=start, use_snapshots=False)
            if at == points[-1]:  # faults: both or neither (fixtures/internal has a record of unknown type)
                assert bool(replay.findings) == bool(kafka.get(-1)), (log, replay.findings, kafka.get(-1))
            want = sorted(json.dumps(e, sort_keys=True) for e in kafka[at])
            assert _kseg_view(list(entities(replay.image))) == want, (str(log), start, at)
            compared += 1
    assert compared >= 50


def _fault_offsets(messages: list[str]) -> list[int]:
    return sorted(int(m.group(1)) for m in map(FAULT_OFFSET.match, messages) if m)


def test_generated_churn_replays_as_kafka_replays_it(kafka_image: KafkaImage, tmp_path: Path) -> None:
    """Logs Kafka's own record classes wrote (GenMetadataLog.java: topics deleted and re-created, reassignments,
    ISR/ELR, fencing, configs, ACLs, quotas, metadata transactions, records Kafka rejects): the images at random
    batch ends and at the end, and the offsets of the records Kafka's replay rejects, are the same."""
    rng = random.Random(1)
    jobs: list[tuple[Path, Snapshot | None, list[int]]] = []
    for seed in range(1, GENERATED + 1):
        log = tmp_path / f"gen{seed}" / "__cluster_metadata-0" / "00000000000000000000.log"
        kafka_image.generate(log, seed, GEN_STEPS)
        ends = _batch_ends(log, 0)
        jobs.append((log, None, sorted(set(rng.sample(ends, min(4 * POINTS, len(ends))) + [ends[-1]]))))
    results = kafka_image.run([(log, None, points) for log, _, points in jobs])
    for (log, _, points), kafka in zip(jobs, results, strict=True):
        for at in points:
            replay = image_at(log.parent, Target(offset=at), use_snapshots=False)
            want = sorted(json.dumps(e, sort_keys=True) for e in kafka[at])
            assert _kseg_view(list(entities(replay.image))) == want, (str(log), at)
        kafka_faults = _fault_offsets([f["message"] for f in kafka.get(-1, [])])
        assert kafka_faults, "the generator writes records Kafka rejects"
        assert _fault_offsets([f.reason for f in replay.findings]) == kafka_faults
