"""``kseg.ops.txn.run`` on fixtures/txn/logs (written with kafka-clients 4.3.0: see fixtures/txn/PROVENANCE.md).

Every expected last stable offset, aborted range and producer entry is worked out by hand from Kafka
4.3.0's rules (storage/src/main/java/org/apache/kafka/storage/internals/log/):

* ``ProducerStateManager.lastStableOffset(CompletedTxn)``: an aborted range's LSO is the first offset of
  the earliest transaction still ongoing for *another* producer (``findNextIncompleteTxn``), else the
  marker's offset + 1 -- this is what ``TransactionIndex`` stores (``AbortedTxn``: producer id, first
  offset, last offset = the marker's offset, last stable offset);
* ``ProducerStateManager.firstUnstableOffset``: the lower of the first ongoing (``ongoingTxns``) and the
  first completed-but-unreplicated (``unreplicatedTxns``: marker at or above the high watermark, kept by
  ``removeUnreplicatedTransactions``) transaction's first offset;
* ``UnifiedLog.lastStableOffset``: that offset when below the high watermark, else the high watermark
  (``UnifiedLog.updateHighWatermark`` bounds the checkpoint's value by the log start and end).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from support import FIXTURES

from kseg.index import AbortedTxn
from kseg.ops.txn.coordinator import CoordinatorView, read_consumer_offsets
from kseg.ops.txn.replay import Producer
from kseg.ops.txn.run import PartitionTxn, TxnResult, txn
from kseg.ops.txn.state import last_stable_offset

LOGS = FIXTURES / "txn" / "logs"
T0 = 1_700_000_000_000


@pytest.fixture(scope="module")
def result() -> TxnResult:
    return txn([LOGS])


def part(result: TxnResult, name: str) -> PartitionTxn:
    return next(p for p in result.partitions if Path(p.path).name == name)


def states(p: PartitionTxn) -> list[tuple[int, int, int, str, int | None]]:
    return [(t.txn.producer_id, t.txn.first_offset, t.txn.last_offset, t.state, t.txn.end_offset)
            for t in p.transactions]


def test_partitions_come_hanging_first_then_problems_then_by_name(result):
    names = [Path(p.path).name for p in result.partitions]
    # events-0 is a problem: its LSO 2 is below its high watermark 7 (the ABORT at 7 not yet replicated)
    assert names == ["fenced-0", "orders-1", "snapdiff-0", "events-0", "orders-0", "__consumer_offsets-0",
                     "__transaction_state-0", "payments-0"]
    assert result.exit_code() == 1


def test_committed_and_aborted_interleaved(result):
    p = part(result, "payments-0")
    assert states(p) == [(2000, 0, 1, "committed", 5), (2001, 2, 3, "aborted", 4)]
    # The ABORT at 4 completes 2001's transaction while 2000's (from 0) is still ongoing:
    # lastStableOffset(CompletedTxn) = findNextIncompleteTxn(2001) = 0.
    assert p.state.aborted == [AbortedTxn(0, 2001, 2, 4, 0)]
    # No ongoing transaction after the load; both markers are below the high watermark 8: LSO = HW.
    assert (p.state.first_unstable_offset, p.state.last_stable_offset, p.state.high_watermark) == (None, 8, 8)
    # ProducerStateEntry per producer: epoch, lastSeq, lastDataOffset, offsetDelta, lastTimestamp,
    # coordinatorEpoch, currentTxnFirstOffset.  A marker keeps the cached batch (same epoch) and sets the
    # coordinator epoch and the timestamp (ProducerStateEntry.update).
    assert [pr.key() for pr in p.state.producers] == [
        (0, 1, 1, 1, T0 + 30, 3, -1), (0, 1, 3, 1, T0 + 20, 3, -1), (0, 1, 7, 1, T0 + 40, -1, -1)]
    assert not p.problem


def test_open_within_the_timeout_with_the_coordinator_agreeing(result):
    p = part(result, "orders-0")
    assert states(p) == [(3000, 0, 1, "open", None)]
    t = p.transactions[0]
    assert t.idle_ms == 60_000 and t.coordinator is not None and t.coordinator.transactional_id == "orders-writer"
    assert t.why == "transactional id 'orders-writer' is Ongoing with this partition: the coordinator will still write the marker"
    assert t.abort_command is None
    # ongoingTxns = {0}; 0 < HW 4: LSO 0.
    assert (p.state.first_unstable_offset, p.state.last_stable_offset) == (0, 0)
    assert [(g.group, g.committed_offset, g.stuck, g.behind) for g in p.groups] == [("billing", 0, True, 4)]
    assert p.problem and not p.hanging


def test_open_past_the_timeout_is_hanging_when_the_coordinator_completed_it(result):
    p = part(result, "orders-1")
    assert states(p) == [(3001, 0, 2, "hanging", None)]
    t = p.transactions[0]
    # find-hanging: now - lastTimestamp > max timeout; now = the partition's newest timestamp T0 + 1000000.
    assert t.idle_ms == 1_000_000
    assert t.coordinator is not None and (t.coordinator.state, t.coordinator.partitions) == ("CompleteCommit", ())
    assert t.abort_command == ("kafka-transactions.sh --bootstrap-server BROKER:9092 abort --topic orders "
                               "--partition 1 --start-offset 0")
    # The ABORT lands at the log end 10; nothing else is open: the LSO goes to 11 once it is replicated.
    assert t.new_last_stable_offset == 11 and t.gained == 10
    assert t.unblocks == ("the LSO moves from 0 to 11: read_committed consumers get 10 more offsets; "
                          "the groups stuck at the LSO: 'billing'")
    assert [(g.group, g.committed_offset, g.stuck, g.behind) for g in p.groups] == [
        ("audit", 10, False, 0), ("billing", 0, True, 10)]


def test_the_timeout_is_a_strict_bound():
    # collectCandidateOpenTransactions: transactionDurationMs > maxTransactionTimeoutMs.
    at = txn([LOGS / "orders-1", LOGS / "__transaction_state-0"], timeout_ms=1_000_000)
    below = txn([LOGS / "orders-1", LOGS / "__transaction_state-0"], timeout_ms=999_999)
    assert [t.state for p in at.partitions for t in p.transactions] == ["open"]
    assert [t.state for p in below.partitions for t in p.transactions] == ["hanging"]
    # the fixture's partitions have no partition.metadata: given alone, each is renamed -stray (the verdict's
    # not-served, exit 1); the timeout shows in the hanging count, txn's own reason for exit 1
    assert (len(at.hanging), len(below.hanging)) == (0, 1)
    assert (at.exit_code(), below.exit_code(), at.verdict.exit_code()) == (1, 1, 1)


def test_a_transaction_spanning_segments_with_markers_in_later_segments(result):
    p = part(result, "events-0")
    assert states(p) == [(4000, 0, 5, "committed", 6), (4001, 2, 3, "aborted", 7)]
    # At the ABORT (7) nothing else is ongoing: the range's LSO is 7 + 1.
    assert p.state.aborted == [AbortedTxn(0, 4001, 2, 7, 8)]
    # The broker loads 00000000000000000007.snapshot (4001 open from 2) and replays 7-8: the ABORT at 7
    # completes it into unreplicatedTxns; the high watermark 7 does not remove it (7 is not < 7), so the
    # first unstable offset is 2 and the LSO 2, although no transaction is open.
    assert p.state.snapshot_name == "00000000000000000007.snapshot"
    assert (p.state.first_unstable_offset, p.state.last_stable_offset, p.state.high_watermark) == (2, 2, 7)
    assert p.state.disagreements == []
    assert p.state.notes == [
        "the ABORT at 7 of producer 4001's transaction from 2 is not below the high watermark 7: the LSO stays "
        "at 2 until the high watermark passes 7 (ProducerStateManager.removeUnreplicatedTransactions)"]


def test_a_producer_fenced_by_an_epoch_bump(result):
    p = part(result, "fenced-0")
    assert states(p) == [(5000, 0, 1, "aborted", 2), (5000, 3, 4, "committed", 5), (5001, 6, 7, "hanging", None)]
    assert p.state.aborted == [AbortedTxn(0, 5000, 0, 2, 3)]
    assert (p.state.first_unstable_offset, p.state.last_stable_offset) == (6, 6)
    # The ABORT with epoch 1 drops epoch 0's cached batch (maybeUpdateProducerEpoch); epoch 1's batch 3-4 follows.
    assert p.state.producers[0] == Producer(5000, 1, 1, 4, 1, T0 + 300, 2, -1)
    hanging = p.hanging[0]
    assert hanging.why == ("transactional id 'fencer' is CompleteAbort at epoch 1: this producer (epoch 0) "
                           "was fenced and its marker never reached this partition")
    assert (hanging.new_last_stable_offset, hanging.gained) == (10, 3)


def test_a_snapshot_that_disagrees_with_the_log(result):
    p = part(result, "snapdiff-0")
    assert p.state.disagreements == [
        f"00000000000000000003.snapshot: producer 6000 last_timestamp {T0} in the snapshot, {T0 + 1} from the log",
        "00000000000000000003.snapshot: producer 6000 coordinator_epoch -1 in the snapshot, 0 from the log",
        "00000000000000000003.snapshot: producer 6000 current_txn_first_offset 0 in the snapshot, -1 from the log",
    ]
    # The log alone has no open transaction; the broker loads the snapshot (loadProducerEntry puts 6000's
    # transaction from 0 into ongoingTxns) and replays only offset 3: its LSO is 0.
    assert p.state.log.open == [] and [t.first_offset for t in p.state.broker.open] == [0]
    assert (p.state.first_unstable_offset, p.state.last_stable_offset) == (0, 0)
    assert states(p) == [(6000, 0, 1, "hanging", 2)]
    assert p.transactions[0].why.endswith("the coordinator has no transactional id for producer 6000 (forgotten or expired)")


def test_transactional_offset_commits_count_only_when_committed():
    view = CoordinatorView()
    read_consumer_offsets(view, [LOGS / "__consumer_offsets-0" / "00000000000000000000.log"])
    # etl's commit for orders-0 was ABORTed (dropped); its payments-0 commit was COMMITted.
    assert view.offsets == {("audit", "orders", 1): 10, ("billing", "orders", 0): 0,
                            ("billing", "orders", 1): 0, ("etl", "payments", 0): 8}


def test_without_transaction_state_every_candidate_hangs():
    result = txn([LOGS / "orders-0"], timeout_ms=59_999)
    (t,) = result.partitions[0].transactions
    assert t.state == "hanging" and t.coordinator is None
    assert t.why == "no __transaction_state in the paths given: the coordinator's side is unknown"


@pytest.mark.parametrize(("ongoing", "unreplicated", "hw", "start", "expected"), [
    ([], [], 10, 0, (None, 10)),  # nothing unstable: the high watermark
    ([4, 2], [], 10, 0, (2, 2)),  # the earliest ongoing transaction
    ([6], [3], 10, 0, (3, 3)),  # an unreplicated one earlier still
    ([12], [], 10, 0, (12, 10)),  # unstable only above the high watermark: bounded by it
    ([2], [], 10, 5, (5, 5)),  # maybeIncrementFirstUnstableOffset: not below the log start
])
def test_last_stable_offset(ongoing, unreplicated, hw, start, expected):
    assert last_stable_offset(ongoing, unreplicated, hw, start) == expected


def test_a_partition_kafka_would_not_load_gets_no_verdict(tmp_path):
    """A non-transactional batch while the producer's transaction is open: ProducerAppendInfo.appendDataBatch
    throws InvalidTxnStateException, the load fails (R9.1) -- no LSO, and no abort command is offered."""
    import shutil

    from kseg.format.model import RecordSpec
    from kseg.format.v2 import encode_batch

    shutil.copytree(LOGS / "orders-1", tmp_path / "orders-1")
    log = tmp_path / "orders-1" / "00000000000000000000.log"
    extra = encode_batch([RecordSpec(10, T0 + 1_000_000, None, b"x")], producer_id=3001, producer_epoch=2,
                         base_sequence=3)
    log.write_bytes(log.read_bytes() + extra)
    result = txn([tmp_path / "orders-1"])
    (p,) = result.partitions
    assert (p.state.last_stable_offset, p.state.log_end_offset) == (None, None)
    assert p.state.error == ("the partition does not load: org.apache.kafka.common.errors.InvalidTxnStateException: "
                             "Expected transactional write from producer 3001 at offset 10")
    assert states(p) == [(3001, 0, 2, "open", None)]
    assert p.transactions[0].why == "the partition does not load: no verdict"
    # no transaction verdict, but the next start's verdict: the load throws (exit 1, docs/cli.md)
    assert p.problem and result.exit_code() == 1
    assert [f.kind for f in result.verdict.facts] in (["broker-stops"], ["log-dir-offline"])


@pytest.mark.parametrize("name", ["payments-0", "events-0", "fenced-0", "__consumer_offsets-0"])
def test_aborted_ranges_are_what_reindex_writes_to_the_txnindex(name, tmp_path):
    """The same ranges kseg's recovery core writes to ``.txnindex`` files (kseg reindex -o), segment by segment."""
    from click.testing import CliRunner

    from kseg.cli import cli
    from kseg.index import read_txn_index

    out = tmp_path / "out"
    assert CliRunner().invoke(cli, ["reindex", "-o", str(out), str(LOGS / name)]).exit_code == 0
    written = [entry for index in sorted(out.rglob("*.txnindex")) for entry in read_txn_index(index.read_bytes())]
    assert written == part(txn([LOGS]), name).state.aborted != []
