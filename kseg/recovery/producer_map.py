"""Kafka's producer map, as far as the bytes of a producer snapshot depend on it.

``ProducerStateManager.producers`` (storage, 4.3.0) is a ``java.util.HashMap<Long,
ProducerStateEntry>``; ``writeSnapshot`` writes its entries in the map's iteration order, each as
(producer id, epoch, last sequence, last data offset, offset delta, last timestamp, coordinator
epoch, open transaction's first offset).  So predicting a snapshot byte for byte needs:

* each entry as ``ProducerAppendInfo`` / ``ProducerStateEntry`` leave it (origin REPLICATION:
  stale epochs are only logged).  A data batch: a new epoch forgets the batch metadata, then the
  batch's (last sequence, last offset, offset delta) and max timestamp; a transactional one opens a
  transaction.  An end-transaction marker: a new epoch forgets the metadata, then the marker's
  coordinator epoch and record timestamp, and the transaction is closed.  A control batch without
  records still makes an (empty) entry.
* the iteration order of a ``HashMap`` of ``Long`` keys: buckets ``(h ^ h >>> 16) & (capacity - 1)``
  with ``h = (int) (id ^ id >>> 32)``, in bucket order, and within a bucket in insertion order
  (``put`` appends to the bucket; the replay's ``computeIfAbsent`` prepends: :meth:`ProducerMap.reverse_since`).  The
  capacity starts at 16 and doubles when the size passes 3/4 of it; ``clear()`` keeps it.  A bucket
  of 9 entries would turn the map into trees or resize it early: the map then says it does not know
  its order (:attr:`ProducerMap.unknown`), and the snapshot counts as changed.
"""

from __future__ import annotations

from kseg.format.snapshot import ProducerEntry

_MASK64 = (1 << 64) - 1
_TREEIFY = 9  # a 9th node in one bucket: HashMap.treeifyBin (a resize below 64 buckets)

#: One entry: [epoch, coordinator epoch, last timestamp, txn first offset or -1, last seq, last offset, delta].
Entry = list[int]
MapState = tuple[tuple[tuple[int, tuple[int, ...]], ...], int, bool]


def bucket(producer_id: int, capacity: int) -> int:
    """``HashMap``'s bucket of a ``Long`` key."""
    value = producer_id & _MASK64
    h = (value ^ (value >> 32)) & 0xFFFFFFFF
    return (h ^ (h >> 16)) & (capacity - 1)


class ProducerMap:
    """The producer map of one ``ProducerStateManager``, entries in insertion order."""

    __slots__ = ("bins", "capacity", "entries", "unknown")

    def __init__(self, capacity: int = 16) -> None:
        self.entries: dict[int, Entry] = {}
        self.capacity = capacity  # kept across clear(), as a HashMap keeps its table
        self.bins: dict[int, int] = {}
        self.unknown = False

    def clear(self) -> None:
        self.entries.clear()
        self.bins.clear()
        self.unknown = False

    def _entry(self, producer_id: int) -> Entry:
        entry = self.entries.get(producer_id)
        if entry is None:
            entry = [-1, -1, -1, -1, -1, -1, 0]  # ProducerStateEntry.empty
            self._insert(producer_id, entry)
        return entry

    def _insert(self, producer_id: int, entry: Entry) -> None:
        self.entries[producer_id] = entry
        if len(self.entries) > self.capacity * 3 // 4:
            self.capacity *= 2
            self.bins = {}
            for pid in self.entries:
                b = bucket(pid, self.capacity)
                self.bins[b] = self.bins.get(b, 0) + 1
        else:
            b = bucket(producer_id, self.capacity)
            self.bins[b] = self.bins.get(b, 0) + 1
        if max(self.bins.values()) >= _TREEIFY:
            self.unknown = True

    def load(self, e: ProducerEntry) -> None:
        """``loadProducerEntry`` of a snapshot entry (``readSnapshot`` keeps the batch only if offset >= 0)."""
        meta = [e.last_sequence, e.last_offset, e.offset_delta] if e.last_offset >= 0 else [-1, -1, 0]
        entry = [e.epoch, e.coordinator_epoch, e.timestamp, e.current_txn_first_offset, *meta]
        if e.producer_id in self.entries:
            self.entries[e.producer_id] = entry  # HashMap.put on a present key: its place is kept
        else:
            self._insert(e.producer_id, entry)

    def data(self, producer_id: int, epoch: int, last_seq: int, first_offset: int, last_offset: int,
             timestamp: int, transactional: bool) -> None:
        """``appendDataBatch`` then ``update``."""
        entry = self._entry(producer_id)
        if entry[0] != epoch:
            entry[0] = epoch
        entry[4], entry[5], entry[6] = last_seq, last_offset, last_offset - first_offset
        entry[2] = timestamp
        if transactional and entry[3] < 0:
            entry[3] = first_offset

    def marker(self, producer_id: int, epoch: int, coordinator_epoch: int, timestamp: int) -> None:
        """``appendEndTxnMarker`` then ``update``: a new epoch forgets the batch metadata."""
        entry = self._entry(producer_id)
        if entry[0] != epoch:
            entry[0] = epoch
            entry[4], entry[5], entry[6] = -1, -1, 0
        entry[1], entry[2], entry[3] = coordinator_epoch, timestamp, -1

    def touch(self, producer_id: int) -> None:
        """A control batch without records: ``update`` still adds an empty entry for a new producer."""
        self._entry(producer_id)

    def reverse_since(self, count: int) -> None:
        """The producers added after the first ``count``, in reverse order of first appearance.

        ``loadProducersFromRecords`` collects a read's producers with ``computeIfAbsent``, which puts a
        new key at the *head* of its bucket, then ``put``s them into the map in that map's order: two
        new producers that share a bucket arrive last-seen-first (``LogSegment.recover`` updates batch
        by batch, in first-appearance order).
        """
        items = list(self.entries.items())
        if len(items) - count > 1:
            self.entries = dict(items[:count] + items[count:][::-1])

    def ordered(self) -> list[ProducerEntry]:
        """The entries in ``HashMap`` iteration order, as ``writeSnapshot`` writes them."""
        keyed = sorted((bucket(pid, self.capacity), i, pid) for i, pid in enumerate(self.entries))
        out = []
        for _, _, pid in keyed:
            epoch, coordinator, timestamp, txn_first, last_seq, last_offset, delta = self.entries[pid]
            out.append(ProducerEntry(pid, epoch, last_seq, last_offset, delta, timestamp, coordinator, txn_first))
        return out

    def state(self) -> MapState:
        return tuple((pid, tuple(e)) for pid, e in self.entries.items()), self.capacity, self.unknown

    def restore(self, state: MapState) -> None:
        self.clear()
        items, self.capacity, unknown = state
        for pid, values in items:
            self._insert(pid, list(values))
        self.unknown = unknown
