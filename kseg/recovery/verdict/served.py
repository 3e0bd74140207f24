"""Damage the next start leaves in place and serves: the offsets consumers and followers cannot read.

Kafka recovers a segment only on an unclean start and only from the recovery point on (R4.1,
R4.2); a segment it does not recover is served byte for byte, damage included, and a fetch that
reaches the damage fails (``CorruptRecordException`` on the consumer, a follower that stops
replicating the partition).  This walks exactly those segments -- each ``.log`` the start
neither recovers, cuts nor deletes -- with the salvage scan (:func:`kseg.format.scan.scan`: every
CRC-valid batch and every gap between them) and names the offsets between the last readable batch
before each gap and the first after it.  Bytes beyond the log end Kafka computes are counted by the
model (``unserved_offsets``), not here; a zero-filled tail after the last batch of the active
segment holds no offset and is not named.

The ``.index`` of such a segment is served as it is too (``LogSegment.sanityCheck`` never reads it, R3.3):
a fetch looks its offset up there (``LogSegment.translateOffset``: the largest entry at or below it) and
reads the ``.log`` forward from that entry's position.  An entry whose position is not where a batch
starts, or is past a batch that holds an offset it covers, makes those fetches find nothing in the segment
and go on to the next one: the offsets are skipped without an error (observed with Kafka 4.3.0's
``UnifiedLog.read`` after a clean load: tests/verdict/test_leftovers.py).  Those offsets are named as well.
"""

from __future__ import annotations

from array import array
from bisect import bisect_left, bisect_right
from pathlib import Path
from typing import Any

from kseg.errors import LimitExceeded
from kseg.format import Batch
from kseg.format.scan import Gap, scan
from kseg.format.walk import BatchWalk
from kseg.index import read_offset_index
from kseg.listing import names
from kseg.recovery.loading import PartitionPrediction
from kseg.recovery.salvage import first_offset_of
from kseg.segment import MappedFile, read_small_file


def _segment_logs(pred: PartitionPrediction) -> list[str]:
    """The partition's segment ``.log`` names (20 digits), sorted: one listing per partition."""
    return sorted(n for n in names(pred.path) if n.endswith(".log") and len(n) == 24 and n[:20].isdigit())


def _untouched_logs(pred: PartitionPrediction, logs: list[str]) -> list[str]:
    """Of ``logs``, the segment ``.log`` files the start serves as they are: not recovered, changed or deleted."""
    if not logs:
        return []
    touched = set(pred.files_changed) | set(pred.files_deleted)
    recovered = {a.path.rsplit("/", 1)[-1] for a in pred.actions if a.method == "LogSegment.recover"}
    recovered = {name.split(".", 1)[0] + ".log" for name in recovered}
    return [n for n in logs if n not in touched and n not in recovered]


def _first_offset(item: Batch) -> int:
    """The batch's first offset; a legacy wrapper past the read cap: its last (the range stays a bound)."""
    try:
        return first_offset_of(item)
    except LimitExceeded:
        return item.last_offset


