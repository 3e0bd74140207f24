"""Kafka's producer-state rules, as far as recovery and the transaction index depend on them.

``ProducerStateManager`` and ``ProducerAppendInfo`` (storage, 4.3.0): each
magic-2 batch with a producer id updates its producer's entry; a
transactional batch opens a transaction, a COMMIT/ABORT control batch closes
it, and an ABORT that closes a non-empty transaction becomes an entry of the
``.txnindex``.  :func:`replay_producer_state` replays earlier segments the way
``UnifiedLog.rebuildProducerState`` does.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path

from kseg.errors import InvalidRecord, KsegError, LimitExceeded
from kseg.format.compression import DEFAULT_MAX_DECOMPRESSED
from kseg.format.control import ABORT, COMMIT, decode_control_key, decode_end_txn_marker
from kseg.format.layout import Buffer
from kseg.format.v2 import V2Batch
from kseg.format.walk import BatchWalk
from kseg.index import AbortedTxn
from kseg.recovery.producer_map import MapState, ProducerMap
from kseg.segment import MappedFile

#: An exception LogLoader does not handle: LogManager.loadLogs rethrows it and the broker halts (R9.1).
FAILS_TO_LOAD = "the load throws: the partition does not load and the broker stops"


class RecoveryAbort(Exception):
    """Raised where Kafka's recovery would throw: the exception class, its message and what the broker does."""

    def __init__(self, exception: str, message: str, consequence: str) -> None:
        super().__init__(f"{exception}: {message}")
        self.exception = exception
        self.message = message
        self.consequence = consequence


#: :meth:`TxnTracker.state`: open transactions by producer, by first offset, and the producer map.
TrackerState = tuple[tuple[tuple[int, int], ...], tuple[tuple[int, int], ...], MapState]


class TxnTracker:
    """The transaction bookkeeping of Kafka's producer-state tracking, across the segments of one partition.

    Feed every magic-2 batch that has a producer id, in log order, segment
    after segment.  Only what the .txnindex depends on is kept: each
    producer's open transaction (``ProducerStateEntry.currentTxnFirstOffset``)
    and the partition's open transactions by first offset
    (``ProducerStateManager.ongoingTxns``).  Epochs and coordinator epochs
    are not needed: recovery appends with origin REPLICATION, where a stale
    one is only logged.

    ``max_batch_bytes`` is the read cap (``--max-batch-bytes``) under which the
    control batches fed to the tracker are decompressed: one tracker serves one
    command's run, so the cap given on its command line reaches every marker read.
    """

    def __init__(self, max_batch_bytes: int = DEFAULT_MAX_DECOMPRESSED, *, keep_completed: bool = False) -> None:
        self.max_batch_bytes = max_batch_bytes  # the read cap for the control batches fed to the tracker
        self._open_by_producer: dict[int, int] = {}  # producer id -> first offset of its open transaction
        self._ongoing: dict[int, int] = {}  # first offset -> producer id (a TreeMap in Kafka)
        #: Kafka's producer map (what a producer snapshot holds), fed by :func:`track_producer_batch`
        self.producers = ProducerMap()
        #: (first, last offset) of the transactions completed here, with ``keep_completed`` (the loading
        #: model's managers): ``completeTxn`` keeps them "unreplicated", which ``firstUnstableOffset``
        #: counts until the high watermark passes them; other callers need not hold one per transaction
        self.keep_completed = keep_completed
        self.completed: list[tuple[int, int]] = []

    def state(self) -> TrackerState:
        """The whole state, hashable: equal states give equal results for the same segment."""
        return tuple(self._open_by_producer.items()), tuple(self._ongoing.items()), self.producers.state()

    def restore(self, state: TrackerState) -> None:
        """Take a state :meth:`state` returned."""
        self._open_by_producer, self._ongoing = dict(state[0]), dict(state[1])
        self.producers.restore(state[2])

    @property
    def open_transactions(self) -> dict[int, int]:
        """Producer id -> first offset of each transaction still open."""
        return dict(self._open_by_producer)

    def append_data(self, producer_id: int, first_offset: int, is_transactional: bool) -> None:
        """``ProducerAppendInfo.appendDataBatch`` then ``ProducerStateManager.update``."""
        open_first = self._open_by_producer.get(producer_id)
        if open_first is not None and not is_transactional:
            raise RecoveryAbort(
                "InvalidTxnStateException",
                f"Expected transactional write from producer {producer_id} at offset {first_offset}",
                FAILS_TO_LOAD,
            )
        if open_first is None and is_transactional:
            self._open_by_producer[producer_id] = first_offset
            self._ongoing[first_offset] = producer_id

    def append_marker(self, producer_id: int, marker_offset: int, is_abort: bool) -> AbortedTxn | None:
        """``appendEndTxnMarker``, ``lastStableOffset`` and ``completeTxn``: the AbortedTxn to index, if any.

        A marker with no open transaction completes nothing (Kafka emits no
        ``CompletedTxn`` for an empty transaction).  ``last_offset`` is the
        marker batch's base offset; ``last_stable_offset`` the first offset of
        the earliest transaction still open by another producer, else the
        marker offset + 1.
        """
        first = self._open_by_producer.pop(producer_id, None)
        if first is None:
            return None
        if self.keep_completed:
            self.completed.append((first, marker_offset))
        others = [offset for offset, pid in self._ongoing.items() if pid != producer_id]
        last_stable = min(others) if others else marker_offset + 1
        if self._ongoing.pop(first, None) is None:
            raise RecoveryAbort(
                "IllegalArgumentException",
                f"Attempted to complete transaction of producer {producer_id} starting at {first} "
                "which was not started",
                FAILS_TO_LOAD,
            )
        if not is_abort:
            return None
        return AbortedTxn(0, producer_id, first, marker_offset, last_stable)


