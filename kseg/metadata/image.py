"""The cluster image and how one metadata record changes it: Kafka's ``MetadataDelta.replay`` and ``apply``.

Kafka accumulates records in a ``MetadataDelta`` and applies it to the
``MetadataImage`` at batch and transaction boundaries; applying each record in
offset order to a mutable image gives the same image at every boundary, which
is all anyone can observe.  Every rule below names the Kafka method it follows
(Kafka 4.3.0, ``metadata/src/main/java/org/apache/kafka/image``); a record
Kafka's replay throws on raises :class:`ImpossibleRecord` with Kafka's words
and leaves the image as it was.

The image is plain dicts of small tuples and lists, keyed the way Kafka keys
its maps (topic id, ``(topic id, partition)``, ``(resource type, name)``...),
so a cluster of a hundred thousand partitions costs a few tens of MB.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

#: ``PartitionChangeRecord.leader`` when the leader does not change (``PartitionRegistration.NO_LEADER_CHANGE``).
NO_LEADER_CHANGE = -2
#: ``LeaderRecoveryState.NO_CHANGE``.
NO_RECOVERY_CHANGE = -1
#: ``DirectoryId.MIGRATING`` (``new Uuid(0, 0)``), base64url as Kafka prints it.
MIGRATING = "AAAAAAAAAAAAAAAAAAAAAA"
#: ``ConfigResource.Type`` ids -> the names kseg prints.
RESOURCE_TYPES = {0: "unknown", 2: "topic", 4: "broker", 8: "broker_logger", 16: "client_metrics", 32: "group"}
TOPIC_RESOURCE = 2
#: ``BrokerRegistrationFencingChange`` values.
FENCING = {1: True, 0: None, -1: False}
#: ``BrokerRegistrationInControlledShutdownChange`` values.
SHUTDOWN = {0: None, 1: True}
#: Feature whose level records the loader skips (``FeaturesDelta.replay``, KAFKA-18979).
KRAFT_VERSION = "kraft.version"


#: ``DefaultSupportedConfigChecker`` (the broker's ``SharedServer`` passes it to the metadata loader): the config
#: names a ``ConfigRecord`` may set per resource type; a broker keeps any key, and a type not listed (broker
#: loggers) keeps none.  Printed from Kafka 4.3.0's ``LogConfig.configNames()``,
#: ``ClientMetricsConfigs.configDef().names()`` and ``GroupConfig.CONFIG_DEF.names()`` (docs/metadata.md).
SUPPORTED_CONFIGS: dict[int, frozenset[str] | None] = {
    2: frozenset((
        "cleanup.policy", "compression.gzip.level", "compression.lz4.level", "compression.type",
        "compression.zstd.level", "delete.retention.ms", "file.delete.delay.ms", "flush.messages", "flush.ms",
        "follower.replication.throttled.replicas", "index.interval.bytes", "internal.segment.bytes",
        "leader.replication.throttled.replicas", "local.retention.bytes", "local.retention.ms",
        "max.compaction.lag.ms", "max.message.bytes", "message.timestamp.after.max.ms",
        "message.timestamp.before.max.ms", "message.timestamp.type", "min.cleanable.dirty.ratio",
        "min.compaction.lag.ms", "min.insync.replicas", "preallocate", "remote.log.copy.disable",
        "remote.log.delete.on.disable", "remote.storage.enable", "retention.bytes", "retention.ms",
        "segment.bytes", "segment.index.bytes", "segment.jitter.ms", "segment.ms",
        "unclean.leader.election.enable")),
    4: None,  # BROKER: every key
    16: frozenset(("interval.ms", "match", "metrics")),
    32: frozenset((
        "consumer.assignment.interval.ms", "consumer.heartbeat.interval.ms", "consumer.session.timeout.ms",
        "share.assignment.interval.ms", "share.auto.offset.reset", "share.delivery.count.limit",
        "share.heartbeat.interval.ms", "share.isolation.level", "share.partition.max.record.locks",
        "share.record.lock.duration.ms", "share.renew.acknowledge.enable", "share.session.timeout.ms",
        "streams.assignment.interval.ms", "streams.heartbeat.interval.ms", "streams.initial.rebalance.delay.ms",
        "streams.num.standby.replicas", "streams.session.timeout.ms")),
}


def config_supported(resource_type: int, name: str) -> bool:
    """``DefaultSupportedConfigChecker.isSupported``."""
    if resource_type not in SUPPORTED_CONFIGS:
        return False
    names = SUPPORTED_CONFIGS[resource_type]
    return names is None or name in names


class ImpossibleRecord(Exception):
    """A record Kafka's replay throws on; the message is Kafka's."""


class PoisonedDelta(ImpossibleRecord):
    """A record that leaves Kafka's delta broken, so that applying it throws: a partition of a topic id
    neither the image nor the delta knows (``TopicsDelta.getOrCreateTopicDelta`` keeps a ``TopicDelta``
    with no image, and ``apply`` fails on it).  Every record of that delta is lost."""


@dataclass(slots=True)
class Partition:
    """``PartitionRegistration``: every field Kafka keeps for a partition."""

    replicas: list[int]
    directories: list[str]
    isr: list[int]
    removing: list[int]
    adding: list[int]
    leader: int
    leader_recovery_state: int
    leader_epoch: int
    partition_epoch: int
    elr: list[int]
    last_known_elr: list[int]


@dataclass(slots=True)
class Image:
    """``MetadataImage``: the cluster after ``offset`` (-1: nothing replayed yet)."""

    offset: int = -1
    timestamp: int = -1
    topics: dict[str, str] = field(default_factory=dict)  # topic id -> name
    topic_ids: dict[str, str] = field(default_factory=dict)  # name -> topic id
    partitions: dict[str, dict[int, Partition]] = field(default_factory=dict)  # topic id -> partition -> reg
    configs: dict[tuple[int, str], dict[str, str]] = field(default_factory=dict)
    brokers: dict[int, dict[str, Any]] = field(default_factory=dict)
    controllers: dict[int, dict[str, Any]] = field(default_factory=dict)
    features: dict[str, int] = field(default_factory=dict)
    quotas: dict[tuple[tuple[str, str | None], ...], dict[str, float]] = field(default_factory=dict)
    acls: dict[str, dict[str, Any]] = field(default_factory=dict)
    scram: dict[tuple[str, int], dict[str, Any]] = field(default_factory=dict)
    tokens: dict[str, dict[str, Any]] = field(default_factory=dict)
    next_producer_id: int = -1

    def copy(self) -> Image:
        """An independent image (for a metadata transaction or a diff)."""
        return Image(self.offset, self.timestamp, dict(self.topics), dict(self.topic_ids),
                     {tid: {p: _copy_partition(r) for p, r in parts.items()} for tid, parts in self.partitions.items()},
                     {k: dict(v) for k, v in self.configs.items()}, dict(self.brokers), dict(self.controllers),
                     dict(self.features), {k: dict(v) for k, v in self.quotas.items()}, dict(self.acls),
                     dict(self.scram), dict(self.tokens), self.next_producer_id)

    def apply(self, type_name: str, data: dict[str, Any]) -> None:
        """``MetadataDelta.replay`` of one data record; :class:`ImpossibleRecord` where Kafka throws."""
        handler = HANDLERS.get(type_name)
        if handler is not None:
            handler(self, data)

    # --- the library's questions -------------------------------------------------------------

    def topic_config(self, name: str, key: str) -> str | None:
        """A topic's own config value (None: not set on the topic, the broker/cluster default applies)."""
        return self.configs.get((TOPIC_RESOURCE, name), {}).get(key)

    def replicas(self, topic: str, partition: int) -> list[int] | None:
        """The partition's replica set, None when the image has no such partition."""
        reg = self.partition(topic, partition)
        return None if reg is None else list(reg.replicas)

    def partition(self, topic: str, partition: int) -> Partition | None:
        """The registration of ``topic-partition``, None when unknown."""
        topic_id = self.topic_ids.get(topic)
        return None if topic_id is None else self.partitions.get(topic_id, {}).get(partition)


