"""Which open transactions hang, what the coordinator says about them, what aborting them unblocks, who is stuck.

KIP-664's rule, as ``kafka-transactions.sh find-hanging`` applies it
(tools/src/main/java/org/apache/kafka/tools/TransactionsCommand.java, Kafka 4.3.0):

1. ``collectCandidateOpenTransactions``: a producer with a
   ``currentTransactionStartOffset`` whose ``now - lastTimestamp`` is *greater*
   than the maximum transaction timeout is a candidate.  Offline there is no
   "now": the partition's newest timestamp stands in for it.
2. ``filterHangingTransactions``: a candidate hangs when the coordinator has
   no transactional id for its producer id, or no description of it, or its
   description's partitions do not include this partition (only then will the
   coordinator never write the marker).  Here the coordinator is its newest
   ``__transaction_state`` record; without that topic every candidate hangs.

``AbortTransactionCommand`` (``abort --topic --partition --start-offset``)
writes an ABORT marker at the log end; the transaction's first offset no
longer pins the first unstable offset.

"Now" is the ``--now`` clock (the wall clock by default); ``None`` here
means each partition's newest timestamp.

Two kinds of open transaction are never given an abort command:

* one whose COMMIT marker the next start cuts (a torn tail, :mod:`kseg.ops.txn.cut`),
  or whose cut marker cannot be told from a COMMIT: its records were
  committed, and an ABORT would hide them from read_committed consumers;
* one the broker will not see at all (a clean shutdown without a
  ``.snapshot``: ``UnifiedLog.rebuildProducerState`` does not read the log);
  an ABORT marker for it completes nothing (``ProducerAppendInfo.appendEndTxnMarker``
  completes a transaction only when the producer state holds one open).
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass

from kseg.ops.txn.coordinator import CoordinatorTxn, CoordinatorView
from kseg.ops.txn.cut import CutBatch
from kseg.ops.txn.replay import Producer, Transaction
from kseg.ops.txn.state import BrokerState

STATES = ("committed", "aborted", "open", "hanging")


@dataclass(slots=True)
class TxnView:
    """One transaction of one partition, with its verdict."""

    path: str
    topic: str
    partition: int
    txn: Transaction
    state: str  # one of STATES
    idle_ms: int | None = None  # newest timestamp - the producer's last timestamp, while open
    coordinator: CoordinatorTxn | None = None
    why: str = ""  # for open and hanging ones: the coordinator's side of it
    abort_command: str | None = None
    unblocks: str | None = None
    new_last_stable_offset: int | None = None
    gained: int = 0  # offsets read_committed consumers get once it is aborted
    lost_marker: CutBatch | None = None  # its marker (or what may be it), cut by the next start
    unseen: bool = False  # open in the log, but not in the producer state the broker loads

    def as_json(self) -> dict[str, object]:
        t = self.txn
        return {
            "type": "transaction", "path": self.path, "topic": self.topic, "partition": self.partition,
            "producer_id": t.producer_id, "producer_epoch": t.producer_epoch, "first_offset": t.first_offset,
            "last_offset": t.last_offset, "state": self.state, "end_offset": t.end_offset,
            "first_timestamp": t.first_timestamp, "last_timestamp": t.last_timestamp,
            "from_snapshot": t.from_snapshot, "idle_ms": self.idle_ms, "why": self.why or None,
            "coordinator": None if self.coordinator is None else self.coordinator.as_json(),
            "abort_command": self.abort_command, "unblocks": self.unblocks,
            "last_stable_offset_after_abort": self.new_last_stable_offset,
            "marker_cut": None if self.lost_marker is None else _cut_json(self.lost_marker),
            "unseen_by_broker": self.unseen,
        }


def _cut_json(cut: CutBatch) -> dict[str, object]:
    return {"file": cut.file, "byte": cut.byte, "bytes_on_disk": cut.on_disk, "bytes_declared": cut.declared,
            "offset": cut.base_offset, "control": cut.control, "producer_id": cut.producer_id,
            "marker": cut.marker}


@dataclass(frozen=True, slots=True)
class Group:
    """A consumer group's committed offset for one partition (``__consumer_offsets``)."""

    group: str
    topic: str
    partition: int
    committed_offset: int
    stuck: bool  # committed at the LSO while an open transaction pins it
    behind: int | None  # log end - committed offset

    def as_json(self) -> dict[str, object]:
        return {"type": "group", "group": self.group, "topic": self.topic, "partition": self.partition,
                "committed_offset": self.committed_offset, "stuck": self.stuck, "behind": self.behind}


