"""Kafka 4.3's follower truncation for one (leader, follower) pair of replicas, replayed offline.

The rule, with the Kafka methods it comes from (docs/diff.md, "The truncation rule"):

1. The new leader ``L`` appends its new leader epoch at its log end offset
   (``Partition.makeLeader`` -> ``UnifiedLog.assignEpochStartOffset``).  The
   controller's epoch is above every epoch any replica holds.
2. A follower ``F`` with a leader-epoch cache starts FETCHING at its log end
   offset with ``lastFetchedEpoch`` = its latest epoch
   (``ReplicaManager.initialFetchOffset``, ``AbstractFetcherThread.partitionFetchState``);
   one without starts TRUNCATING and truncates to its high watermark
   (``truncateToHighWatermark``).
3. Each fetch: ``L`` looks up ``lastFetchedEpoch`` in its cache
   (``LeaderEpochFileCache.endOffsetFor``); an undefined answer, or a fetch
   offset below ``L``'s log start, is ``OffsetOutOfRange``
   (``Partition.readFromLocalLog``); an answered epoch below the asked one or an
   end offset below the fetch offset is a diverging epoch.
4. On a diverging epoch ``F`` looks the answered epoch up in its own cache
   (``getOffsetTruncationState``): an epoch it does not know -> truncate to the
   end of its largest earlier epoch and fetch again (one epoch back); the same
   epoch -> truncate to the smaller end offset; no earlier epoch -> the leader's
   end offset.  Always capped at ``F``'s log end offset.
5. ``OffsetOutOfRange`` -> ``fetchOffsetAndTruncate``: ``L``'s log end below
   ``F``'s -> truncate to it; ``L``'s log start above ``F``'s log end -> ``F``
   starts over at ``L``'s log start (``truncateFullyAndStartAt``).
6. ``UnifiedLog.truncateTo``: a target at or beyond the log end changes only
   the epoch cache (entries starting at or after the log end go); below the
   first segment the log starts over; else segments are cut and cache entries
   starting at or after the target go (``truncateFromEndAsyncFlush``).

The loop ends when a fetch neither diverges nor is out of range.
"""

from __future__ import annotations

from dataclasses import dataclass, field

UNDEFINED_EPOCH = -1
UNDEFINED_EPOCH_OFFSET = -1
#: A bound on fetch rounds: each round removes at least one cache entry or ends, so this is never reached.
MAX_ROUNDS = 10_000


def end_offset_for(entries: list[tuple[int, int]], requested: int, log_end: int) -> tuple[int, int]:
    """``LeaderEpochFileCache.endOffsetFor(requestedEpoch, logEndOffset)``: (epoch, end offset)."""
    if requested == UNDEFINED_EPOCH:
        return UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET
    if entries and entries[-1][0] == requested:
        return requested, log_end
    higher = next((e for e in entries if e[0] > requested), None)
    if higher is None:
        return UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET
    floor = [e for e in entries if e[0] <= requested]
    if not floor:
        return requested, higher[1]
    return floor[-1][0], higher[1]


@dataclass(slots=True)
class LogView:
    """The part of a replica truncation reads and changes: a copy, never the replica itself."""

    log_start: int
    log_end: int
    high_watermark: int
    first_segment_base: int
    epochs: list[tuple[int, int]] = field(default_factory=list)

    def truncate_to(self, target: int) -> None:
        """``UnifiedLog.truncateTo(targetOffset)`` on this picture of the log."""
        if target >= self.log_end:
            self.epochs = [e for e in self.epochs if e[1] < self.log_end]
        elif self.first_segment_base > target:
            self.start_at(target)
        else:
            self.log_end = target
            self.epochs = [e for e in self.epochs if e[1] < target]
            self.log_start = min(target, self.log_start)
            self.high_watermark = min(self.high_watermark, target)

    def start_at(self, offset: int) -> None:
        """``UnifiedLog.truncateFullyAndStartAt(newOffset)``: an empty log starting at ``offset``."""
        self.log_start = self.log_end = self.high_watermark = self.first_segment_base = offset
        self.epochs = []


