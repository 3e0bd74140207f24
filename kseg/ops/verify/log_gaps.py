"""The slow path of a log walk: what is at a position that is not a whole, CRC-valid V2 batch.

:func:`kseg.format.scan.scan` says what is there: a valid V0/V1 message
(checked by ``log_batches``), or the :class:`~kseg.format.scan.Gap` up to the
next batch that checks out.  Each gap becomes one finding for what is wrong
where it starts -- in Kafka's words where Kafka has them -- and one for the
bytes skipped to resynchronise, so one run reports all the damage in a file.
"""

from __future__ import annotations

from kseg.errors import KsegError
from kseg.format import read_batch
from kseg.format.layout import (
    BATCH_HEADER,
    ENTRY_PREFIX,
    HEADER_SIZE_UP_TO_MAGIC,
    LOG_OVERHEAD,
    MAGIC_OFFSET,
    MIN_ENTRY_SIZE,
    MIN_RECORD_OVERHEAD,
    MIN_V2_BATCH_LENGTH,
    RECORD_BATCH_OVERHEAD,
)
from kseg.format.scan import (
    BAD_CRC,
    BAD_MAGIC,
    BAD_SIZE,
    PARTIAL,
    SHORT_TAIL,
    Gap,
    find_next_batch,
    first_nonzero,
    scan,
)
from kseg.format.v0v1 import LegacyBatch
from kseg.format.v2 import V2Batch
from kseg.ops.verify.log_batches import BatchChecks
from kseg.ops.verify.log_state import Observer
from kseg.ops.verify.model import ERROR, INFO


