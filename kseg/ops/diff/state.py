"""What a ``read_committed`` consumer reads from two replicas -- each key's latest value, each transaction's outcome
-- compared in bounded memory.

Replicas of a compacted topic clean independently, so their batches differ
without any loss; what must agree is the state a consumer rebuilds.  One pass
over a replica's batches, in offset order, as a ``read_committed`` consumer
sees them:

* records of a transaction count only once its COMMIT marker follows; an
  ABORT marker drops them; a transaction without a marker is not read (the
  last stable offset stops before it);
* the latest value of each non-null key wins; a tombstone and a key no
  batch holds any more read the same (both mean "deleted"), so a tombstone
  removed by one replica's cleaner is no difference -- but an older value
  where the other replica has the tombstone is ("deleted data reappears");
* each transaction (producer id, first offset) with its outcome: COMMIT or
  ABORT at the marker's offset, or ``open``.

Memory is bounded, not one entry per key of the log.  A key is held as its
64-bit fingerprint (:func:`kseg.format.digest.fingerprint`) with its latest
offset and value fingerprint, and at most ``budget`` keys and transactions
per replica are held at once: the key space is cut into ``2**bits`` buckets
by the fingerprint's top bits (a transaction by its producer id's), and the
two replicas are folded and compared one bucket at a time, each bucket a walk
of both logs.  A bucket that outgrows the budget is split in two and walked
again (``bits`` grows; the buckets already compared stay done), so the number
of walks follows the number of distinct keys, not the size of the log.  The
walks read the segments read-only and write nothing (no temporary files).
The compiled core folds uncompressed batches' keys into fingerprints and
passes over batches with no key in the bucket (:func:`kseg.format.digest.keyed_digests`).
The examples named are the differing keys whose latest values lie lowest in
the log; their key bytes are read back by offset at the end.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Iterator
from dataclasses import dataclass, field
from operator import itemgetter
from pathlib import Path
from typing import Any

from kseg.format.control import ABORT
from kseg.format.digest import MAX_BUCKET_BITS, Keyed, fingerprint, in_bucket, keyed_digests, keyed_of
from kseg.format.v0v1 import LegacyBatch
from kseg.format.v2 import V2Batch
from kseg.ops.diff.batches import iter_batches, logs_from
from kseg.recovery.producer_state import RecoveryAbort, end_txn_marker
from kseg.segment import RELEASE_EVERY, Segment, release_pages

OPEN = "open"
ABSENT = "absent"
#: keys and transactions held per replica and bucket (about 200 bytes each)
KEY_BUDGET = 1 << 17
#: differing keys named by example
EXAMPLES = 10
CONTROL = 0x20
TRANSACTIONAL = 0x10
#: (offset, value fingerprint or None for a tombstone) of a key's latest record
Entry = tuple[int, "int | None"]


@dataclass(frozen=True, slots=True)
class Log:
    """The batches of a replica that count: its segments, log start and log end."""

    logs: list[Path]
    log_start: int
    log_end: int


class Overflow(Exception):
    """A bucket holds more than the budget: split it; ``reached``: the offset the walk of ``log`` had reached."""

    def __init__(self, log: Log, reached: int) -> None:
        super().__init__(reached)
        self.log, self.reached = log, reached


@dataclass(slots=True)
class ConsumerState:
    """One bucket: key fingerprint -> latest entry; (producer, first offset) -> outcome."""

    latest: dict[int, Entry] = field(default_factory=dict)
    transactions: dict[tuple[int, int], str] = field(default_factory=dict)


@dataclass(slots=True)
class StateDiff:
    """Where two replicas' consumer states differ."""

    keys: int = 0  # keys either replica holds a live value for
    differing: int = 0  # how many of them differ
    examples: list[tuple[bytes, Entry | None, Entry | None]] = field(default_factory=list)
    differing_transactions: list[tuple[tuple[int, int], str, str]] = field(default_factory=list)
    buckets: int = 0  # the key buckets the comparison ended with (1: one walk of each replica)


