"""Consumer groups' offline lag in ``kseg stats``: committed offsets from ``__consumer_offsets`` against log ends.

fixtures/txn/logs declares its commits (fixtures/txn/PROVENANCE.md): ``billing`` at 0 on orders-0 and
orders-1, ``audit`` at 10 on orders-1, a transactional commit of ``etl`` payments-0 = 8 that was
committed, and one of ``etl`` orders-0 = 4 that was aborted and must not count.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

from support import FIXTURES, REPO


def stats_json(*paths: str) -> list[dict]:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.run([sys.executable, "-m", "kseg", "stats", "--format", "json", "-j", "1", *paths],
                          capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return [json.loads(line) for line in proc.stdout.splitlines()]


def test_lag_of_the_declared_commits() -> None:
    groups = [o for o in stats_json(str(FIXTURES / "txn" / "logs")) if o["type"] == "consumer_group"]
    assert [(g["group"], g["topic"], g["partition"], g["committed_offset"], g["log_end_offset"], g["lag"])
            for g in groups] == [
        ("billing", "orders", 1, 0, 10, 10),
        ("billing", "orders", 0, 0, 4, 4),
        ("audit", "orders", 1, 10, 10, 0),
        ("etl", "payments", 0, 8, 8, 0),
    ]


def test_log_end_is_taken_from_the_offsets_own_log_dir() -> None:
    """Two log directories with an ``orders`` topic: each group's lag uses its own broker's partition."""
    objs = stats_json(str(FIXTURES / "txn" / "logs"), str(FIXTURES / "broker" / "restarted-clean"))
    ends = {(o["log_dir"], o["topic"], o["partition"]): o["log_end_offset"] for o in objs if o["type"] == "partition"}
    groups = {(g["group"], g["partition"]): g for g in objs if g["type"] == "consumer_group"}
    assert groups[("billing", 1)]["log_end_offset"] == ends[(str(FIXTURES / "txn" / "logs"), "orders", 1)]
    broker = str(FIXTURES / "broker" / "restarted-clean")
    fixture_group = [g for g in objs if g["type"] == "consumer_group" and g["group"] == "fixture-group"]
    assert fixture_group and all(g["log_end_offset"] == ends[(broker, g["topic"], g["partition"])] for g in fixture_group)
    assert all(g["lag"] == g["log_end_offset"] - g["committed_offset"] for g in fixture_group)