class GapChecks(BatchChecks):
    """Legacy messages and damage: the walk's slow path, and the findings for each gap."""

    def _slow(self, pos: int) -> int:
        """Handle what is at ``pos`` when it is not a whole valid V2 batch; returns the next position."""
        item = next(scan(self.buf, pos, self.limit))
        if isinstance(item, Gap):
            item = self._plausible_resync(item)
            following = pos + LOG_OVERHEAD + (item.declared_size or 0)
            if item.reason == BAD_CRC and following < item.end and (
                (item.end == self.limit and self._torn_tail(following)) or self._framed(pos, following, item.end)
            ):
                # A damaged batch followed by a torn last batch, or by another whole entry that does not
                # check out either: each is reported at its own position, not folded into one skipped range.
                item = Gap(pos, following, BAD_CRC, item.declared_size, False)
            self._report_gap(item)
            if item.reason == BAD_CRC and self.observe is not None:
                self._observe_damaged(pos, item.end, self.observe)
            return item.end
        assert isinstance(item, LegacyBatch)  # a valid V2 batch here would have been taken by the fast loop
        self._check_legacy(item)
        self.prev_position = pos
        return pos + item.size

    def _observe_damaged(self, pos: int, end: int, observe: Observer) -> None:
        """Show the index checks a V2 batch that fails its CRC but whose header still reads true.

        Kafka indexed the batch when it was written: an ``.index`` entry at its position and a
        ``.timeindex`` entry with its max timestamp are what Kafka writes, not more damage (the CRC
        finding already says the batch is bad).  True: whole within the gap, offsets that follow
        the batches before it, ``lastOffsetDelta`` not negative.
        """
        if pos + RECORD_BATCH_OVERHEAD > end or self.buf[pos + MAGIC_OFFSET] != 2:
            return
        base, length, _, _, _, _, delta, _, max_ts, *_ = BATCH_HEADER.unpack_from(self.buf, pos)
        if pos + LOG_OVERHEAD + length <= end and delta >= 0 and self.floor < base and base + delta < self._ceiling():
            observe(pos, base, base + delta, max_ts)

    def _plausible_resync(self, gap: Gap) -> Gap:
        """Extend a gap past "batches" whose offsets do not follow the data before the damage.

        A CRC-valid entry can sit inside the damaged bytes -- an uncompressed inner message
        stored as a literal in a torn snappy wrapper, a record value that is itself a batch --
        and resynchronising there would report its garbage offsets as more damage.  The next
        batch that checks out must also continue the offsets.
        """
        floor = max(self.floor, self._damaged_offset(gap.start))
        ceiling = self._ceiling()
        end = gap.end
        while end < self.limit:
            offset = self._header_offset(end)
            if offset is not None and floor < offset < ceiling:
                break
            found = find_next_batch(self.buf, end + 1, self.limit)
            end = found.position if found is not None else self.limit
        if end == gap.end:
            return gap
        zero = first_nonzero(self.buf, gap.start, end) is None
        return Gap(gap.start, end, gap.reason, gap.declared_size, zero)

    def _damaged_offset(self, pos: int) -> int:
        """The offset in the damaged header at ``pos``, when it is believable (else the floor).

        Believable: above the offsets before it, and within the 2^31 offsets a segment can hold.
        What resynchronisation finds must come after it: a V0 wrapper torn in the middle still
        carries its inner messages, with their offsets, inside its payload.
        """
        if pos + HEADER_SIZE_UP_TO_MAGIC > self.limit:
            return self.floor
        offset = self._header_offset(pos) or 0  # not covered by the CRC: intact when the CRC-covered bytes are not
        return offset if self.floor < offset < self._ceiling() else self.floor

    def _framed(self, damaged: int, pos: int, end: int) -> bool:
        """Whether a whole entry starts at ``pos`` and ends by ``end``, with offsets after the damage at ``damaged``.

        Known magic, a length at least the minimum for it, and a base offset that continues the
        offsets before the damage: the entry after a damaged batch, itself damaged too.
        """
        if pos + HEADER_SIZE_UP_TO_MAGIC > end:
            return False
        offset, size, _ = ENTRY_PREFIX.unpack_from(self.buf, pos)
        minimum = MIN_ENTRY_SIZE.get(self.buf[pos + MAGIC_OFFSET])
        return (
            minimum is not None
            and minimum <= size
            and pos + LOG_OVERHEAD + size <= end
            and self._damaged_offset(damaged) < offset < self._ceiling()
        )

    def _torn_tail(self, pos: int) -> bool:
        """Whether a batch header at ``pos`` (known magic, plausible size) runs past the end of the file."""
        if pos + HEADER_SIZE_UP_TO_MAGIC > self.limit:
            return pos < self.limit
        _, size, _ = ENTRY_PREFIX.unpack_from(self.buf, pos)
        minimum = MIN_ENTRY_SIZE.get(self.buf[pos + MAGIC_OFFSET])
        return minimum is not None and size >= minimum and pos + LOG_OVERHEAD + size > self.limit

    # -- one gap, reported ----------------------------------------------------------------------

    def _report_gap(self, gap: Gap) -> None:
        """One finding for what is wrong where the gap starts, and one for any resynchronisation."""
        start, end, size = gap.start, gap.end, gap.end - gap.start
        self.skipped += size
        if self.kafka_cut is None:
            self.kafka_cut = start  # what the next start does about it is the load model's to say (load_findings)
        if self._report_tail(gap):
            return
        expected_end = self._report_damage(gap)
        if end != expected_end:
            resumed = f"resynchronised on the next valid batch at byte {end}" if end != self.limit else (
                "no valid batch follows")
            self.findings.add("skipped-bytes", INFO, start, None, f"{resumed}: {size} bytes from byte {start} skipped",
                              size=size)

    def _report_tail(self, gap: Gap) -> bool:
        """Zero-filled regions and torn ends of the file: the whole gap in one finding (True when reported)."""
        start, end, size = gap.start, gap.end, gap.end - gap.start
        trailing = end == self.limit
        add = self.findings.add
        if gap.zero_filled and gap.reason != SHORT_TAIL:
            where = "running to the end of the file" if trailing else f"up to byte {end}, with data after it"
            add("zero-filled", ERROR, start, None,
                f"{size} zero bytes {where}: a preallocated or never-written region (a batch size of 0 is a "
                f"CorruptRecordException to Kafka).", field="batch.batch_length", size=size)
            return True
        if gap.reason == SHORT_TAIL:
            zeros = ", all zero," if gap.zero_filled else ""
            add("partial-batch", ERROR, start, None,
                f"{size} bytes at the end of the file{zeros} are too few for a batch header (17 bytes): data that "
                f"was written is incomplete.", size=size)
            return True
        if gap.reason == PARTIAL and trailing:
            add("partial-batch", ERROR, start, self._header_offset(start),
                f"partial trailing batch of {size} bytes: its header declares {LOG_OVERHEAD + (gap.declared_size or 0)} "
                f"bytes; data that was written is incomplete.", field="batch.batch_length", size=size)
            return True
        return False

    def _report_damage(self, gap: Gap) -> int | None:
        """A damaged entry with data after it; returns where the entry would have ended, when that is known."""
        start, end, size, declared = gap.start, gap.end, gap.end - gap.start, gap.declared_size
        add = self.findings.add
        offset = self._header_offset(start)
        raw = self.buf[start + MAGIC_OFFSET] if start + MAGIC_OFFSET < self.limit else None
        magic = raw - 256 if raw is not None and raw > 127 else raw
        if gap.reason == PARTIAL:
            add("bad-size", ERROR, start, offset,
                f"batch length {declared} runs past the end of the file ({self.limit - start} bytes left), "
                f"yet a valid batch follows at byte {end}.", field="batch.batch_length", size=size)
        elif gap.reason == BAD_SIZE:
            minimum = MIN_ENTRY_SIZE.get(magic, MIN_V2_BATCH_LENGTH) if magic is not None else MIN_V2_BATCH_LENGTH
            kafka_view = (
                "Kafka's reader throws CorruptRecordException" if (declared or 0) < MIN_RECORD_OVERHEAD
                else "Kafka's ensureValid fails"
            )
            add("short-batch", ERROR, start, offset,
                f"batch length {declared} is below the minimum length {minimum} for magic {magic} "
                f"({kafka_view}).",
                field="batch.batch_length", size=size)
        elif gap.reason == BAD_MAGIC:
            add("bad-magic", ERROR, start, offset, f"magic byte {magic} is not 0, 1 or 2{self._v2_view(start)}.",
                field="batch.magic", size=size)
            return start + LOG_OVERHEAD + declared if declared is not None and declared >= 0 else None
        elif gap.reason == BAD_CRC:
            add("crc", ERROR, start, offset, f"{self._crc_message(start)}.",
                field="batch.crc" if magic == 2 else "message.crc", size=LOG_OVERHEAD + (declared or 0))
            return start + LOG_OVERHEAD + (declared or 0)
        return None

    def _crc_message(self, start: int) -> str:
        """Kafka's ensureValid() message for the entry at ``start``."""
        try:
            read_batch(self.buf, start).ensure_valid()
        except KsegError as err:
            return err.message
        return "CRC mismatch"

    def _v2_view(self, start: int) -> str:
        """Whether Kafka, which reads any magic above 2 as V2, would accept this entry."""
        if self.buf[start + MAGIC_OFFSET] > 127:
            return ""
        batch = V2Batch(self.buf, start)
        if start + batch.size <= self.limit and batch.is_valid():
            return " (Kafka reads any magic above 2 as V2, and as V2 its CRC matches: Kafka would accept it)"
        return ""
