"""What a ``read_committed`` consumer reads from one replica: each key's latest value, each transaction's outcome.

Replicas of a compacted topic clean independently, so their batches differ
without any loss; what must agree is the state a consumer rebuilds.  One pass
over the replica's batches, in offset order, as a ``read_committed``
consumer sees them:

* records of a transaction count only once its COMMIT marker follows; an
  ABORT marker drops them; a transaction without a marker is not read (the
  last stable offset stops before it);
* the latest value of each non-null key wins; a tombstone and a key no
  batch holds any more read the same (both mean "deleted"), so a tombstone
  removed by one replica's cleaner is no difference -- but an older value
  where the other replica has the tombstone is ("deleted data reappears");
* each transaction (producer id, first offset) with its outcome: COMMIT or
  ABORT at the marker's offset, or ``open``.

Memory holds one entry per key (a 64-bit fingerprint of its value) and per
transaction: what a comparison of compacted state needs (Kafka's cleaner
holds an offset map for the same reason).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from kseg.format.control import ABORT
from kseg.format.v2 import V2Batch
from kseg.ops.diff.batches import BatchRef
from kseg.recovery.producer_state import RecoveryAbort, end_txn_marker

OPEN = "open"


@dataclass(slots=True)
class ConsumerState:
    """Key -> (offset, value digest or None for a tombstone); (producer, first offset) -> outcome."""

    latest: dict[bytes, tuple[int, int | None]] = field(default_factory=dict)
    transactions: dict[tuple[int, int], str] = field(default_factory=dict)
    keyed_records: int = 0


def _digest(value: bytes | None) -> int | None:
    """A value's fingerprint for this run: Python's 64-bit SipHash (both replicas are read in one process)."""
    return None if value is None else hash(value)


def consumer_state(batches: Iterable[BatchRef], cap: int) -> ConsumerState:
    """Fold the batches (an iterator of :class:`BatchRef`) into what a read_committed consumer reads."""
    state = ConsumerState()
    pending: dict[int, list[tuple[bytes, int, int | None]]] = {}
    first_of: dict[int, int] = {}
    for ref in batches:
        if ref.magic < 2:
            _apply(state, _keyed(ref, cap))
            continue
        batch = V2Batch(ref.buf, ref.position)
        if batch.is_control:
            _marker(state, batch, pending, first_of, cap)
        elif batch.is_transactional:
            first_of.setdefault(batch.producer_id, batch.base_offset)
            pending.setdefault(batch.producer_id, []).extend(_keyed(ref, cap))
        else:
            _apply(state, _keyed(ref, cap))
    for producer_id, first in first_of.items():
        state.transactions[(producer_id, first)] = OPEN
    return state


def _marker(state: ConsumerState, batch: V2Batch, pending: dict[int, list[tuple[bytes, int, int | None]]],
            first_of: dict[int, int], cap: int) -> None:
    marker = _readable_marker(batch, cap)
    if marker is None:
        return
    records = pending.pop(batch.producer_id, [])
    first = first_of.pop(batch.producer_id, None)
    aborted = marker[0] == ABORT
    if first is not None:
        state.transactions[(batch.producer_id, first)] = f"{'aborted' if aborted else 'committed'} at {batch.base_offset}"
    if not aborted:
        _apply(state, records)


def _keyed(ref: BatchRef, cap: int) -> list[tuple[bytes, int, int | None]]:
    """(key, offset, value fingerprint) of the batch's keyed records: by columns where the scanner reads them."""
    scan = V2Batch(ref.buf, ref.position).scan(cap) if ref.magic >= 2 else None
    if scan is not None:
        return [(k, o, _digest(v)) for k, o, v in zip(scan.keys(), scan.offsets(), scan.values(), strict=True)
                if k is not None]
    return [(r.key, r.offset, _digest(r.value)) for r in ref.records(cap) if r.key is not None]


def _apply(state: ConsumerState, records: list[tuple[bytes, int, int | None]]) -> None:
    for key, offset, value in records:
        state.latest[key] = (offset, value)
        state.keyed_records += 1


@dataclass(slots=True)
class StateDiff:
    """Where two replicas' consumer states differ."""

    keys: int  # keys either replica holds a live value for
    differing_keys: list[tuple[bytes, tuple[int, int | None] | None, tuple[int, int | None] | None]]
    differing_transactions: list[tuple[tuple[int, int], str, str]]


def compare_states(a: ConsumerState, b: ConsumerState) -> StateDiff:
    """Keys whose latest value differs (a tombstone equals no entry) and transactions whose outcome differs."""
    live = {k for k, v in a.latest.items() if v[1] is not None} | {k for k, v in b.latest.items() if v[1] is not None}
    differing = []
    for key in sorted(live):
        x, y = a.latest.get(key), b.latest.get(key)
        if (x[1] if x else None) != (y[1] if y else None):
            differing.append((key, x, y))
    txns = []
    for txn in sorted(set(a.transactions) | set(b.transactions)):
        x_out, y_out = a.transactions.get(txn, "absent"), b.transactions.get(txn, "absent")
        if x_out != y_out:
            txns.append((txn, x_out, y_out))
    return StateDiff(len(live), differing, txns)


def _readable_marker(batch: V2Batch, cap: int) -> tuple[int, int] | None:
    """The batch's end-transaction marker, or None where Kafka's reading throws (a control record of another
    type in a transactional control batch): the loading model reports that replica's load failing; the
    comparison treats the batch as no marker rather than stopping."""
    try:
        return end_txn_marker(batch, cap)
    except RecoveryAbort:
        return None
