"""``kseg verify``: check segment files, partition directories and log directories; report every problem.

Kafka's own tool stops at the first batch it cannot parse and exits 0 anyway,
and the broker's recovery silently cuts a segment at its first bad batch.
Verify does the opposite: it goes on past damage (resynchronising on the next
batch whose CRC checks out), locates every problem at the byte position of the
batch or entry at fault, and says what Kafka would do about it.

This module holds the result model and the orchestration; the checks live in
``verify_log`` (.log and KRaft .checkpoint files), ``verify_index`` (.index,
.timeindex, .txnindex, .snapshot) and ``verify_partition`` (cross-segment and
directory checks, text checkpoints).  Nothing here prints or exits.

The files of one segment (``.log`` and its indexes) are checked together so
the log is walked once; independent segments run in a process pool
(``jobs``), and results are merged back in Kafka's file order so output is
deterministic.  Every file is opened read-only and nothing is ever created,
locked or changed.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from kseg.ops.verify_log import SegmentFacts

ERROR, WARNING, INFO = "error", "warning", "info"
SEVERITY_RANK = {ERROR: 0, WARNING: 1, INFO: 2}

#: The stable vocabulary of finding kinds: kind -> (severity, what it means).
#: docs/verify.md documents each; a test keeps the two in step.
KINDS: dict[str, tuple[str, str]] = {
    # .log / .checkpoint, batch framing (found while walking; Kafka's recovery truncates here)
    "crc": ("error", "stored CRC does not match the bytes it covers (CRC-32C for V2, CRC-32 for V0/V1)"),
    "short-batch": ("error", "batch length below the minimum for its magic (61 bytes V2, 26 V0, 34 V1)"),
    "partial-batch": ("error", "the last batch of the file is incomplete (a torn write)"),
    "bad-size": ("error", "a batch length runs past the end of the file, yet valid batches follow it"),
    "bad-magic": ("error", "magic byte is not 0, 1 or 2"),
    "zero-filled": ("error", "a region of zero bytes where batches should be"),
    "skipped-bytes": ("info", "bytes skipped while resynchronising on the next valid batch"),
    # .log / .checkpoint, batch contents
    "bad-attributes": ("error/warning", "unknown codec id (error); unused attribute bits set (warning)"),
    "codec-for-magic": ("error", "zstd in a V0/V1 message"),
    "decompress": ("error/warning", "records cannot be decompressed (warning: beyond kseg's size cap)"),
    "record-count": ("error", "records count disagrees with the records present or with lastOffsetDelta"),
    "record-structure": ("error/warning", "records cannot be decoded, or their offsets are out of order"),
    "offset-order": ("error", "a batch's offsets do not follow the previous batch's"),
    "offset-below-base": ("error", "a batch offset is below the base offset in the file name"),
    "offset-overflow": ("warning", "a batch offset is more than 2^31-1 above the file's base offset"),
    "max-timestamp": ("error", "a CreateTime batch's maxTimestamp is not its largest record timestamp"),
    "control-record": ("error/warning", "a control record is malformed (warning: unknown control type)"),
    "producer-fields": ("error/warning", "producer id, epoch and sequence do not fit together"),
    # index and side files
    "index-sanity": ("error", "fails one of Kafka's index sanity checks"),
    "index-order": ("error", "index entries are not strictly increasing"),
    "index-entry": ("error/warning", "an offset-index entry does not match the log"),
    "index-preallocated": ("info", "a preallocated, never written, zero tail (recognised, not an error)"),
    "timeindex-entry": ("error/info", "a time-index entry does not match the log's timestamps"),
    "txnindex": ("error/warning", "a transaction-index entry is malformed or does not match the log"),
    "snapshot-version": ("error", "producer snapshot version is not 1"),
    "snapshot-crc": ("error", "producer snapshot CRC-32C does not match"),
    "snapshot-structure": ("error/warning", "producer snapshot entries do not fit the file or the name"),
    # partition and log directories
    "segment-gap": ("warning", "offsets missing between two segments (normal after compaction)"),
    "segment-overlap": ("error", "a segment's offsets overlap the next segment's"),
    "segment-name": ("error/warning", "a file name is not a base offset Kafka can parse (or not 20 digits)"),
    "leader-epoch": ("error/warning", "leader-epoch-checkpoint malformed or inconsistent with the batches"),
    "stray-file": ("warning", ".deleted/.cleaned/.swap leftovers, or an index without its .log"),
    "missing-index": ("warning", "a segment without its .index or .timeindex (or .txnindex while aborts exist)"),
    "missing-log": ("warning", "an index file whose .log is absent, so it could only be sanity-checked"),
    "checkpoint-file": ("error", "a text checkpoint (offset checkpoints, partition.metadata, quorum-state) is malformed"),
    # the run itself
    "unreadable": ("error", "the file could not be opened or read (exit code 2)"),
    "unknown-file": ("info", "not a file kind verify knows; not checked"),
    "more-findings": ("info", "more findings of one kind in one file than are listed"),
}

#: Findings of one kind kept per file; beyond this a single ``more-findings`` line counts the rest.
MAX_FINDINGS_PER_KIND = 1000


@dataclass(frozen=True, slots=True)
class Finding:
    """One problem, located.

    ``position`` is the absolute byte position in ``path`` of the batch or
    index entry at fault (None for findings about a whole file or directory);
    ``offset`` is the Kafka offset involved, when known; ``field`` names the
    field at fault (``batch.crc``, ``record[3].length``); ``size`` is the
    number of bytes concerned (a batch, a gap), when meaningful.
    """

    path: str
    kind: str
    severity: str
    position: int | None
    offset: int | None
    message: str
    field: str | None = None
    size: int | None = None

    def as_dict(self) -> dict[str, object]:
        return {
            "type": "finding",
            "path": self.path,
            "kind": self.kind,
            "severity": self.severity,
            "position": self.position,
            "offset": self.offset,
            "message": self.message,
            "field": self.field,
            "size": self.size,
        }


class Collector:
    """Findings for one file, capped per kind so a garbage file cannot flood memory."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.items: list[Finding] = []
        self._per_kind: Counter[str] = Counter()

    def add(
        self,
        kind: str,
        severity: str,
        position: int | None,
        offset: int | None,
        message: str,
        *,
        field: str | None = None,
        size: int | None = None,
    ) -> None:
        self._per_kind[kind] += 1
        if self._per_kind[kind] <= MAX_FINDINGS_PER_KIND:
            self.items.append(Finding(self.path, kind, severity, position, offset, message, field, size))

    def close(self) -> list[Finding]:
        """The findings, plus one ``more-findings`` line per kind that hit the cap."""
        for kind, count in self._per_kind.items():
            if count > MAX_FINDINGS_PER_KIND:
                self.items.append(
                    Finding(self.path, "more-findings", INFO, None, None,
                            f"{count - MAX_FINDINGS_PER_KIND} more {kind} findings in this file are not listed")
                )
        return self.items