def _end_txn_marker(batch: V2Batch, max_batch_bytes: int) -> tuple[int, int, int] | None:
    """(control type, coordinator epoch, timestamp) of a control batch's first record (``ProducerAppendInfo.append``).

    None for a control batch without records (its transaction was cleaned).
    InvalidRecord propagates (Kafka catches it and stops recovery after this
    batch); what Kafka would not catch becomes :class:`RecoveryAbort`.  A batch
    past the read cap ``max_batch_bytes`` raises :class:`~kseg.errors.LimitExceeded`:
    Kafka has no such cap, so it is kseg's refusal to read, never a prediction.
    """
    try:
        records = batch.iter_records(max_batch_bytes)
        first = next(records, None)
        if first is not None and (batch.codec_id != 0 or batch.records_count == 1):
            for _ in records:  # a compressed batch is decoded whole; the last record checks the batch size
                pass
    except (InvalidRecord, LimitExceeded):
        raise
    except KsegError as err:
        raise RecoveryAbort("KafkaException", err.message, FAILS_TO_LOAD) from err
    if first is None:
        return None
    if first.key is None:
        raise RecoveryAbort("NullPointerException", "control record with a null key", FAILS_TO_LOAD)
    key = decode_control_key(first.key)
    if key.type_id not in (ABORT, COMMIT):
        raise RecoveryAbort(
            "IllegalArgumentException",
            f"Invalid control record type for end transaction marker{key.name}",
            FAILS_TO_LOAD,
        )
    if first.value is None:
        raise RecoveryAbort("NullPointerException", "end transaction marker with a null value", FAILS_TO_LOAD)
    marker = decode_end_txn_marker(first.value)
    return key.type_id, marker.coordinator_epoch, first.timestamp


def end_txn_marker(batch: V2Batch, max_batch_bytes: int = DEFAULT_MAX_DECOMPRESSED) -> tuple[int, int] | None:
    """(control type, coordinator epoch) of an end-transaction control batch, None when it has no record.

    The reading ``ProducerAppendInfo.append`` does (and :func:`track_producer_batch`
    uses), for callers that keep more producer state than the transaction index needs;
    ``max_batch_bytes`` is the read cap.
    """
    marker = _end_txn_marker(batch, max_batch_bytes)
    return None if marker is None else marker[:2]


def track_producer_batch(tracker: TxnTracker, batch: V2Batch) -> AbortedTxn | None:
    """``LogSegment.updateProducerState`` for one magic-2 batch with a producer id."""
    producers = tracker.producers
    if batch.is_control:
        marker = _end_txn_marker(batch, tracker.max_batch_bytes)
        if marker is None:
            producers.touch(batch.producer_id)  # update() still makes an entry for a new producer
            return None
        aborted = tracker.append_marker(batch.producer_id, batch.base_offset, marker[0] == ABORT)
        producers.marker(batch.producer_id, batch.producer_epoch, marker[1], marker[2])
        return aborted
    producer_id, first, transactional = batch.producer_id, batch.base_offset, batch.is_transactional
    tracker.append_data(producer_id, first, transactional)
    sequence, last = batch.base_sequence, batch.last_offset
    if sequence != -1:  # DefaultRecordBatch.lastSequence: the base sequence + the last offset delta, wrapped
        sequence = sequence + last - first if sequence + last - first <= 0x7FFFFFFF else batch.last_sequence
    producers.data(producer_id, batch.producer_epoch, sequence, first, last, batch.max_timestamp, transactional)
    return None


def replay_producer_state(
    buf: Buffer, tracker: TxnTracker, *, end: int | None = None, release: Callable[[int], None] | None = None
) -> int:
    """Feed an earlier segment's producer batches to ``tracker``, as ``rebuildProducerState`` replays the log.

    Replay reads batches without checking CRCs (Kafka's ``loadProducersFromRecords``
    does not validate either) and stops where the file can no longer be framed.
    Returns the number of bytes replayed.  ``release(position)``: called as the walk goes, so a
    mapped file's pages behind it are dropped (``MappedFile.release``).
    """
    walk = BatchWalk(buf, 0, end, strict=False)
    pos = walk.start
    for pos, _, _, header, _ in walk.frames():
        if release is not None:
            release(pos)
        if header is not None and header[9] >= 0:  # a V2 batch with a producer id
            try:
                track_producer_batch(tracker, V2Batch(buf, pos))
            except InvalidRecord:
                return pos
    return walk.end.position if walk.end is not None else pos


def replay_segments(
    logs: Iterable[Path], tracker: TxnTracker | None = None, max_batch_bytes: int = DEFAULT_MAX_DECOMPRESSED
) -> TxnTracker:
    """Replay whole earlier segments, in the order given, into ``tracker`` (a new one by default).

    What ``rebuildProducerState`` reads of the segments below the one being
    recovered: recover, reindex and convert all start a segment's transaction
    index from this state.  Errors carry the segment's path.  A new tracker
    reads control batches under ``max_batch_bytes``; a given one under its own cap.
    """
    state = TxnTracker(max_batch_bytes) if tracker is None else tracker
    for log in logs:
        _replay_file(log, state)
    return state


def _replay_file(log: Path, tracker: TxnTracker) -> None:
    try:
        with MappedFile(log) as mapped:
            replay_producer_state(mapped.buf, tracker, release=mapped.release)
    except KsegError as err:
        raise err.with_path(str(log))
