"""The image as entities: one dict per topic, partition, config key, broker, ... (``kseg metadata``'s JSON Lines).

The same dicts are what the proof compares (a replay against a snapshot,
kseg against Kafka's ``MetadataImage``), so every field Kafka's image keeps is
here, in an order that does not depend on how the image was built.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from kseg.metadata.image import RESOURCE_TYPES, Image


def entities(image: Image) -> Iterator[dict[str, Any]]:
    """Every entity of the image, in a fixed order: features, brokers, controllers, topics and their
    partitions (by name), configs, quotas, ACLs, SCRAM credentials, delegation tokens, producer ids."""
    for name in sorted(image.features):
        yield {"type": "feature", "name": name, "level": image.features[name]}
    for broker_id in sorted(image.brokers):
        yield broker_entity(image, broker_id)
    for controller_id in sorted(image.controllers):
        c = image.controllers[controller_id]
        yield {"type": "controller", "id": controller_id, "incarnation_id": c["incarnation_id"],
               "listeners": [_listener(x) for x in c["listeners"]], "zk_migration_ready": c["zk_migration_ready"]}
    for name in sorted(image.topic_ids):
        yield from topic_entities(image, name)
    for (rtype, resource) in sorted(image.configs):
        for key, value in sorted(image.configs[(rtype, resource)].items()):
            yield config_entity(rtype, resource, key, value)
    for entity in sorted(image.quotas, key=repr):
        for quota_key, quota in sorted(image.quotas[entity].items()):
            yield {"type": "quota", "entity": dict(entity), "key": quota_key, "value": quota}
    for acl_id in sorted(image.acls):
        yield acl_entity(acl_id, image.acls[acl_id])
    for (user, mechanism) in sorted(image.scram):
        yield {"type": "scram", "user": user, "mechanism": mechanism, **image.scram[(user, mechanism)]}
    for token_id in sorted(image.tokens):
        yield {"type": "delegation_token", "token_id": token_id, **image.tokens[token_id]}
    if image.next_producer_id >= 0:
        yield {"type": "producer_ids", "next_producer_id": image.next_producer_id}


def _listener(listener: tuple[str, str, int, int]) -> dict[str, Any]:
    name, host, port, protocol = listener
    return {"name": name, "host": host, "port": port, "security_protocol": protocol}


def broker_entity(image: Image, broker_id: int) -> dict[str, Any]:
    """One registered broker."""
    b = image.brokers[broker_id]
    return {"type": "broker", "id": broker_id, "epoch": b["epoch"], "fenced": b["fenced"],
            "in_controlled_shutdown": b["in_controlled_shutdown"], "log_dirs": b["log_dirs"],
            "cordoned_log_dirs": b["cordoned_log_dirs"], "incarnation_id": b["incarnation_id"], "rack": b["rack"],
            "listeners": [_listener(x) for x in b["listeners"]]}


def topic_entities(image: Image, name: str) -> Iterator[dict[str, Any]]:
    """A topic and its partitions."""
    topic_id = image.topic_ids[name]
    parts = image.partitions.get(topic_id, {})
    yield {"type": "topic", "name": name, "topic_id": topic_id, "partitions": len(parts)}
    for pid in sorted(parts):
        yield partition_entity(name, pid, image)


def partition_entity(topic: str, pid: int, image: Image) -> dict[str, Any]:
    """One partition registration."""
    reg = image.partitions[image.topic_ids[topic]][pid]
    return {"type": "partition", "topic": topic, "partition": pid, "replicas": reg.replicas, "isr": reg.isr,
            "elr": reg.elr, "last_known_elr": reg.last_known_elr, "leader": reg.leader,
            "leader_epoch": reg.leader_epoch, "partition_epoch": reg.partition_epoch,
            "directories": reg.directories, "removing_replicas": reg.removing, "adding_replicas": reg.adding,
            "leader_recovery_state": reg.leader_recovery_state}


def config_entity(rtype: int, resource: str, key: str, value: str) -> dict[str, Any]:
    """One config key of a resource."""
    return {"type": "config", "resource_type": RESOURCE_TYPES.get(rtype, str(rtype)), "resource": resource,
            "key": key, "value": value}


def acl_entity(acl_id: str, acl: dict[str, Any]) -> dict[str, Any]:
    """One ACL binding (resource type, pattern type, operation and permission as Kafka's codes)."""
    return {"type": "acl", "id": acl_id, "resource_type": acl["resourceType"], "resource": acl["resourceName"],
            "pattern_type": acl["patternType"], "principal": acl["principal"], "host": acl["host"],
            "operation": acl["operation"], "permission_type": acl["permissionType"]}


def entity_key(entity: dict[str, Any]) -> tuple[Any, ...]:
    """What identifies an entity across two images (its type and name, not its values)."""
    kind = entity["type"]
    keys = {"feature": ("name",), "broker": ("id",), "controller": ("id",), "topic": ("name",),
            "partition": ("topic", "partition"), "config": ("resource_type", "resource", "key"),
            "quota": ("entity", "key"), "acl": ("id",), "scram": ("user", "mechanism"),
            "delegation_token": ("token_id",), "producer_ids": ()}[kind]
    return (kind, *(repr(entity[k]) for k in keys))


def differences(left: Image, right: Image) -> list[tuple[str, dict[str, Any] | None, dict[str, Any] | None]]:
    """Entity by entity: ("added"/"removed"/"changed", before, after); the empty list when equal."""
    before = {entity_key(e): e for e in entities(left)}
    after = {entity_key(e): e for e in entities(right)}
    out: list[tuple[str, dict[str, Any] | None, dict[str, Any] | None]] = []
    for key in before.keys() | after.keys():
        a, b = before.get(key), after.get(key)
        if a is None:
            out.append(("added", None, b))
        elif b is None:
            out.append(("removed", a, None))
        elif a != b:
            out.append(("changed", a, b))
    return sorted(out, key=lambda item: entity_key(item[1] or item[2] or {}))