def _coordinator_says(coord: CoordinatorTxn | None, txn: Transaction, topic: str, partition: int,
                      view: CoordinatorView) -> tuple[bool, str]:
    """(the coordinator will still write the marker, why) -- ``filterHangingTransactions``."""
    if view.transaction_partitions == 0:
        return False, "no __transaction_state in the paths given: the coordinator's side is unknown"
    if coord is None:
        return False, f"the coordinator has no transactional id for producer {txn.producer_id} (forgotten or expired)"
    who = f"transactional id {coord.transactional_id!r}"
    if (topic, partition) in coord.partitions:
        return True, f"{who} is {coord.state} with this partition: the coordinator will still write the marker"
    if coord.producer_epoch is not None and coord.producer_epoch > txn.producer_epoch:
        return False, (f"{who} is {coord.state} at epoch {coord.producer_epoch}: this producer (epoch "
                       f"{txn.producer_epoch}) was fenced and its marker never reached this partition")
    if coord.state in ("CompleteCommit", "CompleteAbort"):
        return False, f"{who} is {coord.state}: the coordinator completed it without a marker here"
    return False, f"{who} is {coord.state} and does not list this partition"


def _idle(state: BrokerState, producer: Producer | None, now_ms: int | None) -> int | None:
    """``now - lastTimestamp`` (find-hanging's measure); ``now_ms`` None: the partition's newest timestamp."""
    now = state.newest_timestamp if now_ms is None else now_ms
    if producer is None or producer.last_timestamp < 0 or now < 0:
        return None
    return now - producer.last_timestamp


def _transactions(state: BrokerState) -> list[Transaction]:
    """The log's transactions, plus open ones only the broker's snapshot knows; by first offset."""
    seen = {(t.producer_id, t.first_offset) for t in state.log.transactions}
    extra = [t for t in state.broker.open if (t.producer_id, t.first_offset) not in seen]
    return sorted(state.log.transactions + extra, key=lambda t: (t.first_offset, t.producer_id))


def classify(topic: str, partition: int, path: str, state: BrokerState, view: CoordinatorView,
             timeout_ms: int, bootstrap: str, now_ms: int | None = None,
             cut: tuple[CutBatch, ...] = ()) -> list[TxnView]:
    """Every transaction with its state; the open ones the broker still sees checked against KIP-664.

    ``cut``: the batches the next start removes (:func:`kseg.ops.txn.cut.cut_batches`).
    """
    broker_open = {(t.producer_id, t.first_offset) for t in state.broker.open}
    out = []
    for txn in _transactions(state):
        loaded_open = (txn.producer_id, txn.first_offset) in broker_open
        if txn.end is not None and not loaded_open:
            out.append(TxnView(path, topic, partition, txn, "committed" if txn.end == "COMMIT" else "aborted"))
            continue
        view_ = TxnView(path, topic, partition, txn, "open")
        if not loaded_open:
            view_.unseen = True
            view_.why = _unseen_why(state, txn)
            out.append(view_)
            continue
        if txn.end is not None:
            view_.why = (f"the log has its {txn.end} at {txn.end_offset}, but the producer state the broker "
                         "loads (its snapshot) still holds it open; ")
        if state.last_stable_offset is None:
            view_.why = "the partition does not load: no verdict"
            out.append(view_)
            continue
        view_.lost_marker = _lost_marker(txn, cut)
        if view_.lost_marker is not None:
            view_.why += _lost_marker_why(view_.lost_marker, txn) + "; "
        view_.idle_ms = _idle(state, state.broker.producers.get(txn.producer_id), now_ms)
        view_.coordinator = view.by_producer(txn.producer_id)
        completes, why = _coordinator_says(view_.coordinator, txn, topic, partition, view)
        view_.why += why
        if view_.idle_ms is not None and view_.idle_ms > timeout_ms and not completes:
            view_.state = "hanging"
            if view_.lost_marker is None or view_.lost_marker.marker == "ABORT":
                _remedy(view_, state, bootstrap)
        out.append(view_)
    return out


def _lost_marker(txn: Transaction, cut: tuple[CutBatch, ...]) -> CutBatch | None:
    """The first batch cut at or after the transaction's data that is, or may be, its marker."""
    for batch in cut:
        if batch.base_offset is not None and batch.base_offset <= max(txn.first_offset, txn.last_offset):
            continue
        if batch.control is False or (batch.producer_id is not None and batch.producer_id != txn.producer_id):
            continue
        return batch
    return None


