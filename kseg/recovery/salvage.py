"""``--salvage``: every intact batch past the damage that Kafka's recovery would accept in the output.

Kafka's prefix is walked as Kafka frames it; after it, :func:`kseg.format.scan.scan`
finds every whole entry with a known magic and a CRC that verifies, and the
gaps between them.  A batch is kept only if ``LogSegment.recover`` would
accept it *in the output*:

* its last offset fits the segment (``LogSegment.ensureOffsetInRange``; else
  recovery throws ``LogSegmentOffsetOverflowException``, and the load's split
  is refused unless the segment's last batch overflows: the broker stops);
* its first offset is above every offset kept so far (offsets strictly
  increase; a batch that does not pass would break the offset index);
* the producer-state tracking recovery runs does not reject it (an
  undecodable transaction marker stops recovery after it; a
  non-transactional write inside an open transaction makes it throw).

Each dropped batch and each damaged range becomes a :class:`~kseg.recovery.plan.Loss`
with its reason.  The selection is also what describes Kafka's own cut in
kafka mode (how many intact batches, which offsets it held).
"""

from __future__ import annotations

from dataclasses import replace

from kseg.errors import InvalidRecord, KsegError, LimitExceeded
from kseg.format import Batch, BatchWalk
from kseg.format.compression import DEFAULT_MAX_DECOMPRESSED
from kseg.format.layout import (
    CODEC_MASK,
    HEADER_SIZE_UP_TO_MAGIC,
    LEGACY_ATTRIBUTES_OFFSET,
    MAGIC_OFFSET,
    MAX_RELATIVE_OFFSET,
    Buffer,
)
from kseg.format.scan import BAD_CRC, BAD_MAGIC, BAD_SIZE, PARTIAL, SHORT_TAIL, Gap, scan
from kseg.format.v0v1 import LegacyBatch
from kseg.format.v2 import V2Batch
from kseg.recovery.plan import (
    DAMAGED,
    HOLE,
    INVALID_RECORD,
    KEPT,
    LOST,
    NOT_INCREASING,
    OUT_OF_RANGE,
    RECOVERY_FAILS,
    SALVAGED,
    Claimed,
    Loss,
    Region,
    Run,
)
from kseg.recovery.producer_state import RecoveryAbort, TxnTracker, track_producer_batch
from kseg.segment import RELEASE_EVERY, release_pages

# -- facts about one batch -----------------------------------------------------------


def first_offset_of(batch: Batch, max_batch_bytes: int = DEFAULT_MAX_DECOMPRESSED) -> int:
    """The batch's first offset (a legacy wrapper whose records cannot be read: its last offset).

    A wrapper past the read cap ``max_batch_bytes`` raises LimitExceeded: kseg was
    told not to read it, which says nothing about whether Kafka can.
    """
    if isinstance(batch, V2Batch):
        return batch.base_offset
    try:
        return batch.first_offset(max_batch_bytes)  # a legacy wrapper's base offset needs its records
    except LimitExceeded:
        raise
    except KsegError:
        return batch.last_offset


def records_of(batch: Batch, max_batch_bytes: int = DEFAULT_MAX_DECOMPRESSED) -> int | None:
    """Records in the batch (V2: the stored count; a legacy wrapper is decompressed); None if unreadable.

    A wrapper past the read cap raises LimitExceeded, as in :func:`first_offset_of`.
    """
    if isinstance(batch, V2Batch):
        return batch.count
    if batch.codec_id == 0:
        return 1
    try:
        return batch.record_count(max_batch_bytes)  # counted as it is decompressed, never listed
    except LimitExceeded:
        raise
    except KsegError:
        return None


