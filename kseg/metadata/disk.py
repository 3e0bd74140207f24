"""What a broker's disk says about itself, and the image's verdict on its partition directories.

``meta.properties`` (written by ``kafka-storage.sh format``) holds the broker's
``node.id`` and the log directory's ``directory.id`` (KIP-858).  The verdict is
``LogManager.isStrayKraftReplica`` (Kafka 4.3.0): a log is stray -- renamed
``<dir>.<uuid>-stray`` at start -- when it has no topic id, when the image has
no partition with that topic id and number, or when this broker is not among
its replicas.  The image is the one the broker publishes when it starts: the
end of its metadata log.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

from kseg.errors import KsegError
from kseg.listing import children
from kseg.metadata.image import Image
from kseg.metadata.replay import image_at
from kseg.metadata.source import METADATA_DIR, log_segments, snapshots
from kseg.segment import read_small_file


def meta_properties(log_dir: Path) -> dict[str, str]:
    """The ``key=value`` lines of ``meta.properties`` (empty when absent or unreadable)."""
    try:
        text = read_small_file(log_dir / "meta.properties").decode("utf-8", errors="replace")
    except (OSError, KsegError):
        return {}
    pairs = (line.split("=", 1) for line in text.splitlines() if "=" in line and not line.startswith("#"))
    return {key.strip(): value.strip() for key, value in pairs}


def node_id(log_dir: Path) -> int | None:
    """The broker's ``node.id`` from the log directory's ``meta.properties``."""
    value = meta_properties(log_dir).get("node.id", "")
    return int(value) if value.lstrip("-").isdigit() else None


def stray_reason(image: Image, broker: int, topic_id: str | None, partition: int) -> str | None:
    """``isStrayKraftReplica``: why the image makes this log stray, None when it keeps it."""
    if topic_id is None:
        return "no topic id (no partition.metadata)"
    reg = image.partitions.get(topic_id, {}).get(partition)
    if reg is None:
        return f"the controller's image has no partition {partition} of topic id {topic_id}"
    if broker not in reg.replicas:
        return f"broker {broker} is not among the replicas {reg.replicas}"
    return None


@cache
def _image_of(metadata: Path, stamp: tuple[tuple[str, int, int], ...]) -> Image | None:
    try:
        return image_at(metadata).image
    except (OSError, KsegError):
        return None


def disk_image(log_dir: Path) -> Image | None:
    """The image of the ``__cluster_metadata-0`` in ``log_dir`` at its end, None when there is none;
    replayed once per directory state (file names, sizes and times)."""
    metadata = log_dir / METADATA_DIR
    if not metadata.is_dir() or not (snapshots(metadata) or log_segments(metadata)):
        return None
    stamp = tuple(sorted((p.name, p.stat().st_size, p.stat().st_mtime_ns) for p in children(metadata)))
    return _image_of(metadata.resolve(), stamp)
