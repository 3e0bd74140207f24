"""The next retention pass of Kafka 4.3.0 over a partition: which segments go, which stay and why.

The rules are ``UnifiedLog.deleteOldSegments`` (storage module, Kafka 4.3.0), on a broker without
tiered storage:

* ``cleanup.policy`` holds ``delete``: three passes, in this order -- log start
  (``deleteLogStartOffsetBreachedSegments``), size (``deleteRetentionSizeBreachedSegments``) and time
  (``deleteRetentionMsBreachedSegments``); otherwise (``compact`` or empty) only the log-start pass.
* Every pass deletes a *prefix* (``deletableSegments``): it walks from the oldest segment and stops
  at the first one that is not deletable, so one held segment pins every segment after it.
* A segment is deletable only if the high watermark has reached its upper bound (the next segment's
  base, or the log end for the last one), the last segment is not empty, and the pass's predicate holds:
  log start -- the next segment's base is at or below the log start offset; size -- the log is at least
  ``retention.bytes`` and deleting this segment keeps it at or above; time -- ``now - largestTimestamp
  > retention.ms`` (a ``largestTimestamp`` in the future is never old enough).
* Deleting every segment first rolls a new empty one at the log end, and the log start offset moves
  to the base of the segment after the last one deleted.

``largestTimestamp`` is :func:`kseg.ops.stats.scan.kafka_largest_timestamp` (or, for the segments an
unclean start recovers, :func:`kseg.ops.stats.scan.recovered_largest_timestamp`).  The high watermark is
the log end unless given: a single-replica or in-sync leader reaches it within one fetch.
tests/stats/test_retention_oracle.py runs Kafka's own ``deleteOldSegments`` on copies and compares.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from kseg.ops.stats.model import PartitionStats, SegmentStats

#: Kafka 4.3.0's defaults (LogConfig / ServerLogConfigs): 7 days, unlimited, delete.
DEFAULT_RETENTION_MS = 7 * 24 * 3600 * 1000
DEFAULT_RETENTION_BYTES = -1
DEFAULT_CLEANUP_POLICY = "delete"


@dataclass(frozen=True)
class TopicConfig:
    """The three topic configs retention reads (``retention.ms``, ``retention.bytes``, ``cleanup.policy``)."""

    retention_ms: int = DEFAULT_RETENTION_MS
    retention_bytes: int = DEFAULT_RETENTION_BYTES
    cleanup_policy: tuple[str, ...] = (DEFAULT_CLEANUP_POLICY,)

    @property
    def delete(self) -> bool:
        return "delete" in self.cleanup_policy


CONFIG_KEYS = ("retention.ms", "retention.bytes", "cleanup.policy")
#: The configs a broker creates its internal topics with (GroupCoordinatorConfig / TransactionLogConfig):
#: both compacted, so only the log start offset deletes their segments.
INTERNAL_TOPICS = {
    "__consumer_offsets": {"cleanup.policy": "compact"},
    "__transaction_state": {"cleanup.policy": "compact"},
}


def parse_policy(text: str) -> tuple[str, ...]:
    """``cleanup.policy`` as Kafka lists it: comma-separated, trimmed, lower case; empty allowed."""
    return tuple(sorted({p.strip().lower() for p in text.split(",") if p.strip()}))


def _apply(config: TopicConfig, values: Mapping[str, str]) -> TopicConfig:
    ms, size, policy = config.retention_ms, config.retention_bytes, config.cleanup_policy
    for key, value in values.items():
        if key == "retention.ms":
            ms = int(value)
        elif key == "retention.bytes":
            size = int(value)
        elif key == "cleanup.policy":
            policy = parse_policy(value)
        else:
            raise ValueError(f"unknown topic config {key!r} (known: {', '.join(CONFIG_KEYS)})")
    return TopicConfig(ms, size, policy)


def topic_configs(
    topics: Sequence[str],
    defaults: Mapping[str, str] | None = None,
    per_topic: Mapping[str, Mapping[str, str]] | None = None,
    image: Mapping[str, Mapping[str, str]] | None = None,
) -> dict[str, TopicConfig]:
    """The retention configs of ``topics``: Kafka's defaults, then ``defaults`` (the broker's or the
    command line's ``--retention-ms`` ...), then the configs an internal topic is created with
    (:data:`INTERNAL_TOPICS`), then the cluster's per-topic configs (``image``: topic ->
    {key: value}, as the metadata log's ConfigRecords leave them), then ``per_topic`` (``--topic-config``),
    each overriding the one before -- the order in which a broker resolves a topic's config.
    """
    base = _apply(TopicConfig(), defaults or {})
    out = {}
    for topic in topics:
        config = _apply(_apply(base, INTERNAL_TOPICS.get(topic, {})), (image or {}).get(topic, {}))
        out[topic] = _apply(config, (per_topic or {}).get(topic, {}))
    return out


@dataclass
class SegmentFate:
    """One segment in the forecast: deleted by which pass, or kept and why."""

    base_offset: int
    bytes: int
    largest_timestamp: int
    largest_timestamp_from: str
    deleted_by: str | None = None  # "log_start" | "size" | "time"
    held: str | None = None  # why it stays (None when deleted)
    expires_at: int | None = None  # when time retention would take it (largestTimestamp + retention.ms + 1)


@dataclass
class Forecast:
    """The next ``deleteOldSegments`` of one partition."""

    config: TopicConfig
    now_ms: int
    high_watermark: int
    log_start_offset: int  # before the pass
    new_log_start_offset: int
    segments: list[SegmentFate] = field(default_factory=list)
    rolled: bool = False  # every segment went: Kafka rolls a new empty one at the log end first

    @property
    def deleted(self) -> list[SegmentFate]:
        return [s for s in self.segments if s.deleted_by is not None]

    @property
    def bytes_freed(self) -> int:
        return sum(s.bytes for s in self.deleted)


@dataclass
class _Seg:
    base: int
    size: int
    largest: int


def forecast(part: PartitionStats, config: TopicConfig, now_ms: int, high_watermark: int | None = None) -> Forecast:
    """What Kafka 4.3.0's next retention pass does to ``part`` with ``config`` at ``now_ms``."""
    leo = part.log_end_offset
    hw = leo if high_watermark is None else high_watermark
    live = [_Seg(s.base_offset, s.log_bytes, s.largest_timestamp) for s in part.segments]
    fates = {s.base_offset: _fate(s, config) for s in part.segments}
    state = {"lso": part.log_start_offset, "rolled": False}

    def run(name: str, predicate) -> None:
        gone = _deletable(live, leo, hw, predicate)
        if not gone:
            return
        if len(gone) == len(live):
            live.append(_Seg(leo, 0, -1))  # roll(): the new active segment, empty, at the log end
            state["rolled"] = True
            if gone[-1].base == leo:
                gone.pop()
        for seg in gone:
            fates[seg.base].deleted_by = name
            fates[seg.base].held = None
            live.remove(seg)
        if gone:
            state["lso"] = max(state["lso"], live[0].base)

    run("log_start", lambda seg, nxt: nxt is not None and nxt.base <= state["lso"])
    if config.delete:
        size = sum(s.size for s in live)
        if config.retention_bytes >= 0 and size >= config.retention_bytes:
            diff = [size - config.retention_bytes]

            def by_size(seg: _Seg, nxt: _Seg | None) -> bool:
                if diff[0] - seg.size >= 0:
                    diff[0] -= seg.size
                    return True
                return False

            run("size", by_size)
        if config.retention_ms >= 0:
            run("time", lambda seg, nxt: now_ms - seg.largest > config.retention_ms)
    result = Forecast(config, now_ms, hw, part.log_start_offset, int(state["lso"]), rolled=bool(state["rolled"]))
    result.segments = [fates[s.base_offset] for s in part.segments]
    _explain(result, part.segments, leo, hw, now_ms)
    return result