def claimed_header(buf: Buffer, gap: Gap) -> Claimed | None:
    """The header of the entry a gap starts with, when one is there to read (bad CRC, cut short)."""
    if gap.reason not in (BAD_CRC, PARTIAL) or gap.start + HEADER_SIZE_UP_TO_MAGIC > len(buf):
        return None
    magic = buf[gap.start + MAGIC_OFFSET]
    try:
        if magic == 2:
            batch = V2Batch(buf, gap.start)
            return Claimed(2, batch.base_offset, batch.last_offset, batch.records_count, batch.codec)
        if magic in (0, 1) and gap.start + LEGACY_ATTRIBUTES_OFFSET + 1 <= len(buf):
            legacy = LegacyBatch(buf, gap.start)
            return Claimed(magic, None, legacy.last_offset, None, legacy.codec)
    except KsegError:
        return None
    return None


# -- the selection ------------------------------------------------------------------


class Selection:
    """Runs, losses and regions, accumulated as batches are kept or dropped in file order.

    The open run and the open region are kept as plain mutable fields and
    frozen only when they end: this is called once per batch, and a segment
    can hold millions of batches.
    """

    def __init__(self, base_offset: int) -> None:
        self.base_offset = base_offset
        self.runs: list[Run] = []
        self.losses: list[Loss] = []
        self.regions: list[Region] = []
        self.high: int | None = None  # highest last offset kept
        self.lost_any = False
        self.first_seen: int | None = None
        self.last_seen: int | None = None
        self.intact = 0  # batches kept or dropped
        self._run: list | None = None  # [start, end, first, last, batches, records, salvaged]
        self._region_at: list | None = None  # [start, end, kind]
        self._pending: list[int] = []  # indexes of losses whose offset range waits for the next kept batch

    def _next_offset(self) -> int:
        return self.base_offset if self.high is None else self.high + 1

    def _seen(self, first: int, last: int) -> None:
        """Edges of the map: the first and last offsets of the intact batches (out-of-range ones excepted)."""
        if self.first_seen is None:
            self.first_seen = first
        if self.last_seen is None or last > self.last_seen:
            self.last_seen = last

    def _resolve(self, first: int) -> None:
        """The damage before a kept batch held at most the offsets up to the kept batch's first one."""
        for i in self._pending:
            loss = self.losses[i]
            if loss.first_offset is not None and first - 1 >= loss.first_offset:
                self.losses[i] = replace(loss, last_offset=first - 1, open_ended=False)
            else:
                self.losses[i] = replace(loss, first_offset=None, open_ended=False)
        self._pending.clear()

    def _region(self, start: int, end: int, kind: str) -> None:
        region = self._region_at
        if region is not None and region[2] == kind and region[1] == start:
            region[1] = end
            return
        if region is not None:
            self.regions.append(Region(*region))
        self._region_at = [start, end, kind]

    def _close(self) -> None:
        if self._run is not None:
            self.runs.append(Run(*self._run))
            self._run = None

    def keep(self, batch: Batch, first: int, last: int, records: int | None) -> None:
        self.keep_span(batch.position, batch.position + batch.size, first, last, records)

    def keep_span(self, position: int, end: int, first: int, last: int, records: int | None, count: int = 1) -> None:
        """:meth:`keep` for ``count`` entries filling ``[position, end)`` without batch objects (plain V0/V1
        messages): ``first`` is the first one's first offset, ``last`` the largest last offset."""
        self.intact += count
        run = self._run
        if run is not None and run[1] == position:
            run[1] = end
            run[3] = max(run[3], last)
            run[4] += count
            run[5] = None if run[5] is None or records is None else run[5] + records
        else:
            self._close()
            self._run = [position, end, first, last, count, records, self.lost_any]
        if self.high is None or last > self.high:
            self.high = last
        self._region(position, end, SALVAGED if self.lost_any else KEPT)
        if self._pending:
            self._resolve(first)
        self._seen(first, last)

    def drop(
        self, batch: Batch, first: int, last: int, records: int | None, reason: str, detail: str
    ) -> None:
        self.intact += 1
        self._close()
        end = batch.position + batch.size
        self.losses.append(Loss(batch.position, end, reason, detail, 1, records, 0, False, first, last))
        self.lost_any = True
        self._region(batch.position, end, LOST)
        if reason != OUT_OF_RANGE:
            self._seen(first, last)
        # a batch dropped for producer state still sits where its offsets belong: damage before it ends there
        if reason not in (OUT_OF_RANGE, NOT_INCREASING):
            self._resolve(first)

    def damage(self, buf: Buffer, gap: Gap) -> None:
        self._close()
        self.losses.append(
            Loss(
                gap.start,
                gap.end,
                DAMAGED,
                describe_gap(gap),
                0,
                0,
                gap.size,
                gap.zero_filled,
                self._next_offset(),
                None,
                True,
                claimed_header(buf, gap),
            )
        )
        self._pending.append(len(self.losses) - 1)
        self.lost_any = True
        self._region(gap.start, gap.end, HOLE if gap.zero_filled else LOST)

    def finish(self) -> None:
        """Close the last run and region.  Damage with no kept batch after it stays open-ended -- unless
        it is all zeros, which holds no batch (a preallocated or sparse tail): no offsets are known lost."""
        self._close()
        if self._region_at is not None:
            self.regions.append(Region(*self._region_at))
            self._region_at = None
        for i in self._pending:
            if self.losses[i].zero_filled:
                self.losses[i] = replace(self.losses[i], first_offset=None, open_ended=False)
        self._pending.clear()


