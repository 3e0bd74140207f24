"""``--export-unique DIR``: the batches only one replica holds, byte for byte, as segments.

A batch of replica ``X`` is unique when, against every other replica, it lies
in a range that compares as ``different records`` or ``only on X``
(:mod:`.compare`).  Each replica's unique batches go, in offset order, into
``DIR/replica-<n>/<topic>-<partition>/<base offset>.log``: one segment per run
of consecutive batches, named by its first base offset as Kafka names
segments, so ``kseg dump`` and ``kseg recover`` read them.  The only files
``kseg diff`` ever creates; DIR must not exist yet.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from kseg.errors import KsegError
from kseg.ops.diff.batches import BatchRef, iter_batches
from kseg.ops.diff.compare import DIFFERENT, ONLY_A, ONLY_B
from kseg.ops.diff.run import DiffResult
from kseg.recovery.loading.model import merge_ranges
from kseg.segment import open_new_private


class ExportExists(KsegError):
    """The export directory exists: kseg never writes over files."""


def unique_ranges(result: DiffResult, index: int) -> list[list[int]]:
    """Offsets where replica ``index`` holds batches no other replica holds the same."""
    me = result.replicas[index]
    found: list[list[int]] | None = None
    for pair in result.pairs:
        if me is not pair.a and me is not pair.b:
            continue
        only_me = ONLY_A if me is pair.a else ONLY_B
        mine = merge_ranges([(r.first, r.last) for r in pair.ranges if r.kind in (DIFFERENT, only_me)])
        found = mine if found is None else _intersect(found, mine)
    return found or []


def _intersect(xs: list[list[int]], ys: list[list[int]]) -> list[list[int]]:
    out = []
    for a, b in xs:
        for c, d in ys:
            lo, hi = max(a, c), min(b, d)
            if lo <= hi:
                out.append([lo, hi])
    return merge_ranges([(a, b) for a, b in out])


def export_unique(result: DiffResult, directory: Path) -> list[dict[str, object]]:
    """Write every replica's unique batches under ``directory``; one summary per replica that has some."""
    if directory.exists():
        raise ExportExists("the export directory exists; name a new one", path=str(directory))
    summaries = []
    for index, replica in enumerate(result.replicas):
        ranges = unique_ranges(result, index) if replica.error is None else []
        if not ranges:
            continue
        target = directory / f"replica-{index}" / replica.directory.name
        target.mkdir(parents=True)
        refs = (r for r in iter_batches(replica.logs, replica.log_start_offset, replica.log_end_offset, digests=False)
                if any(a <= r.base and r.last <= b for a, b in ranges))
        count, files = _write_runs(refs, target)
        summaries.append({"type": "export", "replica": replica.path, "path": str(target), "batches": count,
                          "offsets": ranges, "segments": files})
    return summaries


def _write_runs(refs: Iterable[BatchRef], target: Path) -> tuple[int, list[str]]:
    """Batches into segments, a new segment wherever the offsets jump."""
    count, files, fd, next_offset = 0, [], -1, None
    try:
        for ref in refs:
            if fd < 0 or ref.base != next_offset:
                if fd >= 0:
                    os.close(fd)
                name = f"{ref.base:020d}.log"
                fd = open_new_private(target / name, 0o644)
                files.append(name)
            _write_all(fd, ref.data())
            count, next_offset = count + 1, ref.last + 1
    finally:
        if fd >= 0:
            os.close(fd)
    return count, files


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]