class _Walk:
    """One walk of a segment ``.log``: its unreadable ranges and, when asked, (position, last offset) of
    each readable batch.  The pages behind the walk are released as it goes, so a partition of large
    segments costs a window of memory, not the files (docs/core.md, "Flat memory")."""

    def __init__(self, path: Path, base: int, end: int | None, positions: bool) -> None:
        self.ranges: list[tuple[int, int | None]] = []
        self.positions = array("q")  # of each readable batch, in file order (ascending): 16 bytes a batch
        self.lasts = array("q")
        self._last_good: int = base - 1
        self._pending: int | None = None
        with MappedFile(path) as mapped:
            self._walk(mapped, base, end, positions)

    def _walk(self, mapped: MappedFile, base: int, end: int | None, positions: bool) -> None:
        """(first unreadable offset, last) of each gap that is not a zero tail; a gap that runs to the end of
        the file ends below ``end`` (the next segment's base, or the log end), None when that is not known.

        The clean run of CRC-valid magic-2 batches is framed by the one walker (the core's, in chunks:
        no object per batch); :func:`~kseg.format.scan.scan` -- the same acceptance, and the search
        past damage -- takes over at the first entry that is not one."""
        size = len(mapped.buf)
        self._last_good, self._pending = base - 1, None
        pos = 0
        for at, nxt, magic, header, crc_ok in BatchWalk(mapped.buf, 0, size, strict=False).frames(check_crc=True):
            if magic != 2 or not crc_ok or header is None:
                break
            mapped.release(at)
            self._readable(at, header[0], header[0] + header[6], positions)
            pos = nxt
        for item in scan(mapped.buf, pos, size) if pos < size else ():
            if isinstance(item, Gap):
                mapped.release(item.start)
                if item.zero_filled and item.end >= size:
                    continue  # a preallocated or zero-filled tail: no offset behind it
                self._pending = self._last_good + 1
                continue
            mapped.release(item.position)
            self._readable(item.position, _first_offset(item), item.last_offset, positions)
        if self._pending is not None:
            pending = self._pending
            self.ranges.append((pending, None if end is None or end <= pending else end - 1))

    def _readable(self, position: int, first: int, last: int, positions: bool) -> None:
        """A readable batch: it closes the unreadable range before it, if any."""
        if self._pending is not None:
            self.ranges.append((self._pending, max(self._pending, first - 1)))
            self._pending = None
        self._last_good = last
        if positions:
            self.positions.append(position)
            self.lasts.append(last)


def _index_entries(log: Path, base: int) -> list[Any]:
    """The live entries of the segment's ``.index`` at or above its base (none without the file)."""
    index = log.with_suffix(".index")
    if not index.is_file():
        return []
    slots = read_offset_index(read_small_file(index), base)
    return [e for e in slots.entries[: slots.live] if e.offset >= base]


def misdirected(log: Path, base: int, walk: _Walk | None = None, entries: list[Any] | None = None
                ) -> list[tuple[int, int]]:
    """(first, last offset) a fetch skips because the segment's ``.index`` sends it to the wrong position."""
    if entries is None:
        entries = _index_entries(log, base)
    if not entries:
        return []
    if walk is None:
        walk = _Walk(log, base, None, True)
    positions, lasts = walk.positions, walk.lasts
    if not positions:
        return []
    last_offset = lasts[-1]
    found: list[tuple[int, int]] = []
    for i, entry in enumerate(entries):
        upto = min(entries[i + 1].offset - 1 if i + 1 < len(entries) else last_offset, last_offset)
        if entry.offset > upto:
            continue
        k = bisect_left(positions, entry.position)
        if k == len(positions) or positions[k] != entry.position:
            found.append((entry.offset, upto))  # no batch starts there: the read finds none of them
        elif k > 0 and lasts[k - 1] >= entry.offset:
            found.append((entry.offset, min(upto, lasts[k - 1])))  # it starts past the batch holding them
    return found


def served_damage(pred: PartitionPrediction) -> list[tuple[str, int, int | None]]:
    """(segment file, first offset, last offset or None) the start serves although they cannot be read."""
    if pred.error is not None or pred.log_end_offset is None or pred.kind == "delete":
        return []
    out: list[tuple[str, int, int | None]] = []
    logs = _segment_logs(pred)
    bases = sorted(int(n[:20]) for n in logs)
    touched = touched_indexes(pred)  # once: per segment it made this quadratic in the segments
    for name in _untouched_logs(pred, logs):
        base = int(name[:20])
        after = bisect_right(bases, base)  # the next segment's base, found in log time, not by a scan
        end = bases[after] if after < len(bases) else pred.log_end_offset
        log = Path(pred.path) / name
        entries = _index_entries(log, base) if name[:20] + ".index" not in touched else []
        walk = _Walk(log, base, end, positions=bool(entries))
        out.extend((name, first, last) for first, last in walk.ranges)
        out.extend((name[:20] + ".index", first, last) for first, last in misdirected(log, base, walk, entries))
    return out


def touched_indexes(pred: PartitionPrediction) -> set[str]:
    """``.index`` files the start rewrites, deletes or creates: not served as they are."""
    return {n for n in (*pred.files_changed, *pred.files_deleted, *pred.files_created) if n.endswith(".index")}
