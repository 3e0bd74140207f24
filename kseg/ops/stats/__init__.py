"""``kseg stats``: what is on a broker's disks -- sizes, skew, formats, producers, time -- and what retention does next.

The package, from the bottom up (each module imports only those above it in this list):

* ``hll`` -- a HyperLogLog sketch (distinct keys in 4 KiB);
* ``model`` -- the counters (:class:`Tally`), segments, partitions, rollups and the result;
* ``scan`` -- one partition directory walked once (batch headers; records of a sample);
* ``groups`` -- consumer groups' committed offsets and their offline lag;
* ``retention`` -- topic configs and Kafka 4.3.0's next ``deleteOldSegments`` pass (the forecast);
* ``run`` -- the orchestration: partitions found, scanned (in a pool), rolled up, forecast.

Every file is opened read-only and nothing is created.  Nothing here prints or exits.
The contract is docs/stats.md.
"""

from __future__ import annotations

from kseg.ops.stats.model import PartitionStats, Rollup, SegmentStats, StatsResult, Tally
from kseg.ops.stats.retention import Forecast, SegmentFate, TopicConfig, forecast, topic_configs
from kseg.ops.stats.run import NoPartitions, StatsOptions, collect_stats

__all__ = [
    "Forecast",
    "NoPartitions",
    "PartitionStats",
    "Rollup",
    "SegmentFate",
    "SegmentStats",
    "StatsOptions",
    "StatsResult",
    "Tally",
    "TopicConfig",
    "collect_stats",
    "forecast",
    "topic_configs",
]
