"""What ``kseg recover`` did (or would do), as data for the report: files written, segments, the run.

Built by :mod:`kseg.ops.recover`, read by :mod:`kseg.render.recover`.  What
Kafka keeps of a segment is the :class:`~kseg.recovery.plan.Plan`; what its
loader would do at startup is :mod:`kseg.recovery.log_loader`'s.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from kseg.errors import Refused
from kseg.recovery.indexes import IndexBuild
from kseg.recovery.log_loader import Deletion, KafkaView, Startup
from kseg.recovery.plan import Plan

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
class SegmentOutcome:
    log: Path
    plan: Plan
    kafka: KafkaView
    action: str  # SEG_*
    output: IndexBuild | None = None  # recovery's walk over the written .log (its indexes)
    files: tuple[Written, ...] = ()


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

    @property
    def changed(self) -> bool:
        """Something was (or would be) cut, salvaged around or refused."""
        return any(outcome.plan.changed for outcome in self.segments)
