"""Proof of ``kseg stats``' numbers: they are what ``kseg dump --format json`` yields for the same files.

For every partition of the fixtures and of the real-data corpus, a test sums dump's batch lines
(sizes, counts, codecs, magics, producers, control batches, timestamps) and compares them with
the partition's object from ``kseg stats --format json``; the partition's bytes are its files'
sizes.  Dump and stats each run once, as separate processes over every path.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from support import CORPUS_REAL, FIXTURES, REPO, require_dir

LOG_DIRS = [FIXTURES / "real" / "kafka-logs", FIXTURES / "txn" / "logs", FIXTURES / "broker" / "restarted-clean",
            FIXTURES / "broker" / "unclean-kill", FIXTURES / "convert"]


def kseg(*args: str) -> list[dict]:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.run([sys.executable, "-m", "kseg", *args], capture_output=True, text=True, env=env, timeout=600)
    assert proc.returncode == 0, proc.stderr
    return [json.loads(line) for line in proc.stdout.splitlines()]


def partition_dirs(roots: list[Path]) -> list[Path]:
    """Every directory holding a segment .log under ``roots``."""
    found = {p.parent for root in roots for p in root.rglob("*.log") if p.name[:20].isdigit()}
    return sorted(found)


def activity_from_dump(batches: list[dict]) -> list[dict]:
    """Each producer's batches, records and first/last maxTimestamp; the ten most active first."""
    found: dict[int, dict] = {}
    for b in batches:
        if b["producer_id"] < 0:
            continue
        count = b["count"] if b["count"] is not None else b["last_offset"] - b["base_offset"] + 1
        entry = found.setdefault(b["producer_id"], {"producer_id": b["producer_id"], "batches": 0, "records": 0,
                                                    "first_timestamp": b["max_timestamp"],
                                                    "last_timestamp": b["max_timestamp"]})
        entry["batches"] += 1
        entry["records"] += count
        entry["first_timestamp"] = min(entry["first_timestamp"], b["max_timestamp"])
        entry["last_timestamp"] = max(entry["last_timestamp"], b["max_timestamp"])
    return sorted(found.values(), key=lambda e: (-e["batches"], e["producer_id"]))[:10]


def expected_from_dump(batches: list[dict]) -> dict:
    """What stats must say, summed from dump's batch lines of one partition."""
    stamps = [b["max_timestamp"] for b in batches if b["max_timestamp"] >= 0]
    return {
        "batches": len(batches),
        "records": sum(b["count"] if b["count"] is not None else b["last_offset"] - b["base_offset"] + 1
                       for b in batches),
        "framed_bytes": sum(b["size"] for b in batches),
        "codecs": dict(Counter(b["codec"] for b in batches)),
        "magics": dict(Counter(str(b["magic"]) for b in batches)),
        "producers": len({b["producer_id"] for b in batches if b["producer_id"] >= 0}),
        "producer_activity": activity_from_dump(batches),
        "control_batches": sum(1 for b in batches if b["is_control"]),
        "transactional_batches": sum(1 for b in batches if b["is_transactional"] and b["producer_id"] >= 0),
        "largest_batch": max((b["size"] for b in batches), default=0),
        "oldest_timestamp": min(stamps, default=None),
        "newest_timestamp": max(stamps, default=None),
    }


def check(dirs: list[Path]) -> int:
    stats = {Path(o["path"]): o for o in kseg("stats", "--format", "json", "-j", "1", *map(str, dirs))
             if o["type"] == "partition"}
    logs = [str(p) for d in dirs for p in sorted(d.glob("*.log")) if p.name[:20].isdigit()]
    dumped: dict[Path, list[dict]] = {d: [] for d in dirs}
    for line in kseg("dump", "--format", "json", *logs):
        if line["type"] == "batch":
            dumped[Path(line["path"]).parent].append(line)
    for d in dirs:
        obj = stats[d]
        obj["framed_bytes"] = obj["log_bytes"] - obj["tail_bytes"]
        expected = expected_from_dump(dumped[d])
        assert {k: obj[k] for k in expected} == expected, d
        assert obj["bytes"] == sum(f.stat().st_size for f in d.iterdir() if f.is_file()), d
        assert obj["log_bytes"] == sum(p.stat().st_size for p in d.glob("*.log") if p.name[:20].isdigit()), d
        assert obj["segments"] == len([p for p in d.glob("*.log") if p.name[:20].isdigit()]), d
    return sum(len(v) for v in dumped.values())


def test_fixture_numbers_are_dumps() -> None:
    dirs = partition_dirs([d for d in LOG_DIRS if d.is_dir()])
    assert len(dirs) >= 20
    assert check(dirs) > 500  # batches compared


@pytest.mark.corpus
def test_corpus_numbers_are_dumps() -> None:
    corpus = require_dir(CORPUS_REAL, "the real-data corpus")
    dirs = partition_dirs([corpus])
    assert len(dirs) >= 100
    assert check(dirs) > 10_000


def test_rollups_add_up() -> None:
    """Topic and log-dir objects are the sums of their partitions; partitions come largest first."""
    objs = kseg("stats", "--format", "json", "-j", "1", str(FIXTURES / "txn" / "logs"),
                str(FIXTURES / "real" / "kafka-logs"))
    parts = [o for o in objs if o["type"] == "partition"]
    groups = [o for o in objs if o["type"] == "consumer_group"]
    assert [o["type"] for o in objs] == ["partition"] * len(parts) + ["topic"] * len({p["topic"] for p in parts}) + [
        "log_dir"] * 2 + ["consumer_group"] * len(groups)
    assert [p["bytes"] for p in parts] == sorted((p["bytes"] for p in parts), reverse=True)
    for kind, key, of in (("topic", "topic", "topic"), ("log_dir", "path", "log_dir")):
        for rollup in (o for o in objs if o["type"] == kind):
            members = [p for p in parts if p[of] == rollup[key]]
            assert rollup["partitions"] == len(members)
            for field in ("bytes", "log_bytes", "segments", "batches", "records", "control_batches"):
                assert rollup[field] == sum(p[field] for p in members), (kind, rollup[key], field)
            sizes = [p["bytes"] for p in members]
            assert rollup["skew"] == round(max(sizes) / (sum(sizes) / len(sizes)), 3)
