"""From the actions of a load to issue 13's verdict: outcome, bytes cut, segments deleted, offsets lost.

``truncated`` means a ``.log`` lost bytes, was deleted (renamed ``.deleted``
or removed) or was replaced by a ``.swap``; ``rebuilt`` means some other
file's content changed; ``clean`` means nothing changed.  Offsets are lost
when bytes that framed batches are cut or deleted, and -- on a load that
does not recover -- when batches lie beyond the log end Kafka computes
(R5.5: a stale last ``.index`` entry makes the log end fall back to the
segment's base, the bytes stay but are never served).
"""

from __future__ import annotations

from kseg.recovery.loading.loadstate import LoadState
from kseg.recovery.loading.model import (
    CLEAN,
    DELETE,
    FAILS,
    REBUILT,
    RENAME,
    TRUNCATE,
    TRUNCATED,
    Action,
    PartitionPrediction,
)
from kseg.recovery.loading.segments import Seg, framed_range
from kseg.recovery.loading.state import PartitionDir


def _is_log(path: str) -> bool:
    return path.endswith(".log")


def _touches_log(action: Action) -> bool:
    if action.kind in (TRUNCATE, DELETE) and _is_log(action.path):
        return True
    if action.kind == RENAME and _is_log(action.path):
        return True  # .log -> .log.deleted
    return action.kind == RENAME and action.path.endswith(".log.swap")


def outcome_of(actions: list[Action], failed: bool) -> str:
    if failed:
        return FAILS
    if any(_touches_log(a) for a in actions):
        return TRUNCATED
    if any(a.changes_content for a in actions):
        return REBUILT
    return CLEAN


def _truncated_bytes(pdir: PartitionDir, actions: list[Action]) -> int:
    """Bytes cut from the ends of ``.log`` files that remain after the load."""
    original: dict[str, int] = {}
    for action in actions:
        if action.kind == TRUNCATE and _is_log(action.path):
            name = action.path.rsplit("/", 1)[-1]
            vfile = pdir.files.get(name)
            if vfile is not None and vfile.source is not None and name not in original:
                original[name] = vfile.source.stat().st_size
    return sum(size - pdir.size(name) for name, size in original.items() if pdir.exists(name))


def merge_ranges(ranges: list[tuple[int, int]]) -> list[list[int]]:
    """Overlapping or adjacent ``[first, last]`` ranges merged, in order."""
    merged: list[list[int]] = []
    for first, last in sorted(ranges):
        if merged and first <= merged[-1][1] + 1:
            merged[-1][1] = max(merged[-1][1], last)
        else:
            merged.append([first, last])
    return merged


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


def finish_prediction(pred: PartitionPrediction, pdir: PartitionDir, loader: LoadState | None) -> None:
    """Fill in outcome, truncated bytes, deleted segments and lost offsets from what the load did."""
    pred.actions = list(pdir.actions)
    pred.outcome = outcome_of(pred.actions, pred.error is not None or pred.outcome == FAILS)
    pred.truncated_bytes = _truncated_bytes(pdir, pred.actions)
    if loader is None:
        return
    pred.deleted_segments = sorted(loader.deleted)
    lost = list(loader.lost)
    if pred.error is None and pred.log_end_offset is not None:
        tail = _beyond_end(loader, pred.log_end_offset)
        if tail is not None:
            lost.append(tail)
    pred.lost_offsets = merge_ranges(lost)
    if pred.outcome == CLEAN and pred.lost_offsets:
        pred.notes.append("batches beyond the log end stay on disk but are never served (R5.5)")
