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

from kseg.format.walk import BatchWalk
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
    """The last offsets of the data batches of a segment, or of every segment of a directory."""
    files = log_segments(log) if log.is_dir() else [log]
    ends = {r.batch_last_offset for f in files for r in records(f) if isinstance(r, MetaRecord) and not r.control
            and r.batch_last_offset >= after}
    return sorted(ends)


def _split(log: Path, parts: int) -> list[Path]:
    """Cut one generated segment into ``parts`` segments at batch boundaries, each named by its base offset as
    Kafka names segments; the original file is replaced by them."""
    data = log.read_bytes()
    frames = [(pos, header[0]) for pos, _, _, header, _ in BatchWalk(data, 0, None).frames() if header is not None]
    step = len(frames) // parts
    cuts = [frames[k * step] for k in range(parts)]
    log.unlink()
    out = []
    for (pos, base), (stop, _) in zip(cuts, [*cuts[1:], (len(data), None)], strict=True):
        segment = log.parent / f"{base:020d}.log"
        segment.write_bytes(data[pos:stop])
        out.append(segment)
    return out


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
        log = metadata  # every segment (KafkaImage.java reads a directory's segments in offset order)
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
            replay = image_at(log, Target(offset=at), from_snapshot=start, use_snapshots=False)
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


def test_a_log_of_several_segments_replays_as_kafka_replays_it(kafka_image: KafkaImage, tmp_path: Path) -> None:
    """A generated log cut into four segments at batch boundaries (no real metadata log in the corpus has more
    than one): both replays read the segments in offset order, across every boundary, to the same images and
    the same rejected records."""
    metadata = tmp_path / "segmented" / "__cluster_metadata-0"
    whole = metadata / "00000000000000000000.log"
    kafka_image.generate(whole, GENERATED + 1, GEN_STEPS)
    segments = _split(whole, 4)
    assert [p.name for p in log_segments(metadata)] == [p.name for p in segments] and len(segments) == 4
    bases = [int(p.name[:-4]) for p in segments]
    ends = _batch_ends(metadata, 0)
    rng = random.Random(4)
    # a point in every segment, the last batch of each segment but the last, and the end
    points = {ends[-1], *rng.sample(ends, min(2 * POINTS, len(ends)))}
    points |= {max(e for e in ends if e < base) for base in bases[1:]}
    points |= {min(e for e in ends if e >= base) for base in bases}
    wanted = sorted(points)
    kafka = kafka_image.run([(metadata, None, wanted)])[0]
    assert sorted(kafka.keys() - {-1}) == wanted
    for at in wanted:
        replay = image_at(metadata, Target(offset=at), use_snapshots=False)
        want = sorted(json.dumps(e, sort_keys=True) for e in kafka[at])
        assert _kseg_view(list(entities(replay.image))) == want, at
    kafka_faults = _fault_offsets([f["message"] for f in kafka.get(-1, [])])
    assert kafka_faults and kafka_faults[-1] >= bases[-1], "faults up to the last segment"
    assert _fault_offsets([f.reason for f in replay.findings]) == kafka_faults
