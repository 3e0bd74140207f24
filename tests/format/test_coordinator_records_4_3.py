"""The coordinator records Kafka 4.3.0 added or changed, decoded into kseg's structured form.

kafka-clients 4.3.0 (the interop harness's jar) does not carry the group and share coordinators'
generated classes, so these vectors are written by hand, one comment per field, from Kafka 4.3.0's
definitions (``group-coordinator/src/main/resources/common/message/StreamsGroup*.json`` etc., the
same files as ``shared/reference/kafka-4.3.0-messages/``), and the expected values are the fields
written, not what kseg's decoder says.  The dump text of these records is pinned elsewhere
(``fixtures/internal/golden/synthetic-streams-groups.txt``); here only the parse is checked.
"""

from __future__ import annotations

from typing import Any

import pytest
from kafka_wire import NO_TAGS, ca, cs, i8, i16, i32, i64, s16, u16, uuid, uv

from kseg.format import internal

TOPIC = "Uj5wn_FqTXirEASvVZRY1w"


def tag(number: int, data: bytes) -> bytes:
    return uv(number) + uv(len(data)) + data


def key(record_type: int, *strings: str) -> bytes:
    """A coordinator key: int16 record type, then the key's int16-length strings (version-0 layout)."""
    return i16(record_type) + b"".join(s16(s) for s in strings)


def decoded(record_type: int, key_strings: tuple[str, ...], value: bytes | None) -> tuple[Any, Any]:
    result = internal.decode_offsets_record(key(record_type, *key_strings), value, 5)
    assert result.problem is None, result.problem
    return result.key, result.value


