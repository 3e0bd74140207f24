"""One partition's producers and transactions, replayed from its segments as Kafka's ProducerStateManager does.

The open/closed bookkeeping and the aborted ranges come from the recovery
core (:class:`kseg.recovery.producer_state.TxnTracker`, the rules of
``ProducerAppendInfo`` / ``ProducerStateManager.completeTxn`` /
``lastStableOffset(CompletedTxn)``), so an aborted range here is exactly the
entry recovery writes to the ``.txnindex``.  What this module adds is what
``kafka-transactions.sh describe-producers`` shows of each producer
(``ProducerStateEntry``: epoch, last sequence, last data offset, last
timestamp, coordinator epoch, the open transaction's first offset) and every
transaction with its end marker, for ``kseg txn``.

Kafka 4.3.0 sources (storage/src/main/java/org/apache/kafka/storage/internals/log/):
``ProducerAppendInfo.appendDataBatch`` (a transactional batch with no open
transaction starts one; a non-transactional one while open throws
InvalidTxnStateException), ``ProducerAppendInfo.appendEndTxnMarker`` (a marker
completes the open transaction, if any, and sets epoch, coordinator epoch and
timestamp), ``ProducerStateEntry.addBatch`` / ``maybeUpdateProducerEpoch`` (a
new epoch drops the cached batches: last sequence -1, last offset -1).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from kseg.errors import InvalidRecord, KsegError
from kseg.format.compression import DEFAULT_MAX_DECOMPRESSED
from kseg.format.control import ABORT
from kseg.format.snapshot import ProducerEntry
from kseg.format.v2 import V2Batch
from kseg.format.walk import END_OF_DATA
from kseg.index import AbortedTxn
from kseg.recovery.producer_state import RecoveryAbort, TxnTracker, end_txn_marker
from kseg.segment import Segment, base_offset_from_name

NO_SEQUENCE = -1


@dataclass(slots=True)
class Producer:
    """``ProducerStateEntry`` as far as it is visible: what a snapshot stores for one producer id."""

    producer_id: int
    producer_epoch: int = -1
    last_sequence: int = NO_SEQUENCE  # lastSeq(): of the last cached batch, -1 when none
    last_offset: int = -1  # lastDataOffset(): -1 when no batch is cached
    offset_delta: int = 0
    last_timestamp: int = -1
    coordinator_epoch: int = -1
    current_txn_first_offset: int = -1  # -1: no open transaction

    @classmethod
    def from_snapshot(cls, entry: ProducerEntry) -> Producer:
        return cls(entry.producer_id, entry.epoch, entry.last_sequence, entry.last_offset, entry.offset_delta,
                   entry.timestamp, entry.coordinator_epoch, entry.current_txn_first_offset)

    def key(self) -> tuple[int, ...]:
        """The fields a ``.snapshot`` entry holds, in its order (``ProducerStateManager.writeSnapshot``)."""
        return (self.producer_epoch, self.last_sequence, self.last_offset, self.offset_delta,
                self.last_timestamp, self.coordinator_epoch, self.current_txn_first_offset)

    def _epoch(self, epoch: int) -> None:
        """``maybeUpdateProducerEpoch``: another epoch clears the cached batches."""
        if epoch != self.producer_epoch:
            self.producer_epoch = epoch
            self.last_sequence, self.last_offset, self.offset_delta = NO_SEQUENCE, -1, 0

    def add_batch(self, batch: V2Batch) -> None:
        """``ProducerStateEntry.addBatch(epoch, lastSeq, lastOffset, offsetDelta, maxTimestamp)``."""
        self._epoch(batch.producer_epoch)
        self.last_sequence, self.last_offset = batch.last_sequence, batch.last_offset
        self.offset_delta = batch.last_offset - batch.base_offset
        self.last_timestamp = batch.max_timestamp

    def end_marker(self, epoch: int, coordinator_epoch: int, timestamp: int) -> None:
        """``ProducerStateEntry.update(epoch, coordinatorEpoch, timestamp)``: the transaction is over."""
        self._epoch(epoch)
        self.coordinator_epoch = coordinator_epoch
        self.current_txn_first_offset = -1
        self.last_timestamp = timestamp


@dataclass(slots=True)
class Transaction:
    """One transaction in one partition: from its first transactional batch to its marker (or none yet)."""

    producer_id: int
    producer_epoch: int
    first_offset: int
    last_offset: int  # of its last data batch seen (-1: known only from a snapshot)
    first_timestamp: int
    last_timestamp: int
    end: str | None = None  # "COMMIT", "ABORT", or None while open
    end_offset: int | None = None  # the marker's offset
    end_epoch: int | None = None
    coordinator_epoch: int | None = None
    from_snapshot: bool = False  # opened before the snapshot the replay started from

    @property
    def is_open(self) -> bool:
        return self.end is None


@dataclass(slots=True)
class Replay:
    """What one replay of a partition's log found."""

    producers: dict[int, Producer] = field(default_factory=dict)
    transactions: list[Transaction] = field(default_factory=list)
    aborted: list[AbortedTxn] = field(default_factory=list)
    newest_timestamp: int = -1  # the largest batch maxTimestamp read
    error: str | None = None  # where Kafka's own replay would throw (the partition does not load)
    stopped_at: str | None = None  # a file and byte where the batches could no longer be framed
    states: dict[int, dict[int, Producer]] = field(default_factory=dict)  # offset -> producers before it

    @property
    def open(self) -> list[Transaction]:
        return [t for t in self.transactions if t.is_open]


