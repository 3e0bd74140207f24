"""The read_committed comparison holds a bounded number of keys, whatever the number of keys in the logs
(docs/diff.md §4): Python heap peak measured with tracemalloc, never time.

Two replicas of N = 12 000 distinct keys (the last batches differ, so the state is compared); with a
budget of B = 2 048 keys per replica the comparison splits the key space into buckets and walks each
again.  The peak must stay near what B keys cost, far below what N keys cost (a dict of every key, as
before, took 8.3 MB here; 34.8 MB for 60 000 keys), and the answer must be the one a single bucket gives.
``KSEG_DIFF_MEMORY_KEYS`` scales N (the bound holds for any N; the pure-Python path walks N/B times).
"""

from __future__ import annotations

import os
import tracemalloc

from logdirs import LogDir

from kseg.format import encode_batch
from kseg.format.model import RecordSpec
from kseg.ops.diff import state
from kseg.ops.diff.run import diff

KEYS = int(os.environ.get("KSEG_DIFF_MEMORY_KEYS", "12000"))
BUDGET = 2048
PER_BATCH = 5
T0 = 1_700_000_000_000


def _replica(root, name: str, fork: int) -> str:
    """Partition t-0 with KEYS distinct keys, 5 a batch; from batch ``fork`` on, other values."""
    batches = [encode_batch([RecordSpec(o, T0 + o, b"key-%08d" % o, (b"B" if i >= fork else b"A") * 20)
                             for o in range(i * PER_BATCH, (i + 1) * PER_BATCH)], partition_leader_epoch=0)
               for i in range(KEYS // PER_BATCH)]
    logdir = LogDir(root / name)
    logdir.partition("t", 0, {0: batches})
    logdir.finish()
    return str(root / name / "t-0")


def _peak(paths: list[str]) -> tuple[int, object]:
    tracemalloc.start()
    try:
        result = diff(paths)
        return tracemalloc.get_traced_memory()[1], result
    finally:
        tracemalloc.stop()


def test_many_distinct_keys_in_bounded_memory(tmp_path, monkeypatch):
    batches = KEYS // PER_BATCH
    paths = [_replica(tmp_path, "a", batches), _replica(tmp_path, "b", batches - batches // 10)]
    monkeypatch.setattr(state, "KEY_BUDGET", BUDGET)
    peak, result = _peak(paths)
    assert peak < 4 << 20, f"peak {peak / 2**20:.1f} MB"
    (pair,) = result.pairs
    assert pair.state is not None
    assert (pair.state.keys, pair.state.differing) == (KEYS, KEYS // 10)
    assert pair.state.buckets >= KEYS // BUDGET
    first = KEYS - KEYS // 10
    assert [k for k, _, _ in pair.state.examples] == [b"key-%08d" % o for o in range(first, first + 10)]
    monkeypatch.setattr(state, "KEY_BUDGET", 1 << 30)
    whole = diff(paths).pairs[0].state
    assert whole is not None and whole.buckets == 1
    assert (whole.keys, whole.differing, whole.examples) == (pair.state.keys, pair.state.differing,
                                                              pair.state.examples)
