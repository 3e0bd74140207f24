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

from bisect import bisect_right
from pathlib import Path

from kseg.errors import LimitExceeded
from kseg.format import Batch
from kseg.format.scan import Gap, scan
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


def _damaged_ranges(path: Path, base: int, end: int | None) -> list[tuple[int, int | None]]:
    """(first unreadable offset, last) of each gap that is not a zero tail; a gap that runs to the end of the
    file ends below ``end`` (the next segment's base, or the log end), None when that is not known."""
    found: list[tuple[int, int | None]] = []
    with MappedFile(path) as mapped:
        size = len(mapped.buf)
        last_good = base - 1
        pending: int | None = None
        for item in scan(mapped.buf, 0, size):
            if isinstance(item, Gap):
                if item.zero_filled and item.end >= size:
                    continue  # a preallocated or zero-filled tail: no offset behind it
                pending = last_good + 1
                continue
            first = _first_offset(item)
            if pending is not None:
                found.append((pending, max(pending, first - 1)))
                pending = None
            last_good = item.last_offset
        if pending is not None:
            found.append((pending, None if end is None or end <= pending else end - 1))
    return found


def _batches(path: Path) -> list[tuple[int, int]]:
    """(position, last offset) of each readable batch of one ``.log``, in file order."""
    with MappedFile(path) as mapped:
        return [(item.position, item.last_offset) for item in scan(mapped.buf, 0, len(mapped.buf))
                if not isinstance(item, Gap)]


def misdirected(log: Path, base: int) -> list[tuple[int, int]]:
    """(first, last offset) a fetch skips because the segment's ``.index`` sends it to the wrong position."""
    index = log.with_suffix(".index")
    if not index.is_file():
        return []
    slots = read_offset_index(read_small_file(index), base)
    entries = [e for e in slots.entries[: slots.live] if e.offset >= base]
    batches = _batches(log) if entries else []
    if not batches:
        return []
    at = {position: k for k, (position, _) in enumerate(batches)}
    last_offset = batches[-1][1]
    found: list[tuple[int, int]] = []
    for i, entry in enumerate(entries):
        upto = min(entries[i + 1].offset - 1 if i + 1 < len(entries) else last_offset, last_offset)
        if entry.offset > upto:
            continue
        k = at.get(entry.position)
        if k is None:
            found.append((entry.offset, upto))  # no batch starts there: the read finds none of them
        elif k > 0 and batches[k - 1][1] >= entry.offset:
            found.append((entry.offset, min(upto, batches[k - 1][1])))  # it starts past the batch holding them
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
        for first, last in _damaged_ranges(Path(pred.path) / name, base, end):
            out.append((name, first, last))
        if name[:20] + ".index" not in touched:
            for first, last in misdirected(Path(pred.path) / name, base):
                out.append((name[:20] + ".index", first, last))
    return out


def touched_indexes(pred: PartitionPrediction) -> set[str]:
    """``.index`` files the start rewrites, deletes or creates: not served as they are."""
    return {n for n in (*pred.files_changed, *pred.files_deleted, *pred.files_created) if n.endswith(".index")}
