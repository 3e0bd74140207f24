"""txn's per-partition replays spread over ``--jobs`` processes give the serial answer and progress.

40 partitions (above ``POOL_MIN_PARTITIONS``): transactions committed, aborted and left open, a torn
tail.  ``txn(jobs=2)`` must start a pool for the replays and return the same partitions, states and
verdict as ``txn(jobs=1)``, and advance the progress by the same bytes in all.
"""

from __future__ import annotations

import concurrent.futures

from logdirs import LogDir, batch, control_batch

from kseg.ops.txn import run as txn_run
from kseg.recovery.loading.logdir import POOL_MIN_PARTITIONS

PARTITIONS = 40
COMMIT, ABORT = b"\x00\x00\x00\x01", b"\x00\x00\x00\x00"


def _log_dir(root):
    logdir = LogDir(root / "txn")
    for number in range(PARTITIONS):
        txn = dict(producer_id=number, producer_epoch=0, base_sequence=0, is_transactional=True)
        batches = [batch(0, 2), batch(2, 2, **txn)]
        if number % 3 == 0:
            batches.append(control_batch(4, COMMIT, producer_id=number))
        elif number % 3 == 1:
            batches.append(control_batch(4, ABORT, producer_id=number))
        part = logdir.partition("t", number, {0: batches})
        if number % 7 == 6:
            log = part.file(".log")
            log.write_bytes(log.read_bytes()[:-3])
    return logdir.finish(clean=False)


def test_the_replays_in_a_pool_give_the_serial_answer(tmp_path, monkeypatch):
    assert PARTITIONS >= POOL_MIN_PARTITIONS
    path = _log_dir(tmp_path)
    read: dict[int, list[int]] = {1: [], 2: []}
    serial = txn_run.txn([path], now_ms=1_800_000_000_000, jobs=1, advance=read[1].append)
    pools: list[int] = []
    real = concurrent.futures.ProcessPoolExecutor

    def counted(*args, **kwargs):
        pools.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(concurrent.futures, "ProcessPoolExecutor", counted)
    pooled = txn_run.txn([path], now_ms=1_800_000_000_000, jobs=2, advance=read[2].append)
    assert len(pools) == 3  # the model's partitions, the verdict's facts, then the replays
    assert [p.as_json() for p in pooled.partitions] == [p.as_json() for p in serial.partitions]
    assert [[t.state for t in p.transactions] for p in pooled.partitions] == \
        [[t.state for t in p.transactions] for p in serial.partitions]
    assert pooled.summary() == serial.summary()
    assert {t.state for p in serial.partitions for t in p.transactions} >= {"committed", "aborted"}
    assert sum(read[2]) == sum(read[1]) > 0
    assert len(read[2]) == PARTITIONS  # one step per partition's replay
