"""From what a load did to what it leaves on disk: the files, the outcome, the bytes cut, the offsets lost.

The verdict is read off the directory as the load leaves it, compared file by
file with the directory before it -- the way Kafka's own ``LoadLogDir`` driver
measures it (sizes and SHA-256 before and after) -- not off the list of
actions: Kafka rewrites indexes, snapshots and the ``leader-epoch-checkpoint``
on many starts, and a rewrite to the same bytes changes nothing (§13).

Before the comparison the model finishes the start as ``LoadLogDir`` does:
``UnifiedLog.close`` trims every index the load mapped to its whole entries
(R4.8), and the segment files renamed ``*.deleted`` go (Kafka removes them
``file.delete.delay.ms`` later, or at the next start).

``truncated`` means a segment's ``.log`` lost bytes, was deleted or was
replaced; ``rebuilt`` that another file was created, changed or deleted;
``clean`` that no file changed.  Offsets are lost when the batches Kafka's
``FileRecords`` iterator yields before the load are not there after it --
including batches that stay on disk beyond the log end Kafka computes (R5.5).
The iterator stops at a header it cannot read, so intact batches behind such
a header are counted apart, in ``lost_offsets_behind_damage`` (§13).
"""

from __future__ import annotations

from pathlib import Path

from kseg.format.compression import DEFAULT_MAX_DECOMPRESSED
from kseg.format.scan import Gap, scan
from kseg.index import OFFSET_ENTRY, TIME_ENTRY
from kseg.recovery.loading.loadstate import LoadState
from kseg.recovery.loading.model import (
    CLEAN,
    FAILS,
    REBUILT,
    RENAME,
    TRUNCATED,
    PartitionPrediction,
    merge_ranges,
)
from kseg.recovery.loading.segments import Seg, framed_range
from kseg.recovery.loading.segrecovery import kafka_batches
from kseg.recovery.loading.state import PartitionDir, VFile
from kseg.recovery.salvage import first_offset_of
from kseg.segment import MappedFile, read_small_file

DELETED = ".deleted"
_ENTRY_SIZES = {".index": OFFSET_ENTRY.size, ".timeindex": TIME_ENTRY.size}


def is_segment_log(name: str) -> bool:
    """``<20 digits>.log``: the files whose loss makes a partition ``truncated``."""
    return len(name) == 24 and name.endswith(".log") and name[:20].isdigit()


# -- the end of the start: close, pending deletes ------------------------------------------------


def close_indexes(loader: LoadState) -> None:
    """R4.8: ``UnifiedLog.close`` -> ``AbstractIndex.trimToValidSize`` on every index the load mapped.

    A mapped index holds ``floor(length / entry size)`` entries (``createMappedBuffer``); the
    close cuts the file to exactly those, so an odd-sized or preallocated file shrinks.  The
    active segment's two indexes are mapped by R4.7's resize -- not in a ``-delete`` directory,
    whose load skips ``recoverLog`` and the resize (R2.7) -- others when recovered or read by the
    producer-state replay (``segment.read``) or at the first unstable offset (R6.7).
    """
    pdir = loader.pdir
    names = set(pdir.loaded_indexes)
    segments = loader.ordered()
    if segments and loader.inputs.kind != "delete":
        names.update(segments[-1].name(kind) for kind in _ENTRY_SIZES)
    for name in sorted(names):
        vfile = pdir.files.get(name)
        entry = _ENTRY_SIZES.get(name[name.index(".") :]) if "." in name else None
        if vfile is None or entry is None:
            continue
        length = len(vfile.data) if vfile.source is None and vfile.data is not None else vfile.size
        valid = length - length % entry
        if valid < vfile.size:
            pdir.truncate(name, valid, "R4.8", "UnifiedLog.close -> AbstractIndex.trimToValidSize",
                          f"trimmed to its {valid // entry} whole entries")


