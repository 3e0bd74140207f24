"""A topic's id from the log directory's KRaft metadata log, for a ``partition.metadata`` Kafka cannot read.

``__cluster_metadata-0`` holds every ``TopicRecord`` (name, topic id) and
``RemoveTopicRecord`` the controller committed: the newest snapshot
(``<end offset>-<epoch>.checkpoint``, the same record batches) first, then
the log's records from its end offset on.  Unreadable batches and records
are skipped: a topic id that cannot be read is simply not known.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from kseg.errors import KsegError
from kseg.format.compression import DEFAULT_MAX_DECOMPRESSED
from kseg.format.internal.kraft import decode_metadata_record
from kseg.format.v2 import V2Batch
from kseg.format.walk import BatchWalk
from kseg.listing import children
from kseg.segment import MappedFile

METADATA_DIR = "__cluster_metadata-0"


def _records(path: Path, from_offset: int, cap: int) -> Iterator[dict[str, Any]]:
    """The decoded metadata records of one file at or after ``from_offset``."""
    with MappedFile(path) as mapped:
        buf = mapped.buf
        for pos, _, _, header, _ in BatchWalk(buf, 0, None, strict=False).frames():
            mapped.release(pos)
            if header is None:
                continue
            try:
                batch = V2Batch(buf, pos)
                if batch.is_control:
                    continue
                records = list(batch.iter_records(cap))
            except KsegError:
                continue
            for record in records:
                if record.offset < from_offset:
                    continue
                decoded = decode_metadata_record(record.key, record.value, record.offset)
                if decoded.value is not None:
                    yield decoded.value


def _files(metadata: Path) -> list[tuple[Path, int]]:
    """(file, first offset to read): the newest snapshot whole, then the log segments from its end offset."""
    snapshots = sorted((p for p in children(metadata) if p.name.endswith(".checkpoint")), key=lambda p: p.name)
    start = int(snapshots[-1].name.split("-", 1)[0]) if snapshots else 0
    found = [(snapshots[-1], 0)] if snapshots else []
    return found + [(log, start) for log in sorted((p for p in children(metadata) if p.name.endswith(".log")), key=lambda p: p.name)]


def known_topic_id(log_dir: Path, topic: str, cap: int = DEFAULT_MAX_DECOMPRESSED) -> str | None:
    """The id the controller gave ``topic`` (base64url, as ``partition.metadata`` holds it), None if unknown."""
    metadata = log_dir / METADATA_DIR
    if not metadata.is_dir():
        return None
    ids: dict[str, str] = {}
    try:
        for path, start in _files(metadata):
            for value in _records(path, start, cap):
                data = value.get("data") or {}
                name, topic_id = data.get("name"), data.get("topicId")
                if value.get("type") == "TOPIC_RECORD" and isinstance(name, str) and isinstance(topic_id, str):
                    ids[name] = topic_id
                elif value.get("type") == "REMOVE_TOPIC_RECORD":
                    ids = {n: tid for n, tid in ids.items() if tid != topic_id}
    except (KsegError, OSError, ValueError):
        return None
    return ids.get(topic)


__all__ = ["known_topic_id"]
