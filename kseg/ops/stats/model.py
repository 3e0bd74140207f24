"""What ``kseg stats`` counts: one :class:`Tally` per partition, added up into topics and log directories.

A tally is plain counters, so the rollups are sums (:meth:`Tally.add`), the distinct
keys a merged HyperLogLog sketch, and a result made in a worker process pickles back
whole.  Timestamps are the batches' ``maxTimestamp`` (the field ``kseg dump`` prints as
``max_timestamp``); -1 (no timestamp) is left out of the oldest and newest.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from kseg.ops.stats.hll import HyperLogLog

#: Kafka 4.3.0's default ``max.message.bytes`` (1 MiB + LOG_OVERHEAD): the largest batch a broker accepts.
DEFAULT_MAX_MESSAGE_BYTES = 1024 * 1024 + 12
#: Width of one time bucket of the records-over-time series.
BUCKET_MS = 3_600_000


@dataclass
class SegmentStats:
    """One segment: its size, extent and the timestamps Kafka's retention judges it by."""

    path: str
    base_offset: int
    log_bytes: int
    batches: int = 0
    records: int = 0
    next_offset: int | None = None  # one past the last offset of its last batch
    max_timestamp: int = -1  # the largest batch maxTimestamp in the file
    largest_timestamp: int = -1  # LogSegment.largestTimestamp() after a clean load (see retention.py)
    largest_timestamp_from: str = "batches"  # timeindex | mtime | batches
    mtime_ms: int = 0
    future_batches: int = 0
    walk_end: str = "end"  # how the walk of the .log ended (kseg.format.walk reasons)


@dataclass
class Tally:
    """The counters of a partition, a topic or a log directory."""

    bytes: int = 0  # every file of the partition directories
    log_bytes: int = 0  # the .log files only
    tail_bytes: int = 0  # bytes of the .log files after their last whole entry (a torn or zeroed tail)
    segments: int = 0
    batches: int = 0
    records: int = 0
    codecs: Counter[str] = field(default_factory=Counter)  # codec -> batches
    codec_bytes: Counter[str] = field(default_factory=Counter)  # codec -> bytes of those batches
    magics: Counter[str] = field(default_factory=Counter)  # magic -> batches
    timestamp_types: Counter[str] = field(default_factory=Counter)  # CreateTime / LogAppendTime / NoTimestampType
    producers: set[int] = field(default_factory=set)  # producer ids >= 0
    #: producer id -> [batches, records, first maxTimestamp, last maxTimestamp]: each producer's activity
    activity: dict[int, list[int]] = field(default_factory=dict)
    transactional_producers: set[int] = field(default_factory=set)
    idempotent_batches: int = 0  # batches with a producer id
    transactional_batches: int = 0
    control_batches: int = 0
    commits: int = 0
    aborts: int = 0
    open_transactions: int = 0  # producers whose last transactional batch has no marker after it
    largest_batch: int = 0
    over_max_message_bytes: int = 0
    oldest_timestamp: int | None = None
    newest_timestamp: int | None = None
    future_batches: int = 0
    timeline: Counter[int] = field(default_factory=Counter)  # bucket start ms -> records
    timeline_bytes: Counter[int] = field(default_factory=Counter)  # bucket start ms -> bytes
    # record level (``--records``); a sample of the batches with ``--sample``
    scanned_batches: int = 0
    scanned_records: int = 0
    tombstones: int = 0
    null_keys: int = 0
    largest_record: int = 0
    header_keys: Counter[str] = field(default_factory=Counter)
    compressed_bytes: int = 0  # scanned compressed batches: bytes on disk
    uncompressed_bytes: int = 0  # the same batches: header + decompressed records
    keys: HyperLogLog | None = None

    def add(self, other: Tally) -> None:
        """Add ``other`` into this tally (a rollup)."""
        for name in ("bytes", "log_bytes", "tail_bytes", "segments", "batches", "records", "idempotent_batches",
                     "transactional_batches", "control_batches", "commits", "aborts", "open_transactions",
                     "over_max_message_bytes", "future_batches", "scanned_batches", "scanned_records",
                     "tombstones", "null_keys", "compressed_bytes", "uncompressed_bytes"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        for name in ("codecs", "codec_bytes", "magics", "timestamp_types", "timeline", "timeline_bytes",
                     "header_keys"):
            getattr(self, name).update(getattr(other, name))
        self.producers |= other.producers
        for pid, (batches, records, first, last) in other.activity.items():
            mine = self.activity.setdefault(pid, [0, 0, first, last])
            mine[0] += batches
            mine[1] += records
            mine[2], mine[3] = min(mine[2], first), max(mine[3], last)
        self.transactional_producers |= other.transactional_producers
        self.largest_batch = max(self.largest_batch, other.largest_batch)
        self.largest_record = max(self.largest_record, other.largest_record)
        self.oldest_timestamp = _pick(min, self.oldest_timestamp, other.oldest_timestamp)
        self.newest_timestamp = _pick(max, self.newest_timestamp, other.newest_timestamp)
        if other.keys is not None:
            if self.keys is None:
                self.keys = HyperLogLog(bytes(other.keys.registers))
            else:
                self.keys.merge(other.keys)

    def see_producer(self, producer_id: int, records: int, timestamp: int) -> None:
        """One batch of ``producer_id`` into its activity (batches, records, first and last timestamp)."""
        entry = self.activity.get(producer_id)
        if entry is None:
            self.activity[producer_id] = [1, records, timestamp, timestamp]
            return
        entry[0] += 1
        entry[1] += records
        entry[2] = min(entry[2], timestamp)
        entry[3] = max(entry[3], timestamp)

    def see_timestamp(self, timestamp: int) -> None:
        """Widen the oldest/newest range by one batch's maxTimestamp (ignored when negative)."""
        if timestamp < 0:
            return
        if self.oldest_timestamp is None or timestamp < self.oldest_timestamp:
            self.oldest_timestamp = timestamp
        if self.newest_timestamp is None or timestamp > self.newest_timestamp:
            self.newest_timestamp = timestamp


def _pick(choose, a: int | None, b: int | None) -> int | None:
    if a is None:
        return b
    if b is None:
        return a
    return int(choose(a, b))


@dataclass
class PartitionStats:
    """A partition directory: its tally, its segments and where its log starts and ends."""

    path: str
    log_dir: str
    topic: str
    partition: int
    tally: Tally
    segments: list[SegmentStats]
    log_start_offset: int  # max(log-start-offset-checkpoint, first segment's base), as LogLoader sets it
    log_end_offset: int
    whole: bool = True  # False: only the segments named on the command line (no retention forecast)


@dataclass
class Rollup:
    """A topic or a log directory: the partitions' tallies added up, and how uneven they are."""

    kind: str  # "topic" | "log_dir"
    name: str
    partitions: int
    tally: Tally
    skew: float  # largest partition bytes / mean partition bytes (1.0 = even)


@dataclass
class StatsResult:
    """Everything one run found; the renderers turn it into text, tables, JSON Lines or HTML."""

    now_ms: int
    max_message_bytes: int
    records_level: bool
    sample: int
    partitions: list[PartitionStats]
    topics: list[Rollup]
    log_dirs: list[Rollup]
    skews: dict[str, float]  # partition path -> its bytes / its topic's mean
    forecasts: dict[str, object] = field(default_factory=dict)  # partition path -> retention.Forecast
    lags: list[Any] = field(default_factory=list)  # consumer groups' offline lag (groups.GroupLag)
