"""One segment's unit of work: its .log walked once, each requested index checked against the walk.

The index checks read their mapped files first (in place, never copied), then watch the batches of
the one log walk (``observe``) and finish against what the walk learnt; the
walk's facts go back to the driver for the partition checks.
"""

from __future__ import annotations

import os
from collections.abc import Callable

from kseg.format.compression import DEFAULT_MAX_DECOMPRESSED
from kseg.index import MAX_SEGMENT_SIZE
from kseg.ops.verify.index_checks import CHECKS, IndexCheck, TxnIndexCheck
from kseg.ops.verify.log_walk import LogWalk, Observer, walk_log
from kseg.ops.verify.model import (
    ERROR,
    WARNING,
    Collector,
    FileReport,
    SegmentFacts,
    Unit,
    UnitResult,
    unreadable_report,
)
from kseg.ops.verify.plan import segment_base
from kseg.segment import MappedFile


def _kind_of(path: str) -> str:
    return path.rsplit(".", 1)[-1]


def _combine(observers: list[Observer]) -> Observer | None:
    """One observer calling each index check's, or None when no index needs the batches."""
    if not observers:
        return None
    if len(observers) == 1:
        return observers[0]

    def observe(pos: int, base: int, last: int, max_timestamp: int) -> None:
        for fn in observers:
            fn(pos, base, last, max_timestamp)

    return observe


def _each(functions: list[Callable[..., None]]) -> Callable[..., None] | None:
    """One function calling each of ``functions`` with the same arguments (None: there are none)."""
    if not functions:
        return None
    if len(functions) == 1:
        return functions[0]

    def each(*args: object) -> None:
        for fn in functions:
            fn(*args)

    return each


def _index_checks(unit: Unit, base: int, reports: dict[str, FileReport]) -> list[IndexCheck]:
    """Read each requested index and run its own checks; unreadable ones get a report right away."""
    checks: list[IndexCheck] = []
    for path in unit.paths:
        kind = _kind_of(path)
        if kind == "log":
            continue
        if _too_large(path, kind, reports):
            continue
        try:
            with MappedFile(path) as mapped:  # read in place: a sparse 2 GiB index is never copied
                check = CHECKS[kind](path, mapped.buf, base)
                size = len(mapped.buf)
        except OSError as err:
            reports[path] = unreadable_report(path, kind, err)
            continue
        checks.append(check)
        reports[path] = FileReport(path, kind, size, entries=check.count)
    return checks


def _too_large(path: str, kind: str, reports: dict[str, FileReport]) -> bool:
    """An index larger than Kafka can map gets one finding and is not read (a sparse 100 GiB one took minutes)."""
    try:
        size = os.path.getsize(path)
    except OSError:
        return False  # reported by the read that follows
    if size <= MAX_SEGMENT_SIZE:
        return False
    findings = Collector(path)
    findings.add("index-sanity", ERROR, MAX_SEGMENT_SIZE, None,
                 f"{size} bytes: larger than Kafka can map (FileChannel.map takes at most {MAX_SEGMENT_SIZE} "
                 "bytes); not read")
    reports[path] = FileReport(path, kind, size, findings.close())
    return True


def _finish_against(checks: list[IndexCheck], walk: LogWalk | None, log_size: int) -> None:
    """Each index against the walked log, or the note that there was no log to check it against."""
    for check in checks:
        if walk is None:
            check.findings.add(
                "missing-log", WARNING, None, None,
                "no .log beside this index: only Kafka's sanity checks could be run "
                "(Kafka deletes an index without its .log at startup)",
            )
        elif isinstance(check, TxnIndexCheck):
            check.finish_with(walk.aborts)
        else:
            check.finish(log_size)


def _log_report(log: str, walk: LogWalk, size: int, deep: bool) -> FileReport:
    return FileReport(
        log, "log", size, walk.findings.close(), batches=walk.batches,
        records=walk.records if deep else None, skipped_bytes=walk.skipped,
        first_offset=walk.first_offset, last_offset=walk.last_offset,
    )


def check_segment_unit(
    unit: Unit,
    deep: bool = False,
    progress: Callable[[int], None] | None = None,
    max_batch_bytes: int = DEFAULT_MAX_DECOMPRESSED,
) -> UnitResult:
    """The requested files of one segment: the .log walked once, each index checked against it."""
    name_base = segment_base(unit.paths[0])
    reports: dict[str, FileReport] = {}
    checks = _index_checks(unit, name_base if name_base is not None else 0, reports)
    log_requested = unit.log is not None and unit.log in unit.paths
    walk, size, facts = None, 0, None
    if unit.log is not None and (log_requested or checks):
        against = [c for c in checks if not isinstance(c, TxnIndexCheck)]
        observers: list[Observer] = [c.observe for c in against]
        try:
            walk, size = walk_log(unit.log, name_base=name_base, deep=deep and log_requested,
                                  observe=_combine(observers), progress=progress if log_requested else None,
                                  max_batch_bytes=max_batch_bytes,
                                  recovery_prefix=unit.recovery_prefix and log_requested,
                                  observe_run=_each([c.observe_run for c in against]),
                                  observe_messages=_each([c.observe_messages for c in against]))
        except OSError as err:
            if log_requested:
                reports[unit.log] = unreadable_report(unit.log, "log", err)
    if walk is not None and unit.log is not None and log_requested:
        reports[unit.log] = _log_report(unit.log, walk, size, deep)
        prefix = walk.recorder.prefix() if walk.recorder is not None else None
        facts = SegmentFacts(unit.log, name_base, size, walk.batches, walk.first_offset, walk.last_offset,
                             walk.epochs, walk.kafka_cut is not None, len(walk.aborts), walk.kafka_cut, prefix)
    if unit.log is None or walk is not None:
        _finish_against(checks, walk, size)
    for check in checks:
        reports[check.path].findings = check.findings.close()
    return UnitResult([reports[p] for p in unit.paths if p in reports], facts)