def drop_pending_deletes(pdir: PartitionDir) -> list[str]:
    """The ``*.deleted`` files the load leaves: gone once ``file.delete.delay.ms`` has passed.

    Those it renamed, and -- when it throws before R2.1 removes them -- leftovers of an earlier
    deletion, which the next start that gets that far removes (``LoadLogDir`` counts both).
    """
    pending = sorted(name for name in pdir.files if name.endswith(DELETED))
    for name in pending:
        pdir.files.pop(name, None)
    return pending


# -- the files before and after ---------------------------------------------------------------------


def _differs(pdir: PartitionDir, name: str, preallocated: set[str]) -> bool:
    before, after = pdir.original[name], pdir.files[name]
    if name in preallocated:
        return True  # left mapped at its preallocated size by a load that threw (no close)
    if after.source is not None:
        if after.size != before.size or before.source is None:
            return True
        return after.source != before.source and not _same_bytes(after.source, before.source, after.size)
    if after.data is None:
        return True  # written with bytes the model does not know (a snapshot with producers)
    if len(after.data) != before.size or before.source is None:
        return True
    return read_small_file(before.source) != after.data


def _same_bytes(a: Path, b: Path, size: int) -> bool:
    """The first ``size`` bytes of two files are equal (a ``.swap`` renamed over a file with the same bytes)."""
    with MappedFile(a) as left, MappedFile(b) as right:
        step = 1 << 20
        return all(left.buf[i : i + step] == right.buf[i : i + step] for i in range(0, size, step))


def file_changes(pdir: PartitionDir, preallocated: set[str]) -> tuple[list[str], list[str], list[str]]:
    """(created, changed, deleted) file names of the partition directory, sorted."""
    created = sorted(n for n in pdir.files if n not in pdir.original)
    deleted = sorted(n for n in pdir.original if n not in pdir.files)
    changed = sorted(n for n in pdir.files if n in pdir.original and _differs(pdir, n, preallocated))
    return created, changed, deleted


def outcome_of(changed: list[str], created: list[str], deleted: list[str], failed: bool) -> str:
    """The partition's outcome (docs/triage.md) from the file changes, as ``LoadLogDir`` decides it."""
    if failed:
        return FAILS
    if any(is_segment_log(n) for n in changed + deleted):
        return TRUNCATED
    if changed or created or deleted:
        return REBUILT
    return CLEAN


def _truncated_bytes(pdir: PartitionDir, changed: list[str]) -> int:
    """Bytes a remaining segment ``.log`` is shorter by."""
    return sum(max(0, pdir.original[n].size - pdir.files[n].size) for n in changed if is_segment_log(n))


# -- offsets ---------------------------------------------------------------------------------------------------


def _beyond_end(loader: LoadState, log_end: int) -> tuple[int, int] | None:
    """Batches of the active segment at or above the log end Kafka computed (they are never served)."""
    segments = loader.ordered()
    if not segments:
        return None
    seg: Seg = segments[-1]
    name = seg.name(".log")
    if not loader.pdir.exists(name):
        return None
    if any(key[0] == seg.base for key in loader.pdir.recoveries):
        return None  # recovered in this load: the log end follows its last kept batch, nothing lies beyond
    return framed_range(loader.pdir, seg, 0, loader.pdir.size(name), log_end)


def _walk_original(vfile: VFile, cap: int) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    """(batches Kafka's iterator yields, intact batches behind where it stops) of a file before the load.

    ``FileLogInputStream.nextBatch`` stops at a size field below 14 or one that runs past the
    end, and ``LoadLogDir`` at a batch whose offsets cannot be read (:func:`kafka_batches`); the
    salvage scan (:func:`kseg.format.scan.scan`, as ``kseg recover --salvage`` uses it) finds the
    whole, CRC-valid batches behind that point.
    """
    if vfile.source is None or not vfile.readable:
        return [], []
    with MappedFile(vfile.source) as mapped:
        buf = mapped.buf
        yielded, stop = kafka_batches(buf, 0, vfile.size, cap, str(vfile.source), mapped.release)
        behind = [] if stop >= vfile.size else [
            (first_offset_of(item), item.last_offset) for item in scan(buf, stop, vfile.size)
            if not isinstance(item, Gap)]
    return yielded, behind