@dataclass(slots=True)
class FileReport:
    """What verify found in one file (or about one expected file that is missing)."""

    path: str
    kind: str
    size: int | None
    findings: list[Finding] = field(default_factory=list)
    batches: int | None = None  # .log/.checkpoint: valid batches read
    records: int | None = None  # with --deep: records decoded
    entries: int | None = None  # index files: live entries
    skipped_bytes: int = 0  # .log/.checkpoint: bytes that belong to no valid batch
    first_offset: int | None = None
    last_offset: int | None = None

    def count(self, severity: str) -> int:
        return sum(1 for f in self.findings if f.severity == severity)

    @property
    def kinds(self) -> Counter[str]:
        return Counter(f.kind for f in self.findings)

    @property
    def worst(self) -> str | None:
        """The most severe finding's severity, or None when the file is clean."""
        if not self.findings:
            return None
        return min((f.severity for f in self.findings), key=SEVERITY_RANK.__getitem__)


@dataclass(frozen=True, slots=True)
class Summary:
    files: int
    bytes: int
    batches: int
    records: int | None
    errors: int
    warnings: int
    infos: int
    skipped_bytes: int
    unreadable: int
    kinds: dict[str, int]

    def as_dict(self) -> dict[str, object]:
        return {"type": "summary", **{name: getattr(self, name) for name in self.__slots__}}


@dataclass(slots=True)
class VerifyResult:
    files: list[FileReport]
    deep: bool = False

    def findings(self) -> Iterator[Finding]:
        for report in self.files:
            yield from report.findings

    def summary(self) -> Summary:
        counts = Counter(f.severity for f in self.findings())
        return Summary(
            files=len(self.files),
            bytes=sum(r.size or 0 for r in self.files),
            batches=sum(r.batches or 0 for r in self.files),
            records=sum(r.records or 0 for r in self.files) if self.deep else None,
            errors=counts[ERROR],
            warnings=counts[WARNING],
            infos=counts[INFO],
            skipped_bytes=sum(r.skipped_bytes for r in self.files),
            unreadable=sum(1 for f in self.findings() if f.kind == "unreadable"),
            kinds=dict(sorted(Counter(f.kind for f in self.findings()).items())),
        )

    def exit_code(self, strict: bool = False) -> int:
        """0 clean, 1 problems (errors; warnings too when ``strict``), 2 unreadable input."""
        summary = self.summary()
        if summary.unreadable:
            return 2
        if summary.errors or (strict and summary.warnings):
            return 1
        return 0