class _Replayer:
    """Feeds batches in log order to a :class:`Replay` (one ``ProducerStateManager`` and its TxnTracker)."""

    def __init__(self, replay: Replay, capture_at: Iterable[int], max_batch_bytes: int) -> None:
        self.replay = replay
        self.tracker = TxnTracker(max_batch_bytes)  # its cap is the read cap for every marker
        self.open: dict[int, Transaction] = {}
        self.capture = sorted(set(capture_at))

    def seed(self, entries: Iterable[ProducerEntry], snapshot_offset: int) -> None:
        """``loadFromSnapshot``: producers as the snapshot holds them, their open transactions ongoing."""
        for entry in entries:
            producer = Producer.from_snapshot(entry)
            self.replay.producers[producer.producer_id] = producer
            if producer.current_txn_first_offset >= 0:
                self.tracker.append_data(producer.producer_id, producer.current_txn_first_offset, True)
                txn = Transaction(producer.producer_id, producer.producer_epoch,
                                  producer.current_txn_first_offset, -1, -1, producer.last_timestamp,
                                  from_snapshot=True)
                self.open[producer.producer_id] = txn
                self.replay.transactions.append(txn)
        self.capture = [c for c in self.capture if c > snapshot_offset]

    def _captures_before(self, offset: int) -> None:
        while self.capture and self.capture[0] <= offset:
            at = self.capture.pop(0)
            self.replay.states[at] = {pid: _copy(p) for pid, p in self.replay.producers.items()}

    def finish(self) -> None:
        self._captures_before(1 << 63)

    def batch(self, batch: V2Batch) -> None:
        """``ProducerAppendInfo.append`` for one magic-2 batch that has a producer id."""
        self._captures_before(batch.base_offset)
        producer = self.replay.producers.get(batch.producer_id)
        if producer is None:
            producer = self.replay.producers[batch.producer_id] = Producer(batch.producer_id)
        if batch.is_control:
            self._marker(batch, producer)
            return
        self.tracker.append_data(batch.producer_id, batch.base_offset, batch.is_transactional)
        producer.add_batch(batch)
        txn = self.open.get(batch.producer_id)
        if batch.is_transactional and txn is None:
            txn = Transaction(batch.producer_id, batch.producer_epoch, batch.base_offset, batch.last_offset,
                              batch.max_timestamp, batch.max_timestamp)
            self.open[batch.producer_id] = txn
            self.replay.transactions.append(txn)
            producer.current_txn_first_offset = batch.base_offset
        elif txn is not None:
            txn.last_offset, txn.last_timestamp = batch.last_offset, batch.max_timestamp

    def _marker(self, batch: V2Batch, producer: Producer) -> None:
        marker = end_txn_marker(batch, self.tracker.max_batch_bytes)
        if marker is None:
            return
        control_type, coordinator_epoch = marker
        aborted = self.tracker.append_marker(batch.producer_id, batch.base_offset, control_type == ABORT)
        if aborted is not None:
            self.replay.aborted.append(aborted)
        txn = self.open.pop(batch.producer_id, None)
        if txn is not None:
            txn.end = "ABORT" if control_type == ABORT else "COMMIT"
            txn.end_offset, txn.end_epoch = batch.base_offset, batch.producer_epoch
            txn.coordinator_epoch = coordinator_epoch
        producer.end_marker(batch.producer_epoch, coordinator_epoch, batch.max_timestamp)


