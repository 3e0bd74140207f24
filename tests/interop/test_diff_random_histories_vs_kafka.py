"""``kseg diff``'s truncation on random replica histories, every ordered pair checked against Kafka 4.3.0.

Each history: a common prefix written under rising leader epochs; every replica copied some of it (or
some of another replica's log) and then led on its own under new epochs -- the shape unclean elections,
lagging followers and restored copies leave. Some replicas lost their leader-epoch-checkpoint (an empty
cache: ``truncateToHighWatermark``), some their last entry, some their first segments (a log start above
0). High watermarks are anywhere, even outside the log (Kafka clamps them). The batches are Kafka's (``kafka_oracle``), the truncation
is Kafka's own (DiffTruncate.java on the storage oracle, one JVM for every pair of every history).

Size knob: ``KSEG_DIFF_HISTORIES`` histories (default 24, about 20 s here), seed ``KSEG_DIFF_SEED``.
"""

from __future__ import annotations

import os
import random

from diff_truncate import build_many, truncations

from kseg.ops.diff.run import diff
from kseg.recovery.loading.model import merge_ranges

HISTORIES = int(os.environ.get("KSEG_DIFF_HISTORIES", "24"))
SEED = int(os.environ.get("KSEG_DIFF_SEED", "2026"))


def _run(rng: random.Random, start: int, epoch: int, tag: str, count: int) -> tuple[list, int]:
    batches, offset = [], start
    for _ in range(count):
        size = rng.randint(1, 4)
        batches.append((offset, size, epoch, tag))
        offset += size
    return batches, offset


def history(rng: random.Random) -> list:
    """2 or 3 replicas: (segments, epoch checkpoint, high watermark, log start offset or None) each."""
    prefix, offset, epoch = [], 0, rng.randint(0, 2)
    for _ in range(rng.randint(1, 5)):
        epoch += rng.choice((0, 0, 1, 2))
        run, offset = _run(rng, offset, epoch, "p", 1)
        prefix += run
    next_epoch, logs = epoch + 1, []
    for i in range(rng.choice((2, 3))):
        source = rng.choice(logs) if logs and rng.random() < 0.3 else prefix
        mine = list(source[: rng.randint(1, len(source))])
        end = mine[-1][0] + mine[-1][1]
        for _ in range(rng.randint(0, 2)):  # the times this replica led after it diverged
            run, end = _run(rng, end, next_epoch, f"r{i}e{next_epoch}", rng.randint(1, 3))
            mine += run
            next_epoch += rng.randint(1, 2)
        logs.append(mine)
    return [_replica(rng, batches) for batches in logs]


def _replica(rng: random.Random, batches: list) -> tuple:
    end = batches[-1][0] + batches[-1][1]
    start_at = rng.randrange(len(batches)) if len(batches) > 1 and rng.random() < 0.15 else 0
    kept = batches[start_at:]
    epochs: list[tuple[int, int]] = []
    for first, _, epoch, _ in kept:
        if not epochs or epoch > epochs[-1][0]:
            epochs.append((epoch, first))
    roll = rng.random()
    if roll < 0.15:
        epochs = []  # the checkpoint lost: an empty file
    elif roll < 0.25 and len(epochs) > 1:
        epochs = epochs[:-1]
    log_start = kept[0][0] if start_at else None
    return {kept[0][0]: kept}, epochs, rng.randint(max(0, kept[0][0] - 3), end + 3), log_start  # HW clamped by Kafka


def test_random_histories_truncate_as_kafka_does(kafka_oracle, kafka_storage, tmp_path):
    rng = random.Random(SEED)
    specs = [history(rng) for _ in range(HISTORIES)]
    sets = build_many(kafka_oracle, [(tmp_path / f"h{n}", spec) for n, spec in enumerate(specs)])
    ours, jobs = [], []
    for n, dirs in enumerate(sets):
        result = diff([str(d) for d in dirs])
        for t in result.truncations:
            ours.append((n, t))
            jobs.append((t.leader.directory, t.follower.directory, t.follower.high_watermark_checkpoint or 0,
                         result.new_epoch))  # the raw checkpoint: Kafka clamps it itself
    steps = " | ".join(s for _, t in ours for s in t.truncation.steps)
    for branch in ("both know epoch", "one epoch back", "truncateToHighWatermark", "out of range"):
        assert HISTORIES < 24 or branch in steps, branch  # the default histories take every branch
    theirs = truncations(kafka_storage, jobs)
    assert len(ours) == len(theirs) >= 2 * HISTORIES
    for (n, t), kafka in zip(ours, theirs, strict=True):
        where = f"history {n} {specs[n]}: leader {t.leader.path}, follower {t.follower.path}, steps {t.truncation.steps}"
        assert (t.truncation.truncate_to, t.truncation.restarted_at) == (kafka["truncate_to"], kafka["restarted_at"]), where
        assert t.lost_offsets == merge_ranges([(a, b) for a, b in kafka["lost_batches"]]), where
