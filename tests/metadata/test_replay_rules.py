"""``MetadataDelta``'s rule for each record type, and the loader's transactions, on hand-made records.

Each test feeds records (as the decoder yields them) to the replayer in offset
order and checks the image and the findings exactly; the rule named is the
Kafka 4.3.0 method in kseg/metadata/image.py and replay.py.
"""

from __future__ import annotations

from typing import Any

from kseg.metadata.entities import entities
from kseg.metadata.image import MIGRATING, Image
from kseg.metadata.replay import Replayer
from kseg.metadata.source import Damage, MetaRecord

TID = "FZCeopPwTTWtmO51cFtifA"
TID2 = "yj-myzL_QyO5SS7-vSM-kA"


def _feed(*records: tuple[str, dict[str, Any]]) -> tuple[Image, list[Damage], Replayer]:
    image, findings = Image(), []
    replayer = Replayer(image, findings)
    for offset, (type_name, data) in enumerate(records):
        replayer.feed(MetaRecord("log", 100 + offset, offset, 1000 + offset, type_name, 0, data, offset))
    return image, findings, replayer


def _topic(name: str = "orders", tid: str = TID) -> tuple[str, dict[str, Any]]:
    return ("TOPIC_RECORD", {"name": name, "topicId": tid})


def _part(pid: int = 0, tid: str = TID, replicas: list[int] | None = None) -> tuple[str, dict[str, Any]]:
    reps = replicas or [1, 2, 3]
    return ("PARTITION_RECORD", {"partitionId": pid, "topicId": tid, "replicas": reps, "isr": reps,
                                 "removingReplicas": [], "addingReplicas": [], "leader": reps[0],
                                 "leaderEpoch": 0, "partitionEpoch": 0})


def test_partition_change_bumps_leader_epoch_only_for_a_leader_change() -> None:
    image, findings, _ = _feed(_topic(), _part(),
                               ("PARTITION_CHANGE_RECORD", {"partitionId": 0, "topicId": TID, "isr": [1, 2]}),
                               ("PARTITION_CHANGE_RECORD", {"partitionId": 0, "topicId": TID, "leader": 2}),
                               ("PARTITION_CHANGE_RECORD", {"partitionId": 0, "topicId": TID, "leader": 2,
                                                            "eligibleLeaderReplicas": [3]}))
    reg = image.partition("orders", 0)
    assert findings == []
    assert reg is not None
    assert (reg.leader, reg.leader_epoch, reg.partition_epoch, reg.isr, reg.elr) == (2, 2, 3, [1, 2], [3])
    assert reg.directories == [MIGRATING] * 3  # PartitionRegistration.defaultToMigrating
    assert image.offset == 4 and image.timestamp == 1004


def test_remove_topic_takes_partitions_and_configs_and_a_recreated_topic_starts_empty() -> None:
    image, findings, _ = _feed(
        _topic(), _part(0), _part(1),
        ("CONFIG_RECORD", {"resourceType": 2, "resourceName": "orders", "name": "retention.ms", "value": "1"}),
        ("REMOVE_TOPIC_RECORD", {"topicId": TID}), _topic(tid=TID2), _part(0, TID2, [4]))
    assert findings == []
    assert [e for e in entities(image) if e["type"] in ("topic", "config")] == [
        {"type": "topic", "name": "orders", "topic_id": TID2, "partitions": 1}]
    assert image.replicas("orders", 0) == [4]
    assert image.topic_config("orders", "retention.ms") is None


def test_config_null_value_deletes_the_key() -> None:
    image, _, _ = _feed(
        ("CONFIG_RECORD", {"resourceType": 4, "resourceName": "1", "name": "a", "value": "x"}),
        ("CONFIG_RECORD", {"resourceType": 4, "resourceName": "1", "name": "b", "value": "y"}),
        ("CONFIG_RECORD", {"resourceType": 4, "resourceName": "1", "name": "a", "value": None}))
    assert image.configs == {(4, "1"): {"b": "y"}}


