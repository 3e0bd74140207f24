"""Verify's orchestration: run the units of a plan (inline or in a process pool) and merge their reports.

Independent segments run in a process pool (``jobs``); results are merged
back in Kafka's file order so output is deterministic, and the partition
checks run on the merged facts.  Nothing here prints or exits.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from kseg.format.compression import DEFAULT_MAX_DECOMPRESSED
from kseg.ops.verify.model import (
    SEVERITY_RANK,
    FileReport,
    Finding,
    Plan,
    Unit,
    UnitResult,
    VerifyResult,
    missing_report,
)
from kseg.ops.verify.other_files import check_other_file
from kseg.ops.verify.partition import PartitionFinding
from kseg.ops.verify.plan import plan_paths, unit_bytes
from kseg.ops.verify.segment_unit import check_segment_unit

if TYPE_CHECKING:
    from kseg.recovery.verdict.table import Verdict

ProgressFn = Callable[[int, int], None]
SortKey = tuple[float, int, int]

#: Below this much data, in fewer files than POOL_MIN_UNITS, a pool costs more to start than it
#: saves: verify serially.  (A small file costs a few ms of checks: many of them are worth a pool.)
POOL_MIN_BYTES = 32 << 20
POOL_MIN_UNITS = 128


def check_unit(
    unit: Unit,
    deep: bool = False,
    progress: Callable[[int], None] | None = None,
    max_batch_bytes: int = DEFAULT_MAX_DECOMPRESSED,
) -> UnitResult:
    """Verify one unit; runs in a worker process or inline.  ``max_batch_bytes`` is the read cap."""
    if unit.kind == "segment":
        return check_segment_unit(unit, deep=deep, progress=progress, max_batch_bytes=max_batch_bytes)
    return check_other_file(unit, deep, max_batch_bytes)


def _within(progress: ProgressFn, base: int, total: int) -> Callable[[int], None]:
    """A unit's progress (bytes done in it) as the run's progress (bytes done in all)."""
    return lambda done: progress(base + done, total)


def _run_inline(
    units: list[Unit], deep: bool, sizes: list[int], progress: ProgressFn | None, max_batch_bytes: int
) -> list[UnitResult]:
    total = sum(sizes)
    done = 0
    results = []
    for unit, size in zip(units, sizes, strict=True):
        inner = _within(progress, done, total) if progress is not None else None
        results.append(check_unit(unit, deep, inner, max_batch_bytes))
        if progress is not None:
            done += size
            progress(done, total)
    return results


def _run_units(
    units: list[Unit], deep: bool, jobs: int, progress: ProgressFn | None, max_batch_bytes: int
) -> list[UnitResult]:
    """Every unit's result, in unit order: inline, or in a process pool for many files of real size."""
    sizes = [unit_bytes(u) for u in units] if jobs > 1 or progress else [0] * len(units)
    total = sum(sizes)
    if jobs <= 1 or len(units) <= 1 or (total < POOL_MIN_BYTES and len(units) < POOL_MIN_UNITS):
        return _run_inline(units, deep, sizes, progress, max_batch_bytes)
    from concurrent.futures import ProcessPoolExecutor, as_completed  # only for a pool: ~8 ms of start-up

    results: list[UnitResult] = [UnitResult([])] * len(units)
    done = 0
    chunks = unit_chunks(sizes, jobs)
    with ProcessPoolExecutor(max_workers=min(jobs, len(chunks))) as pool:
        futures = {pool.submit(_check_chunk, units[a:b], deep, max_batch_bytes): (a, b) for a, b in chunks}
        for future in as_completed(futures):
            a, b = futures[future]
            results[a:b] = future.result()
            if progress is not None:
                done += sum(sizes[a:b])
                progress(done, total)
    return results


#: Chunks per worker: enough that one slow chunk does not leave the other workers idle at the end,
#: few enough that a task's round trip (pickling, a pipe write, a wake-up: ~0.2 ms) stays small
#: beside thousands of small units.
CHUNKS_PER_JOB = 8


