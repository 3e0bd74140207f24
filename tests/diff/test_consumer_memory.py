"""The ``__consumer_offsets`` fold keeps only the partition being compared.

A cluster's offsets topic holds a commit per group and partition of every topic; diff names the groups
of one partition.  20,000 commits of other partitions beside 3 of ``t-0``: the fold's memory holds the
3 (tracemalloc peak; it held every commit before), and the answer is the same.
"""

from __future__ import annotations

import tracemalloc
from pathlib import Path

from diff_replicas import offset_commit

from kseg.format.compression import DEFAULT_MAX_DECOMPRESSED
from kseg.format.model import RecordSpec
from kseg.format.v2_write import encode_batch
from kseg.ops.diff.consumers import committed_offsets


def test_only_the_compared_partitions_commits_are_held(tmp_path: Path):
    logdir = tmp_path / "d"
    pdir = logdir / "__consumer_offsets-0"
    pdir.mkdir(parents=True)
    ours = [("g1", 5, 0), ("g2", 7, None), ("g3", 9, 1)]
    others = [(f"group-{i}", "other", i % 50, i, 0) for i in range(20_000)]
    specs = [RecordSpec(i, 1_700_000_000_000, *offset_commit(g, t, p, o, e)) for i, (g, t, p, o, e) in enumerate(others)]
    specs += [RecordSpec(len(specs) + i, 1_700_000_000_000, *offset_commit(g, "t", 0, o, e))
              for i, (g, o, e) in enumerate(ours)]
    data = b"".join(encode_batch(specs[i:i + 500], partition_leader_epoch=0) for i in range(0, len(specs), 500))
    (pdir / f"{0:020d}.log").write_bytes(data)
    tracemalloc.start()
    try:
        commits = committed_offsets([logdir], "t", 0, DEFAULT_MAX_DECOMPRESSED)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert sorted((c.group, c.offset, c.leader_epoch) for c in commits) == ours
    assert peak < 3 * 1024 * 1024, f"peak {peak / 2**20:.1f} MiB"
