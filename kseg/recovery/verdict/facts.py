"""The kinds of fact the verdict states about a broker's next start (docs/cli.md, "One verdict").

A fact is one statement an on-call engineer acts on: where (a log directory or a partition
directory, as given), what kind, and one sentence.  Offsets are ``[first, last]`` ranges.
"""

from __future__ import annotations

from dataclasses import dataclass, field

BROKER_STOPS = "broker-stops"  # the load throws what LogManager does not handle, or no log dir is left
LOG_DIR_OFFLINE = "log-dir-offline"  # the log directory goes offline; its partitions are not served
COMMITTED_LOST = "committed-lost"  # offsets below the high watermark gone, or the log ends below it
OFFSETS_LOST = "offsets-lost"  # offsets gone above the high watermark (never committed)
NOT_SERVED = "not-served"  # the partition is renamed -stray: none of its data is served
PARTITION_MISSING = "partition-missing"  # a checkpoint entry without a directory: the data is not here
UNREADABLE_SERVED = "unreadable-served"  # damaged batches the start keeps and serves as they are
UNCOMMITTED_SERVED = "uncommitted-served"  # an open transaction the start does not see: read as committed
GROUP_COMMITS_LOST = "group-commits-lost"  # a consumer group's committed offsets are in a lost range
TAIL_CUT = "tail-cut"  # bytes cut from a segment's end that framed no batch (torn or zero-filled tail)
NOT_MODELLED = "not-modelled"  # the model stops short (the overflow split): the outcome is not known
BROKER_RUNNING = "broker-running"  # a live process holds the log directory's .lock
REBUILT = "rebuilt"  # files Kafka rewrites without losing a record (indexes, snapshots, epochs)

KINDS = (BROKER_STOPS, LOG_DIR_OFFLINE, COMMITTED_LOST, OFFSETS_LOST, NOT_SERVED, PARTITION_MISSING,
         UNREADABLE_SERVED, UNCOMMITTED_SERVED, GROUP_COMMITS_LOST, TAIL_CUT, NOT_MODELLED, BROKER_RUNNING, REBUILT)


@dataclass(frozen=True, slots=True)
class Fact:
    """One statement: ``kind`` at ``where`` (a log or partition directory), in one sentence."""

    kind: str
    where: str
    text: str
    offsets: list[list[int]] = field(default_factory=list)

