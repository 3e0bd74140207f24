"""The first two steps of ``LogLoader.load``: leftovers and swaps (§2), then ``loadSegmentFiles`` (§3).

``removeTempFilesAndCollectSwapFiles`` deletes ``*.deleted`` and ``*.cleaned``
files and swaps left by an unfinished split (R2.1); the swap passes of
``load`` finish an interrupted segment replacement (R2.2-R2.4);
``loadSegmentFiles`` deletes orphaned indexes (R2.6) and runs each
segment's ``sanityCheck``, recovering at once a segment whose ``.index`` is
missing or whose ``.txnindex`` fails the check (R3.2-R3.4).
"""

from __future__ import annotations

from collections.abc import Callable

from kseg.index import MAX_SEGMENT_SIZE, TXN_ENTRY, read_txn_index
from kseg.recovery.loading.loadstate import LoadState
from kseg.recovery.loading.model import BROKER_STOPS, DIR_OFFLINE, LoadError, LoadFailed
from kseg.recovery.loading.segments import (
    INDEX_SUFFIXES,
    Seg,
    file_name,
    log_bytes,
    next_offset_of,
)
from kseg.recovery.loading.state import PartitionDir

LL = "LogLoader"
SWAP, CLEANED, DELETED = ".swap", ".cleaned", ".deleted"
SNAPSHOT_DELETE_SUFFIX = ".checkpoint.deleted"
MAX_INDEX_SIZE = 10 * 1024 * 1024


def offset_from_name(name: str, rule: str, method: str) -> int:
    """``LogFileUtils.offsetFromFileName``: ``Long.parseLong`` of the text before the first dot."""
    stem = name[: name.index(".")] if "." in name else name
    digits = stem[1:] if stem[:1] in "+-" else stem
    if not digits.isdigit() or not -(1 << 63) <= int(stem) < 1 << 63:
        raise LoadFailed(LoadError("java.lang.NumberFormatException", f'For input string: "{stem}"', BROKER_STOPS,
                                   rule, method))
    return int(stem)


def _parse_or_none(name: str) -> int | None:
    """The offset of a name, or None where ``load``'s second swap pass catches the exception (R2.3)."""
    if "." not in name:
        return None
    try:
        return offset_from_name(name, "R2.3", f"{LL}.load")
    except LoadFailed:
        return None


def remove_temp_and_swap(loader: LoadState) -> None:
    """R2.1-R2.4, in order; segments a swap replaces count as deleted, their batches not in it as lost."""
    pdir = loader.pdir
    method = f"{LL}.removeTempFilesAndCollectSwapFiles"
    swaps: list[str] = []
    cleaned: list[str] = []
    min_cleaned = 1 << 63
    for name in sorted(pdir.names()):  # File.listFiles has no order; sorted, so the actions are stable
        if not pdir.files[name].readable:
            message = f"Could not read file {(pdir.path / name).absolute()}"
            raise LoadFailed(LoadError("java.io.IOException", message, DIR_OFFLINE, "R2.1", method))
        if name.endswith(DELETED) and not name.endswith(SNAPSHOT_DELETE_SUFFIX):
            pdir.delete(name, "R2.1", method, "leftover of an earlier deletion")
        elif name.endswith(CLEANED):
            min_cleaned = min(min_cleaned, offset_from_name(name, "R2.1", method))
            cleaned.append(name)
        elif name.endswith(SWAP):
            swaps.append(name)
    valid = []
    for name in swaps:
        if offset_from_name(name, "R2.1", method) >= min_cleaned:
            pdir.delete(name, "R2.1", method, "swap of an unfinished split (offset >= a .cleaned file)")
        else:
            valid.append(name)
    for name in cleaned:
        pdir.delete(name, "R2.1", method, "leftover of an unfinished clean")
    _complete_swaps(loader, valid)


