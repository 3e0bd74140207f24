"""Consumer groups whose committed offset a choice of leader takes away.

Every ``__consumer_offsets`` partition found in the log directories holding
the replicas is folded as the group coordinator loads it: offset commits in
log order, a tombstone removes the commit, a transactional commit counts only
once its COMMIT marker follows.  For a candidate leader ``L`` a group
committed at ``c`` on the compared partition is affected when

* the commit carries the leader epoch ``E`` of the last record consumed
  (OffsetCommit value v3+, KIP-320) and ``L``'s cache (with its new epoch)
  answers ``endOffsetFor(E)`` below ``c``, or not at all: the consumer's
  position validation detects a truncation (``SubscriptionState.maybeCompleteValidation``)
  and moves back to that end offset (an ``auto.offset.reset`` policy) or
  throws ``LogTruncationException`` (``none``);
* without an epoch: ``c`` above ``L``'s log end offset -- the next fetch is
  out of range and the consumer resets as ``auto.offset.reset`` says; or
  the record before ``c`` (the last one the group consumed) lies in a range
  some follower throws away under ``L``: the group may have read that
  follower's records when it led, which ``L`` does not hold.  Which replica
  served the group is not on disk, so this is a "may": a consumer whose
  position carries the old epoch and is validated (KIP-320) gets
  ``LogTruncationException`` only where ``L``'s end offset for that epoch is
  below its position.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from kseg.format.control import ABORT
from kseg.format.internal import decode_offsets_record
from kseg.format.v2 import V2Batch
from kseg.listing import children
from kseg.ops.diff.truncation import UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET, end_offset_for
from kseg.ops.discover import parse_partition_dir, segment_logs
from kseg.recovery.producer_state import RecoveryAbort, end_txn_marker
from kseg.segment import Segment

OFFSETS_TOPIC = "__consumer_offsets"
OFFSET_COMMIT_KEYS = (0, 1)  # OffsetCommitKey versions 0 and 1
OUT_OF_RANGE = "committed offset above the leader's log end: out of range, reset by auto.offset.reset"
TRUNCATED = ("last consumed offset in a range a follower throws away: the group may have read records this "
             "leader does not hold (LogTruncationException where its position's epoch is validated, KIP-320)")


@dataclass(frozen=True, slots=True)
class Commit:
    group: str
    offset: int
    leader_epoch: int | None  # the epoch of the last record consumed, when the commit holds one
    sources: tuple[str, ...]  # the __consumer_offsets partition directories holding this commit


def committed_offsets(log_dirs: list[Path], topic: str, partition: int, cap: int) -> list[Commit]:
    """Every group's committed offset for ``topic-partition`` in the ``__consumer_offsets`` of ``log_dirs``.

    The same commit found on several disks (the topic's replicas) is one :class:`Commit` naming them all.
    """
    found: dict[tuple[str, int, int | None], list[str]] = {}
    for log_dir in dict.fromkeys(log_dirs):
        for directory in sorted(p for p in children(log_dir) if p.name.startswith(f"{OFFSETS_TOPIC}-")):
            name = parse_partition_dir(directory)
            if name is None or name.topic != OFFSETS_TOPIC or not directory.is_dir():
                continue
            for (group, _, _), (offset, epoch) in sorted(_fold(segment_logs(directory), cap, topic, partition).items()):
                found.setdefault((group, offset, epoch), []).append(str(directory))
    return [Commit(g, o, e, tuple(sources)) for (g, o, e), sources in found.items()]


def _fold(logs: list[Path], cap: int, topic: str, partition: int) -> dict[tuple[str, str, int], tuple[int, int | None]]:
    """The groups' last commits for ``topic-partition`` only: memory holds one entry per group of this
    partition (what the output lists), never the cluster's other commits."""
    offsets: dict[tuple[str, str, int], tuple[int, int | None]] = {}
    pending: dict[int, list[tuple[tuple[str, str, int], tuple[int, int | None] | None]]] = {}
    for log in logs:
        with Segment(log) as seg:
            for batch in seg.iter_batches():
                if not isinstance(batch, V2Batch):
                    continue
                if batch.is_control:
                    marker = _readable_marker(batch, cap)
                    commits = pending.pop(batch.producer_id, [])
                    if marker is not None and marker[0] != ABORT:
                        _apply(offsets, commits)
                    continue
                commits = [c for c in map(_commit, batch.iter_records(cap))
                           if c is not None and c[0][1] == topic and c[0][2] == partition]
                if batch.is_transactional:
                    pending.setdefault(batch.producer_id, []).extend(commits)
                else:
                    _apply(offsets, commits)
    return offsets


def _commit(record: object) -> tuple[tuple[str, str, int], tuple[int, int | None] | None] | None:
    decoded = decode_offsets_record(record.key, record.value, record.offset)  # type: ignore[attr-defined]
    if decoded.problem is not None or decoded.key is None or decoded.key["type"] not in OFFSET_COMMIT_KEYS:
        return None
    key = decoded.key["data"]
    if decoded.value is None:
        return (key["group"], key["topic"], key["partition"]), None
    data = decoded.value["data"]
    epoch = data.get("leaderEpoch", -1)
    return (key["group"], key["topic"], key["partition"]), (data["offset"], epoch if epoch >= 0 else None)


def _apply(offsets: dict[tuple[str, str, int], tuple[int, int | None]],
           commits: list[tuple[tuple[str, str, int], tuple[int, int | None] | None]]) -> None:
    for key, value in commits:
        if value is None:
            offsets.pop(key, None)
        else:
            offsets[key] = value


def consequence(commit: Commit, leader_epochs: list[tuple[int, int]], leader_end: int,
                thrown_away: list[list[int]]) -> str | None:
    """What a group meets when the candidate leader (its cache with the new epoch) serves the partition."""
    c = commit.offset
    if commit.leader_epoch is not None:
        epoch, end = end_offset_for(leader_epochs, commit.leader_epoch, leader_end)
        if end == UNDEFINED_EPOCH_OFFSET or epoch == UNDEFINED_EPOCH:
            return (f"truncation detected: the leader knows no end for epoch {commit.leader_epoch}; "
                    "reset by auto.offset.reset (LogTruncationException with none)")
        if end < c:
            return (f"truncation detected: epoch {commit.leader_epoch} ends at {end} on this leader, below the "
                    f"committed {c}: the consumer moves back to {end} and re-reads other records there "
                    "(LogTruncationException with auto.offset.reset=none)")
        return None
    if c > leader_end:
        return OUT_OF_RANGE
    consumed = c - 1
    if any(first <= consumed <= last for first, last in thrown_away):
        return TRUNCATED
    return None


def _readable_marker(batch: V2Batch, cap: int) -> tuple[int, int] | None:
    """The batch's end-transaction marker, or None where Kafka's reading throws (a control record of another
    type in a transactional control batch): the loading model reports that replica's load failing; the
    comparison treats the batch as no marker rather than stopping."""
    try:
        return end_txn_marker(batch, cap)
    except RecoveryAbort:
        return None
