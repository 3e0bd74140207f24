"""The producer state and last stable offset a broker would have after loading one partition.

Kafka 4.3.0, storage/src/main/java/org/apache/kafka/storage/internals/log/:

* ``ProducerStateManager.truncateAndReload``: snapshots above the log end or at
  or below the log start are deleted; the newest remaining one whose CRC holds
  is loaded (``loadFromSnapshot``; a corrupt one is deleted and the next tried),
  its open transactions become ``ongoingTxns`` (``loadProducerEntry``);
* ``UnifiedLog.rebuildProducerState``: the log is replayed from the snapshot's
  offset to the log end; with no snapshot at all after a clean shutdown the log
  is not read (R6.3a in docs/kafka-log-loading.md: the load starts with no
  producers);
* ``UnifiedLog.loadProducersFromRecords``: each transaction completed during
  that replay goes to ``completeTxn`` -> ``unreplicatedTxns``;
* ``Partition.createLog`` -> ``UnifiedLog.updateHighWatermark``: the high
  watermark is the ``replication-offset-checkpoint`` entry (0 without one),
  bounded by the log start and end; ``onHighWatermarkUpdated`` drops the
  unreplicated transactions whose marker is below it
  (``removeUnreplicatedTransactions``);
* ``ProducerStateManager.firstUnstableOffset``: the lower of the first ongoing
  and the first unreplicated transaction's first offset;
  ``UnifiedLog.maybeIncrementFirstUnstableOffset`` raises it to the log start;
* ``UnifiedLog.lastStableOffset`` / ``fetchLastStableOffsetMetadata``: the
  first unstable offset when it is below the high watermark, else the high
  watermark.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from kseg.errors import KsegError
from kseg.format.compression import DEFAULT_MAX_DECOMPRESSED
from kseg.format.snapshot import ProducerEntry, check_snapshot, read_snapshot
from kseg.index import AbortedTxn
from kseg.ops.discover import file_kind, partition_files, segment_logs
from kseg.ops.txn.replay import Producer, Replay, ReplayRange, Transaction, replay_partition
from kseg.recovery.loading import PartitionPrediction
from kseg.segment import base_offset_from_name, read_small_file

FROM_CHECKPOINT = "replication-offset-checkpoint"
FROM_LOG_END = "log end (no replication-offset-checkpoint entry)"


@dataclass(slots=True)
class BrokerState:
    """One partition after the next load: offsets, producers, transactions, and where the snapshot disagrees."""

    log_start_offset: int | None
    log_end_offset: int | None
    high_watermark: int | None
    high_watermark_from: str | None
    log: Replay  # the whole log, from the log start
    broker: Replay  # what the broker replays: its snapshot, then the log after it
    snapshot_name: str | None = None
    first_unstable_offset: int | None = None
    last_stable_offset: int | None = None
    disagreements: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    error: str | None = None
    high_watermark_checkpoint: int | None = None  # the file's value, before the load bounds it
    log_not_read: bool = False  # clean shutdown without a .snapshot: no producer state from the log (R6.3a)

    @property
    def high_watermark_moved(self) -> str | None:
        """How the load moved the checkpoint's high watermark ("lowered to the log end"), or None."""
        hw, ckpt = self.high_watermark, self.high_watermark_checkpoint
        if ckpt is None or hw is None or hw == ckpt:
            return None
        return "lowered to the log end" if ckpt > hw else "raised to the log start"

    @property
    def producers(self) -> list[Producer]:
        return sorted(self.broker.producers.values(), key=lambda p: p.producer_id)

    @property
    def aborted(self) -> list[AbortedTxn]:
        return self.log.aborted

    @property
    def newest_timestamp(self) -> int:
        return max(self.log.newest_timestamp, self.broker.newest_timestamp)


def last_stable_offset(
    ongoing: list[int], unreplicated: list[int], high_watermark: int, log_start: int
) -> tuple[int | None, int]:
    """(first unstable offset, last stable offset) from the transactions' first offsets.

    ``ongoing``: first offsets of open transactions; ``unreplicated``: of
    those completed by a marker at or above the high watermark.  Kafka:
    ``ProducerStateManager.firstUnstableOffset``,
    ``UnifiedLog.maybeIncrementFirstUnstableOffset`` (max with the log start)
    and ``UnifiedLog.lastStableOffset``.
    """
    candidates = ongoing + unreplicated
    first = max(min(candidates), log_start) if candidates else None
    return first, first if first is not None and first < high_watermark else high_watermark


@dataclass(frozen=True, slots=True)
class _Snapshot:
    offset: int
    name: str
    entries: tuple[ProducerEntry, ...] | None  # None: Kafka finds it corrupt (CorruptSnapshotException)
    problem: str | None = None


def _snapshots(directory: Path) -> list[_Snapshot]:
    """The partition's ``<offset>.snapshot`` files, oldest first, read and CRC-checked as ``readSnapshot`` does."""
    found = []
    for path in partition_files(directory):
        offset = base_offset_from_name(path)
        if file_kind(path) != "snapshot" or offset is None:
            continue
        try:
            snapshot = read_snapshot(read_small_file(path))
            check_snapshot(snapshot)
            found.append(_Snapshot(offset, path.name, snapshot.entries))
        except KsegError as err:
            found.append(_Snapshot(offset, path.name, None, err.message))
    return sorted(found, key=lambda s: s.offset)


