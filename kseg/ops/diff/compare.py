"""Two replicas compared range by range, streaming both logs once (memory holds two batches and a digest).

Batches that align (same first and last offset) are compared by their
header and content digest (:mod:`kseg.format.digest`, computed by the
compiled core in the walk): ``identical``, or -- when the CRC-covered bytes
agree but the leader epoch outside the CRC does not -- ``same records, other
leader epoch``.  Elsewhere the records of a window are compared, the window
closing where both sides end a batch at the same offset: each side's records
digest is the sum of its batches' (a record's offset, timestamp, key, value,
headers and producer fields hashed; the sum does not depend on the
batching), and equal digests mean ``same records, different batching``
(compaction by another cleaner run, a down-conversion, a rebuilt log),
unequal ones ``different records``.  Batches at offsets the other replica has no batch
for are ``only on`` one side.  Consecutive windows of one kind merge into
one range: the output is ranges, never a line per record.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from kseg.format.digest import MASK_128, records_digest
from kseg.ops.diff.batches import BatchRef

IDENTICAL = "identical"
OTHER_EPOCH = "same records, other leader epoch"
SAME_RECORDS = "same records, different batching"
DIFFERENT = "different records"
ONLY_A = "only on a"
ONLY_B = "only on b"
#: kinds that mean the replicas disagree
DIVERGENT = (OTHER_EPOCH, SAME_RECORDS, DIFFERENT, ONLY_A, ONLY_B)


@dataclass(slots=True)
class Range:
    """Offsets ``first..last`` (inclusive) where the two replicas compare as ``kind``."""

    first: int
    last: int
    kind: str
    batches_a: int = 0
    batches_b: int = 0


class Digest:
    """A running records digest of the batches added: the sum of theirs."""

    def __init__(self, cap: int) -> None:
        self.total = 0
        self.cap = cap

    def add(self, ref: BatchRef) -> None:
        digest = ref.digest
        if digest is None:  # compressed, V0/V1, or records the scanner leaves to the validating reader
            digest = records_digest(ref.records(self.cap), ref.producer_id, ref.flags)
        self.total += int.from_bytes(digest, "little")

    def value(self) -> int:
        return self.total & MASK_128


def compare(a: Iterator[BatchRef], b: Iterator[BatchRef], cap: int) -> list[Range]:
    """Every range of the two batch streams, in offset order, consecutive ranges of one kind merged."""
    ranges: list[Range] = []
    for item in _windows(a, b, cap):
        last = ranges[-1] if ranges else None
        if last is not None and last.kind == item.kind:
            last.last, last.batches_a, last.batches_b = (max(last.last, item.last), last.batches_a + item.batches_a,
                                                         last.batches_b + item.batches_b)
        else:
            ranges.append(item)
    return ranges


def _windows(a: Iterator[BatchRef], b: Iterator[BatchRef], cap: int) -> Iterator[Range]:
    x, y = next(a, None), next(b, None)
    while x is not None or y is not None:
        if y is None or (x is not None and x.last < y.base):
            assert x is not None
            yield Range(x.base, x.last, ONLY_A, 1, 0)
            x = next(a, None)
        elif x is None or y.last < x.base:
            yield Range(y.base, y.last, ONLY_B, 0, 1)
            y = next(b, None)
        elif x.base == y.base and x.last == y.last:
            yield Range(x.base, x.last, _aligned(x, y, cap), 1, 1)
            x, y = next(a, None), next(b, None)
        else:
            window, x, y = _misaligned(x, y, a, b, cap)
            yield window


def _aligned(x: BatchRef, y: BatchRef, cap: int) -> str:
    """Two batches over the same offsets: header and content digest, then records.

    V2: the bytes before the CRC-covered part are base offset (equal here), length, leader
    epoch, magic and CRC; V0/V1: the content digest covers the whole entry.
    """
    if x.content == y.content and x.size == y.size and x.magic == y.magic and x.crc == y.crc:
        return IDENTICAL if x.epoch == y.epoch else OTHER_EPOCH
    return _by_records([x], [y], cap)


def _by_records(xs: list[BatchRef], ys: list[BatchRef], cap: int) -> str:
    da, db = Digest(cap), Digest(cap)
    for ref in xs:
        da.add(ref)
    for ref in ys:
        db.add(ref)
    return SAME_RECORDS if da.value() == db.value() else DIFFERENT


def _misaligned(
    x: BatchRef, y: BatchRef, a: Iterator[BatchRef], b: Iterator[BatchRef], cap: int
) -> tuple[Range, BatchRef | None, BatchRef | None]:
    """Batches of both sides until both end a batch at the same offset; their records compared."""
    da, db = Digest(cap), Digest(cap)
    first, na, nb = min(x.base, y.base), 0, 0
    cur_x: BatchRef | None = x
    cur_y: BatchRef | None = y
    while cur_x is not None and cur_y is not None and cur_x.last != cur_y.last:
        if cur_x.last < cur_y.last:
            da.add(cur_x)
            na, cur_x = na + 1, next(a, None)
        else:
            db.add(cur_y)
            nb, cur_y = nb + 1, next(b, None)
    last = max(r.last for r in (cur_x, cur_y) if r is not None)
    for ref, dig in ((cur_x, da), (cur_y, db)):
        if ref is not None:
            dig.add(ref)
    na += cur_x is not None
    nb += cur_y is not None
    kind = SAME_RECORDS if da.value() == db.value() else DIFFERENT
    return Range(first, last, kind, na, nb), next(a, None) if cur_x is not None else None, \
        next(b, None) if cur_y is not None else None