def state_diff(a: Log, b: Log, cap: int, budget: int = KEY_BUDGET) -> StateDiff:
    """The two replicas' read_committed states compared, one key bucket at a time."""
    out = StateDiff()
    found: list[tuple[int, int, int, Entry | None, Entry | None]] = []
    bits, bucket = 0, 0
    while bucket < 1 << bits:
        try:
            sa = consumer_state(a, cap, bits, bucket, budget)
            sb = consumer_state(b, cap, bits, bucket, budget)
        except Overflow as full:
            more = _more_bits(full.reached, full.log, budget)
            if bits + more > MAX_BUCKET_BITS:
                raise
            bits, bucket = bits + more, bucket << more
            continue
        found = heapq.nsmallest(EXAMPLES, [*found, *_compare(sa, sb, out)])
        bucket += 1
    out.buckets = 1 << bits
    out.differing_transactions.sort()
    out.examples = _with_keys(a, b, found, cap)
    return out


def _more_bits(reached: int, log: Log, budget: int) -> int:
    """How many more bucket bits a bucket needs that filled the budget by offset ``reached``: its keys
    estimated from the share of the log walked, split so that each part is expected to fit."""
    span = max(1, log.log_end - log.log_start)
    walked = min(span, max(1, reached - log.log_start + 1))
    expected = budget * span / walked
    return max(1, math.ceil(math.log2(expected / budget)))


def _compare(a: ConsumerState, b: ConsumerState, out: StateDiff) -> list[tuple[int, int, int, Entry | None, Entry | None]]:
    """One bucket: counts into ``out``; the differing keys as (lowest offset, highest, fingerprint, a, b).

    Keys whose latest record is the same on both sides (same offset and value) drop out of the
    symmetric difference of the two item views at C speed; only the others are looked at here.
    """
    candidates = {key for key, _ in a.latest.items() ^ b.latest.items()}
    live_a = len(a.latest) - list(map(itemgetter(1), a.latest.values())).count(None)
    same_live = live_a - sum(1 for k in candidates if (x := a.latest.get(k)) is not None and x[1] is not None)
    live = 0
    differing = []
    for key in candidates:
        x, y = a.latest.get(key), b.latest.get(key)
        vx, vy = (x[1] if x else None), (y[1] if y else None)
        if vx is None and vy is None:
            continue
        live += 1
        if vx != vy:
            offsets = [e[0] for e in (x, y) if e is not None]
            differing.append((min(offsets), max(offsets), key, x, y))
    out.keys += same_live + live
    out.differing += len(differing)
    for txn in set(a.transactions) | set(b.transactions):
        x_out, y_out = a.transactions.get(txn, ABSENT), b.transactions.get(txn, ABSENT)
        if x_out != y_out:
            out.differing_transactions.append((txn, x_out, y_out))
    return heapq.nsmallest(EXAMPLES, differing)


def consumer_state(log: Log, cap: int, bits: int = 0, bucket: int = 0, budget: int = KEY_BUDGET) -> ConsumerState:
    """Fold one replica's batches into what a read_committed consumer reads of one key bucket.

    Raises :class:`Overflow` once the bucket holds more than ``budget`` keys and transactions.
    """
    state = ConsumerState()
    pending: dict[int, list[Keyed]] = {}
    first_of: dict[int, int] = {}
    latest, held = state.latest, state.transactions
    reached = log.log_start
    for buf, item in _items(log, bits, bucket):
        if type(item) is list:  # a run of plain batches' keyed records
            latest.update(item)
            if item:
                reached = item[-1][1][0]
        else:
            pos, _, _, header, keyed = item
            reached = header[0] if header is not None else reached
            if header is None:
                latest.update(_legacy_keyed(buf, pos, cap, bits, bucket))
            elif header[5] & CONTROL:
                _marker(state, V2Batch(buf, pos), pending, first_of, cap, bits, bucket)
            elif header[5] & TRANSACTIONAL:
                first_of.setdefault(header[9], header[0])
                pending.setdefault(header[9], []).extend(
                    keyed if keyed is not None else _v2_keyed(buf, pos, cap, bits, bucket))
            else:
                latest.update(_v2_keyed(buf, pos, cap, bits, bucket))
        if len(latest) + len(held) > budget:
            raise Overflow(log, reached)
    for producer_id, first in first_of.items():
        if _producer_in_bucket(producer_id, bits, bucket):
            held[(producer_id, first)] = OPEN
    return state


