"""``kseg metadata DIR``: the image at a point, as entities and a summary."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kseg.errors import KsegError
from kseg.metadata.at import iso
from kseg.metadata.entities import entities
from kseg.metadata.replay import Replay, Target, image_at, metadata_dir
from kseg.metadata.source import log_segments, snapshots


@dataclass(frozen=True, slots=True)
class Shown:
    """The replay and its entities, ready to render."""

    path: Path
    replay: Replay
    entities: list[dict[str, Any]]

    def summary(self) -> dict[str, Any]:
        image, replay = self.replay.image, self.replay
        return {"type": "summary", "path": str(self.path), "offset": image.offset, "timestamp": image.timestamp,
                "time": iso(image.timestamp),
                "snapshot": None if replay.snapshot is None else replay.snapshot.path.name,
                "log_records": replay.records, "open_transaction": replay.open_transaction,
                "topics": len(image.topics), "partitions": sum(len(p) for p in image.partitions.values()),
                "brokers": len(image.brokers), "findings": len(replay.findings)}


def require_metadata(path: Path) -> Path:
    """The ``__cluster_metadata-0`` of ``path``; a refusal when there is no snapshot and no log."""
    metadata = metadata_dir(path)
    if not metadata.is_dir() or not (snapshots(metadata) or log_segments(metadata)):
        raise KsegError(f"{path}: no KRaft metadata log (__cluster_metadata-0 with .checkpoint or .log files)")
    return metadata


def show(path: Path, at: Target | None = None) -> Shown:
    """The image of ``path`` at ``at`` (default: the end of the log)."""
    metadata = require_metadata(path)
    replay = image_at(metadata, at)
    return Shown(metadata, replay, list(entities(replay.image)))