STREAMS_CASES = [
    pytest.param(
        17, ("app",),
        i16(0) + i32(4) + i64(-2)                       # version 0; Epoch, MetadataHash
        + uv(2) + tag(0, i32(3))                        # tags: ValidatedTopologyEpoch (0)
        + tag(1, ca(cs("k") + cs("v") + NO_TAGS)),      # LastAssignmentConfigs (1): Key, Value, tags
        "StreamsGroupMetadataKey", {"groupId": "app"},
        "StreamsGroupMetadataValue",
        {"epoch": 4, "metadataHash": -2, "validatedTopologyEpoch": 3,
         "lastAssignmentConfigs": [{"key": "k", "value": "v"}]},
        id="17-metadata"),
    pytest.param(
        17, ("app",),
        i16(0) + i32(1) + i64(0) + NO_TAGS,             # tagged fields absent: defaults, not shown
        "StreamsGroupMetadataKey", {"groupId": "app"},
        "StreamsGroupMetadataValue", {"epoch": 1, "metadataHash": 0},
        id="17-metadata-defaults"),
    pytest.param(
        19, ("app", "m-1"),
        i16(0) + cs(None) + cs("r") + cs("c") + cs("/h")  # InstanceId null, RackId, ClientId, ClientHost
        + i32(-1) + i32(2) + cs("p")                    # RebalanceTimeoutMs, TopologyEpoch, ProcessId
        + i8(1) + cs("h") + u16(65535) + NO_TAGS        # UserEndpoint: present, Host, Port (uint16), tags
        + ca(cs("a") + cs("b") + NO_TAGS) + NO_TAGS,    # ClientTags: Key, Value; tags
        "StreamsGroupMemberMetadataKey", {"groupId": "app", "memberId": "m-1"},
        "StreamsGroupMemberMetadataValue",
        {"instanceId": None, "rackId": "r", "clientId": "c", "clientHost": "/h", "rebalanceTimeoutMs": -1,
         "topologyEpoch": 2, "processId": "p", "userEndpoint": {"host": "h", "port": 65535},
         "clientTags": [{"key": "a", "value": "b"}]},
        id="19-member"),
    pytest.param(
        19, ("app", "m-2"),
        i16(0) + cs("i") + cs(None) + cs("c") + cs("/h") + i32(1) + i32(2) + cs("p")
        + i8(-1) + ca() + NO_TAGS,                      # UserEndpoint null (marker -1), no ClientTags
        "StreamsGroupMemberMetadataKey", {"groupId": "app", "memberId": "m-2"},
        "StreamsGroupMemberMetadataValue",
        {"instanceId": "i", "rackId": None, "clientId": "c", "clientHost": "/h", "rebalanceTimeoutMs": 1,
         "topologyEpoch": 2, "processId": "p", "userEndpoint": None, "clientTags": []},
        id="19-member-null-endpoint"),
    pytest.param(
        20, ("app",),
        i16(0) + i32(7) + uv(1) + tag(0, i64(1700000000000)),  # AssignmentEpoch; tag 0 AssignmentTimestamp
        "StreamsGroupTargetAssignmentMetadataKey", {"groupId": "app"},
        "StreamsGroupTargetAssignmentMetadataValue", {"assignmentEpoch": 7, "assignmentTimestamp": 1700000000000},
        id="20-target-metadata"),
    pytest.param(
        21, ("app", "m-1"),
        i16(0) + ca(cs("0") + ca(i32(0), i32(3)) + NO_TAGS)   # ActiveTasks: SubtopologyId, Partitions
        + ca() + ca(cs("1") + ca(i32(1)) + NO_TAGS) + NO_TAGS,  # StandbyTasks, WarmupTasks; tags
        "StreamsGroupTargetAssignmentMemberKey", {"groupId": "app", "memberId": "m-1"},
        "StreamsGroupTargetAssignmentMemberValue",
        {"activeTasks": [{"subtopologyId": "0", "partitions": [0, 3]}], "standbyTasks": [],
         "warmupTasks": [{"subtopologyId": "1", "partitions": [1]}]},
        id="21-target-member"),
    pytest.param(
        22, ("app", "m-1"),
        i16(0) + i32(4) + i32(3) + i8(1)                # MemberEpoch, PreviousMemberEpoch, State
        + ca(cs("0") + ca(i32(0)) + uv(1) + tag(0, ca(i32(4))))  # ActiveTasks with tag 0 AssignmentEpochs
        + ca() + ca()                                   # StandbyTasks, WarmupTasks
        + ca(cs("0") + ca(i32(1)) + NO_TAGS) + ca() + ca() + NO_TAGS,  # the three *PendingRevocation; tags
        "StreamsGroupCurrentMemberAssignmentKey", {"groupId": "app", "memberId": "m-1"},
        "StreamsGroupCurrentMemberAssignmentValue",
        {"memberEpoch": 4, "previousMemberEpoch": 3, "state": 1,
         "activeTasks": [{"subtopologyId": "0", "partitions": [0], "assignmentEpochs": [4]}],
         "standbyTasks": [], "warmupTasks": [],
         "activeTasksPendingRevocation": [{"subtopologyId": "0", "partitions": [1]}],
         "standbyTasksPendingRevocation": [], "warmupTasksPendingRevocation": []},
        id="22-current-member"),
    pytest.param(
        23, ("app",),
        i16(0) + i32(4) + ca(                           # Epoch, Subtopologies:
            cs("0") + ca(cs("in")) + ca(cs("in-.*"))    # SubtopologyId, SourceTopics, SourceTopicRegex
            + ca(cs("cl") + i32(0) + i16(0) + ca(cs("x") + cs("y") + NO_TAGS) + NO_TAGS)  # StateChangelogTopics
            + ca(cs("rp"))                              # RepartitionSinkTopics
            + ca(cs("rp") + i32(4) + i16(-1) + ca() + NO_TAGS)  # RepartitionSourceTopics (TopicInfo)
            + ca(ca(i16(0)) + ca() + ca(i16(0), i16(1)) + NO_TAGS)  # CopartitionGroups: int16 indexes
            + NO_TAGS) + NO_TAGS,
        "StreamsGroupTopologyKey", {"groupId": "app"},
        "StreamsGroupTopologyValue",
        {"epoch": 4, "subtopologies": [{
            "subtopologyId": "0", "sourceTopics": ["in"], "sourceTopicRegex": ["in-.*"],
            "stateChangelogTopics": [{"name": "cl", "partitions": 0, "replicationFactor": 0,
                                      "topicConfigs": [{"key": "x", "value": "y"}]}],
            "repartitionSinkTopics": ["rp"],
            "repartitionSourceTopics": [{"name": "rp", "partitions": 4, "replicationFactor": -1,
                                         "topicConfigs": []}],
            "copartitionGroups": [{"sourceTopics": [0], "sourceTopicRegex": [], "repartitionSourceTopics": [0, 1]}],
        }]},
        id="23-topology"),
    pytest.param(
        16, ("g", "t.*"),                               # ConsumerGroupRegularExpressionKey: GroupId, RegularExpression
        i16(0) + ca(cs("t1"), cs("t2")) + i64(9) + i64(1700000000000) + NO_TAGS,  # Topics, Version, Timestamp
        "ConsumerGroupRegularExpressionKey", {"groupId": "g", "regularExpression": "t.*"},
        "ConsumerGroupRegularExpressionValue", {"topics": ["t1", "t2"], "version": 9, "timestamp": 1700000000000},
        id="16-regular-expression"),
]


@pytest.mark.parametrize(
    ("record_type", "key_strings", "value", "key_name", "key_data", "value_name", "value_data"), STREAMS_CASES)
