"""``kseg txn``: transactions, the last stable offset, hanging transactions and stuck groups, offline.

Per partition (data only; :mod:`kseg.render.txn` prints):

* the log as the broker's next start keeps it: log start and end offset from
  the loading model (:mod:`kseg.recovery.loading`), the high watermark from
  ``replication-offset-checkpoint``;
* every producer and transaction, replayed from the log
  (:mod:`kseg.ops.txn.replay`, ProducerStateManager's rules), and the aborted
  ranges as the ``.txnindex`` holds them;
* the producer state the broker itself would start from -- its newest usable
  ``.snapshot`` plus the log after it (``ProducerStateManager.truncateAndReload``,
  ``UnifiedLog.rebuildProducerState``) -- and where that snapshot disagrees
  with the log (:mod:`kseg.ops.txn.state`);
* the last stable offset (:func:`last_stable_offset`);
* hanging transactions (KIP-664, ``TransactionsCommand.FindHangingTransactionsCommand``),
  with the transaction coordinator's record from ``__transaction_state`` and
  the groups of ``__consumer_offsets`` committed at the LSO
  (:mod:`kseg.ops.txn.coordinator`).

Everything is read through :mod:`kseg.segment`; nothing is created or changed.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from kseg.errors import EXIT_OK, EXIT_PROBLEMS
from kseg.format.compression import DEFAULT_MAX_DECOMPRESSED
from kseg.ops.discover import is_partition_dir, parse_partition_dir, partition_dirs, segment_logs
from kseg.ops.txn.coordinator import (
    OFFSETS_TOPIC,
    TRANSACTION_TOPIC,
    CoordinatorView,
    Served,
    read_consumer_offsets,
    read_transaction_state,
)
from kseg.ops.txn.cut import cut_batches
from kseg.ops.txn.state import BrokerState, broker_state, last_stable_offset
from kseg.ops.txn.verdict import Group, TxnView, classify, groups_of
from kseg.recovery.loading import PartitionPrediction
from kseg.recovery.loading.logdir import METADATA_TOPIC, worth_a_pool
from kseg.recovery.verdict.paths import predict_paths
from kseg.recovery.verdict.table import Verdict

#: ``transaction.max.timeout.ms``'s default (TransactionStateManagerConfig), and find-hanging's 15 minutes.
DEFAULT_TRANSACTION_MAX_TIMEOUT_MS = 900_000
DEFAULT_BOOTSTRAP = "BROKER:9092"

#: ``progress(nbytes)``: bytes of segments read so far grow by ``nbytes``.
Advance = Callable[[int], None]


@dataclass(slots=True)
class PartitionTxn:
    """One partition: offsets, producers, transactions, aborted ranges, groups and notes."""

    path: str
    topic: str
    partition: int
    state: BrokerState
    transactions: list[TxnView] = field(default_factory=list)
    groups: list[Group] = field(default_factory=list)

    @property
    def hanging(self) -> list[TxnView]:
        return [t for t in self.transactions if t.state == "hanging"]

    @property
    def open(self) -> list[TxnView]:
        return [t for t in self.transactions if t.state in ("open", "hanging")]

    @property
    def findings(self) -> list[str]:
        """What is wrong with the partition's offsets: a pinned LSO, a high watermark the load moved."""
        s, out = self.state, []
        if s.high_watermark_moved is not None and s.high_watermark is not None:
            ckpt, bounded = s.high_watermark_checkpoint, s.high_watermark
            assert ckpt is not None
            if ckpt > bounded:
                gone = f"offset {bounded}" if ckpt - bounded == 1 else f"offsets {bounded}-{ckpt - 1}"
                out.append(f"replication-offset-checkpoint says {ckpt}, beyond the log end: the broker lowers the "
                           f"high watermark to {bounded} (UnifiedLog.updateHighWatermark); {gone} replicated "
                           "and not in this log")
            else:
                out.append(f"replication-offset-checkpoint says {ckpt}, below the log start: the broker raises the "
                           f"high watermark to {bounded} (UnifiedLog.updateHighWatermark)")
        lso, hw = s.last_stable_offset, s.high_watermark
        if lso is not None and hw is not None and lso < hw:
            out.append(f"LSO {lso} below the high watermark {hw}: read_committed consumers stop at {lso}, "
                       f"{hw - lso:,} offsets held back by the transaction from {s.first_unstable_offset}")
        return out

    @property
    def problem(self) -> bool:
        """Hanging transactions, stuck groups, a snapshot that disagrees with the log, a log Kafka would not load,
        an LSO below the high watermark, a high watermark the load moves, a transaction whose marker the start
        cuts or that the broker will not see."""
        s = self.state
        return bool(self.hanging or s.disagreements or s.error or any(g.stuck for g in self.groups)
                    or self.findings or any(t.unseen or t.lost_marker for t in self.transactions))

    def as_json(self) -> dict[str, object]:
        s = self.state
        return {
            "type": "partition", "path": self.path, "topic": self.topic, "partition": self.partition,
            "log_start_offset": s.log_start_offset, "log_end_offset": s.log_end_offset,
            "high_watermark": s.high_watermark, "high_watermark_from": s.high_watermark_from,
            "first_unstable_offset": s.first_unstable_offset, "last_stable_offset": s.last_stable_offset,
            "newest_timestamp": s.newest_timestamp, "snapshot": s.snapshot_name,
            "producers": len(s.producers), "open_transactions": len(self.open), "hanging": len(self.hanging),
            "aborted": [[a.producer_id, a.first_offset, a.last_offset, a.last_stable_offset] for a in s.aborted],
            "snapshot_disagreements": list(s.disagreements), "error": s.error, "notes": list(s.notes),
            "high_watermark_checkpoint": s.high_watermark_checkpoint, "problem": self.problem,
            "findings": self.findings,
        }


