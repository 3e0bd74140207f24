"""The verdict's partition facts over a pool give what they give in one process.

``all_partition_facts`` sends partitions to worker processes when there are many, or when their
segments are large (the served-damage and open-transaction walks read every segment a start serves
as it is).  Here the thresholds are lowered so that a small log directory takes the pool: a torn
tail, an open transaction after a clean shutdown without snapshots (served as committed), a
misdirected ``.index`` (served unreadable) and healthy partitions; the facts, and triage's, verify's
and txn's whole output, are the same with one job and with two, and the pool did run.
"""

from __future__ import annotations

import concurrent.futures
import shutil
import struct
from pathlib import Path

import pytest
from click.testing import CliRunner
from logdirs import LogDir, batch
from txn_damage_dirs import clean_without_snapshots

from kseg.cli import cli
from kseg.recovery.loading import logdir as logdir_module
from kseg.recovery.loading import predict_log_dir
from kseg.recovery.verdict import partition as verdict_partition

REAL = Path(__file__).resolve().parents[2] / "fixtures" / "real" / "kafka-logs"


@pytest.fixture(scope="module")
def logdir(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("pool")
    ld = clean_without_snapshots(root)  # ld/open-0: an open transaction the start forgets
    for item in REAL.iterdir():
        if item.is_dir():
            shutil.copytree(item, ld / item.name)
    extra = LogDir(root / "extra")
    extra.partition("m", 0, {0: [batch(i, 1, size=300) for i in range(40)], 40: [batch(40 + i, 1, size=300)
                                                                                 for i in range(5)]})
    extra.partition("t", 0, {0: [batch(0, 3), batch(3, 2)]})
    extra.finish()
    index = root / "extra" / "m-0" / "00000000000000000000.index"
    data = bytearray(index.read_bytes())
    struct.pack_into(">ii", data, 0, 12, 4459)  # the entry for offset 12 points 7 bytes into its batch
    index.write_bytes(bytes(data))
    torn = root / "extra" / "t-0" / "00000000000000000000.log"
    torn.write_bytes(torn.read_bytes()[:-5])
    for item in (root / "extra").iterdir():
        if item.is_dir():
            shutil.copytree(item, ld / item.name)
    return ld


@pytest.fixture
def pooled(monkeypatch) -> list[int]:
    """Thresholds at their lowest; the list counts the pools started."""
    started: list[int] = []
    real_pool = concurrent.futures.ProcessPoolExecutor

    class Counted(real_pool):  # type: ignore[misc, valid-type]
        def __init__(self, *args, **kwargs):
            started.append(1)
            super().__init__(*args, **kwargs)

    monkeypatch.setattr(concurrent.futures, "ProcessPoolExecutor", Counted)
    monkeypatch.setattr(logdir_module, "POOL_MIN_PARTITIONS", 2)
    monkeypatch.setattr(logdir_module, "POOL_MIN_BYTES", 0)
    return started


def test_the_facts_are_the_same_over_a_pool(logdir, pooled):
    preds = predict_log_dir(logdir, now_ms=1_800_000_000_000).partitions
    one = verdict_partition.all_partition_facts(preds, 1)
    assert pooled == []
    two = verdict_partition.all_partition_facts(preds, 2)
    assert pooled == [1]
    assert one == two
    kinds = {f.kind for facts in one for f in facts}
    assert {"uncommitted-served", "unreadable-served"} <= kinds


@pytest.mark.parametrize("command", [["triage"], ["verify"], ["txn", "--now", "newest"]])
def test_the_commands_print_the_same_with_one_job_and_two(logdir, pooled, command):
    runs = [CliRunner().invoke(cli, [*command, "--jobs", jobs, str(logdir)]) for jobs in ("1", "2")]
    assert runs[0].exit_code == runs[1].exit_code == 1
    assert runs[0].output == runs[1].output
    assert pooled  # the verdict's pool ran for --jobs 2
