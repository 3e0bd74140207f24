"""``kseg diff``'s truncation for every (leader, follower) checked against Kafka 4.3.0's own code.

Replica sets are written the way Kafka writes them: every batch by kafka-clients' MemoryRecordsBuilder
(the ``kafka_oracle`` fixture) at the leader epoch of the broker that led when it was appended; each
replica's ``leader-epoch-checkpoint`` and checkpoints as the broker leaves them at a clean stop. For
each ordered pair, DiffTruncate.java opens copies of both logs with ``UnifiedLog.create``, makes the
leader leader (``assignEpochStartOffset``) and truncates the follower with Kafka's
``UnifiedLog.endOffsetForEpoch`` (``LeaderEpochFileCache.endOffsetFor``), ``truncateTo`` and
``truncateFullyAndStartAt``; kseg's ``truncate_to``, restart and thrown-away batches must be Kafka's.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from diff_truncate import build, truncations

from kseg.ops.diff.run import diff

#: A replica: {segment base: [(first offset, records, leader epoch, value tag)]}, epoch checkpoint,
#: high watermark, log start offset (None: no entry).
SCENARIOS = {
    # a leader (epochs 0, 1), a follower elected uncleanly at epoch 2 after copying 10..11, a lagging one
    "unclean-election": [
        ({0: [(0, 5, 0, "a"), (5, 5, 0, "a"), (10, 2, 1, "a"), (12, 3, 1, "a")]}, [(0, 0), (1, 10)], 15, None),
        ({0: [(0, 5, 0, "a"), (5, 5, 0, "a"), (10, 2, 1, "a"), (12, 8, 2, "b")]}, [(0, 0), (1, 10), (2, 12)], 12, None),
        ({0: [(0, 5, 0, "a"), (5, 5, 0, "a")]}, [(0, 0)], 8, None),
    ],
    # each led once at its own epoch after 0: the follower goes one epoch back, then truncates again
    "one-epoch-back": [
        ({0: [(0, 4, 0, "a"), (4, 6, 1, "l")]}, [(0, 0), (1, 4)], 10, None),
        ({0: [(0, 4, 0, "a"), (4, 3, 0, "a"), (7, 5, 2, "f")]}, [(0, 0), (2, 7)], 6, None),
    ],
    # a follower whose epoch cache was lost (empty file): truncateToHighWatermark, then fetch
    "no-epochs": [
        ({0: [(0, 6, 0, "a"), (6, 4, 1, "a")]}, [(0, 0), (1, 6)], 10, None),
        ({0: [(0, 6, 0, "a"), (6, 4, 1, "a"), (10, 3, 1, "a")]}, [], 7, None),
    ],
    # the leader deleted everything the follower has: truncateFullyAndStartAt the leader's log start
    "leader-log-start-above": [
        ({40: [(40, 10, 1, "a")]}, [(1, 40)], 50, 40),
        ({0: [(0, 10, 0, "a"), (10, 5, 0, "a")]}, [(0, 0)], 15, None),
    ],
    # the same epoch, one replica longer: the shorter leader cuts the follower at its end
    "same-epoch-longer": [
        ({0: [(0, 10, 3, "a")]}, [(3, 0)], 10, None),
        ({0: [(0, 10, 3, "a"), (10, 10, 3, "a")]}, [(3, 0)], 20, None),
    ],
    # the same records in other batches (a rebuilt log): nothing to truncate
    "rebatched": [
        ({0: [(0, 5, 2, "a"), (5, 5, 2, "a")]}, [(2, 0)], 10, None),
        ({0: [(0, 10, 2, "a")]}, [(2, 0)], 10, None),
    ],
}


@pytest.fixture(scope="module")
def replica_sets(kafka_oracle, tmp_path_factory) -> dict[str, list[Path]]:
    root = tmp_path_factory.mktemp("replica-sets")
    return {name: build(kafka_oracle, root / name, spec) for name, spec in SCENARIOS.items()}


def test_every_truncation_is_kafkas(replica_sets, kafka_storage):
    ours, jobs = [], []
    for name, dirs in replica_sets.items():
        result = diff([str(d) for d in dirs])
        for t in result.truncations:
            ours.append((name, t))
            jobs.append((t.leader.directory, t.follower.directory, t.follower.high_watermark_checkpoint or 0,
                         result.new_epoch))  # the raw checkpoint: Kafka clamps it itself
    theirs = truncations(kafka_storage, jobs)
    assert len(theirs) == len(ours) == sum(len(d) * (len(d) - 1) for d in replica_sets.values())
    for (name, t), kafka in zip(ours, theirs, strict=True):
        pair = f"{name}: leader {t.leader.path} follower {t.follower.path}"
        assert (t.truncation.truncate_to, t.truncation.restarted_at) == (kafka["truncate_to"], kafka["restarted_at"]), pair
        lost = [[a, b] for a, b in kafka["lost_batches"]]
        ranges = [[a, b] for a, b in lost]
        merged: list[list[int]] = []
        for a, b in sorted(ranges):
            if merged and a <= merged[-1][1] + 1:
                merged[-1][1] = max(merged[-1][1], b)
            else:
                merged.append([a, b])
        assert t.lost_offsets == merged, pair


def test_the_scenarios_take_every_path_of_the_rule(replica_sets):
    """The fixtures are worth their JVM: each branch of the fetcher's rule is taken at least once."""
    steps = " | ".join(s for dirs in replica_sets.values() for t in diff([str(d) for d in dirs]).truncations
                       for s in t.truncation.steps)
    for branch in ("both know epoch", "one epoch back", "truncateToHighWatermark", "truncateFullyAndStartAt"):
        assert branch in steps, branch
