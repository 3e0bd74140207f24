"""``kseg verify``: check segment files, partition directories and log directories; report every problem.

Kafka's own tool stops at the first batch it cannot parse and exits 0 anyway,
and the broker's recovery silently cuts a segment at its first bad batch.
Verify does the opposite: it goes on past damage (resynchronising on the next
batch whose CRC checks out), locates every problem at the byte position of the
batch or entry at fault, and says what Kafka would do about it.

The package, from the bottom up (each module imports only those above it in
this list, never this ``__init__``):

* ``model`` -- the result model: severities, finding kinds, findings, reports, units;
* ``plan`` -- the arguments expanded into units of work (a segment, or one other file);
* ``log_state``, ``log_deep``, ``log_batches``, ``log_gaps``, ``log_walk`` -- the
  walk over a .log or KRaft .checkpoint, from its state up to the fast loop;
* ``index_reference`` -- the pure-Python cross-check of an .index / .timeindex against the
  log's batches (the compiled core's twin: kseg/format/index_cross.py);
* ``index_checks`` -- .index, .timeindex and .txnindex, on their own and against the log;
* ``segment_unit`` -- one segment: the log walked once, its indexes checked against it;
* ``other_files`` -- producer snapshots, text checkpoints, leftovers;
* ``partition`` -- the checks across the segments of a partition directory;
* ``run`` -- the orchestration: units inline or in a process pool, merged in Kafka's file order;
* ``groups`` -- alike findings of one file folded into one row for the text report.

Every file is opened read-only (:class:`kseg.segment.MappedFile`) and nothing
is ever created, locked or changed.  Nothing here prints or exits.
"""

from __future__ import annotations

from kseg.ops.verify.model import (
    ERROR,
    INFO,
    KINDS,
    MAX_FINDINGS_PER_KIND,
    SEVERITY_RANK,
    WARNING,
    Collector,
    FileReport,
    Finding,
    PartitionPlan,
    Plan,
    SegmentFacts,
    Summary,
    Unit,
    UnitResult,
    VerifyResult,
    worst_first,
)
from kseg.ops.verify.plan import plan_paths, unit_bytes
from kseg.ops.verify.run import POOL_MIN_BYTES, check_unit, verify_paths

__all__ = [
    "ERROR",
    "INFO",
    "KINDS",
    "MAX_FINDINGS_PER_KIND",
    "POOL_MIN_BYTES",
    "SEVERITY_RANK",
    "WARNING",
    "Collector",
    "FileReport",
    "Finding",
    "PartitionPlan",
    "Plan",
    "SegmentFacts",
    "Summary",
    "Unit",
    "UnitResult",
    "VerifyResult",
    "check_unit",
    "plan_paths",
    "unit_bytes",
    "verify_paths",
    "worst_first",
]