def _copy_partition(reg: Partition) -> Partition:
    return Partition(list(reg.replicas), list(reg.directories), list(reg.isr), list(reg.removing),
                     list(reg.adding), reg.leader, reg.leader_recovery_state, reg.leader_epoch,
                     reg.partition_epoch, list(reg.elr), list(reg.last_known_elr))


def _directories(dirs: list[str] | None, replicas: int) -> list[str]:
    """``PartitionRegistration.defaultToMigrating``: no directories, or all MIGRATING, means MIGRATING for each;
    then the constructor's check: as many directories as replicas (a reassignment that changes the replica
    count without new directories fails here)."""
    if not dirs or dirs.count(MIGRATING) == len(dirs):
        return [MIGRATING] * replicas
    if len(dirs) != replicas:
        raise ImpossibleRecord("The lengths for replicas and directories do not match.")
    return list(dirs)


def _check_directories(replicas: list[int] | None, dirs: list[str] | None, what: str) -> None:
    """``PartitionRegistration.checkDirectories``: as many directories as replicas, when both are given."""
    if replicas is not None and dirs and len(replicas) != len(dirs):
        raise ImpossibleRecord(f"InvalidReplicaDirectoriesException: {what} has {len(replicas)} replicas "
                               f"and {len(dirs)} directories")


