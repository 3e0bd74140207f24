"""``kseg metadata history``: every change of one topic, partition, config key, principal's ACLs or broker.

The replay starts as early as the disk allows (the log's first record, or the
oldest snapshot the log continues) and watches one *projection* of the image:
the entities the question is about.  Each data record that changes the
projection is a change: its offset, its batch's time, the record type, and per
entity what it was before and after.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kseg.errors import KsegError
from kseg.metadata.entities import (
    acl_entity,
    broker_entity,
    config_entity,
    entity_key,
    partition_entity,
    topic_entities,
)
from kseg.metadata.image import Image
from kseg.metadata.replay import Replay, Target, earliest_start, image_at
from kseg.metadata.source import MetaRecord
from kseg.ops.metadata.show import require_metadata

Projection = Callable[[Image], dict[tuple[Any, ...], dict[str, Any]]]


@dataclass(frozen=True, slots=True)
class Change:
    """One record's effect on the watched entities."""

    offset: int
    timestamp: int
    record: str
    file: str
    before: dict[str, Any] | None
    after: dict[str, Any] | None

    @property
    def kind(self) -> str:
        return "created" if self.before is None else "removed" if self.after is None else "changed"


@dataclass(slots=True)
class Watch:
    """The observer: the projection before a record, compared after it."""

    project: Projection
    changes: list[Change] = field(default_factory=list)
    _before: dict[tuple[Any, ...], dict[str, Any]] = field(default_factory=dict)

    def before(self, record: MetaRecord, image: Image) -> None:
        self._before = self.project(image)

    def after(self, record: MetaRecord, image: Image) -> None:
        now = self.project(image)
        for key in sorted(self._before.keys() | now.keys()):
            old, new = self._before.get(key), now.get(key)
            if old != new:
                self.changes.append(Change(record.offset, record.timestamp, record.type, record.file, old, new))


def _keyed(items: list[dict[str, Any]]) -> dict[tuple[Any, ...], dict[str, Any]]:
    return {entity_key(e): e for e in items}


def _topic(name: str) -> Projection:
    def project(image: Image) -> dict[tuple[Any, ...], dict[str, Any]]:
        items = list(topic_entities(image, name)) if name in image.topic_ids else []
        items += [config_entity(2, name, k, v) for k, v in image.configs.get((2, name), {}).items()]
        return _keyed(items)
    return project


def _partition(spec: str) -> Projection:
    topic, sep, number = spec.rpartition("-")
    if not sep or not number.isdigit():
        raise KsegError(f"--partition {spec!r}: expected TOPIC-PARTITION, e.g. orders-3")
    pid = int(number)

    def project(image: Image) -> dict[tuple[Any, ...], dict[str, Any]]:
        topic_id = image.topic_ids.get(topic)
        if topic_id is None or pid not in image.partitions.get(topic_id, {}):
            return {}
        return _keyed([partition_entity(topic, pid, image)])
    return project


def _config(key: str) -> Projection:
    def project(image: Image) -> dict[tuple[Any, ...], dict[str, Any]]:
        return _keyed([config_entity(rtype, resource, key, values[key])
                       for (rtype, resource), values in image.configs.items() if key in values])
    return project


def _acl(principal: str) -> Projection:
    def project(image: Image) -> dict[tuple[Any, ...], dict[str, Any]]:
        return _keyed([acl_entity(i, a) for i, a in image.acls.items() if a["principal"] == principal])
    return project


def _broker(broker_id: int) -> Projection:
    def project(image: Image) -> dict[tuple[Any, ...], dict[str, Any]]:
        return _keyed([broker_entity(image, broker_id)] if broker_id in image.brokers else [])
    return project


def projection(what: str, value: str) -> Projection:
    """The projection for ``--topic/--partition/--config/--acl/--broker VALUE``."""
    if what == "broker":
        if not value.lstrip("-").isdigit():
            raise KsegError(f"--broker {value!r}: expected a broker id")
        return _broker(int(value))
    return {"topic": _topic, "partition": _partition, "config": _config, "acl": _acl}[what](value)


@dataclass(frozen=True, slots=True)
class History:
    """The changes, and the replay they came from (where it started, what it found)."""

    subject: str
    replay: Replay
    changes: list[Change]
    initial: dict[tuple[Any, ...], dict[str, Any]]  # the projection at the start of the replay


def history(path: Path, what: str, value: str) -> History:
    """Every change of the subject from the earliest point the disk allows to the end of the log."""
    metadata = require_metadata(path)
    start = earliest_start(metadata)
    watch = Watch(projection(what, value))
    replay = image_at(metadata, from_snapshot=start, use_snapshots=False, observer=watch)
    initial: dict[tuple[Any, ...], dict[str, Any]] = {}
    if start is not None:
        initial = watch.project(image_at(metadata, from_snapshot=start, use_snapshots=False,
                                         at=Target(offset=start.end_offset - 1)).image)
    return History(f"{what} {value}", replay, watch.changes, initial)

