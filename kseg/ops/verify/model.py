"""Verify's result model: severities, finding kinds, findings, per-file reports and the units of work.

Everything here is plain data shared by the checkers (``log_*``,
``index_checks``, ``segment_unit``, ``other_files``, ``partition``) and the
orchestration above them (``plan``, ``run``); it imports nothing of verify's
own, so the checkers can import it without a cycle.  Nothing here prints or
exits.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:  # annotations only: the prefix is built and read by the walk and the load checks
    from kseg.recovery.clean_prefix import CleanPrefix
    from kseg.recovery.verdict.table import Verdict

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
    # the next start, as the model of Kafka's log loading (kseg.recovery.loading) predicts it
    "load-truncates": ("error", "Kafka's next start recovers this segment and cuts bytes from its end"),
    "load-deletes": ("error", "Kafka's next start deletes this segment (renamed .deleted)"),
    "load-ignores": ("error", "damage or batches Kafka's next start leaves on disk unread or serves as they are"),
    "load-fails": ("error", "Kafka's load throws: the log directory goes offline or the broker stops"),
    "next-start": ("error", "an error of the next start's verdict no other finding in its directory shows"),
    "not-served": ("error", "no partition.metadata: the next start renames the directory -stray and serves none of it"),
    "high-watermark": ("error", "replication-offset-checkpoint's high watermark is beyond the log end: committed data lost"),
    "recovery-point": ("warning", "recovery-point-offset-checkpoint is beyond the log end; Kafka lowers it"),
    "log-start-offset": ("error", "log-start-offset-checkpoint is beyond the log end; Kafka deletes every segment"),
    "checkpoint-orphan": ("warning", "a log-directory checkpoint entry for a partition with no directory here"),
    "checkpoint-missing-entry": ("info", "a partition directory with no recovery-point entry: recovered from 0"),
    "snapshot-beyond-end": ("warning", "a producer snapshot beyond the log end; Kafka deletes it"),
    "load-model": ("info", "the model of Kafka's log loading could not run on a directory; nothing said about its load"),
    # the run itself
    "unreadable": ("error", "the file could not be opened or read (exit code 2)"),
    "unknown-file": ("info", "not a file kind verify knows; not checked"),
    "unfinished-output": ("error", "KSEG-UNFINISHED: a recover -o or convert -o into this directory was killed part-way"),
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
    partitions: list[str] = field(default_factory=list)  # directories checked as partitions (plan order)
    verdict: Verdict | None = None  # the next start's, for the directories the loading model predicted

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
        """2 unreadable input; 1 when the verdict of the next start says so (docs/cli.md, "One verdict"),
        for an error in a file no prediction covers (a segment given alone), or with ``strict`` for any
        error or warning; else 0.  Damage Kafka repairs without a loss (an index it rebuilds) is shown as
        found but, like the verdict, does not fail the run without ``strict``."""
        summary = self.summary()
        if summary.unreadable:
            return 2
        if strict and (summary.errors or summary.warnings):
            return 1
        if self.verdict is None:
            return 1 if summary.errors else 0
        if self.verdict.exit_code():
            return 1
        scope = self.verdict.scope
        outside = (f for f in self.findings()
                   if f.severity == ERROR and (f.kind in NOT_KAFKAS or not _covered(f.path, scope)))
        return 1 if next(outside, None) is not None else 0


#: errors about what kseg itself left, which no broker start repairs or even notices: they always fail the run
NOT_KAFKAS = frozenset({"unfinished-output"})


def _covered(path: str, scope: frozenset[str]) -> bool:
    """The file is in a directory the verdict speaks for (a partition directory, or a log directory's own file)."""
    where = os.path.abspath(path)
    return where in scope or os.path.dirname(where) in scope


class SegmentFacts(NamedTuple):
    """What the partition-level checks need to know about one segment."""

    path: str
    name_base: int | None
    size: int
    batches: int
    first_offset: int | None
    last_offset: int | None
    epochs: list[tuple[int, int]]  # (leader epoch, first offset) wherever the epoch rises
    damaged: bool
    aborts: int  # ABORT markers seen (a .txnindex must then exist)
    damage_at: int | None = None  # byte position of the first damage (where LogSegment.recover would stop)
    #: recover's loop over the leading clean batches, run during the walk, for the load model
    #: (only where Unit.recovery_prefix asked for it)
    prefix: CleanPrefix | None = None


class UnitResult(NamedTuple):
    """What one unit of work produced: reports for its files, and facts for the partition checks."""

    reports: list[FileReport]
    facts: SegmentFacts | None = None  # for a segment whose .log was walked


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
    #: run LogSegment.recover's loop over the leading clean batches during the walk, for the load
    #: model: set where the next start is likely to recover this segment (see plan.py)
    recovery_prefix: bool = False


class PartitionPlan(NamedTuple):
    directory: str
    files: list[str]  # every file in the directory, Kafka's order
    units: list[int]  # indexes into the unit list


class LoadScope(NamedTuple):
    """Where verify asks the log-loading model what the next start does.

    ``kind`` is ``"log-dir"`` (a whole log directory: its partitions and its
    checkpoints) or ``"partition"`` (one partition directory, with the inputs
    its parent log directory gives); ``only`` limits the statements to those
    files (files given one by one), None meaning every file of the directory.
    """

    kind: str
    directory: str
    only: tuple[str, ...] | None = None


class Plan(NamedTuple):
    units: list[Unit]
    partitions: list[PartitionPlan]
    missing: list[str]  # arguments that do not exist (click normally catches these)
    loads: tuple[LoadScope, ...] = ()  # where the log-loading model is asked (plan order)


# -- reports of files that could not be checked -------------------------------------------------


def unreadable_report(path: str, kind: str, err: OSError) -> FileReport:
    """A file that could not be opened or read: one ``unreadable`` finding (the run exits 2)."""
    findings = Collector(path)
    findings.add("unreadable", ERROR, None, None, f"cannot read: {err.strerror or err}")
    return FileReport(path, kind, None, findings.close())


def missing_report(path: str) -> FileReport:
    """A path argument that does not exist (or is not a regular file or directory)."""
    findings = Collector(path)
    findings.add("unreadable", ERROR, None, None, "no such file or directory (or not a regular file)")
    return FileReport(path, "missing", None, findings.close())


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