@dataclass(slots=True)
class TxnResult:
    """Every partition read, problem partitions first; and what the internal topics said."""

    partitions: list[PartitionTxn]
    coordinator: CoordinatorView
    timeout_ms: int
    bootstrap: str
    now_ms: int | None = None  # the clock hanging is judged against; None: each partition's newest timestamp
    verdict: Verdict = field(default_factory=lambda: Verdict([]))  # the next start's (docs/cli.md)

    @property
    def hanging(self) -> list[TxnView]:
        return [t for p in self.partitions for t in p.hanging]

    def exit_code(self) -> int:
        """1 when hanging transactions were found or the next start's verdict has an error (docs/cli.md); else 0."""
        return EXIT_PROBLEMS if self.hanging or self.verdict.exit_code() else EXIT_OK

    def summary(self) -> dict[str, object]:
        txns = [t for p in self.partitions for t in p.transactions]
        return {
            "type": "summary", "partitions": len(self.partitions),
            "problem_partitions": sum(p.problem for p in self.partitions),
            "transactions": {s: sum(t.state == s for t in txns) for s in ("committed", "aborted", "open", "hanging")},
            "stuck_groups": sum(g.stuck for p in self.partitions for g in p.groups),
            "transaction_state_partitions": self.coordinator.transaction_partitions,
            "consumer_offsets_partitions": self.coordinator.offsets_partitions,
            "coordinator_damaged": list(self.coordinator.damaged),
            "transaction_max_timeout_ms": self.timeout_ms, "now_ms": self.now_ms,
            "verdict": self.verdict.as_json(), "exit_code": self.exit_code(),
        }


def _predictions(paths: Sequence[Path], cap: int, jobs: int = 1) -> tuple[list[PartitionPrediction], Verdict]:
    """The loading model's view of every partition meant by ``paths`` (log or partition directories),
    and the one verdict of their next start (:func:`~kseg.recovery.verdict.paths.predict_paths`, as verify
    asks it): a partition directory named on its own gets the checkpoints of the directory above it."""
    log_dirs = [path for path in paths if not is_partition_dir(path)]
    alone = [(path, *_name(path)) for path in paths if is_partition_dir(path)]
    predicted = predict_paths(log_dirs, alone, max_batch_bytes=cap, jobs=jobs)
    found = [p for d in predicted.log_dirs.values() for p in d.partitions if not p.kind]
    return found + list(predicted.alone.values()), predicted.verdict()


def _name(path: Path) -> tuple[str, int, str]:
    """(topic, partition, kind) of a partition directory named on its own; a name that is not
    ``<topic>-<partition>`` is loaded as topic = the name, partition -1."""
    name = parse_partition_dir(path)
    return (name.topic, name.partition, "") if name else (path.name, -1, "")


def _coordinator(predictions: list[PartitionPrediction], cap: int) -> CoordinatorView:
    view = CoordinatorView()
    for pred in predictions:
        if pred.topic == TRANSACTION_TOPIC:
            read_transaction_state(view, segment_logs(Path(pred.path)), cap, served_by(pred))
        elif pred.topic == OFFSETS_TOPIC:
            read_consumer_offsets(view, segment_logs(Path(pred.path)), cap, served_by(pred))
    return view


