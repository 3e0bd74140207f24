"""``--txn``'s spans agree with ``kseg txn``'s replay (kseg.ops.txn.replay) on fixtures/txn/logs.

Both run the recovery core's TxnTracker (ProducerAppendInfo's rules); this
holds that grep's span bookkeeping -- first offset, marker offset, how it
ended -- is the replay's, transaction for transaction, on partitions with
commits, aborts, an epoch bump, a fenced producer and open transactions.
"""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from support import FIXTURES

from kseg.cli import cli
from kseg.ops.discover import partition_dirs, segment_logs
from kseg.ops.grep.txnspans import txn_spans
from kseg.ops.txn.replay import ReplayRange, replay_partition

LOGS = FIXTURES / "txn" / "logs"
PARTS = partition_dirs(LOGS)


@pytest.mark.parametrize("part", PARTS, ids=[p.name for p in PARTS])
def test_spans_are_the_replays_transactions(part):
    logs = segment_logs(part)
    replay = replay_partition(logs, ReplayRange())
    expected = sorted(
        (t.producer_id, t.first_offset, t.end_offset, {"COMMIT": "committed", "ABORT": "aborted", None: "open"}[t.end])
        for t in replay.transactions
    )
    spans = txn_spans(logs, 1 << 20)
    got = sorted((s.producer_id, s.first, s.end, s.state) for ps in spans.by_producer.values() for s in ps)
    assert got == expected


def test_aborted_records_are_those_the_txnindex_ranges_cover():
    """Every record ``--txn aborted`` prints lies in an aborted range of the replay (what .txnindex holds), and
    every data record of those producers inside those ranges is printed."""
    result = CliRunner().invoke(cli, ["grep", "--format", "json", "--txn", "aborted", str(LOGS)])
    assert result.exit_code == 0
    got = {(json.loads(line)["path"].split("/")[-2], json.loads(line)["offset"]) for line in result.stdout.splitlines()}
    expected = set()
    for part in PARTS:
        logs = segment_logs(part)
        ranges = replay_partition(logs, ReplayRange()).aborted
        dumped = CliRunner().invoke(cli, ["dump", "--format", "json", "--deep-iteration", str(part)])
        for line in dumped.stdout.splitlines():
            batch = json.loads(line)
            if batch.get("type") != "batch" or batch["is_control"] or not batch["is_transactional"]:
                continue
            for r in batch["records"]:
                if any(a.producer_id == batch["producer_id"] and a.first_offset <= r["offset"] <= a.last_offset
                       for a in ranges):
                    expected.add((part.name, r["offset"]))
    assert got == expected
    assert len(expected) >= 5