def _complete_swaps(loader: LoadState, swaps: list[str]) -> None:
    """R2.2-R2.4: delete what the ``.log.swap`` segments replace, then rename every swap.

    Every file named with an offset in ``[min swap base, max swap next offset)`` goes
    (``LogLoader.load``'s second pass), so one ``.log.swap`` written by the cleaner for
    several segments deletes all of them.  A ``.log`` deleted there and not taken over by
    a swap of the same name is a deleted segment; batches of the replaced ``.log`` files
    that no swap holds are lost offsets (the cleaner removed them on purpose, or the
    swap is not what it claims).
    """
    pdir = loader.pdir
    low, high = 1 << 63, -(1 << 63)
    for name in sorted(swaps):
        if not name[: -len(SWAP)].endswith(".log"):
            continue
        base = offset_from_name(name, "R2.2", f"{LL}.load")
        seg = Seg(base, SWAP)
        _open_segment_file(pdir, seg, "R2.2")
        if not pdir.exists(seg.name(".index")):
            pdir.create(seg.name(".index"), MAX_INDEX_SIZE, "R2.2", "AbstractIndex.createAndAssignMmap",
                        "preallocated, zero-filled")
            # zero-filled to its length: loadSegmentFiles maps it again after the rename, with
            # length / 8 entries, so the close keeps all of it (R4.8)
            pdir.files[seg.name(".index")].data = bytes(MAX_INDEX_SIZE)
        low = min(low, base)
        high = max(high, _swap_next_offset(pdir, seg))
    for name in sorted(pdir.names()):
        offset = None if name.endswith(SWAP) else _parse_or_none(name)
        if offset is not None and low <= offset < high:
            pdir.delete(name, "R2.3", f"{LL}.load", "replaced by a .swap segment")
    for name in sorted(pdir.names()):
        if name.endswith(SWAP):
            pdir.rename(name, name[: -len(SWAP)], "R2.4", f"{LL}.load", "swap completes the replacement")


def _open_segment_file(pdir: PartitionDir, seg: Seg, rule: str) -> None:
    """``FileRecords.open`` as ``LogSegment.open`` calls it: a file over ``Integer.MAX_VALUE`` bytes throws (R2.6).

    ``KafkaException`` is no ``IOException``: the broker stops (R9.3).  Kafka
    itself never writes such a segment (``log.segment.bytes`` is an int), but a
    damaged or forged file can be that large.
    """
    name = seg.name(".log")
    size = pdir.size(name)
    if size > MAX_SEGMENT_SIZE:
        path = (pdir.path / name).absolute()
        message = (f"The size of segment {path} ({size}) is larger than the maximum allowed segment size of "
                   f"{MAX_SEGMENT_SIZE}")
        raise LoadFailed(LoadError("org.apache.kafka.common.KafkaException", message, BROKER_STOPS, rule,
                                   "FileRecords.open"))


def _swap_next_offset(pdir: PartitionDir, seg: Seg) -> int:
    index = pdir.current(seg.name(".index")) or b""
    path = (pdir.path / seg.name(".log")).absolute()
    with log_bytes(pdir, seg.name(".log")) as (buf, _):
        return next_offset_of(buf, pdir.size(seg.name(".log")), index, seg.base, path)


def load_segment_files(loader: LoadState, recover_early: Callable[[Seg], None]) -> None:
    """``LogLoader.loadSegmentFiles`` (R2.6, R3.1-R3.4)."""
    pdir, method = loader.pdir, f"{LL}.loadSegmentFiles"
    loader.segments.clear()
    for name in sorted(pdir.names()):
        if not pdir.exists(name):
            continue
        if name.endswith(INDEX_SUFFIXES):
            offset = offset_from_name(name, "R2.6", method)
            if not pdir.exists(file_name(offset, ".log")):
                pdir.delete(name, "R2.6", method, "orphaned index file")
        elif name.endswith(".log"):
            base = offset_from_name(name, "R2.6", method)
            if name != file_name(base, ".log") and not pdir.exists(file_name(base, ".log")):
                pdir.create(file_name(base, ".log"), 0, "R2.6", "LogSegment.open (FileChannel.open CREATE)")
            seg = Seg(base)
            _open_segment_file(pdir, seg, "R2.6")
            if _sanity_check(pdir, seg):
                recover_early(seg)
            loader.segments[base] = seg


def _sanity_check(pdir: PartitionDir, seg: Seg) -> bool:
    """``LogSegment.sanityCheck``: True where it throws what ``loadSegmentFiles`` catches (R3.3, R3.4)."""
    time_new = not pdir.exists(seg.name(".timeindex"))
    if not pdir.exists(seg.name(".index")):
        return True  # NoSuchFileException("Offset index file ... does not exist")
    if time_new:
        pdir.create(seg.name(".timeindex"), 0, "R3.3", "LogSegment.sanityCheck (timeIndex().resize(0))")
        pdir.files[seg.name(".timeindex")].data = b""
    data = pdir.current(seg.name(".txnindex"))
    if not data:
        return False
    whole = data[: len(data) - len(data) % TXN_ENTRY.size]
    for entry in read_txn_index(whole):
        if entry.version > 0:
            path = (pdir.path / seg.name(".txnindex")).absolute()
            message = (f"Unexpected aborted transaction version {entry.version} in transaction index {path}, "
                       "current version is 0")
            raise LoadFailed(LoadError("org.apache.kafka.common.KafkaException", message, BROKER_STOPS, "R3.3",
                                       "TransactionIndex.sanityCheck"))
        if entry.last_offset < seg.base:
            return True  # CorruptIndexException
    return False