def _topic(image: Image, data: dict[str, Any]) -> None:
    """``TopicsDelta.replay(TopicRecord)``: a topic with no partitions.  ``TopicsImage`` keeps topics by id
    and by name; ``TopicsDelta.apply`` points the name at every topic it changed, so a name two live ids share
    (never written by a controller) follows the one changed last (:func:`_touch`)."""
    name, topic_id = data["name"], data["topicId"]
    image.topics[topic_id] = name
    image.topic_ids[name] = topic_id
    image.partitions[topic_id] = {}


def _touch(image: Image, topic_id: str) -> None:
    """``TopicsDelta.apply``: a changed topic is (again) the one its name finds."""
    image.topic_ids[image.topics[topic_id]] = topic_id


def _partition(image: Image, data: dict[str, Any]) -> None:
    """``new PartitionRegistration(PartitionRecord)``: the registration replaces any earlier one."""
    topic_id = data["topicId"]
    if topic_id not in image.topics:
        raise PoisonedDelta(f"no topic with id {topic_id}: the delta cannot be applied")
    replicas = list(data.get("replicas") or [])
    _check_directories(replicas, data.get("directories"), "PartitionRecord")
    image.partitions[topic_id][data["partitionId"]] = Partition(
        replicas, _directories(data.get("directories"), len(replicas)), list(data.get("isr") or []),
        list(data.get("removingReplicas") or []), list(data.get("addingReplicas") or []), data["leader"],
        data.get("leaderRecoveryState", 0), data["leaderEpoch"], data["partitionEpoch"],
        list(data.get("eligibleLeaderReplicas") or []), list(data.get("lastKnownElr") or []))
    _touch(image, topic_id)