def broker_state(
    pred: PartitionPrediction,
    advance: Callable[[int], None] | None = None,
    max_batch_bytes: int = DEFAULT_MAX_DECOMPRESSED,
) -> BrokerState:
    """Replay the log and the broker's own start for one partition the loading model has read.

    Control batches are read under the read cap ``max_batch_bytes``; past it LimitExceeded propagates.
    """
    directory = Path(pred.path)
    logs = segment_logs(directory)
    log_start, log_end = pred.log_start_offset or 0, pred.log_end_offset
    snapshots = _snapshots(directory)
    captures = tuple(s.offset for s in snapshots)
    log = replay_partition(logs, ReplayRange(log_start, log_end, None, captures, max_batch_bytes), advance)
    if log_end is None:
        error = f"{pred.error.exception}: {pred.error.message}" if pred.error else "the load is not modelled"
        return BrokerState(log_start, None, None, None, log, log, error=f"the partition does not load: {error}")
    usable = [s for s in snapshots if log_start < s.offset <= log_end and s.entries is not None]
    chosen = usable[-1] if usable else None
    state = BrokerState(log_start, log_end, None, None, log, log)
    if chosen is not None:
        state.snapshot_name = chosen.name
        state.broker = replay_partition(logs, ReplayRange(chosen.offset, log_end, chosen.entries, (), max_batch_bytes))
    elif not snapshots and any(a.rule == "R6.3a" for a in pred.actions):
        state.broker = Replay(newest_timestamp=log.newest_timestamp)
        state.log_not_read = True
        state.notes.append("clean shutdown and no .snapshot: the broker does not read the log for producer state "
                           "(UnifiedLog.rebuildProducerState), so it starts with no producers")
    _high_watermark(state, pred.high_watermark)
    _lso(state)
    state.error = log.error or state.broker.error
    if log.stopped_at:
        state.notes.append(f"replay stopped where batches no longer frame: {log.stopped_at}")
    state.disagreements = _disagreements(snapshots, log, log_start, logs, log_end)
    return state


def _high_watermark(state: BrokerState, checkpoint: int | None) -> None:
    """``UnifiedLog.updateHighWatermark``: the checkpoint's value between the log start and the log end."""
    assert state.log_end_offset is not None and state.log_start_offset is not None
    if checkpoint is None:
        state.high_watermark, state.high_watermark_from = state.log_end_offset, FROM_LOG_END
        return
    state.high_watermark = min(max(checkpoint, state.log_start_offset), state.log_end_offset)
    state.high_watermark_from = FROM_CHECKPOINT
    state.high_watermark_checkpoint = checkpoint


def _lso(state: BrokerState) -> None:
    hw = state.high_watermark
    assert hw is not None and state.log_start_offset is not None
    ongoing = [t.first_offset for t in state.broker.transactions if t.is_open]
    unreplicated = [t.first_offset for t in state.broker.transactions
                    if t.end_offset is not None and t.end_offset >= hw]
    state.first_unstable_offset, state.last_stable_offset = last_stable_offset(
        ongoing, unreplicated, hw, state.log_start_offset)
    waiting = [t for t in state.broker.transactions if t.end_offset is not None and t.end_offset >= hw
               and t.first_offset == state.first_unstable_offset]
    for t in waiting:
        state.notes.append(f"the {t.end} at {t.end_offset} of producer {t.producer_id}'s transaction from "
                           f"{t.first_offset} is not below the high watermark {hw}: the LSO stays at "
                           f"{state.last_stable_offset} until the high watermark passes {t.end_offset} "
                           "(ProducerStateManager.removeUnreplicatedTransactions)")


FIELDS = ("producer_epoch", "last_sequence", "last_offset", "offset_delta", "last_timestamp", "coordinator_epoch",
          "current_txn_first_offset")


def _disagreements(snapshots: list[_Snapshot], log: Replay, log_start: int, logs: list[Path],
                   log_end: int | None) -> list[str]:
    """Where each snapshot differs from the producer state the log gives at the snapshot's offset."""
    whole_log = log_start == 0 and bool(logs) and base_offset_from_name(logs[0]) == 0
    out: list[str] = []
    for snap in snapshots:
        if snap.entries is None:
            out.append(f"{snap.name}: unreadable ({snap.problem}); Kafka deletes it and loads an older one")
            continue
        if snap.offset not in log.states or (log_end is not None and snap.offset > log_end):
            continue
        from_log = log.states[snap.offset]
        for entry in sorted(snap.entries, key=lambda e: e.producer_id):
            mine = from_log.get(entry.producer_id)
            if mine is None:
                if whole_log:
                    out.append(f"{snap.name}: producer {entry.producer_id} is in the snapshot but not in the log")
                continue
            theirs = Producer.from_snapshot(entry).key()
            for name, a, b in zip(FIELDS, theirs, mine.key(), strict=True):
                if a != b:
                    out.append(f"{snap.name}: producer {entry.producer_id} {name} {a} in the snapshot, {b} from the log")
        in_snapshot = {e.producer_id for e in snap.entries}
        out.extend(f"{snap.name}: producer {pid} has a transaction open at "
                   f"{from_log[pid].current_txn_first_offset} in the log but is not in the snapshot"
                   for pid in sorted(set(from_log) - in_snapshot) if from_log[pid].current_txn_first_offset >= 0)
    return out


__all__ = ["BrokerState", "Transaction", "broker_state", "last_stable_offset"]