def _lost_marker_why(cut: CutBatch, txn: Transaction) -> str:
    """What was cut, and what the broker does without it."""
    at = f"offset {cut.base_offset}" if cut.base_offset is not None else "the log end"
    where = f"{at} ({cut.where})"
    records = f"its records at offsets {txn.first_offset}-{txn.last_offset}"
    if cut.marker == "ABORT":
        return (f"its ABORT marker at {where} is cut by the next start ({cut.why}): the broker holds the "
                "transaction open again; aborting it writes the ABORT that was lost")
    if cut.marker == "COMMIT":
        what = f"its COMMIT marker at {where} was written and is cut by the next start ({cut.why})"
        advice = (f"Do not abort it: an ABORT would hide {records}, which committed, from read_committed "
                  "consumers; copy the partition from a replica that holds the marker")
    else:
        what = (f"a control batch of producer {txn.producer_id} at {where} is cut by the next start before its "
                f"type ({cut.why}): it may be this transaction's COMMIT" if cut.control else
                f"the batch at {where} is cut by the next start ({cut.why}) before its header says what it is: "
                "it may be this transaction's COMMIT")
        advice = (f"Do not abort it before a replica shows what the batch was: were it a COMMIT, an ABORT would "
                  f"hide {records}, which committed, from read_committed consumers")
    return (f"{what}. After the start the broker holds the transaction open and pins the LSO at "
            f"{txn.first_offset}; a replica that has the marker gives it back when this broker follows it "
            "(the follower truncates to the leader's log and fetches the marker again); with none, nothing "
            f"writes it again. {advice}")


def _unseen_why(state: BrokerState, txn: Transaction) -> str:
    """An open transaction of the log that the broker's producer state will not hold."""
    records = f"offsets {txn.first_offset}-{txn.last_offset}"
    if not state.log_not_read:
        return "open in the log but not in the producer state the broker loads (see the snapshot)"
    return (f"open in the log, but the broker will not see it: after a clean shutdown without a .snapshot it "
            "does not read the log for producer state (UnifiedLog.rebuildProducerState takes it for an upgrade "
            f"from an old message format), so the LSO is the high watermark and read_committed consumers read "
            f"{records}, which never committed; a marker written later completes nothing "
            "(ProducerAppendInfo.appendEndTxnMarker: no transaction open), so even an ABORT leaves them readable. "
            "Removing .kafka_cleanshutdown before the start makes the broker replay the log (R6.3b) and hold "
            "the transaction open")


def _remedy(view_: TxnView, state: BrokerState, bootstrap: str) -> None:
    """The abort command, and the LSO once its marker is written at the log end and replicated."""
    txn = view_.txn
    words = ["kafka-transactions.sh", "--bootstrap-server", bootstrap, "abort", "--topic", view_.topic,
             "--partition", str(view_.partition), "--start-offset", str(txn.first_offset)]
    view_.abort_command = shlex.join(words)  # the topic is a directory's name: quoted, as pasting runs it
    assert state.log_end_offset is not None and state.last_stable_offset is not None
    mine = (txn.producer_id, txn.first_offset)
    others = [t.first_offset for t in state.broker.open if (t.producer_id, t.first_offset) != mine]
    new_lso = min(others) if others else state.log_end_offset + 1  # the marker takes the next offset
    view_.new_last_stable_offset = new_lso
    view_.gained = max(0, min(new_lso, state.log_end_offset) - state.last_stable_offset)
    if view_.gained:
        view_.unblocks = (f"the LSO moves from {state.last_stable_offset} to {new_lso}: read_committed consumers "
                          f"get {view_.gained} more offsets")
    elif others and min(others) < txn.first_offset:
        view_.unblocks = f"nothing by itself: the transaction at {min(others)} still pins the LSO"
    else:
        view_.unblocks = "nothing: the LSO is not pinned by it"


def groups_of(topic: str, partition: int, state: BrokerState, view: CoordinatorView) -> list[Group]:
    """Groups with a committed offset for this partition; stuck ones are committed at a pinned LSO."""
    lso, end = state.last_stable_offset, state.log_end_offset
    pinned = state.first_unstable_offset is not None and lso == state.first_unstable_offset
    out = []
    for (group, t, p), offset in sorted(view.offsets.items()):
        if (t, p) != (topic, partition):
            continue
        behind = None if end is None else max(0, end - offset)
        out.append(Group(group, t, p, offset, pinned and offset == lso, behind))
    return out