def served_by(pred: PartitionPrediction) -> Served:
    """Whether the next start serves a batch: inside [log start, log end) and in no range it takes out of
    service -- what the coordinator replays when it loads the partition.  A load that fails: everything
    on disk (what it would serve is not known; the verdict says it fails)."""
    start, end, gone = pred.log_start_offset, pred.log_end_offset, pred.gone_offsets
    if pred.error is not None or start is None or end is None:
        return lambda first, last: True

    def served(first: int, last: int) -> bool:
        return last >= start and first < end and not any(a <= last and first <= b for a, b in gone)
    return served


def txn(
    paths: Sequence[str | Path],
    *,
    timeout_ms: int = DEFAULT_TRANSACTION_MAX_TIMEOUT_MS,
    bootstrap: str = DEFAULT_BOOTSTRAP,
    advance: Advance | None = None,
    max_batch_bytes: int = DEFAULT_MAX_DECOMPRESSED,
    now_ms: int | None = None,
    jobs: int = 1,
) -> TxnResult:
    """Read every partition of ``paths``; see the module docstring for what is found.

    ``now_ms`` is the clock a transaction's idle time is measured against
    (``--now``); None: each partition's newest batch timestamp.

    ``max_batch_bytes`` is the read cap (``--max-batch-bytes``) for every batch
    decompressed (control batches, the internal topics' records); past it
    LimitExceeded ends the run (one error line, exit 2) rather than a partial answer.  ``jobs``:
    worker processes for the loading model's partitions (the result is the same whatever the number).
    """
    predicted, verdict = _predictions([Path(p) for p in paths], max_batch_bytes, jobs)
    predictions = [p for p in predicted if p.topic != METADATA_TOPIC]
    view = _coordinator(predictions, max_batch_bytes)
    parts: list[PartitionTxn] = []
    for pred, state in zip(predictions, _states(predictions, advance, max_batch_bytes, jobs), strict=True):
        part = PartitionTxn(pred.path, pred.topic, pred.partition, state)
        part.transactions = classify(pred.topic, pred.partition, pred.path, state, view, timeout_ms, bootstrap,
                                     now_ms, tuple(cut_batches(pred)))
        part.groups = groups_of(pred.topic, pred.partition, state, view)
        stuck = ", ".join(repr(g.group) for g in part.groups if g.stuck)
        for hanging in part.hanging:
            if hanging.gained and stuck:
                hanging.unblocks = f"{hanging.unblocks}; the groups stuck at the LSO: {stuck}"
        parts.append(part)
    parts.sort(key=lambda p: (not p.hanging, not p.problem, p.topic, p.partition, p.path))
    return TxnResult(parts, view, timeout_ms, bootstrap, now_ms, verdict)


def _states(predictions: list[PartitionPrediction], advance: Advance | None, cap: int, jobs: int) -> list[BrokerState]:
    """Each partition's replay (:func:`broker_state`), in order: here, or spread over ``jobs`` processes.

    A replay reads only its own partition's files and its prediction, so the partitions are
    independent (as the model's are, loading/logdir.py); the coordinator view and the
    classification that need all of them stay here.  The progress advances as each partition's
    replay comes back, by the bytes it read.
    """
    if not worth_a_pool([pred.path for pred in predictions], jobs):
        return [broker_state(pred, advance, cap) for pred in predictions]
    from concurrent.futures import ProcessPoolExecutor  # only for a pool

    states: list[BrokerState] = []
    chunk = max(1, len(predictions) // (jobs * 8))
    with ProcessPoolExecutor(max_workers=min(jobs, len(predictions))) as pool:
        for state, read in pool.map(_state_of, [(pred, cap) for pred in predictions], chunksize=chunk):
            states.append(state)
            if advance is not None:
                advance(read)
    return states


def _state_of(task: tuple[PartitionPrediction, int]) -> tuple[BrokerState, int]:
    """One partition's replay in a worker process, and the bytes of segments it read (for the parent's progress)."""
    pred, cap = task
    read: list[int] = []
    return broker_state(pred, read.append, cap), sum(read)


def total_bytes(paths: Sequence[str | Path]) -> int:
    """Bytes of every ``.log`` under ``paths``: the progress bar's total."""
    total = 0
    for path in map(Path, paths):
        dirs = [path] if is_partition_dir(path) else partition_dirs(path)
        total += sum(log.stat().st_size for d in dirs for log in segment_logs(d))
    return total


__all__ = ["DEFAULT_TRANSACTION_MAX_TIMEOUT_MS", "PartitionTxn", "TxnResult", "last_stable_offset", "txn"]