class UnitResult(NamedTuple):
    """What one unit of work produced: reports for its files, and facts for the partition checks."""

    reports: list[FileReport]
    facts: SegmentFacts | None = None  # for a segment whose .log was walked


# -- planning: which files, grouped how ------------------------------------------------------


class Unit(NamedTuple):
    """Work for one worker: the requested files of one segment, or one other file.

    For a segment, ``log`` is the segment's .log when it exists -- whether or
    not it was asked for -- because index checks need it; ``paths`` are the
    files to report on, in Kafka's order.
    """

    kind: str  # "segment" or a discover.file_kind
    paths: tuple[str, ...]
    log: str | None = None
    directory: str | None = None  # the partition directory, when verifying one
    order: int = 0  # position in the plan, for merging results back in order
    explicit: bool = False  # named on the command line (unknown files are reported only then)


class PartitionPlan(NamedTuple):
    directory: str
    files: list[str]  # every file in the directory, Kafka's order
    units: list[int]  # indexes into the unit list


class Plan(NamedTuple):
    units: list[Unit]
    partitions: list[PartitionPlan]
    missing: list[str]  # arguments that do not exist (click normally catches these)


SEGMENT_KINDS = ("log", "index", "timeindex", "txnindex")


def _stem(path: str) -> str:
    """The name without its segment-file suffix: ``00000000000000000042`` of ``00000000000000000042.index``."""
    name = os.path.basename(path)
    return name.rsplit(".", 1)[0]


def plan_paths(paths: Sequence[str | os.PathLike[str]]) -> Plan:
    """Expand the arguments into units, keeping partition directories together.

    Files given one by one are verified as given; a partition directory means
    all its files plus the cross-segment checks; a log directory means each
    partition directory in it (by topic, then partition) and its own files.
    """
    from kseg.ops.discover import file_kind, is_partition_dir, partition_dirs, partition_files

    units: list[Unit] = []
    partitions: list[PartitionPlan] = []
    missing: list[str] = []

    def add_files(files: list[Path], directory: str | None, explicit: bool = False) -> list[int]:
        """Group the files of each segment into one unit; other files get a unit each."""
        added: list[int] = []
        segments: dict[tuple[str, str], int] = {}
        for path in files:
            kind = file_kind(path)
            text = str(path)
            if kind in SEGMENT_KINDS:
                key = (str(path.parent), _stem(text))
                if key in segments:
                    i = segments[key]
                    old = units[i]
                    units[i] = Unit("segment", old.paths + (text,), old.log, directory, old.order, old.explicit)
                    continue
                log = path if kind == "log" else path.with_name(_stem(text) + ".log")
                log_text = str(log) if log.is_file() else None
                segments[key] = len(units)
                unit = Unit("segment", (text,), log_text, directory, len(units), explicit)
            else:
                unit = Unit(kind, (text,), None, directory, len(units), explicit)
            added.append(len(units))
            units.append(unit)
        return added

    def add_partition(directory: Path) -> None:
        files = partition_files(directory)
        partitions.append(PartitionPlan(str(directory), [str(f) for f in files], add_files(files, str(directory))))

    given: list[Path] = []  # consecutive file arguments: grouped, so a .log and its .index share one walk
    for raw in [*paths, None]:
        path = Path(raw) if raw is not None else None
        if path is not None and path.is_file():
            given.append(path)
            continue
        if given:
            add_files(given, None, explicit=True)
            given = []
        if path is None:
            break
        if path.is_dir():
            if is_partition_dir(path):
                add_partition(path)
            else:
                for part in partition_dirs(path):
                    add_partition(part)
                add_files(sorted(p for p in path.iterdir() if p.is_file()), None)
        else:
            missing.append(str(path))
    return Plan(units, partitions, missing)


def _unit_bytes(unit: Unit) -> int:
    paths = set(unit.paths) | ({unit.log} if unit.log else set())
    total = 0
    for path in paths:
        try:
            total += os.stat(path).st_size
        except OSError:
            pass
    return total


def check_unit(unit: Unit, deep: bool = False, progress: Callable[[int], None] | None = None) -> UnitResult:
    """Verify one unit; runs in a worker process or inline."""
    from kseg.ops.verify_index import check_segment_unit
    from kseg.ops.verify_partition import check_other_file

    if unit.kind == "segment":
        return check_segment_unit(unit, deep=deep, progress=progress)
    return check_other_file(unit, deep)


#: Below this much data a pool costs more to start than it saves: verify serially.
POOL_MIN_BYTES = 32 << 20


