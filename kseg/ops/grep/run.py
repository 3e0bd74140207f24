"""``kseg grep``: which segments to search, in which order, on how many cores; matches as a stream.

PATHS are ``.log`` segments, partition directories or log directories,
expanded in Kafka's load order (:mod:`kseg.ops.discover`).  Each segment is
one unit of work (:class:`Unit`); its *source* -- the partition directory,
or the file when a file is named -- is what ``--count`` and ``-l`` report.
With ``jobs > 1`` units run in worker processes, at most ``2 * jobs`` at a
time, and their results come back in order: the output is the same as with
one job.  A worker holds one segment's matches at a time.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from kseg.ops.discover import is_partition_dir, partition_dirs, segment_logs
from kseg.ops.grep.query import Query
from kseg.ops.grep.search import Counted, Match, Problem, search_segment
from kseg.segment import base_offset_from_name

if TYPE_CHECKING:
    from concurrent.futures import Future  # a pool's futures: concurrent.futures costs a run of one job

    from kseg.ops.grep.decoding import Decoding
    from kseg.ops.grep.txnspans import TxnSpans


@dataclass(frozen=True, slots=True)
class Unit:
    """One segment to search, the source it reports under, and its partition's transactions (``--txn``)."""

    path: Path
    source: str
    spans: TxnSpans | None = None


@dataclass(frozen=True, slots=True)
class UnitDone:
    """A unit searched: how many records matched in it (with ``records=False`` they are only counted)."""

    source: str
    path: str
    matches: int
    size: int


@dataclass(slots=True)
class UnitResult:
    """What a worker hands back for one unit."""

    found: list[Match | Problem] = field(default_factory=list)
    done: UnitDone | None = None


Event = Match | Problem | UnitDone


def plan(paths: list[Path], query: Query, max_batch_bytes: int) -> list[Unit]:
    """The units for ``paths`` in order; segments wholly below ``--from-offset`` are left out."""
    units: list[Unit] = []
    for path in paths:
        if path.is_dir():
            parts = [path] if is_partition_dir(path) else partition_dirs(path)
            for part in parts:
                units += _partition_units(segment_logs(part), str(part), query, max_batch_bytes)
        else:
            logs = [path]
            if query.txn is not None and is_partition_dir(path.parent):  # the whole partition's transactions
                logs = [p for p in segment_logs(path.parent) if _not_after(p, path)]
            spans = _spans(logs, query, max_batch_bytes)
            units.append(Unit(path, str(path), spans))
    return units


def _spans(logs: list[Path], query: Query, max_batch_bytes: int) -> TxnSpans | None:
    """The partition's transactions, replayed only for ``--txn`` (the replay's modules are imported then)."""
    if query.txn is None:
        return None
    from kseg.ops.grep.txnspans import txn_spans

    return txn_spans(logs, max_batch_bytes)


def _not_after(log: Path, last: Path) -> bool:
    return (base_offset_from_name(log) or 0) <= (base_offset_from_name(last) or 0)


def _partition_units(logs: list[Path], source: str, query: Query, max_batch_bytes: int) -> list[Unit]:
    spans = _spans(logs, query, max_batch_bytes)
    keep = []
    for index, log in enumerate(logs):
        following = base_offset_from_name(logs[index + 1]) if index + 1 < len(logs) else None
        if query.from_offset is not None and following is not None and following <= query.from_offset:
            continue  # every offset of this segment lies below the next one's base offset
        base = base_offset_from_name(log)
        if query.to_offset is not None and base is not None and base > query.to_offset:
            break
        keep.append(Unit(log, source, spans))
    return keep


@dataclass(frozen=True, slots=True)
class Options:
    """How a run searches and reports: the read cap, records or only counts, ``-l``, the decoding."""

    max_batch_bytes: int
    records: bool = True
    first_only: bool = False
    decoding: Decoding | None = None


def search_unit(unit: Unit, query: Query, options: Options) -> Iterator[Event]:
    """One unit's matches (when ``options.records``) and problems, then its :class:`UnitDone`."""
    count = 0
    records, first_only = options.records, options.first_only
    for found in search_segment(unit.path, query, unit.spans, options.max_batch_bytes, unit.source, options.decoding,
                                count_only=not records):
        if isinstance(found, Counted):
            count += found.records
            if first_only and count:
                break
        elif isinstance(found, Match):
            count += 1
            if records:
                yield found
            if first_only:
                break
        else:
            yield found
    yield UnitDone(unit.source, str(unit.path), count, _size(unit.path))


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def _unit_result(unit: Unit, query: Query, options: Options) -> UnitResult:
    result = UnitResult()
    for event in search_unit(unit, query, options):
        if isinstance(event, UnitDone):
            result.done = event
        else:
            result.found.append(event)
    return result


def grep(units: list[Unit], query: Query, options: Options, jobs: int = 1) -> Iterator[Event]:
    """Every unit's events, in unit order; ``options.first_only`` stops a source at its first match (``-l``)."""
    if jobs <= 1 or len(units) <= 1:
        done_sources: set[str] = set()
        for unit in units:
            if options.first_only and unit.source in done_sources:
                continue
            for event in search_unit(unit, query, options):
                if options.first_only and isinstance(event, UnitDone) and event.matches:
                    done_sources.add(event.source)
                yield event
        return
    yield from _pooled(units, query, options, jobs)


def _pooled(units: list[Unit], query: Query, options: Options, jobs: int) -> Iterator[Event]:
    """:func:`grep` over a process pool: a sliding window of ``2 * jobs`` units, results in order."""
    from concurrent.futures import ProcessPoolExecutor  # only for a pool

    with ProcessPoolExecutor(max_workers=min(jobs, len(units))) as pool:
        submit: Callable[[Unit], Future[UnitResult]] = lambda unit: pool.submit(  # noqa: E731
            _unit_result, unit, query, options)
        pending: deque[Future[UnitResult]] = deque()
        queue = iter(units)
        for unit in queue:
            pending.append(submit(unit))
            if len(pending) >= 2 * jobs:
                break
        while pending:
            result = pending.popleft().result()
            nxt = next(queue, None)
            if nxt is not None:
                pending.append(submit(nxt))
            yield from result.found
            if result.done is not None:
                yield result.done
