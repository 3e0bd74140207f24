"""``kseg diff``: every replica loaded, every ordered (leader, follower) truncation, every pair compared.

Per replica :mod:`.replica`; per ordered pair :mod:`.truncation` and the batches
the follower throws away, split at its checkpointed high watermark; per
unordered pair :mod:`.compare`; the groups of :mod:`.consumers`; and the
recommendation: the candidate leader whose choice throws away the fewest
offsets that some follower had acknowledged (below its high watermark), then
the fewest offsets in all, then the longest log.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from itertools import combinations

from kseg.errors import EXIT_OK, EXIT_PROBLEMS, KsegError
from kseg.format.compression import DEFAULT_MAX_DECOMPRESSED
from kseg.ops.diff import state as consumer_state
from kseg.ops.diff.batches import BatchRef, iter_batches, logs_from
from kseg.ops.diff.compare import DIVERGENT, Range, compare
from kseg.ops.diff.consumers import Commit, committed_offsets, consequence
from kseg.ops.diff.replica import Replica, load_replica
from kseg.ops.diff.state import Log, StateDiff, state_diff
from kseg.ops.diff.truncation import LogView, Truncation, leader_view, truncate_follower
from kseg.recovery.loading.model import merge_ranges


class DifferentPartitions(KsegError):
    """Replicas of different partitions cannot be compared."""


@dataclass(slots=True)
class PairTruncation:
    """What ``follower`` throws away when ``leader`` is elected."""

    leader: Replica
    follower: Replica
    truncation: Truncation
    lost_offsets: list[list[int]]
    lost_below_high_watermark: int

    @property
    def lost(self) -> int:
        return count(self.lost_offsets)

    def as_json(self) -> dict[str, object]:
        t = self.truncation
        return {"type": "truncation", "leader": self.leader.path, "follower": self.follower.path,
                "truncate_to": t.truncate_to, "lost_offsets": self.lost_offsets,
                "lost_below_high_watermark": self.lost_below_high_watermark,
                "follower_high_watermark": self.follower.high_watermark, "restarted_at": t.restarted_at,
                "steps": list(t.steps)}


@dataclass(slots=True)
class PairDiff:
    a: Replica
    b: Replica
    ranges: list[Range]
    state: StateDiff | None = None  # what read_committed consumers read, compared where the batches diverge

    @property
    def divergent(self) -> list[Range]:
        return [r for r in self.ranges if r.kind in DIVERGENT]


@dataclass(slots=True)
class Choice:
    """One candidate leader and its cost."""

    leader: Replica
    committed_lost: int  # offsets acknowledged (below a follower's high watermark) that are thrown away
    lost: int  # offsets thrown away on any follower
    groups: list[tuple[Commit, str]] = field(default_factory=list)


@dataclass(slots=True)
class DiffResult:
    replicas: list[Replica]
    truncations: list[PairTruncation]
    pairs: list[PairDiff]
    choices: list[Choice]
    new_epoch: int

    @property
    def recommended(self) -> Choice | None:
        return self.choices[0] if self.choices else None

    def identical(self) -> bool:
        return not any(p.divergent for p in self.pairs) and not any(r.error for r in self.replicas)

    def exit_code(self) -> int:
        """0 when every replica holds the same batches, 1 when they diverge."""
        return EXIT_OK if self.identical() else EXIT_PROBLEMS


def view_of(replica: Replica) -> LogView:
    return LogView(replica.log_start_offset, replica.log_end_offset, replica.high_watermark,
                   replica.first_segment_base, list(replica.epochs))


def thrown_away(follower: Replica, truncation: Truncation) -> list[list[int]]:
    """Offset ranges of the follower's batches the truncation removes (a batch across the cut goes whole)."""
    cut = follower.log_start_offset if truncation.restarted_at is not None else truncation.truncate_to
    refs = iter_batches(logs_from(follower.logs, cut), follower.log_start_offset, follower.log_end_offset,
                        digests=False)
    return merge_ranges([(r.base, r.last) for r in refs if r.last >= cut])


def below(ranges: list[list[int]], mark: int) -> int:
    """How many offsets of ``ranges`` lie below ``mark``."""
    return sum(max(0, min(last, mark - 1) - first + 1) for first, last in ranges)


def count(ranges: list[list[int]]) -> int:
    """How many offsets ``ranges`` hold."""
    return sum(last - first + 1 for first, last in ranges)


def pair_truncation(leader: Replica, follower: Replica, new_epoch: int) -> PairTruncation:
    truncation = truncate_follower(view_of(leader), view_of(follower), new_epoch)
    lost = thrown_away(follower, truncation)
    return PairTruncation(leader, follower, truncation, lost, below(lost, follower.high_watermark))


def choice_of(leader: Replica, truncations: list[PairTruncation], commits: list[Commit], new_epoch: int) -> Choice:
    mine = [t for t in truncations if t.leader is leader]
    committed = merge_ranges([(a, min(b, t.follower.high_watermark - 1)) for t in mine for a, b in t.lost_offsets
                              if a < t.follower.high_watermark])
    every = merge_ranges([(a, b) for t in mine for a, b in t.lost_offsets])
    choice = Choice(leader, count(committed), count(every))
    lead = leader_view(view_of(leader), new_epoch)
    for commit in commits:
        what = consequence(commit, lead.epochs, leader.log_end_offset, every)
        if what is not None:
            choice.groups.append((commit, what))
    return choice


def batches_of(replica: Replica) -> Iterator[BatchRef]:
    return iter_batches(replica.logs, replica.log_start_offset, replica.log_end_offset)


def log_of(replica: Replica) -> Log:
    return Log(replica.logs, replica.log_start_offset, replica.log_end_offset)


def pair_diff(a: Replica, b: Replica, cap: int, key_budget: int | None = None) -> PairDiff:
    """Two replicas range by range; where they diverge, also what consumers read from each."""
    pair = PairDiff(a, b, compare(batches_of(a), batches_of(b), cap))
    if pair.divergent:
        budget = consumer_state.KEY_BUDGET if key_budget is None else key_budget
        pair.state = state_diff(log_of(a), log_of(b), cap, budget)
    return pair


def diff(paths: Sequence[str], *, partition: str | None = None,
         max_batch_bytes: int = DEFAULT_MAX_DECOMPRESSED, key_budget: int | None = None) -> DiffResult:
    """Load, truncate and compare the replicas named by ``paths``; ``key_budget``: keys held per replica
    at once by the read_committed comparison (None: :data:`.state.KEY_BUDGET`)."""
    replicas = [load_replica(p, partition, max_batch_bytes) for p in paths]
    names = {(r.topic, r.partition) for r in replicas}
    if len(names) > 1:
        raise DifferentPartitions("the replicas are of different partitions: "
                                  + ", ".join(f"{t}-{p}" for t, p in sorted(names)))
    live = [r for r in replicas if r.error is None]
    new_epoch = 1 + max([e for r in live for e, _ in r.epochs + r.batch_epochs] or [-1])
    truncations = [pair_truncation(lead, f, new_epoch) for lead in live for f in live if f is not lead]
    pairs = [pair_diff(a, b, max_batch_bytes, key_budget) for a, b in combinations(live, 2)]
    topic, number = replicas[0].topic, replicas[0].partition
    commits = committed_offsets([r.directory.parent for r in replicas], topic, number, max_batch_bytes)
    choices = [choice_of(r, truncations, commits, new_epoch) for r in live]
    choices.sort(key=lambda c: (c.committed_lost, c.lost, -c.leader.log_end_offset, live.index(c.leader)))
    return DiffResult(replicas, truncations, pairs, choices, new_epoch)