def _run_units(units: list[Unit], deep: bool, jobs: int, progress: ProgressFn | None) -> list[UnitResult]:
    """Every unit's result, in unit order: inline, or in a process pool for many files of real size."""
    sizes = [_unit_bytes(u) for u in units] if jobs > 1 or progress else [0] * len(units)
    total = sum(sizes)
    if jobs <= 1 or len(units) <= 1 or total < POOL_MIN_BYTES:
        done = 0
        results = []
        for unit in units:
            inner = None
            if progress is not None:
                base = done
                inner = lambda n, _base=base: progress(_base + n, total)
            results.append(check_unit(unit, deep, inner))
            if progress is not None:
                done += sizes[len(results) - 1]
                progress(done, total)
        return results
    from concurrent.futures import ProcessPoolExecutor, as_completed

    results: list[UnitResult] = [UnitResult([])] * len(units)
    done = 0
    with ProcessPoolExecutor(max_workers=min(jobs, len(units))) as pool:
        futures = {pool.submit(check_unit, unit, deep): i for i, unit in enumerate(units)}
        for future in as_completed(futures):
            i = futures[future]
            results[i] = future.result()
            if progress is not None:
                done += sizes[i]
                progress(done, total)
    return results


def verify_paths(
    paths: Sequence[str | os.PathLike[str]],
    *,
    deep: bool = False,
    jobs: int | None = None,
    progress: ProgressFn | None = None,
    run_units: Callable[[list[Unit], bool], list[UnitResult]] | None = None,
) -> VerifyResult:
    """Verify files and directories; returns every finding, in Kafka's file order.

    ``deep`` decodes every record (default: batch level -- framing, CRC and
    headers, what Kafka's recovery checks and more).  ``jobs`` is the number of
    worker processes (default: all cores); one file never starts a pool.
    ``progress(done_bytes, total_bytes)`` is called as work completes.
    ``run_units(units, deep)`` replaces the local worker pool: it must return
    ``check_unit(unit, deep)`` for every unit, in order (kseg.spark runs them
    on a Spark cluster); planning and the merge stay here, so findings match.
    """
    from kseg.ops.verify_partition import check_partition, missing_report

    plan = plan_paths(paths)
    jobs = (os.cpu_count() or 1) if jobs is None else max(1, jobs)
    if run_units is not None:
        results = run_units(plan.units, deep)
    else:
        results = _run_units(plan.units, deep, jobs, progress)

    reports: list[tuple[tuple, FileReport]] = []
    for unit, result in zip(plan.units, results):
        for j, report in enumerate(result.reports):
            reports.append(((unit.order, _suffix_rank(report.path), j), report))
    for path in plan.missing:
        reports.append(((-1, 0, 0), missing_report(path)))

    by_path = {report.path: report for _, report in reports}
    for partition in plan.partitions:
        facts = [results[i].facts for i in partition.units if results[i].facts is not None]
        for finding_path, finding, anchor in check_partition(partition, facts):
            report = by_path.get(finding_path)
            if report is None:
                report = FileReport(finding_path, "missing", None)
                by_path[finding_path] = report
                anchor_key = _anchor_key(anchor, reports, finding_path)
                reports.append((anchor_key, report))
            report.findings.append(finding)

    reports.sort(key=lambda item: item[0])
    files = [report for _, report in reports]
    for report in files:
        report.findings.sort(key=_finding_order)
    return VerifyResult(files, deep)


def _anchor_key(anchor: str | None, reports: list[tuple[tuple, FileReport]], path: str) -> tuple:
    """Sort key placing a report for a missing file among the files of the segment it belongs to."""
    for key, report in reports:
        if report.path == anchor:
            return (key[0], _suffix_rank(path), 0)
    return (float("inf"), 0, 0)


def _suffix_rank(path: str) -> int:
    """Kafka's order of a segment's files: .log, .index, .timeindex, .txnindex."""
    suffix = "." + path.rsplit(".", 1)[-1]
    order = (".log", ".index", ".timeindex", ".txnindex")
    return order.index(suffix) if suffix in order else len(order)


def _finding_order(finding: Finding) -> tuple:
    """By byte position, findings about the whole file last; errors first at one position."""
    position = finding.position if finding.position is not None else float("inf")
    return (position, SEVERITY_RANK[finding.severity])


def worst_first(findings: Iterable[Finding], file_order: dict[str, int]) -> list[Finding]:
    """Findings sorted for display: errors, then warnings, then info; in file order within each."""
    return sorted(
        findings,
        key=lambda f: (
            SEVERITY_RANK[f.severity],
            file_order.get(f.path, 0),
            f.position if f.position is not None else float("inf"),
        ),
    )
