"""The served-damage check is linear in the segments of a partition.

It asked for the start's touched ``.index`` files, and scanned every base offset for the next
one, once per segment: 10,000 segments cost triage 3.9 s there alone (bench/bench_many.py
``--only segments``).  Counted here, never timed: the touched set is built once per partition.
"""

from __future__ import annotations

from logdirs import LogDir, batch

from kseg.recovery.loading import predict_log_dir
from kseg.recovery.verdict import served


def test_the_touched_indexes_are_asked_for_once_per_partition(tmp_path, monkeypatch):
    logdir = LogDir(tmp_path / "d")
    logdir.partition("t", 0, {base: [batch(base, 1)] for base in range(60)})
    pred = next(p for p in predict_log_dir(logdir.finish()).partitions if p.path.endswith("t-0"))
    calls = []
    original = served.touched_indexes

    def counted(p):
        calls.append(p.path)
        return original(p)

    monkeypatch.setattr(served, "touched_indexes", counted)
    assert served.served_damage(pred) == []
    assert calls == [pred.path]