def test_new_record_types_decode_into_their_fields(record_type: int, key_strings: tuple[str, ...], value: bytes,
                                                   key_name: str, key_data: dict, value_name: str,
                                                   value_data: dict) -> None:
    got_key, got_value = decoded(record_type, key_strings, value)
    assert got_key == {"type": record_type, "name": key_name, "data": key_data}
    assert got_value == {"version": 0, "name": value_name, "data": value_data}


def test_a_streams_tombstone_keeps_its_key() -> None:
    got_key, got_value = decoded(19, ("app", "m-1"), None)
    assert got_key == {"type": 19, "name": "StreamsGroupMemberMetadataKey",
                       "data": {"groupId": "app", "memberId": "m-1"}}
    assert got_value is None


def test_keys_are_read_with_their_version_0_layout_whatever_the_record_type() -> None:
    """Type 1's key is OffsetCommitKey, whose only version is 0; Kafka reads it "at version 1" all the same."""
    # the error text still names the record type as the version, as Kafka's does
    short = internal.decode_offsets_record(key(1, "g", "t"), None, 0)  # partition missing
    assert short.problem is not None and short.problem.field == "partition"
    assert "Could not read record with version 1 from key's buffer" in (short.key_text or "")
    result = internal.decode_offsets_record(key(1, "g", "t") + i32(3), i16(1) + i64(5) + s16("") + i64(1) + i64(2), 0)
    assert result.key == {"type": 1, "name": "OffsetCommitKey", "data": {"group": "g", "topic": "t", "partition": 3}}
    assert result.value == {"version": 1, "name": "OffsetCommitValue",
                            "data": {"offset": 5, "metadata": "", "commitTimestamp": 1, "expireTimestamp": 2}}


def test_type_0_is_the_legacy_offset_commit_with_value_version_0_only() -> None:
    legacy_key = key(0, "g", "t") + i32(0)  # LegacyOffsetCommitKey: group, topic, partition
    ok = internal.decode_offsets_record(legacy_key, i16(0) + i64(7) + s16("m") + i64(9), 0)  # offset, metadata, commit
    assert ok.key == {"type": 0, "name": "LegacyOffsetCommitKey", "data": {"group": "g", "topic": "t", "partition": 0}}
    assert ok.value == {"version": 0, "name": "LegacyOffsetCommitValue",
                        "data": {"offset": 7, "metadata": "m", "commitTimestamp": 9}}
    # 4.3.0's LegacyOffsetCommitValue has only version 0 (CoordinatorRecordSerde: UnknownRecordVersionException)
    newer = internal.decode_offsets_record(legacy_key, i16(1) + i64(7) + s16("m") + i64(9) + i64(10), 0)
    assert newer.problem is not None and newer.problem.kind == "unknown-version"


@pytest.mark.parametrize("record_type", [9, 18, 24])
def test_record_types_kafka_4_3_does_not_know_stay_unknown(record_type: int) -> None:
    result = internal.decode_offsets_record(key(record_type, "g"), i16(0) + NO_TAGS, 0)
    assert result.problem is not None and result.problem.kind == "unknown-type"
    assert result.problem.raw_key is not None


def test_share_snapshot_value_in_its_4_3_layout() -> None:
    snapshot_key = i16(0) + s16("gs") + uuid(TOPIC) + i32(2)  # type 0; GroupId, TopicId, Partition
    value = (i16(0) + i32(70000) + i32(1) + i32(2) + i64(10)  # SnapshotEpoch (int32), StateEpoch, LeaderEpoch, StartOffset
             + i64(100) + i64(101)                            # CreateTimestamp, WriteTimestamp
             + ca(i64(10) + i64(19) + i8(2) + i16(1) + NO_TAGS)  # StateBatches: First/LastOffset, State, Count
             + uv(1) + tag(0, i32(5)))                        # tag 0: DeliveryCompleteCount
    result = internal.decode_share_state_record(snapshot_key, value, 0)
    assert result.problem is None
    assert result.key == {"type": 0, "name": "ShareSnapshotKey", "data": {"groupId": "gs", "topicId": TOPIC, "partition": 2}}
    assert result.value == {"version": 0, "name": "ShareSnapshotValue", "data": {
        "snapshotEpoch": 70000, "stateEpoch": 1, "leaderEpoch": 2, "startOffset": 10, "deliveryCompleteCount": 5,
        "createTimestamp": 100, "writeTimestamp": 101,
        "stateBatches": [{"firstOffset": 10, "lastOffset": 19, "deliveryState": 2, "deliveryCount": 1}]}}