def _copy(producer: Producer) -> Producer:
    return Producer(producer.producer_id, *producer.key())


#: ``progress(nbytes)``: called after each segment with its size.
Advance = Callable[[int], None]


@dataclass(frozen=True, slots=True)
class ReplayRange:
    """Which batches a replay reads: offsets in [start, end), optionally seeded from a snapshot."""

    start: int = 0
    end: int | None = None
    seed: tuple[ProducerEntry, ...] | None = None
    capture_at: tuple[int, ...] = ()
    max_batch_bytes: int = DEFAULT_MAX_DECOMPRESSED  # the read cap for control batches (--max-batch-bytes)


def replay_partition(logs: list[Path], what: ReplayRange, advance: Advance | None = None) -> Replay:
    """Replay ``logs`` (one partition's ``.log`` files, by base offset) over ``what``.

    Batches wholly below ``start`` or at/after ``end`` are skipped (below the
    log start offset, or cut by the next load).  A batch Kafka's replay would
    throw on ends the replay with :attr:`Replay.error`; a tail that no longer
    frames ends it quietly, as ``loadProducersFromRecords`` stops there.
    """
    replay = Replay()
    replayer = _Replayer(replay, what.capture_at, what.max_batch_bytes)
    if what.seed is not None:
        replayer.seed(what.seed, what.start)
    try:
        for index, log in enumerate(logs):
            upper = base_offset_from_name(logs[index + 1]) if index + 1 < len(logs) else None
            if upper is not None and upper <= what.start:
                continue
            _replay_log(log, replayer, what)
            if advance is not None:
                advance(log.stat().st_size)
    except RecoveryAbort as abort:
        replay.error = f"{abort.exception}: {abort.message}"
    replayer.finish()
    return replay


def _replay_log(log: Path, replayer: _Replayer, what: ReplayRange) -> None:
    try:
        with Segment(log) as seg:
            walk = seg.walk(strict=False)
            for pos, _, _, header, _ in walk.frames():
                seg.release(pos)
                if header is None:
                    continue
                last = header[0] + header[6]  # baseOffset + lastOffsetDelta
                if last < what.start or (what.end is not None and header[0] >= what.end):
                    continue
                replayer.replay.newest_timestamp = max(replayer.replay.newest_timestamp, header[8])
                if header[9] >= 0:  # a producer id
                    replayer.batch(V2Batch(seg.buf, pos))
            if walk.end is not None and walk.end.reason != END_OF_DATA:
                replayer.replay.stopped_at = f"{log} byte {walk.end.position}"
    except InvalidRecord as err:
        replayer.replay.stopped_at = str(err.with_path(str(log)))
    except KsegError as err:
        raise err.with_path(str(log))
