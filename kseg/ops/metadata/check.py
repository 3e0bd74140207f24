"""``kseg metadata check LOGDIR...``: the image against the partition directories on this broker's disks.

The image is the end of the ``__cluster_metadata-0`` found in one of the log
directories (the broker's ``metadata.log.dir``); the broker is the ``node.id``
of their ``meta.properties``.  Findings, each with the directory it is about:

* ``stray`` -- a partition directory the image does not assign here (Kafka renames it ``-stray`` at start);
* ``missing`` -- a partition the image assigns to this broker with no directory in any log directory given;
* ``topic-id`` -- ``partition.metadata`` names a topic id the image gives another name, or two directories
  of different topics share one id;
* ``other-log-dir`` -- KIP-858: the image assigns the replica to another log directory (``directory.id``);
* ``metadata`` -- the replay's own findings (a damaged batch, an impossible record, a gap after a snapshot).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kseg.errors import KsegError
from kseg.listing import children
from kseg.metadata.disk import meta_properties, node_id, stray_reason
from kseg.metadata.image import MIGRATING, Image
from kseg.metadata.replay import Replay, image_at
from kseg.metadata.source import METADATA_DIR, log_segments, snapshots
from kseg.recovery.loading.topicid import read_topic_id
from kseg.segment import read_small_file

PARTITION_DIR = re.compile(r"^(.+)-(\d+)$")
#: ``DirectoryId.UNASSIGNED`` and ``DirectoryId.LOST``: no log directory named.
NOT_A_DIRECTORY = {MIGRATING, "AAAAAAAAAAAAAAAAAAAAAQ", "AAAAAAAAAAAAAAAAAAAAAg"}


@dataclass(frozen=True, slots=True)
class Finding:
    kind: str
    path: str
    message: str

    def as_json(self) -> dict[str, Any]:
        return {"type": "finding", "kind": self.kind, "path": self.path, "message": self.message}


@dataclass(slots=True)
class Check:
    """The replay, the broker, every partition directory seen, and the findings."""

    replay: Replay
    broker: int
    partitions: int = 0
    findings: list[Finding] = field(default_factory=list)


def _metadata_dir(log_dirs: tuple[Path, ...]) -> Path:
    for log_dir in log_dirs:
        metadata = log_dir / METADATA_DIR
        if metadata.is_dir() and (snapshots(metadata) or log_segments(metadata)):
            return metadata
    raise KsegError(f"{log_dirs[0]}: no __cluster_metadata-0 in these log directories (give the metadata.log.dir)")


def check(log_dirs: tuple[Path, ...]) -> Check:
    """Every finding of the image against these log directories of one broker."""
    metadata = _metadata_dir(log_dirs)
    broker = next((n for n in map(node_id, log_dirs) if n is not None), None)
    if broker is None:
        raise KsegError(f"{log_dirs[0]}: no node.id in meta.properties: which broker's disks are these?")
    replay = image_at(metadata)
    result = Check(replay, broker)
    result.findings += [Finding("metadata", f.file, f"byte {f.position} (offset {f.offset}): {f.reason}")
                        for f in replay.findings]
    present: set[tuple[str, int]] = set()
    ids: dict[str, str] = {}
    for log_dir in log_dirs:
        directory_id = meta_properties(log_dir).get("directory.id")
        for path in sorted(p for p in children(log_dir) if p.is_dir() and p.name != METADATA_DIR):
            match = PARTITION_DIR.match(path.name)
            if match is None:
                continue
            result.partitions += 1
            topic, partition = match.group(1), int(match.group(2))
            topic_id = _topic_id(path)
            if topic_id is not None:
                present.add((topic_id, partition))
            _one(result, replay.image, path, topic, partition, topic_id, directory_id, ids)
    _missing(result, replay.image, present)
    return result


def _topic_id(path: Path) -> str | None:
    metadata = path / "partition.metadata"
    try:
        return read_topic_id(read_small_file(metadata), metadata.absolute())
    except (OSError, KsegError):
        return None


def _one(result: Check, image: Image, path: Path, topic: str, partition: int, topic_id: str | None,
         directory_id: str | None, ids: dict[str, str]) -> None:
    """The findings about one partition directory."""
    where = str(path)
    reason = stray_reason(image, result.broker, topic_id, partition)
    if reason is not None:
        result.findings.append(Finding("stray", where, f"{reason}: the broker renames it {path.name}.<uuid>-stray "
                                                       "at its next start"))
    if topic_id is None:
        return
    named = image.topics.get(topic_id)
    if named is not None and named != topic:
        result.findings.append(Finding("topic-id", where, f"topic id {topic_id} is topic {named!r} in the image"))
    elif named is None and topic in image.topic_ids:
        result.findings.append(Finding("topic-id", where, f"topic {topic!r} has id {image.topic_ids[topic]} in "
                                                          f"the image, the directory {topic_id}"))
    other = ids.setdefault(topic_id, topic)
    if other != topic:
        result.findings.append(Finding("topic-id", where, f"topic id {topic_id} is also in {other}'s directories"))
    reg = image.partitions.get(topic_id, {}).get(partition)
    if reg is not None and directory_id and result.broker in reg.replicas and reg.directories:
        assigned = reg.directories[reg.replicas.index(result.broker)]
        if assigned not in NOT_A_DIRECTORY and assigned != directory_id:
            result.findings.append(Finding("other-log-dir", where, f"the image assigns this replica to log "
                                                                   f"directory {assigned}, this one is {directory_id}"))


def _missing(result: Check, image: Image, present: set[tuple[str, int]]) -> None:
    """Partitions assigned to this broker with no directory here."""
    for topic_id, parts in sorted(image.partitions.items(), key=lambda item: image.topics.get(item[0], "")):
        for partition, reg in sorted(parts.items()):
            if result.broker in reg.replicas and (topic_id, partition) not in present:
                name = image.topics.get(topic_id, topic_id)
                result.findings.append(Finding("missing", f"{name}-{partition}",
                                               f"assigned to broker {result.broker} (replicas {reg.replicas}, "
                                               f"topic id {topic_id}) but no directory here"))