def _deletable(live: list[_Seg], leo: int, hw: int, predicate) -> list[_Seg]:
    """``UnifiedLog.deletableSegments``: the prefix of segments the predicate takes."""
    out = []
    for i, seg in enumerate(live):
        nxt = live[i + 1] if i + 1 < len(live) else None
        last_and_empty = nxt is None and seg.size == 0
        upper = nxt.base if nxt is not None else leo
        if hw >= upper and predicate(seg, nxt) and not last_and_empty:
            out.append(seg)
        else:
            break
    return out


def _fate(seg: SegmentStats, config: TopicConfig) -> SegmentFate:
    expires = seg.largest_timestamp + config.retention_ms + 1 if config.delete and config.retention_ms >= 0 else None
    return SegmentFate(seg.base_offset, seg.log_bytes, seg.largest_timestamp, seg.largest_timestamp_from,
                       expires_at=expires)


def _own_reason(fate: SegmentFate, config: TopicConfig, now_ms: int, upper: int, hw: int, last: bool) -> str:
    """Why this segment, on its own, is not deleted by the next pass."""
    if last and fate.bytes == 0:
        return "empty active segment: never deleted"
    if hw < upper:
        return f"holds offsets at or above the high watermark {hw}"
    if not config.delete:
        policy = ",".join(config.cleanup_policy) or "(empty)"
        return f"cleanup.policy={policy}: only offsets below the log start offset are deleted"
    if config.retention_ms < 0:
        return "retention.ms=-1 and retention.bytes not exceeded"
    if fate.largest_timestamp > now_ms:
        return f"future timestamp {fate.largest_timestamp}: not eligible until {fate.expires_at}"
    return f"within retention.ms: eligible from {fate.expires_at}"


def _explain(result: Forecast, segments: Sequence[SegmentStats], leo: int, hw: int, now_ms: int) -> None:
    """Fill ``held`` for every kept segment: its own reason, or the segment before it that pins it."""
    blocker: SegmentFate | None = None
    for i, fate in enumerate(result.segments):
        if fate.deleted_by is not None:
            continue
        upper = segments[i + 1].base_offset if i + 1 < len(segments) else leo
        own = _own_reason(fate, result.config, now_ms, upper, hw, i + 1 == len(segments))
        if blocker is None:
            blocker = fate
            fate.held = own
        elif _would_expire(fate, result.config, now_ms) and hw >= upper:
            why = "future timestamp" if blocker.held and "future" in blocker.held else "a held segment"
            fate.held = f"pinned by segment {blocker.base_offset} ({why}): retention deletes only a prefix"
        else:
            fate.held = own


def _would_expire(fate: SegmentFate, config: TopicConfig, now_ms: int) -> bool:
    return config.delete and config.retention_ms >= 0 and now_ms - fate.largest_timestamp > config.retention_ms
