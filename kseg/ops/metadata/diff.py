"""``kseg metadata diff DIR --at T1 --at T2``: the entities that were added, removed or changed."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kseg.metadata.entities import differences
from kseg.metadata.replay import Replay, Target, image_at
from kseg.ops.metadata.show import require_metadata


@dataclass(frozen=True, slots=True)
class Diff:
    """Two replays and what differs between them, entity by entity."""

    before: Replay
    after: Replay
    changes: list[tuple[str, dict[str, Any] | None, dict[str, Any] | None]]


def diff(path: Path, first: Target, second: Target) -> Diff:
    """Replay to both points (each from its own newest snapshot) and compare."""
    metadata = require_metadata(path)
    before, after = image_at(metadata, first), image_at(metadata, second)
    return Diff(before, after, differences(before.image, after.image))