def test_transaction_applies_at_its_end_and_an_abort_discards_it() -> None:
    image, findings, replayer = _feed(
        ("BEGIN_TRANSACTION_RECORD", {"name": "t1"}), _topic(), _part(),
        ("END_TRANSACTION_RECORD", {}),
        ("BEGIN_TRANSACTION_RECORD", {}), _topic("gone", TID2),
        ("ABORT_TRANSACTION_RECORD", {}),
        ("BEGIN_TRANSACTION_RECORD", {}), _topic("pending", "AAAAAAAAAAAAAAAAAAAAAQ"))
    assert findings == []
    assert sorted(image.topic_ids) == ["orders"]  # the aborted topic never was, the open one is not yet
    assert replayer.pending_since == 7
    assert image.offset == 6  # the abort marker is the last record the image contains


def test_impossible_records_are_findings_and_replay_goes_on() -> None:
    image, findings, _ = _feed(
        ("PARTITION_CHANGE_RECORD", {"partitionId": 0, "topicId": TID, "isr": [1]}),
        ("REMOVE_TOPIC_RECORD", {"topicId": TID}),
        ("REGISTER_BROKER_RECORD", {"brokerId": 1, "brokerEpoch": 5, "fenced": True, "logDirs": []}),
        ("FENCE_BROKER_RECORD", {"id": 1, "epoch": 4}),
        ("END_TRANSACTION_RECORD", {}),
        ("REMOVE_ACCESS_CONTROL_ENTRY_RECORD", {"id": TID}),
        ("BROKER_REGISTRATION_CHANGE_RECORD", {"brokerId": 1, "brokerEpoch": 5, "fenced": -1}))
    assert [(f.offset, f.reason) for f in findings] == [
        (0, "Error loading metadata log record from offset 0: PARTITION_CHANGE_RECORD: no topic with id "
            f"{TID}: the delta cannot be applied"),
        (1, f"Error loading metadata log record from offset 1: REMOVE_TOPIC_RECORD: Unable to delete topic with "
            f"id {TID}: no such topic found."),
        (3, "Error loading metadata log record from offset 3: FENCE_BROKER_RECORD: Tried to fence broker 1, but "
            "the given epoch, 4, did not match the current broker epoch, 5"),
        (4, "Error loading metadata log record from offset 4: END_TRANSACTION_RECORD: Encountered "
            "EndTransactionRecord without having seen a BeginTransactionRecord"),
        (5, f"Error loading metadata log record from offset 5: REMOVE_ACCESS_CONTROL_ENTRY_RECORD: Failed to "
            f"find existing ACL with ID {TID} in either image or changes"),
    ]
    assert image.brokers[1]["fenced"] is False  # the last record still applied
    assert findings[0].file == "log" and findings[0].position == 100


def test_clear_elr_of_all_topics_bumps_only_partitions_that_had_one() -> None:
    image, findings, _ = _feed(
        _topic(), _part(0), _part(1),
        ("PARTITION_CHANGE_RECORD", {"partitionId": 0, "topicId": TID, "eligibleLeaderReplicas": [2],
                                     "lastKnownElr": [3]}),
        ("CLEAR_ELR_RECORD", {"topicName": ""}))
    zero, one = image.partition("orders", 0), image.partition("orders", 1)
    assert findings == [] and zero is not None and one is not None
    assert (zero.elr, zero.last_known_elr, zero.partition_epoch) == ([], [], 2)
    assert one.partition_epoch == 0


def test_feature_level_zero_removes_and_kraft_version_is_skipped() -> None:
    image, _, _ = _feed(("FEATURE_LEVEL_RECORD", {"name": "group.version", "featureLevel": 1}),
                        ("FEATURE_LEVEL_RECORD", {"name": "kraft.version", "featureLevel": 1}),
                        ("FEATURE_LEVEL_RECORD", {"name": "group.version", "featureLevel": 0}),
                        ("FEATURE_LEVEL_RECORD", {"name": "metadata.version", "featureLevel": 30}))
    assert image.features == {"metadata.version": 30}