GAP_WORDS = {
    BAD_SIZE: "a size field below the minimum for its magic",
    BAD_MAGIC: "a magic byte that is not 0, 1 or 2",
    PARTIAL: "an entry that runs past the end of the file",
    SHORT_TAIL: "too few bytes for an entry header",
    BAD_CRC: "the checksum does not match",
}


def describe_gap(gap: Gap) -> str:
    """Why a gap's first entry was refused, in words."""
    words = GAP_WORDS.get(gap.reason, gap.reason)
    if gap.declared_size is not None and gap.reason in (BAD_SIZE, PARTIAL, BAD_CRC):
        words += f" (size field {gap.declared_size})"
    return words


def acceptance_refusal(
    batch: Batch, first: int, last: int, base_offset: int, high: int | None, tracker: TxnTracker
) -> tuple[str, str] | None:
    """Why Kafka's recovery of the output would refuse ``batch`` after what is kept (None: it accepts it).

    Producer state is updated only for a batch that passes the offset checks,
    as ``LogSegment.recover`` does.
    """
    if not 0 <= last - base_offset <= MAX_RELATIVE_OFFSET:
        return OUT_OF_RANGE, (
            f"last offset {last} does not fit a segment with base offset {base_offset} "
            "(LogSegmentOffsetOverflowException in Kafka's recovery)"
        )
    if high is not None and first <= high:
        return NOT_INCREASING, f"offsets {first}-{last} do not pass {high}, the last offset kept"
    return producer_refusal(batch, tracker)


def producer_refusal(batch: Batch, tracker: TxnTracker) -> tuple[str, str] | None:
    """Run recovery's producer-state step on ``batch``; the reason it would refuse it, if any."""
    if not isinstance(batch, V2Batch) or batch.producer_id < 0:  # legacy batches have no producer id
        return None
    try:
        track_producer_batch(tracker, batch)
    except InvalidRecord as err:
        return INVALID_RECORD, f"{err.message} (Kafka's recovery stops after this batch)"
    except RecoveryAbort as abort:
        return RECOVERY_FAILS, f"{abort.exception}: {abort.message}"
    return None


#: Plain (uncompressed) V0/V1 messages of Kafka's prefix are kept without a batch object each
#: (False: every entry through the batch path, the reference of tests/recovery/test_salvage_legacy.py).
PLAIN_LEGACY_STEP = True


