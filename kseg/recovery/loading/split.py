"""The overflow split that goes ahead: ``LocalLog.splitOverflowedSegment`` and ``replaceSegments`` (R4.4).

When ``LogSegment.recover`` throws ``LogSegmentOffsetOverflowException`` and the
segment's last batch really lies past ``base + Integer.MAX_VALUE`` (R4.5),
``LogLoader.retryOnOffsetOverflow`` splits the segment and reruns the step
(``loadSegmentFiles`` from scratch, or ``recoverLog``).  The split walks the
``.log`` from position 0: each new segment is named after the base offset of
the first batch it takes and takes batches (copied as they are, no CRC check)
while their last offset converts to a relative offset of that base
(``LogSegment.appendChunkFromFile`` / ``canConvertToRelativeOffset``); its
indexes are built as ``LogSegment.append`` builds them, which are the rules of
``recover`` (kseg.recovery.indexes).  ``replaceSegments`` then renames the old
files ``.deleted`` (only if the segment was already in the load's segment map:
not when the split comes from ``loadSegmentFiles``, where the new files simply
replace the old names) and the new ones take their final names.

In the model's picture the first part keeps the old ``.log``'s name when it
starts at the old base: its bytes are the file's first bytes, so it is that
file cut short (what LoadLogDir, comparing bytes, also reports); the later parts
are new files, held in memory.  Offsets are not lost: the bytes move.
"""

from __future__ import annotations

from dataclasses import dataclass

from kseg.format.layout import MAX_RELATIVE_OFFSET
from kseg.format.walk import BatchWalk
from kseg.recovery.indexes import build_indexes
from kseg.recovery.loading.loadstate import LoadState
from kseg.recovery.loading.segments import INDEX_SUFFIXES, Buf, Seg, file_name, log_bytes
from kseg.recovery.loading.state import VFile

METHOD = "LogLoader.retryOnOffsetOverflow -> LocalLog.splitOverflowedSegment"


@dataclass(frozen=True, slots=True)
class Part:
    """One new segment of a split: its base offset and the byte range of the old ``.log`` it takes."""

    base: int
    start: int
    end: int


def plan_split(buf: Buf, size: int) -> list[Part] | None:
    """The new segments, or None where the model does not follow the split.

    None: a legacy (magic < 2) entry, whose base offset Kafka reads from the
    inner records; a first batch that cannot be appended to a segment of its
    own base (``IllegalStateException("Failed to append records from position
    ...")`` with the segment's modification time in it); bytes after the last
    whole batch (``iterator().next()`` on nothing).
    """
    parts: list[Part] = []
    current: Part | None = None
    end = 0
    for pos, next_pos, magic, header, _ in BatchWalk(buf, 0, size, strict=False).frames():
        if magic < 2 or header is None:
            return None
        first, last = header[0], header[0] + header[6]
        if current is None or not 0 <= last - current.base <= MAX_RELATIVE_OFFSET:
            if current is not None:
                parts.append(current)
            if not 0 <= last - first <= MAX_RELATIVE_OFFSET:
                return None
            current = Part(first, pos, pos)
        end = next_pos
        current = Part(current.base, current.start, end)
    if current is not None:
        parts.append(current)
    if end != size or not parts:
        return None
    return parts


def split_segment(loader: LoadState, seg: Seg, in_map: bool) -> bool:
    """Replay the split of ``seg`` on the picture; False if :func:`plan_split` does not follow it.

    ``in_map``: the segment was in the load's segment map (``recoverLog``), so
    ``replaceSegments`` renames its old files ``.deleted``; from ``loadSegmentFiles``
    it was not, and the new files replace the old names.
    """
    pdir = loader.pdir
    name = seg.name(".log")
    size = pdir.size(name)
    with log_bytes(pdir, name) as (buf, _):
        parts = plan_split(buf, size)
        if parts is None:
            return False
        pieces = [bytes(buf[p.start : p.end]) for p in parts]
    bases = {p.base for p in parts}
    detail = f"split at offset overflow into {len(parts)} segments"
    if parts[0].base != seg.base:
        if not in_map:
            return False  # the old .log stays under its name and is loaded again: not followed
        _drop_old(loader, seg)
    elif in_map and pdir.exists(seg.name(".txnindex")):  # the new segment has none; the old one goes
        old = seg.name(".txnindex")
        pdir.rename(old, old + ".deleted", "R4.4", f"{METHOD} -> LocalLog.replaceSegments")
    for part, data in zip(parts, pieces, strict=True):
        target = file_name(part.base, ".log")
        if part.base == seg.base:
            pdir.truncate(name, part.end, "R4.4", METHOD, f"{detail}: the first part keeps this name")
        else:
            pdir.files[target] = VFile(len(data), None, data=data)
            pdir.record("create", target, "R4.4", METHOD, detail=detail, size=len(data))
        build = build_indexes(data, part.base)
        pdir.write(file_name(part.base, ".index"), build.offset_index_bytes(), "R4.4", METHOD, detail)
        pdir.write(file_name(part.base, ".timeindex"), build.time_index_bytes(), "R4.4", METHOD, detail)
        loader.segments[part.base] = Seg(part.base)
    if seg.base not in bases:
        loader.segments.pop(seg.base, None)
        if in_map:
            loader.psm.mark_deleted([seg.base], "R4.4")  # LogLoader.deleteProducerSnapshotsAsync
    return True


def _drop_old(loader: LoadState, seg: Seg) -> None:
    """The old segment's files when no new segment takes its name: renamed ``.deleted`` (deleted async)."""
    pdir = loader.pdir
    for suffix in (".log", *INDEX_SUFFIXES):
        old = seg.name(suffix)
        if pdir.exists(old):
            pdir.rename(old, old + ".deleted", "R4.4", f"{METHOD} -> LocalLog.replaceSegments")
    loader.deleted.append(seg.base)