def test_configs_the_broker_does_not_support_are_skipped() -> None:
    image, findings, _ = _feed(
        ("CONFIG_RECORD", {"resourceType": 2, "resourceName": "t", "name": "retention.ms", "value": "1"}),
        ("CONFIG_RECORD", {"resourceType": 2, "resourceName": "t", "name": "message.format.version", "value": "2"}),
        ("CONFIG_RECORD", {"resourceType": 4, "resourceName": "", "name": "anything.at.all", "value": "3"}),
        ("CONFIG_RECORD", {"resourceType": 8, "resourceName": "1", "name": "kafka.server", "value": "DEBUG"}))
    assert findings == []
    assert image.configs == {(2, "t"): {"retention.ms": "1"}, (4, ""): {"anything.at.all": "3"}}


def test_a_poisoned_delta_loses_every_record_of_its_batch() -> None:
    """TopicsDelta.getOrCreateTopicDelta keeps a TopicDelta with no image for an unknown topic id; applying
    the delta then throws and the loader keeps the old image (KafkaImage.java shows it on fixtures/internal)."""
    image, findings = Image(), []
    rebuilt: list[int] = []

    def rebuild(offset: int) -> Image:
        rebuilt.append(offset)
        return Image()

    replayer = Replayer(image, findings, rebuild=rebuild)
    batch = [_topic("kept"), ("FEATURE_LEVEL_RECORD", {"name": "group.version", "featureLevel": 1}),
             ("PARTITION_RECORD", {**_part(0, TID2)[1]}), _topic("lost", TID)]
    for offset, (type_name, data) in enumerate(batch):
        replayer.feed(MetaRecord("log", 7, offset, 5, type_name, 0, data, len(batch) - 1))
    replayer.batch_end()
    assert rebuilt == [-1]
    assert replayer.image.topic_ids == {} and replayer.image.features == {}
    assert [f.reason for f in findings][-1] == ("Error generating new metadata image from metadata delta between "
                                                 "offset -1 and 3: every record of it is lost")


def test_a_replica_count_change_without_directories_is_rejected() -> None:
    """PartitionRegistration's constructor: directories (not all MIGRATING) must match the replicas; found by
    the generated-churn differential (KafkaImage.java faults at exactly these offsets)."""
    dirs = ["f4MmpvGorB2MzPx_LyZfLA", "yj-myzL_QyO5SS7-vSM-kA", "f4MmpvGorB2MzPx_LyZfLA"]
    image, findings, _ = _feed(_topic(), ("PARTITION_RECORD", {**_part()[1], "directories": dirs}),
                               ("PARTITION_CHANGE_RECORD", {"partitionId": 0, "topicId": TID, "replicas": [1, 2],
                                                            "isr": [1, 2]}))
    assert [f.reason for f in findings] == ["Error loading metadata log record from offset 2: "
                                            "PARTITION_CHANGE_RECORD: The lengths for replicas and directories do "
                                            "not match."]
    assert image.replicas("orders", 0) == [1, 2, 3]


def test_a_removed_topic_takes_its_name_and_a_changed_topic_takes_it_back() -> None:
    """TopicsImage keeps topics by id and by name; TopicsDelta.apply removes a deleted topic's name and points
    a name at each topic it changed (a name two live ids share is never written by a controller)."""
    image, findings, _ = _feed(_topic("a", TID), _topic("a", TID2), _part(0, TID), ("REMOVE_TOPIC_RECORD",
                                                                                   {"topicId": TID2}))
    assert findings == [] and image.topics == {TID: "a"} and image.topic_ids == {}
    image, _, _ = _feed(_topic("a", TID), _topic("a", TID2), _part(0, TID))
    assert image.topic_ids == {"a": TID}


def test_the_library_answers_at_an_offset_a_time_or_the_end() -> None:
    from support import FIXTURES

    import kseg.metadata as library

    broker = FIXTURES / "broker" / "restarted-clean"
    assert library.image_at(broker, 16).image.replicas("orders", 1) is None
    assert library.image_at(broker, "2026-11-27T00:16:42Z").image.replicas("orders", 1) == [1]
    assert library.replicas(broker, "orders", 1) == [1]
    assert library.topic_config(broker, "compacted", "cleanup.policy") == "compact"
    assert library.topic_config(broker, "orders", "cleanup.policy") is None