@dataclass(slots=True)
class Truncation:
    """Where the follower's log ends once it truncated, and the steps that took it there."""

    truncate_to: int  # the lowest log end offset the follower's log had during truncation
    restarted_at: int | None  # truncateFullyAndStartAt: every batch goes, the log starts here
    steps: list[str]


def leader_view(leader: LogView, new_epoch: int) -> LogView:
    """The leader after ``makeLeader``: its cache with ``new_epoch`` starting at its log end offset."""
    epochs = [e for e in leader.epochs if e[0] < new_epoch and e[1] < leader.log_end] + [(new_epoch, leader.log_end)]
    return LogView(leader.log_start, leader.log_end, leader.high_watermark, leader.first_segment_base, epochs)


def truncate_follower(leader: LogView, follower: LogView, new_epoch: int) -> Truncation:
    """The follower fetcher's truncation of ``follower`` against ``leader`` (see the module docstring)."""
    lead = leader_view(leader, new_epoch)
    f = LogView(follower.log_start, follower.log_end, follower.high_watermark, follower.first_segment_base,
                list(follower.epochs))
    low, steps = f.log_end, []
    restarted: int | None = None
    if not f.epochs:
        steps.append(f"no leader epochs: truncateToHighWatermark({f.high_watermark})")
        f.truncate_to(f.high_watermark)
        low = min(low, f.log_end)
    for _ in range(MAX_ROUNDS):
        before = (f.log_end, len(f.epochs))
        step = _fetch_round(lead, f)
        if step is None:
            break
        steps.append(step[0])
        if step[1] is not None:
            restarted = step[1]
        low = min(low, f.log_end)
        if restarted is not None or (f.log_end, len(f.epochs)) == before:
            break  # a round that changes nothing would repeat forever
    return Truncation(low, restarted, steps)


def _fetch_round(lead: LogView, f: LogView) -> tuple[str, int | None] | None:
    """One fetch from the follower's log end: None when it neither diverges nor is out of range."""
    fetch_offset = f.log_end
    if not f.epochs:
        if lead.log_start <= fetch_offset <= lead.log_end:
            return None
        return _out_of_range(lead, f, f"fetch at {fetch_offset} without an epoch")
    asked = f.epochs[-1][0]
    epoch, end = end_offset_for(lead.epochs, asked, lead.log_end)
    if end == UNDEFINED_EPOCH_OFFSET or epoch == UNDEFINED_EPOCH or fetch_offset < lead.log_start:
        return _out_of_range(lead, f, f"fetch at {fetch_offset}, lastFetchedEpoch {asked}")
    if epoch >= asked and end >= fetch_offset:
        return None
    mine_epoch, mine_end = end_offset_for(f.epochs, epoch, f.log_end)
    if mine_end == UNDEFINED_EPOCH_OFFSET:
        target, why = min(end, f.log_end), "no earlier epoch here: the leader's end offset"
    elif mine_epoch != epoch:
        target, why = min(mine_end, f.log_end), f"epoch {epoch} unknown here: end of epoch {mine_epoch}, one epoch back"
    else:
        target, why = min(mine_end, end, f.log_end), f"both know epoch {epoch}: the smaller end offset"
    f.truncate_to(target)
    return (f"lastFetchedEpoch {asked}: leader answers epoch {epoch} ends at {end}; {why}: truncateTo({target})",
            None)


def _out_of_range(lead: LogView, f: LogView, what: str) -> tuple[str, int | None]:
    """``fetchOffsetAndTruncate`` after ``OffsetOutOfRange``."""
    if lead.log_end < f.log_end:
        f.truncate_to(lead.log_end)
        return f"{what}: out of range; truncateTo(leader's log end {lead.log_end})", None
    if lead.log_start > f.log_end:
        f.start_at(lead.log_start)
        return f"{what}: out of range; truncateFullyAndStartAt(leader's log start {lead.log_start})", lead.log_start
    return f"{what}: out of range; fetch again from {f.log_end}", None
