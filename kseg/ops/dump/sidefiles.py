"""``kseg dump`` for the small files beside the segments, which kafka-dump-log ignores or crashes on.

A partition directory also holds ``leader-epoch-checkpoint`` and
``partition.metadata`` (and, for KRaft's ``__cluster_metadata-0``,
``quorum-state``); a log directory holds ``recovery-point-offset-checkpoint``,
``replication-offset-checkpoint`` (high watermarks),
``log-start-offset-checkpoint``, ``cleaner-offset-checkpoint``,
``meta.properties`` and, after a clean shutdown, ``.kafka_cleanshutdown``.
Kafka's dump tool dispatches on the text after the last ``.`` of a name, so it
crashes on names without a dot and ignores the others; kseg dumps them all,
with its own text (kseg.render.dump) and JSON.

Each file is read the way the broker reads it (:mod:`kseg.format.checkpoints`):
what could be read is shown, then the first thing the broker's reader would
throw on is reported as a :class:`~kseg.ops.dump.events.Problem` with its byte
position.  The files are small; anything over :data:`MAX_SIDE_FILE_BYTES` is
refused rather than read.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from kseg.errors import KsegError
from kseg.format.checkpoints import (
    parse_partition_metadata,
    read_clean_shutdown,
    read_java_properties,
    read_quorum_state,
    scan_checkpoint,
)
from kseg.ops.dump.events import Problem
from kseg.ops.dump.side_events import (
    CheckpointStart,
    CleanShutdownEvent,
    LeaderEpochEntry,
    MetaPropertiesEvent,
    OffsetCheckpointEntry,
    PartitionMetadataEvent,
    QuorumStateEvent,
    SideEvent,
)
from kseg.ops.dump.targets import CLEAN_SHUTDOWN_FILE, DumpTarget
from kseg.segment import read_small_file

MAX_SIDE_FILE_BYTES = 16 << 20  # a checkpoint line is ~40 bytes: room for 400,000 partitions

LEADER_EPOCH_CHECKPOINT = "leader-epoch-checkpoint"
OFFSET_CHECKPOINTS = (
    "recovery-point-offset-checkpoint",
    "replication-offset-checkpoint",
    "log-start-offset-checkpoint",
    "cleaner-offset-checkpoint",
)
PARTITION_METADATA = "partition.metadata"
META_PROPERTIES = "meta.properties"
QUORUM_STATE = "quorum-state"
CLEAN_SHUTDOWN = CLEAN_SHUTDOWN_FILE


def dump_side_file(target: DumpTarget, kind: str) -> Iterator[SideEvent | Problem]:
    """The events of one side file (``kind`` is its name, one of ``SIDE_FILE_NAMES``)."""
    if not target.path.is_file():  # a FIFO or device named like a side file would block or mislead
        yield Problem(target.display, None, "not a regular file; not read")
        return
    size = target.path.stat().st_size
    if size > MAX_SIDE_FILE_BYTES:
        yield Problem(target.display, None, f"{size} bytes: far larger than any {kind} Kafka writes "
                                            f"(kseg reads at most {MAX_SIDE_FILE_BYTES}); not read")
        return
    data = read_small_file(target.path)
    if kind == LEADER_EPOCH_CHECKPOINT or kind in OFFSET_CHECKPOINTS:
        yield from _checkpoint(target, kind, data)
        return
    try:
        yield _READERS[kind](target.display, data)
    except KsegError as err:
        yield Problem(target.display, err.offset, err.message)


def _checkpoint(target: DumpTarget, kind: str, data: bytes) -> Iterator[SideEvent | Problem]:
    """Header, every entry Kafka's reader got to, then what stopped it."""
    scan = scan_checkpoint(data, fields=2 if kind == LEADER_EPOCH_CHECKPOINT else 3)
    if scan.version is not None or not data:
        yield CheckpointStart(target.display, kind, scan.version, scan.declared, not data)
    for entry in scan.entries:
        if kind == LEADER_EPOCH_CHECKPOINT:
            epoch, start_offset = entry  # ints, as the two-field formatter reads them
            yield LeaderEpochEntry(target.display, int(epoch), int(start_offset))
        else:
            topic, partition, offset = entry  # topic, then two ints
            yield OffsetCheckpointEntry(target.display, str(topic), int(partition), int(offset))
    if scan.problem is not None:
        yield Problem(target.display, scan.problem.offset, scan.problem.message)


def _partition_metadata(display: str, data: bytes) -> PartitionMetadataEvent:
    metadata = parse_partition_metadata(data)
    return PartitionMetadataEvent(display, metadata.version, metadata.topic_id)


def _meta_properties(display: str, data: bytes) -> MetaPropertiesEvent:
    properties = read_java_properties(data)
    return MetaPropertiesEvent(display, properties.comments, properties.properties)


def _quorum_state(display: str, data: bytes) -> QuorumStateEvent:
    return QuorumStateEvent(display, read_quorum_state(data))


def _clean_shutdown(display: str, data: bytes) -> CleanShutdownEvent:
    marker = read_clean_shutdown(data)
    return CleanShutdownEvent(display, marker.empty, marker.version, marker.broker_epoch)


_READERS: dict[str, Callable[[str, bytes], SideEvent]] = {
    PARTITION_METADATA: _partition_metadata,
    META_PROPERTIES: _meta_properties,
    QUORUM_STATE: _quorum_state,
    CLEAN_SHUTDOWN: _clean_shutdown,
}
