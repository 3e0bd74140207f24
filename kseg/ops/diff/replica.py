"""One replica of a partition as Kafka 4.3's next start loads it: offsets, high watermark, epoch lineage.

The load is the loading model's (:func:`kseg.recovery.loading.predict_partition`),
with the checkpoints of the log directory above the partition directory read
as ``LogManager`` reads them.  The high watermark is the one ``Partition``
restores from ``replication-offset-checkpoint`` (absent: 0), clamped into
``[log start, log end]`` as ``UnifiedLog.updateHighWatermark`` clamps it.

Two epoch lineages are kept: the leader-epoch cache the load leaves (what
the fetcher and ``OffsetsForLeaderEpoch`` use) and the one the batches'
``partitionLeaderEpoch`` fields carry.  Where they disagree the replica says
so; truncation follows the cache, as Kafka does.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from kseg.errors import KsegError
from kseg.format.compression import DEFAULT_MAX_DECOMPRESSED
from kseg.ops.diff.batches import epochs_of_batches, iter_batches
from kseg.ops.discover import parse_partition_dir, segment_logs
from kseg.recovery.loading import LoadInputs, PartitionPrediction, predict_partition
from kseg.recovery.loading.logdir import (
    CLEAN_SHUTDOWN,
    HIGH_WATERMARK,
    LOG_START,
    RECOVERY_POINT,
    read_offsets,
)
from kseg.segment import base_offset_from_name


class NotAPartition(KsegError):
    """A REPLICA that names no partition directory."""


@dataclass(slots=True)
class Replica:
    """What the comparison needs of one replica; ``path`` is spelt as given on the command line."""

    path: str
    directory: Path
    topic: str
    partition: int
    log_start_offset: int = 0
    log_end_offset: int = 0
    high_watermark: int = 0
    high_watermark_checkpoint: int | None = None  # the raw entry; None when absent
    first_segment_base: int = 0
    epochs: list[tuple[int, int]] = field(default_factory=list)  # the leader-epoch cache after the load
    batch_epochs: list[tuple[int, int]] = field(default_factory=list)  # the lineage the batches carry
    error: str | None = None  # the load throws: Kafka would not serve this replica

    @property
    def logs(self) -> list[Path]:
        return segment_logs(self.directory)

    @property
    def epoch_disagreements(self) -> list[str]:
        """Where ``leader-epoch-checkpoint`` (as loaded) and the batches' epochs disagree, one line each."""
        return epoch_disagreements(self.epochs, self.batch_epochs, self.log_start_offset)

    def as_json(self) -> dict[str, object]:
        """The ``{"type": "replica"}`` line of ``kseg diff --format json``."""
        return {
            "type": "replica", "path": self.path, "topic": self.topic, "partition": self.partition,
            "log_start_offset": self.log_start_offset, "log_end_offset": self.log_end_offset,
            "high_watermark": self.high_watermark, "epochs": [list(e) for e in self.epochs],
            "batch_epochs": [list(e) for e in self.batch_epochs],
            "epoch_disagreements": self.epoch_disagreements, "error": self.error,
        }


def epoch_disagreements(cache: list[tuple[int, int]], batches: list[tuple[int, int]], log_start: int) -> list[str]:
    """Each epoch whose start differs, or that only one lineage holds.

    The cache's first entry is moved up to the log start by the load (R7.5), so
    a batch lineage's first start below the log start counts as the log start.
    """
    in_cache = dict(cache)
    in_batches = {epoch: max(start, log_start) for epoch, start in batches}
    found = []
    for epoch in sorted(set(in_cache) | set(in_batches)):
        a, b = in_cache.get(epoch), in_batches.get(epoch)
        if a is None:
            found.append(f"epoch {epoch} starts at offset {b} in the batches but is not in leader-epoch-checkpoint")
        elif b is None:
            found.append(f"epoch {epoch} starts at offset {a} in leader-epoch-checkpoint but no batch carries it")
        elif a != b:
            found.append(f"epoch {epoch} starts at offset {a} in leader-epoch-checkpoint, at {b} in the batches")
    return found


def partition_directory(path: Path, partition: str | None) -> Path:
    """REPLICA is a partition directory, or a log directory with ``--partition T-P``."""
    directory = path / partition if partition else path
    if parse_partition_dir(directory) is None or not directory.is_dir():
        raise NotAPartition("not a partition directory (topic-partition); give a log directory with --partition T-P",
                            path=str(directory))
    return directory


def load_replica(given: str, partition: str | None, max_batch_bytes: int = DEFAULT_MAX_DECOMPRESSED) -> Replica:
    """The replica at ``given`` as Kafka's next start loads it."""
    directory = partition_directory(Path(given), partition)
    name = parse_partition_dir(directory)
    assert name is not None
    pred = _predict(directory, name.topic, name.partition, max_batch_bytes)
    replica = Replica(given, directory, name.topic, name.partition)
    replica.high_watermark_checkpoint = pred.high_watermark
    if pred.error is not None or pred.log_end_offset is None or pred.log_start_offset is None:
        replica.error = "the load fails" if pred.error is None else f"{pred.error.exception}: {pred.error.message}"
        return replica
    start, end = pred.log_start_offset, pred.log_end_offset
    replica.log_start_offset, replica.log_end_offset = start, end
    replica.high_watermark = min(max(pred.high_watermark or 0, start), end)
    replica.epochs = [(e, s) for e, s in pred.leader_epochs or []]
    logs = replica.logs
    replica.first_segment_base = _first_base(logs, start)
    replica.batch_epochs = epochs_of_batches(iter_batches(logs, start, end, digests=False))
    return replica


def _first_base(logs: list[Path], log_start: int) -> int:
    """The base offset of the first segment (``UnifiedLog.truncateTo`` restarts the log below it)."""
    bases = [b for b in (base_offset_from_name(p) for p in logs) if b is not None]
    return bases[0] if bases else log_start


def _predict(directory: Path, topic: str, number: int, cap: int) -> PartitionPrediction:
    """The loading model on one partition directory, with its log directory's checkpoints."""
    parent, key = directory.parent, (topic, number)
    inputs = LoadInputs((parent / CLEAN_SHUTDOWN).exists(),
                        read_offsets(parent, RECOVERY_POINT).entries.get(key, 0),
                        read_offsets(parent, LOG_START).entries.get(key, 0),
                        read_offsets(parent, HIGH_WATERMARK).entries.get(key), max_batch_bytes=cap)
    return predict_partition(directory, topic, number, inputs)