def _walk_final(vfile: VFile, cap: int) -> list[tuple[int, int]]:
    """The batches Kafka's iterator yields from a file as the load leaves it."""
    if vfile.source is None:
        return kafka_batches(vfile.data or b"", 0, len(vfile.data or b""), cap, "")[0]
    with MappedFile(vfile.source) as mapped:
        return kafka_batches(mapped.buf, 0, vfile.size, cap, str(vfile.source), mapped.release)[0]


def measure_offsets(pdir: PartitionDir, changes: tuple[list[str], list[str], list[str]], cap: int) -> tuple[
        list[list[int]], list[list[int]]]:
    """(lost_offsets, lost_offsets_behind_damage) as ``LoadLogDir`` counts the first (§13).

    Its count is the ``(baseOffset, lastOffset)`` pairs of the batches yielded over every segment
    ``.log`` before the load and not after.  A file the load left as it was yields the same pairs
    on both sides, so only created, changed and deleted ones are walked -- and every segment when
    a ``.swap`` was renamed into place (R2.4), where the same batches may move between files.
    """
    created, changed, deleted = changes
    logs = [n for n in sorted(set(created + changed + deleted)) if is_segment_log(n)]
    if any(a.kind == RENAME and a.path.endswith(".log.swap") for a in pdir.actions):
        logs = sorted({n for n in [*pdir.original, *pdir.files] if is_segment_log(n)})
    before: set[tuple[int, int]] = set()
    after: set[tuple[int, int]] = set()
    behind: list[tuple[int, int]] = []
    for name in logs:
        if name in pdir.original:
            yielded, hidden = _walk_original(pdir.original[name], cap)
            before.update(yielded)
            if name in changed or name in deleted:
                behind.extend(hidden)
        if name in pdir.files:
            after.update(_walk_final(pdir.files[name], cap))
    return merge_ranges(sorted(before - after)), merge_ranges(behind)


def _left_preallocated(pdir: PartitionDir) -> set[str]:
    """No close: R4.7's resize and a failed recover's reset stay on disk (R4.8)."""
    preallocated = {a.path.rsplit("/", 1)[-1] for a in pdir.actions if a.kind == "resize"} | pdir.preallocated
    return preallocated & set(pdir.files) & set(pdir.original)


def finish_prediction(pred: PartitionPrediction, pdir: PartitionDir, loader: LoadState | None) -> None:
    """Close the log, then fill in files, outcome, truncated bytes, deleted segments and lost offsets."""
    loaded = loader is not None and pred.error is None and pred.log_end_offset is not None
    preallocated: set[str] = set()
    if loader is not None and loaded:
        pred.number_of_segments = len(loader.segments)
        if loader.inputs.closes:
            close_indexes(loader)
        else:
            preallocated = _left_preallocated(pdir)
    elif pred.error is not None:
        preallocated = _left_preallocated(pdir)
    pred.pending_async_deletes = drop_pending_deletes(pdir)
    pred.actions = list(pdir.actions)
    created, changed, deleted = file_changes(pdir, preallocated)
    pred.files_created, pred.files_changed, pred.files_deleted = created, changed, deleted
    pred.outcome = outcome_of(changed, created, deleted, pred.error is not None or pred.outcome == FAILS)
    pred.truncated_bytes = _truncated_bytes(pdir, changed)
    pred.deleted_segments = sorted(int(n[:20]) for n in deleted if is_segment_log(n))
    cap = loader.inputs.max_batch_bytes if loader is not None else DEFAULT_MAX_DECOMPRESSED
    pred.lost_offsets, pred.lost_offsets_behind_damage = measure_offsets(pdir, (created, changed, deleted), cap)
    if loader is None:
        return
    if pred.error is None and pred.log_end_offset is not None and pred.kind != "delete":
        tail = _beyond_end(loader, pred.log_end_offset)
        if tail is not None:
            pred.unserved_offsets = merge_ranges([tail])
    if pred.outcome == CLEAN and pred.unserved_offsets:
        pred.notes.append("batches beyond the log end stay on disk but are never served (R5.5)")