def unit_chunks(sizes: list[int], jobs: int) -> list[tuple[int, int]]:
    """Consecutive ``[start, end)`` runs of units, each about ``1 / (jobs * CHUNKS_PER_JOB)`` of the
    units and of the bytes, whichever comes first: a large segment is a chunk of its own, thousands
    of small partitions go out a few hundred at a time."""
    parts = jobs * CHUNKS_PER_JOB
    most_units = max(1, -(-len(sizes) // parts))
    most_bytes = max(1, sum(sizes) // parts)
    chunks: list[tuple[int, int]] = []
    start, held = 0, 0
    for i, size in enumerate(sizes):
        held += size
        if i + 1 - start >= most_units or held >= most_bytes:
            chunks.append((start, i + 1))
            start, held = i + 1, 0
    if start < len(sizes):
        chunks.append((start, len(sizes)))
    return chunks


def _check_chunk(units: list[Unit], deep: bool, max_batch_bytes: int) -> list[UnitResult]:
    """:func:`check_unit` for consecutive units, in a worker: one task, one result message."""
    return [check_unit(unit, deep, None, max_batch_bytes) for unit in units]


def verify_paths(
    paths: Sequence[str | os.PathLike[str]],
    *,
    deep: bool = False,
    jobs: int | None = None,
    progress: ProgressFn | None = None,
    run_units: Callable[[list[Unit], bool, int], list[UnitResult]] | None = None,
    max_batch_bytes: int = DEFAULT_MAX_DECOMPRESSED,
) -> VerifyResult:
    """Verify files and directories; returns every finding, in Kafka's file order.

    ``deep`` decodes every record (default: batch level -- framing, CRC and
    headers, what Kafka's recovery checks and more).  ``jobs`` is the number of
    worker processes (default: all cores); one file never starts a pool.
    ``progress(done_bytes, total_bytes)`` is called as work completes.
    ``run_units(units, deep, max_batch_bytes)`` replaces the local worker pool: it must return
    ``check_unit(unit, deep, None, max_batch_bytes)`` for every unit, in order (kseg.spark runs them
    on a Spark cluster); planning and the merge stay here, so findings match.
    ``max_batch_bytes`` is the read cap (``--max-batch-bytes``): a batch decompressing past it is a finding.
    """
    plan = plan_paths(paths)
    jobs = (os.cpu_count() or 1) if jobs is None else max(1, jobs)
    if run_units is not None:
        results = run_units(plan.units, deep, max_batch_bytes)
    else:
        results = _run_units(plan.units, deep, jobs, progress, max_batch_bytes)
    files, verdict = _merge(plan, results, jobs)
    return VerifyResult(files, deep, [partition.directory for partition in plan.partitions], verdict)


def _merge(plan: Plan, results: list[UnitResult], jobs: int = 1) -> tuple[list[FileReport], Verdict | None]:
    """The units' reports and the partition checks' findings, in Kafka's file order."""
    reports: list[tuple[SortKey, FileReport]] = []
    for unit, result in zip(plan.units, results, strict=True):
        for j, report in enumerate(result.reports):
            reports.append(((unit.order, _suffix_rank(report.path), j), report))
    reports.extend(((-1, 0, 0), missing_report(path)) for path in plan.missing)

    by_path = {report.path: report for _, report in reports}
    keys: dict[str, SortKey] = {}
    for key, report in reports:
        keys.setdefault(report.path, key)
    found, verdict = _load_checks(plan, results, jobs)
    for finding_path, finding, anchor in found:
        target = by_path.get(finding_path)
        if target is None:
            target = FileReport(finding_path, _kind_of_missing(finding_path), None)
            by_path[finding_path] = target
            key = _anchor_key(anchor, keys, finding_path)
            keys.setdefault(finding_path, key)
            reports.append((key, target))
        target.findings.append(finding)

    reports.sort(key=lambda item: item[0])
    files = [report for _, report in reports]
    for report in files:
        report.findings.sort(key=_finding_order)
    return files, verdict


def _load_checks(plan: Plan, results: list[UnitResult], jobs: int = 1) -> tuple[list[PartitionFinding], Verdict | None]:
    """The partition checks and the next start's findings; none for files outside partition directories.

    Imported only when a directory is verified: the log-loading model is a fifth of verify's
    start-up, and a segment given on its own never needs it.
    """
    if not plan.partitions and not plan.loads:
        return [], None
    from kseg.ops.verify.load_checks import load_checks

    return load_checks(plan, results, jobs)


def _kind_of_missing(path: str) -> str:
    """A report for a path no unit read: a missing file, or a directory or log-directory file the load is about."""
    if os.path.isdir(path):
        return "directory"
    return "checkpoint" if os.path.isfile(path) else "missing"


def _anchor_key(anchor: str | None, keys: dict[str, SortKey], path: str) -> SortKey:
    """Sort key placing a report for a missing file among the files of the segment it belongs to.

    ``keys``: each report's path -> the key of the first report with it (a dict, so that thousands of
    missing indexes cost one lookup each, not a scan of every report)."""
    key = keys.get(anchor) if anchor is not None else None
    return (float("inf"), 0, 0) if key is None else (key[0], _suffix_rank(path), 0)


def _suffix_rank(path: str) -> int:
    """Kafka's order of a segment's files: .log, .index, .timeindex, .txnindex."""
    suffix = "." + path.rsplit(".", 1)[-1]
    order = (".log", ".index", ".timeindex", ".txnindex")
    return order.index(suffix) if suffix in order else len(order)


def _finding_order(finding: Finding) -> tuple[float, int]:
    """By byte position, findings about the whole file last; errors first at one position."""
    position = finding.position if finding.position is not None else float("inf")
    return (position, SEVERITY_RANK[finding.severity])