def _partition_change(image: Image, data: dict[str, Any]) -> None:
    """``PartitionRegistration.merge``: null fields keep their value; a leader change bumps the leader
    epoch; every change bumps the partition epoch."""
    topic_id, pid = data["topicId"], data["partitionId"]
    if topic_id not in image.topics:
        raise PoisonedDelta(f"no topic with id {topic_id}: the delta cannot be applied")
    reg = image.partitions[topic_id].get(pid)
    if reg is None:
        raise ImpossibleRecord(f"Unable to find partition {topic_id}:{pid}")
    replicas = data.get("replicas")
    dirs = data.get("directories")
    _check_directories(replicas, dirs, "PartitionChangeRecord")
    new_replicas = reg.replicas if replicas is None else list(replicas)
    new_dirs = _directories(reg.directories if dirs is None else dirs, len(new_replicas))
    leader = data.get("leader", NO_LEADER_CHANGE)
    recovery = data.get("leaderRecoveryState", NO_RECOVERY_CHANGE)
    image.partitions[topic_id][pid] = Partition(
        new_replicas, new_dirs, _or(data.get("isr"), reg.isr), _or(data.get("removingReplicas"), reg.removing),
        _or(data.get("addingReplicas"), reg.adding), reg.leader if leader == NO_LEADER_CHANGE else leader,
        reg.leader_recovery_state if recovery == NO_RECOVERY_CHANGE else recovery,
        reg.leader_epoch if leader == NO_LEADER_CHANGE else reg.leader_epoch + 1, reg.partition_epoch + 1,
        _or(data.get("eligibleLeaderReplicas"), reg.elr), _or(data.get("lastKnownElr"), reg.last_known_elr))
    _touch(image, topic_id)


def _or(value: list[int] | None, current: list[int]) -> list[int]:
    return current if value is None else list(value)


def _clear_elr(image: Image, data: dict[str, Any]) -> None:
    """``TopicsDelta.replay(ClearElrRecord)``: empty ELR and last known ELR of one topic, or of all topics;
    a partition whose lists are already empty is not changed (``TopicDelta.maybeClearElr``)."""
    name = data.get("topicName", "")
    if name:
        topic_id = image.topic_ids.get(name)
        if topic_id is None:
            raise ImpossibleRecord(f"Unable to clear elr for topic with name {name}: no such topic found.")
        targets = [topic_id]
    else:
        targets = list(image.partitions)
    for topic_id in targets:
        for reg in image.partitions[topic_id].values():
            if reg.elr or reg.last_known_elr:
                reg.elr, reg.last_known_elr = [], []
                reg.partition_epoch += 1
                _touch(image, topic_id)


def _remove_topic(image: Image, data: dict[str, Any]) -> None:
    """``TopicsDelta.replay(RemoveTopicRecord)`` and ``ConfigurationsDelta.replay(RemoveTopicRecord, name)``:
    the topic, its partitions and its configs go, and its name finds no topic (``TopicsDelta.apply`` removes
    the name even where it pointed at another id)."""
    topic_id = data["topicId"]
    name = image.topics.pop(topic_id, None)
    if name is None:
        raise ImpossibleRecord(f"Unable to delete topic with id {topic_id}: no such topic found.")
    image.partitions.pop(topic_id, None)
    image.topic_ids.pop(name, None)
    image.configs.pop((TOPIC_RESOURCE, name), None)


def _config(image: Image, data: dict[str, Any]) -> None:
    """``ConfigurationDelta.replay``: a key the broker's checker does not support is skipped (a config
    removed from Kafka, old records still in the log); a null value deletes the key; a resource with no keys
    left is gone."""
    if not config_supported(data["resourceType"], data["name"]):
        return
    resource = (data["resourceType"], data["resourceName"])
    value = data.get("value")
    configs = image.configs.setdefault(resource, {})
    if value is None:
        configs.pop(data["name"], None)
    else:
        configs[data["name"]] = value
    if not configs:
        del image.configs[resource]


def _register_broker(image: Image, data: dict[str, Any]) -> None:
    """``ClusterDelta.replay(RegisterBrokerRecord)``: the registration replaces the old one."""
    image.brokers[data["brokerId"]] = {
        "epoch": data["brokerEpoch"], "incarnation_id": data.get("incarnationId"),
        "listeners": sorted((e["name"], e["host"], e["port"], e["securityProtocol"])
                            for e in data.get("endPoints") or []),
        "features": sorted((f["name"], f["minSupportedVersion"], f["maxSupportedVersion"])
                           for f in data.get("features") or []),
        "rack": data.get("rack"), "fenced": bool(data.get("fenced", True)),
        "in_controlled_shutdown": bool(data.get("inControlledShutdown", False)),
        "is_migrating_zk_broker": bool(data.get("isMigratingZkBroker", False)),
        "log_dirs": sorted(data.get("logDirs") or []), "cordoned_log_dirs": data.get("cordonedLogDirs"),
    }


