"""One model of Kafka 4.3.0's log loading: what the broker does to each log directory at its next start.

Read-only: the directories are listed and read through :mod:`kseg.segment`,
and every change Kafka would make is replayed on an in-memory picture
(:mod:`.state`) and returned as :class:`~.model.Action` s naming the rule of
``docs/kafka-log-loading.md`` and the Kafka method.

* :func:`predict_broker` / :func:`predict_log_dir` -- ``LogManager.loadLogs`` (:mod:`.logdir`);
* :func:`predict_partition` -- ``UnifiedLog.create`` / ``LogLoader.load`` (:mod:`.partition`),
  with :mod:`.startup` (leftovers, swaps, ``loadSegmentFiles``), :mod:`.segrecovery`
  (``recoverSegment``), :mod:`.split` (the overflow split), :mod:`.segments` (``readNextOffset``,
  ``recover``, replay), :mod:`.snapshots` (producer snapshots, expiry, their bytes, with
  :mod:`kseg.recovery.producer_map`), :mod:`.epochs` (leader-epoch cache), :mod:`.topicid`
  (``partition.metadata``), :mod:`.outcome` (the close, the files and the verdict).
"""

from kseg.recovery.loading.logdir import predict_broker, predict_log_dir
from kseg.recovery.loading.model import (
    BROKER_STOPS,
    CLEAN,
    DIR_OFFLINE,
    FAILS,
    REBUILT,
    TRUNCATED,
    Action,
    BrokerPrediction,
    CheckpointRead,
    LoadError,
    LogDirPrediction,
    PartitionPrediction,
)
from kseg.recovery.loading.partition import LoadInputs, predict_partition

__all__ = [
    "BROKER_STOPS",
    "CLEAN",
    "DIR_OFFLINE",
    "FAILS",
    "REBUILT",
    "TRUNCATED",
    "Action",
    "BrokerPrediction",
    "CheckpointRead",
    "LoadError",
    "LoadInputs",
    "LogDirPrediction",
    "PartitionPrediction",
    "predict_broker",
    "predict_log_dir",
    "predict_partition",
]
