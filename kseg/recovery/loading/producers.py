"""A ``ProducerStateManager``'s producer map through a load: expiry at reload, and the snapshot bytes it writes.

``ProducerStateManager.loadFromSnapshot`` keeps only the snapshot entries
that are not expired against the wall clock at load (``isProducerExpired``:
no open transaction and ``now - lastTimestamp >= producer.id.expiration.ms``,
default 86400000); replayed and recovered batches then update the map
(``ProducerAppendInfo.append`` for ``REPLICATION``: a data batch sets the
epoch -- clearing the batch metadata when it changes --, last sequence, last
offset, offset delta and ``maxTimestamp``, and opens a transaction; a marker
sets the epoch, coordinator epoch and the marker record's timestamp, and
closes it).  ``takeSnapshot`` writes the map in ``HashMap<Long, ...>``
iteration order: by bucket (``Long.hashCode`` spread, table of 16 doubled
while more than 3/4 full), insertion order within a bucket.  Expiry never
happens during the load itself (``removeExpiredProducers`` is a scheduled task).

:class:`EntryTracker` is the transaction tracker the model already carries
(:class:`~kseg.recovery.producer_state.TxnTracker`) plus that map; ``known``
turns False where the model cannot follow an update, and the snapshot's bytes
are then not predicted.
"""

from __future__ import annotations

from kseg.errors import KsegError, LimitExceeded
from kseg.format.control import decode_end_txn_marker
from kseg.format.layout import CONTROL_MASK, TRANSACTIONAL_MASK
from kseg.format.model import NO_SEQUENCE, increment_sequence, wrap_int64
from kseg.format.snapshot import ProducerEntry, encode_snapshot
from kseg.format.v2 import V2Batch
from kseg.format.walk import Buffer, V2Header
from kseg.recovery.producer_state import TxnTracker

EXPIRATION_MS = 86_400_000  # producer.id.expiration.ms, the broker default LoadLogDir and a broker use
_MASK32 = 0xFFFFFFFF
#: epoch, last sequence, last data offset, offset delta, last timestamp, coordinator epoch, open txn's first offset
_EMPTY = (-1, -1, -1, 0, -1, -1, -1)


def _long_hash(value: int) -> int:
    """``Long.hashCode`` spread as ``HashMap.hash`` does (``h ^ (h >>> 16)``), as an unsigned 32-bit value."""
    value &= (1 << 64) - 1
    h = (value ^ (value >> 32)) & _MASK32
    return (h ^ (h >> 16)) & _MASK32


def hashmap_order(keys: list[int]) -> list[int]:
    """The iteration order of a ``HashMap<Long, V>`` filled with ``keys`` in this order (no removals)."""
    capacity = 16
    while len(keys) > capacity * 3 // 4:
        capacity *= 2
    return [k for _, _, k in sorted((_long_hash(k) & (capacity - 1), i, k) for i, k in enumerate(keys))]


class EntryTracker(TxnTracker):
    """A :class:`TxnTracker` that also keeps the producer map a snapshot is written from."""

    def __init__(self, max_batch_bytes: int, now_ms: int) -> None:
        super().__init__(max_batch_bytes)
        self.now_ms = now_ms
        self.entries: dict[int, list[int]] = {}  # insertion order, as the HashMap saw it
        self.known = True
        self.expired: list[int] = []  # producer ids the last reload dropped

    def load(self, entries: list[ProducerEntry] | None) -> None:
        """``loadFromSnapshot``'s entries (None: a snapshot whose content the model does not know)."""
        if entries is None:
            self.known = False
            return
        for e in entries:
            if e.current_txn_first_offset < 0 and self.now_ms - e.timestamp >= EXPIRATION_MS:
                self.expired.append(e.producer_id)
                continue
            batch = (e.last_sequence, e.last_offset, e.offset_delta) if e.last_offset >= 0 else (-1, -1, 0)
            self.entries[e.producer_id] = [e.epoch, *batch, e.timestamp, e.coordinator_epoch,
                                           max(-1, e.current_txn_first_offset)]
            if e.current_txn_first_offset >= 0:
                self.append_data(e.producer_id, e.current_txn_first_offset, True)

    def record_at(self, buf: Buffer, pos: int, header: V2Header) -> None:
        """:meth:`record` for the batch at ``pos`` whose header is ``header``; a data batch from the header alone."""
        if header[5] & CONTROL_MASK:
            self.record(V2Batch(buf, pos))
            return
        base, delta, sequence = header[0], header[6], header[11]
        entry = self.entries.setdefault(header[9], list(_EMPTY))
        self._epoch(entry, header[10])
        entry[1] = sequence if sequence == NO_SEQUENCE else increment_sequence(sequence, delta)
        entry[2], entry[3], entry[4] = wrap_int64(base + delta), delta, header[8]
        if entry[6] < 0 and header[5] & TRANSACTIONAL_MASK:
            entry[6] = base

    def record(self, batch: V2Batch) -> None:
        """``ProducerAppendInfo.append`` + ``ProducerStateManager.update`` for a batch Kafka applied."""
        entry = self.entries.setdefault(batch.producer_id, list(_EMPTY))
        if batch.is_control:
            try:
                first = next(iter(batch.iter_records(self.max_batch_bytes)), None)
                marker = None if first is None else decode_end_txn_marker(first.value)
            except LimitExceeded:
                raise
            except KsegError:
                self.known = False  # Kafka threw on it: the caller stops, or cut after it (R5.2)
                return
            if first is None or marker is None:
                return  # an empty control batch: the transaction was cleaned, nothing changes
            self._epoch(entry, batch.producer_epoch)
            entry[4], entry[5], entry[6] = first.timestamp, marker.coordinator_epoch, -1
            return
        self._epoch(entry, batch.producer_epoch)
        entry[1], entry[2], entry[3] = batch.last_sequence, batch.last_offset, batch.last_offset - batch.base_offset
        entry[4] = batch.max_timestamp
        if entry[6] < 0 and batch.is_transactional:
            entry[6] = batch.base_offset

    @staticmethod
    def _epoch(entry: list[int], epoch: int) -> None:
        """``maybeUpdateProducerEpoch``: a new epoch drops the batch metadata."""
        if entry[0] != epoch:
            entry[0:4] = [epoch, -1, -1, 0]

    def snapshot_bytes(self) -> bytes | None:
        """``writeSnapshot``'s bytes for the map as it is, or None where the model lost track of it."""
        if not self.known:
            return None
        rows = [ProducerEntry(pid, *self.entries[pid]) for pid in hashmap_order(list(self.entries))]
        return encode_snapshot(rows)