def select_batches(
    buf: Buffer, base_offset: int, prefix_end: int, tracker: TxnTracker
) -> tuple[Selection, PrefixStats]:
    """Kafka's prefix as Kafka keeps it, then every intact batch after it that recovery would accept.

    Legacy wrappers are decompressed (for their first offset and record count)
    under the tracker's read cap, the one its control batches are read under.
    """
    cap = tracker.max_batch_bytes
    sel = Selection(base_offset)
    stats = PrefixStats()
    released = 0
    plain = _PlainRun(sel, stats)
    for position, end, magic, _, _ in BatchWalk(buf, 0, prefix_end, strict=False).frames():
        if PLAIN_LEGACY_STEP and magic in (0, 1) and not buf[position + LEGACY_ATTRIBUTES_OFFSET] & CODEC_MASK:
            # a plain V0/V1 message: its offset is its first and last, one record, no producer id --
            # no object per message, which a legacy segment has a hundred times more of than batches
            if plain.add(position, end, int.from_bytes(buf[position : position + 8], "big", signed=True)):
                released = _release_behind(buf, released, position)
            continue
        plain.flush()
        batch: Batch = LegacyBatch(buf, position) if magic < 2 else V2Batch(buf, position)
        first, last, records = first_offset_of(batch, cap), batch.last_offset, records_of(batch, cap)
        stats.add(first, last, records)
        refusal = producer_refusal(batch, tracker)
        if refusal is None:
            sel.keep(batch, first, last, records)
        else:
            sel.drop(batch, first, last, records, *refusal)
        released = _release_behind(buf, released, batch.position)
    plain.flush()
    for item in scan(buf, prefix_end):
        if isinstance(item, Gap):
            sel.damage(buf, item)
            released = _release_behind(buf, released, item.start)
            continue
        first, last, records = first_offset_of(item, cap), item.last_offset, records_of(item, cap)
        refusal = acceptance_refusal(item, first, last, base_offset, sel.high, tracker)
        if refusal is None:
            sel.keep(item, first, last, records)
        else:
            sel.drop(item, first, last, records, *refusal)
        released = _release_behind(buf, released, item.position)
    sel.finish()
    return sel, stats


class _PlainRun:
    """Consecutive plain V0/V1 messages of the prefix, kept in one :meth:`Selection.keep_span` call.

    Kept one by one they would extend the same run and region, and move the same maxima, as
    their sum does (tests/recovery/test_salvage_legacy.py compares both).
    """

    FLUSH_EVERY = 4096  # messages: the pages behind them are released at each flush

    def __init__(self, sel: Selection, stats: PrefixStats) -> None:
        self.sel, self.stats = sel, stats
        self.start = self.end = self.first = self.high = self.count = 0

    def add(self, position: int, end: int, offset: int) -> bool:
        """One message; True when the run was flushed (every FLUSH_EVERY messages)."""
        if self.count == 0:
            self.start, self.first, self.high = position, offset, offset
        elif offset > self.high:
            self.high = offset
        self.end = end
        self.count += 1
        if self.count < self.FLUSH_EVERY:
            return False
        self.flush()
        return True

    def flush(self) -> None:
        if self.count:
            self.stats.add(self.first, self.high, self.count, self.count)
            self.sel.keep_span(self.start, self.end, self.first, self.high, self.count, self.count)
            self.count = 0


def _release_behind(buf: Buffer, released: int, position: int) -> int:
    """Release mapped pages before ``position`` once :data:`~kseg.segment.RELEASE_EVERY` bytes were walked."""
    if position - released < RELEASE_EVERY:
        return released
    return release_pages(buf, released, position)


class PrefixStats:
    """Offsets and records of the batches Kafka keeps."""

    __slots__ = ("batches", "first", "high", "records")

    def __init__(self) -> None:
        self.batches = 0
        self.records: int | None = 0
        self.first: int | None = None
        self.high: int | None = None

    def add(self, first: int, last: int, records: int | None, count: int = 1) -> None:
        self.batches += count
        self.records = None if self.records is None or records is None else self.records + records
        if self.first is None:
            self.first = first
        if self.high is None or last > self.high:
            self.high = last
