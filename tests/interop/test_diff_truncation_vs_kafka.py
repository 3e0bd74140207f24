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
from diff_truncate import truncations
from oracle import make_batch, make_record

from kseg.ops.diff.run import diff
from kseg.recovery.indexes import build_indexes

T0 = 1_700_000_000_000

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


def _batch(first: int, count: int, epoch: int, tag: str) -> dict:
    records = [make_record(first + i, T0 + first + i, f"k{(first + i) % 4}".encode(), f"{tag}{first + i}".encode())
               for i in range(count)]
    return make_batch(records, partition_leader_epoch=epoch)


def _checkpoint(entries: list[tuple[object, ...]]) -> str:
    return "0\n" + str(len(entries)) + "\n" + "".join(" ".join(map(str, e)) + "\n" for e in entries)


def build(kafka_oracle, root: Path, replicas: list) -> list[Path]:
    """Each replica as log directory ``root/r<n>`` holding partition ``t-0``; the .log files written by Kafka."""
    jobs, dirs = [], []
    for n, (segments, epochs, hw, log_start) in enumerate(replicas):
        logdir = root / f"r{n}"
        pdir = logdir / "t-0"
        pdir.mkdir(parents=True)
        for base, batches in segments.items():
            jobs.append({"op": "write", "out": pdir / f"{base:020d}.log", "batches": [_batch(*b) for b in batches]})
        (pdir / "leader-epoch-checkpoint").write_text(_checkpoint(epochs))
        end = max(b[0] + b[1] for bs in segments.values() for b in bs)
        (logdir / ".kafka_cleanshutdown").write_text('{"version":0,"brokerEpoch":1}')
        (logdir / "recovery-point-offset-checkpoint").write_text(_checkpoint([("t", 0, end)]))
        (logdir / "replication-offset-checkpoint").write_text(_checkpoint([("t", 0, hw)]))
        (logdir / "log-start-offset-checkpoint").write_text(
            _checkpoint([] if log_start is None else [("t", 0, log_start)]))
        dirs.append(pdir)
    results = kafka_oracle.run(jobs)
    assert all(r["ok"] for r in results), results
    for job in jobs:  # the indexes a clean stop leaves, so the load recovers nothing (LogSegment.recover's rules)
        log = Path(job["out"])
        built = build_indexes(log.read_bytes(), int(log.stem))
        log.with_suffix(".index").write_bytes(built.offset_index_bytes())
        log.with_suffix(".timeindex").write_bytes(built.time_index_bytes())
    return dirs


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
            jobs.append((t.leader.directory, t.follower.directory, t.follower.high_watermark, result.new_epoch))
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
