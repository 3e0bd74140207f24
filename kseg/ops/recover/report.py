"""What ``kseg recover`` did (or would do), as data for the report: files written, segments, the run.

Built by :mod:`kseg.ops.recover.run`, read by :mod:`kseg.render.recover`.  What
Kafka keeps of a segment is the :class:`~kseg.recovery.plan.Plan`; what its
loader does at the next start is the model's prediction
(:mod:`kseg.recovery.loading`, read per segment by :mod:`kseg.ops.recover.kafka`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from kseg.errors import Refused
from kseg.ops.recover.kafka import Deletion, KafkaView, Startup
from kseg.recovery.indexes import IndexBuild
from kseg.recovery.loading import LogDirPrediction, PartitionPrediction
from kseg.recovery.plan import Plan
from kseg.recovery.verdict.partition import partition_facts, verdict_of
from kseg.recovery.verdict.table import Verdict

#: Targets (``Report.target``).
OUTPUT, IN_PLACE, DRY_RUN = "output", "in-place", "dry-run"

#: What happened to one file (``Written.action``).
CREATED = "created"
REPLACED = "replaced"  # in place, the old file kept as a backup
UNCHANGED = "unchanged"  # in place: the file already holds exactly this
NOT_WRITTEN = "not-written"  # a .txnindex with nothing to hold (Kafka creates it lazily)

#: What happened to one segment (``SegmentOutcome.action``).
SEG_WRITTEN = "written"  # OUTDIR: recovered (or copied unchanged) with rebuilt indexes
SEG_REWRITTEN = "rewritten"  # in place
SEG_UNTOUCHED = "untouched"  # in place, nothing to cut
SEG_REFUSED = "not-written"  # kafka mode: Kafka's recovery throws on it; nothing is written
SEG_DRY_RUN = "dry-run"
#: -o OUTDIR without --salvage: OUTDIR gets what Kafka's next start keeps (kseg.ops.recover.kept)
SEG_KEPT_AS_KAFKA = "written-as-kafka-keeps"  # copied whole although damaged: Kafka does not recover it
SEG_KAFKA_DELETES = "not-written-kafka-deletes"  # Kafka deletes it (R4.3, R8.2) or a .swap replaces it


class RecoverRefused(Refused):
    """A request kseg will not carry out (conflicting options, an existing target): a usage error."""


# -- results ----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Written:
    """One file written (or considered) by recover."""

    kind: str  # log | index | timeindex | txnindex | leader-epoch-checkpoint | partition.metadata
    path: Path
    action: str  # CREATED | REPLACED | UNCHANGED | NOT_WRITTEN
    size: int
    entries: int | None = None  # for index files
    backup: Path | None = None


@dataclass(frozen=True, slots=True)
class CheckpointChange:
    """One entry of a log-directory checkpoint that OUTDIR's copy holds differently from the input's."""

    checkpoint: str  # recovery-point-offset-checkpoint | log-start-offset-checkpoint | replication-offset-checkpoint
    topic: str
    partition: int
    before: int | None  # None: no entry in the input
    after: int | None  # None: no entry in OUTDIR


@dataclass(frozen=True, slots=True)
class SegmentOutcome:
    log: Path
    plan: Plan
    kafka: KafkaView
    action: str  # SEG_*
    output: IndexBuild | None = None  # recovery's walk over the written .log (its indexes)
    files: tuple[Written, ...] = ()

    @property
    def cut(self) -> bool:
        """The output lacks bytes of this segment (kept whole as Kafka keeps it: no, even if damaged)."""
        return self.action == SEG_KAFKA_DELETES or (self.plan.changed and self.action != SEG_KEPT_AS_KAFKA)

    @property
    def output_bytes(self) -> int | None:
        """Bytes of this segment in the output (None: Kafka's recovery throws, nothing is written)."""
        if self.action == SEG_KAFKA_DELETES:
            return 0
        if self.action == SEG_KEPT_AS_KAFKA:
            return self.plan.size
        return None if self.plan.refused is not None else self.plan.output_size

    @property
    def lost_bytes(self) -> int:
        if self.action == SEG_KAFKA_DELETES:
            return self.plan.size
        return self.plan.lost_bytes if self.cut else 0


@dataclass(frozen=True, slots=True)
class Report:
    path: Path
    salvage: bool
    target: str  # OUTPUT | IN_PLACE | DRY_RUN
    out_dir: Path | None
    whole_partition: bool  # the input was a partition directory
    startup: Startup
    segments: tuple[SegmentOutcome, ...]
    deletion: Deletion | None
    later_segments: tuple[Path, ...] = ()  # single-segment input: the later .log files of its directory
    copied: tuple[Written, ...] = ()
    not_copied: tuple[tuple[Path, str], ...] = ()
    prediction: PartitionPrediction | None = None  # the model: what the next start does to the input
    written: tuple[Written, ...] = ()  # files OUTDIR gets as Kafka would leave them (epochs, snapshot)
    output_log_end: int | None = None  # the log end offset of the partition written to OUTDIR
    output_log_start: int = 0  # its log-start checkpoint entry (0: none)
    kafka_kept: bool = False  # OUTDIR holds what Kafka's next start keeps (-o without --salvage)

    @property
    def changed(self) -> bool:
        """Something was (or would be) cut, salvaged around, refused or left out as Kafka deletes it."""
        return any(outcome.cut for outcome in self.segments)

    def verdict(self, jobs: int = 1) -> Verdict | None:
        """The one verdict of the next start of the input partition (None for a segment without a prediction);
        ``jobs`` is for the same call on a log directory: one partition has nothing to spread."""
        if self.prediction is None:
            return None
        return Verdict(partition_facts(self.prediction))


@dataclass(frozen=True, slots=True)
class Totals:
    """Sums over the partitions of a log directory."""

    partitions: int
    changed_partitions: int
    segments: int
    changed_segments: int
    lost_bytes: int  # cut or lost by recover's plans
    kafka_deleted_segments: int  # segments Kafka deletes at the next start
    kafka_deleted_bytes: int
    kafka_fails: int  # partitions whose load throws


@dataclass(frozen=True, slots=True)
class LogDirReport:
    """``kseg recover`` on a log directory: one :class:`Report` per partition, and the totals."""

    path: Path
    salvage: bool
    target: str
    out_dir: Path | None
    prediction: LogDirPrediction
    partitions: tuple[Report, ...]
    written: tuple[Written, ...] = ()  # log-directory files of OUTDIR (marker, checkpoints)
    carried: tuple[Written, ...] = ()  # files and directories recover does not model, copied byte for byte
    checkpoint_changes: tuple[CheckpointChange, ...] = ()  # entries OUTDIR's checkpoints rewrote

    @property
    def changed(self) -> bool:
        return any(report.changed for report in self.partitions)

    def verdict(self, jobs: int = 1) -> Verdict:
        """The one verdict of this log directory's next start (docs/cli.md, "One verdict"); ``jobs``: worker
        processes for its partitions' facts (the same verdict whatever the number)."""
        pred = self.prediction
        return verdict_of([pred], pred.stops_broker or pred.offline, jobs)

    @property
    def totals(self) -> Totals:
        reports = self.partitions
        deletions = [r.deletion for r in reports if r.deletion is not None]
        return Totals(
            len(reports),
            sum(1 for r in reports if r.changed),
            sum(len(r.segments) for r in reports),
            sum(1 for r in reports for s in r.segments if s.cut),
            sum(s.lost_bytes for r in reports for s in r.segments),
            sum(len(d.segments) for d in deletions),
            sum(d.bytes for d in deletions),
            sum(1 for r in reports if r.prediction is not None and r.prediction.error is not None),
        )