def _items(log: Log, bits: int, bucket: int) -> Iterator[tuple[Any, Any]]:
    """(buffer, item of :func:`keyed_digests`) for the batches that count, in log order."""
    for path in log.logs:
        with Segment(path) as seg:
            buf = seg.buf
            release = _Releaser(buf)
            for item in keyed_digests(buf, len(buf), bits, bucket, log.log_start, log.log_end, release):
                if type(item) is not list:
                    pos, header = item[0], item[3]
                    if header is None:  # no V2 header: the offsets are checked here
                        legacy = LegacyBatch(buf, pos)
                        if legacy.base_offset >= log.log_end:
                            return
                        if legacy.last_offset < log.log_start:
                            continue
                    elif header[0] >= log.log_end:
                        return
                yield buf, item


class _Releaser:
    """Releases the mapped pages behind a walk every RELEASE_EVERY bytes (re-read from the page cache if needed)."""

    def __init__(self, buf: Any) -> None:
        self.buf, self.mark = buf, 0

    def __call__(self, pos: int) -> None:
        if pos - self.mark >= RELEASE_EVERY:
            self.mark = release_pages(self.buf, self.mark, pos)


def _producer_in_bucket(producer_id: int, bits: int, bucket: int) -> bool:
    """A transaction belongs to the bucket of its producer id (as 8 big-endian bytes)."""
    return in_bucket(producer_id.to_bytes(8, "big", signed=True), bits, bucket)


def _v2_keyed(buf: object, pos: int, cap: int, bits: int, bucket: int) -> list[Keyed]:
    records = V2Batch(buf, pos).iter_records(cap)  # type: ignore[arg-type]
    return keyed_of(((r.key, r.offset, r.value) for r in records), bits, bucket)


def _legacy_keyed(buf: object, pos: int, cap: int, bits: int, bucket: int) -> list[Keyed]:
    records = LegacyBatch(buf, pos).iter_records(cap)  # type: ignore[arg-type]
    return keyed_of(((r.key, r.offset, r.value) for r in records), bits, bucket)


def _marker(state: ConsumerState, batch: V2Batch, pending: dict[int, list[Keyed]], first_of: dict[int, int],
            cap: int, bits: int, bucket: int) -> None:
    marker = _readable_marker(batch, cap)
    if marker is None:
        return
    records = pending.pop(batch.producer_id, [])
    first = first_of.pop(batch.producer_id, None)
    aborted = marker[0] == ABORT
    if first is not None and _producer_in_bucket(batch.producer_id, bits, bucket):
        state.transactions[(batch.producer_id, first)] = f"{'aborted' if aborted else 'committed'} at {batch.base_offset}"
    if not aborted:
        state.latest.update(records)


def _readable_marker(batch: V2Batch, cap: int) -> tuple[int, int] | None:
    """The batch's end-transaction marker, or None where Kafka's reading throws (a control record of another
    type in a transactional control batch): the loading model reports that replica's load failing; the
    comparison treats the batch as no marker rather than stopping."""
    try:
        return end_txn_marker(batch, cap)
    except RecoveryAbort:
        return None


def _with_keys(a: Log, b: Log, found: list[tuple[int, int, int, Entry | None, Entry | None]],
               cap: int) -> list[tuple[bytes, Entry | None, Entry | None]]:
    """The examples with their key bytes, read back at the offset of a side's latest record."""
    want_a = {x[0]: k for _, _, k, x, _ in found if x is not None}
    want_b = {y[0]: k for _, _, k, x, y in found if x is None and y is not None}
    keys = {**_keys_at(b, want_b, cap), **_keys_at(a, want_a, cap)}
    return [(keys.get(k, b""), x, y) for _, _, k, x, y in found]


def _keys_at(log: Log, wanted: dict[int, int], cap: int) -> dict[int, bytes]:
    """Key fingerprint -> key bytes of the records at the wanted offsets (offset -> fingerprint)."""
    keys: dict[int, bytes] = {}
    if not wanted:
        return keys
    last_wanted = max(wanted)
    for ref in iter_batches(logs_from(log.logs, min(wanted)), log.log_start, log.log_end, digests=False):
        if ref.base > last_wanted:
            break
        if not any(ref.base <= o <= ref.last for o in wanted):
            continue
        for record in ref.records(cap):
            k = wanted.get(record.offset)
            if k is not None and record.key is not None and fingerprint(record.key) == k:
                keys[k] = record.key
    return keys