def _broker_or_throw(image: Image, broker_id: int, epoch: int, action: str) -> dict[str, Any]:
    """``ClusterDelta.getBrokerOrThrow``."""
    broker = image.brokers.get(broker_id)
    if broker is None:
        raise ImpossibleRecord(f"Tried to {action} broker {broker_id}, but that broker was not registered.")
    if broker["epoch"] != epoch:
        raise ImpossibleRecord(f"Tried to {action} broker {broker_id}, but the given epoch, {epoch}, did not "
                               f"match the current broker epoch, {broker['epoch']}")
    return broker


def _fence(fenced: bool) -> Callable[[Image, dict[str, Any]], None]:
    """``ClusterDelta.replay(FenceBrokerRecord / UnfenceBrokerRecord)``."""
    def replay(image: Image, data: dict[str, Any]) -> None:
        broker = _broker_or_throw(image, data["id"], data["epoch"], "fence" if fenced else "unfence")
        image.brokers[data["id"]] = {**broker, "fenced": fenced}
    return replay


def _broker_change(image: Image, data: dict[str, Any]) -> None:
    """``ClusterDelta.replay(BrokerRegistrationChangeRecord)``: fencing, controlled shutdown, log dirs
    (an empty list is no change), cordoned log dirs (null is no change)."""
    broker = _broker_or_throw(image, data["brokerId"], data["brokerEpoch"], "change")
    fenced_value, shutdown_value = data.get("fenced", 0), data.get("inControlledShutdown", 0)
    if fenced_value not in FENCING:
        raise ImpossibleRecord(f"Unable to replay: unknown value for fenced field: {fenced_value}")
    if shutdown_value not in SHUTDOWN:
        raise ImpossibleRecord(f"Unable to replay: unknown value for inControlledShutdown field: {shutdown_value}")
    new = dict(broker)
    if FENCING[fenced_value] is not None:
        new["fenced"] = FENCING[fenced_value]
    if SHUTDOWN[shutdown_value] is not None:
        new["in_controlled_shutdown"] = True
    if data.get("logDirs"):
        new["log_dirs"] = sorted(data["logDirs"])
    if data.get("cordonedLogDirs") is not None:
        new["cordoned_log_dirs"] = data["cordonedLogDirs"]
    image.brokers[data["brokerId"]] = new


def _unregister_broker(image: Image, data: dict[str, Any]) -> None:
    """``ClusterDelta.replay(UnregisterBrokerRecord)``: the broker is gone (no epoch check)."""
    image.brokers.pop(data["brokerId"], None)


def _register_controller(image: Image, data: dict[str, Any]) -> None:
    """``ClusterDelta.replay(RegisterControllerRecord)``."""
    image.controllers[data["controllerId"]] = {
        "incarnation_id": data.get("incarnationId"), "zk_migration_ready": bool(data.get("zkMigrationReady")),
        "listeners": sorted((e["name"], e["host"], e["port"], e["securityProtocol"])
                            for e in data.get("endPoints") or []),
        "features": sorted((f["name"], f["minSupportedVersion"], f["maxSupportedVersion"])
                           for f in data.get("features") or []),
    }


def _feature(image: Image, data: dict[str, Any]) -> None:
    """``FeaturesDelta.replay``: level 0 removes a feature; ``kraft.version`` records are skipped."""
    name, level = data["name"], data["featureLevel"]
    if name == KRAFT_VERSION:
        return
    if level == 0 and name != "metadata.version":
        image.features.pop(name, None)
    else:
        image.features[name] = level


