"""The events of the side files ``kseg dump`` reads beside the segments (checkpoints, metadata files).

Kept apart from :mod:`kseg.ops.dump.events` only for size; both are data, and
kseg.render.dump turns them into text or JSON.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class CheckpointStart:
    """A CheckpointFile's header: ``version`` None for an empty file, ``declared`` None without a count line."""

    path: str
    kind: str  # the file name, e.g. "leader-epoch-checkpoint"
    version: int | None
    declared: int | None
    empty: bool


@dataclass(frozen=True, slots=True)
class LeaderEpochEntry:
    path: str
    epoch: int
    start_offset: int


@dataclass(frozen=True, slots=True)
class OffsetCheckpointEntry:
    path: str
    topic: str
    partition: int
    offset: int


@dataclass(frozen=True, slots=True)
class PartitionMetadataEvent:
    path: str
    version: int
    topic_id: str


@dataclass(frozen=True, slots=True)
class MetaPropertiesEvent:
    """``meta.properties``: comment lines (Kafka writes the time it wrote the file) and the properties."""

    path: str
    comments: tuple[str, ...]
    properties: tuple[tuple[str, str], ...]


@dataclass(frozen=True, slots=True)
class QuorumStateEvent:
    """KRaft's ``quorum-state``: the JSON object as written (keys in file order)."""

    path: str
    data: dict[str, Any]


@dataclass(frozen=True, slots=True)
class CleanShutdownEvent:
    """``.kafka_cleanshutdown``: empty (older brokers) or the broker epoch it was written with."""

    path: str
    empty: bool
    version: int | None
    broker_epoch: int | None


SideEvent = (
    CheckpointStart | LeaderEpochEntry | OffsetCheckpointEntry | PartitionMetadataEvent | MetaPropertiesEvent
    | QuorumStateEvent | CleanShutdownEvent
)
