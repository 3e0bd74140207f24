"""The cluster as a KRaft broker's ``__cluster_metadata-0`` remembers it: replay to an image, at any point.

This is a library below :mod:`kseg.ops` so that every command can ask the
metadata log: ``triage`` (does the controller still assign this partition
here?), ``kseg metadata`` itself, and later commands that need topic configs.

==========================  ===============================================================
:mod:`.source`              the records of snapshots and log segments, with damage findings
:mod:`.image`               the image and ``MetadataDelta``'s rule for each record type
:mod:`.replay`              Kafka's order: newest snapshot at or before the target, then the log
:mod:`.entities`            the image as entities (JSON Lines, comparison, diff)
:mod:`.at`                  ``--at OFFSET|ISO-8601|ms`` as a :class:`Target`
:mod:`.disk`                ``meta.properties`` and ``isStrayKraftReplica`` (triage, ``check``)
==========================  ===============================================================

The contract is docs/metadata.md.
"""

from __future__ import annotations

from pathlib import Path

from kseg.metadata.at import parse_at
from kseg.metadata.image import Image, Partition
from kseg.metadata.replay import Replay, Target
from kseg.metadata.replay import image_at as _image_at


def image_at(path: Path, at: Target | int | str | None = None) -> Replay:
    """The image of ``path`` (a log directory or its ``__cluster_metadata-0``) at ``at``: a :class:`Target`, an
    offset, or text as ``--at`` takes it (``"2026-11-27T09:00:00Z"``, ``"1795738602000ms"``); None: the end."""
    if isinstance(at, int):
        at = Target(offset=at)
    elif isinstance(at, str):
        at = parse_at(at)
    return _image_at(path, at)


def topic_config(path: Path, name: str, key: str) -> str | None:
    """A topic's own ``key`` at the end of the metadata log of ``path`` (None: not set on the topic)."""
    return _image_at(path).image.topic_config(name, key)


def replicas(path: Path, topic: str, partition: int) -> list[int] | None:
    """The replica set of ``topic-partition`` at the end of the metadata log of ``path`` (None: unknown)."""
    return _image_at(path).image.replicas(topic, partition)


__all__ = ["Image", "Partition", "Replay", "Target", "image_at", "replicas", "topic_config"]