def _quota(image: Image, data: dict[str, Any]) -> None:
    """``ClientQuotaDelta.replay``: ``remove`` deletes the key; an entity with no keys left is gone."""
    entity = tuple(sorted((e["entityType"], e.get("entityName")) for e in data["entity"]))
    values = image.quotas.setdefault(entity, {})
    if data.get("remove"):
        values.pop(data["key"], None)
    else:
        values[data["key"]] = data["value"]
    if not values:
        del image.quotas[entity]


def _acl(image: Image, data: dict[str, Any]) -> None:
    """``AclsDelta.replay(AccessControlEntryRecord)``."""
    image.acls[data["id"]] = {k: data[k] for k in ("resourceType", "resourceName", "patternType", "principal",
                                                    "host", "operation", "permissionType")}


def _remove_acl(image: Image, data: dict[str, Any]) -> None:
    """``AclsDelta.replay(RemoveAccessControlEntryRecord)``: an unknown id is impossible."""
    if image.acls.pop(data["id"], None) is None:
        raise ImpossibleRecord(f"Failed to find existing ACL with ID {data['id']} in either image or changes")


def _scram(image: Image, data: dict[str, Any]) -> None:
    """``ScramDelta.replay(UserScramCredentialRecord)`` (kseg keeps the iterations, not the keys)."""
    image.scram[(data["name"], data["mechanism"])] = {"iterations": data["iterations"]}


def _remove_scram(image: Image, data: dict[str, Any]) -> None:
    """``ScramDelta.replay(RemoveUserScramCredentialRecord)``."""
    image.scram.pop((data["name"], data["mechanism"]), None)


def _token(image: Image, data: dict[str, Any]) -> None:
    """``DelegationTokenDelta.replay(DelegationTokenRecord)``."""
    image.tokens[data["tokenId"]] = {k: data.get(k) for k in ("owner", "requester", "renewers", "issueTimestamp",
                                                              "maxTimestamp", "expirationTimestamp")}


def _remove_token(image: Image, data: dict[str, Any]) -> None:
    """``DelegationTokenDelta.replay(RemoveDelegationTokenRecord)``."""
    image.tokens.pop(data["tokenId"], None)


def _producer_ids(image: Image, data: dict[str, Any]) -> None:
    """``ProducerIdsDelta.replay``: the next producer id block starts here."""
    image.next_producer_id = data["nextProducerId"]


HANDLERS: dict[str, Callable[[Image, dict[str, Any]], None]] = {
    "REGISTER_BROKER_RECORD": _register_broker,
    "UNREGISTER_BROKER_RECORD": _unregister_broker,
    "TOPIC_RECORD": _topic,
    "PARTITION_RECORD": _partition,
    "CONFIG_RECORD": _config,
    "PARTITION_CHANGE_RECORD": _partition_change,
    "FENCE_BROKER_RECORD": _fence(True),
    "UNFENCE_BROKER_RECORD": _fence(False),
    "REMOVE_TOPIC_RECORD": _remove_topic,
    "DELEGATION_TOKEN_RECORD": _token,
    "REMOVE_DELEGATION_TOKEN_RECORD": _remove_token,
    "USER_SCRAM_CREDENTIAL_RECORD": _scram,
    "REMOVE_USER_SCRAM_CREDENTIAL_RECORD": _remove_scram,
    "FEATURE_LEVEL_RECORD": _feature,
    "CLIENT_QUOTA_RECORD": _quota,
    "PRODUCER_IDS_RECORD": _producer_ids,
    "BROKER_REGISTRATION_CHANGE_RECORD": _broker_change,
    "ACCESS_CONTROL_ENTRY_RECORD": _acl,
    "REMOVE_ACCESS_CONTROL_ENTRY_RECORD": _remove_acl,
    "CLEAR_ELR_RECORD": _clear_elr,
    "REGISTER_CONTROLLER_RECORD": _register_controller,
    # NO_OP_RECORD and ZK_MIGRATION_STATE_RECORD change nothing (MetadataDelta.replay)
}
