"""Internal-topic decoders (kseg.format.internal) against kafka-dump-log's own outputs.

Where a string is marked VERBATIM it is copied from Kafka's tests at commit 1eb7644
(core/src/test/scala/unit/kafka/tools/DumpLogSegmentsTest.scala, TransactionLogTest.scala);
the record bytes are rebuilt by hand from the schemas, one comment per field.  The other
expected texts are derived from Kafka's formatting code (reference §6.7) and say so.
"""

from __future__ import annotations

import base64

import pytest
from kafka_wire import NO_TAGS, a32, b32, ca, cb, cs, i8, i16, i32, i64, s16, u16, uuid, uv

from kseg.format import internal
from kseg.format.jvm_text import java_string_hash, scala_hash_set_order, topic_partition_hash
from kseg.format.messages import UNKNOWN_TAGS

SHARE_TOPIC = "Uj5wn_FqTXirEASvVZRY1w"
TOPIC_ID = "JiPG0GbKRRqpJrShexbMfw"
SEGMENT_ID = "X5HJ16TOTVq6t4OyiVmQOw"

# --------------------------------------------------------------------------- __consumer_offsets

CONSUMER_GROUP_METADATA_KEY = i16(3) + s16("group")  # record type 3; GroupId (int16 string: key not flexible)
CONSUMER_GROUP_METADATA_VALUE = i16(0) + i32(10) + NO_TAGS  # version 0; Epoch; tagged section


def test_offsets_valid_key_and_value() -> None:
    decoded = internal.decode_offsets_record(CONSUMER_GROUP_METADATA_KEY, CONSUMER_GROUP_METADATA_VALUE, 0)
    # VERBATIM (testOffsetsMessageParser)
    assert decoded.key_text == '{"type":"3","data":{"groupId":"group"}}'
    assert decoded.payload_text == '{"version":"0","data":{"epoch":10}}'
    assert decoded.as_json() == {
        "key": {"type": 3, "name": "ConsumerGroupMetadataKey", "data": {"groupId": "group"}},
        "value": {"version": 0, "name": "ConsumerGroupMetadataValue", "data": {"epoch": 10}},
    }
    assert decoded.complete and not decoded.kafka_aborts


SUBSCRIPTION_V3 = b"".join([  # ConsumerProtocol.serializeSubscription(Subscription([foo], null, [foo-0], 0, rack))
    i16(3),                              # version 3 (not flexible)
    a32(s16("foo")),                     # Topics
    b32(None),                           # UserData: null
    a32(s16("foo") + a32(i32(0))),       # OwnedPartitions (v1+): {Topic "foo", Partitions [0]}
    i32(0),                              # GenerationId (v2+)
    s16("rack"),                         # RackId (v3+)
])
ASSIGNMENT_V3 = b"".join([
    i16(3),                              # version 3
    a32(s16("foo") + a32(i32(0))),       # AssignedPartitions: {Topic "foo", Partitions [0]}
    b32(None),                           # UserData: null
])


def group_metadata_value(subscription: bytes, assignment: bytes) -> bytes:
    """GroupMetadataValue at version 4 (the first flexible one), one member."""
    member = b"".join([
        cs("member"),                    # memberId
        cs("instance"),                  # groupInstanceId (v3+, nullable)
        cs("client"),                    # clientId
        cs("host"),                      # clientHost
        i32(1000),                       # rebalanceTimeout (v1+)
        i32(100),                        # sessionTimeout
        cb(subscription),                # subscription: compact bytes
        cb(assignment),                  # assignment
        NO_TAGS,                         # member's tagged section
    ])
    return b"".join([
        i16(4),                          # value version
        cs("consumer"),                  # protocolType
        i32(10),                         # generation
        cs("range"),                     # protocol
        cs("member"),                    # leader
        i64(-1),                         # currentStateTimestamp (v2+)
        ca(member),                      # members
        NO_TAGS,
    ])


GROUP_METADATA_KEY = i16(2) + s16("group")  # record type 2; group


def test_offsets_expand_the_consumer_protocol() -> None:
    value = group_metadata_value(SUBSCRIPTION_V3, ASSIGNMENT_V3)
    decoded = internal.decode_offsets_record(GROUP_METADATA_KEY, value, 0)
    # VERBATIM (testOffsetsMessageParser, "Consumer embedded protocol is parsed if possible")
    assert decoded.key_text == '{"type":"2","data":{"group":"group"}}'
    assert decoded.payload_text == (
        '{"version":"4","data":{"protocolType":"consumer","generation":10,"protocol":"range",'
        '"leader":"member","currentStateTimestamp":-1,"members":[{"memberId":"member",'
        '"groupInstanceId":"instance","clientId":"client","clientHost":"host",'
        '"rebalanceTimeout":1000,"sessionTimeout":100,"subscription":{"topics":["foo"],'
        '"userData":null,"ownedPartitions":[{"topic":"foo","partitions":[0]}],'
        '"generationId":0,"rackId":"rack"},"assignment":{"assignedPartitions":'
        '[{"topic":"foo","partitions":[0]}],"userData":null}}]}}'
    )


def test_offsets_keep_an_unparsable_consumer_protocol_as_base64() -> None:
    value = group_metadata_value(b"Subscription", b"Assignment")
    decoded = internal.decode_offsets_record(GROUP_METADATA_KEY, value, 0)
    # VERBATIM (testOffsetsMessageParser, "Consumer embedded protocol is not parsed if malformed")
    assert decoded.payload_text == (
        '{"version":"4","data":{"protocolType":"consumer","generation":10,"protocol":"range",'
        '"leader":"member","currentStateTimestamp":-1,"members":[{"memberId":"member",'
        '"groupInstanceId":"instance","clientId":"client","clientHost":"host",'
        '"rebalanceTimeout":1000,"sessionTimeout":100,"subscription":"U3Vic2NyaXB0aW9u",'
        '"assignment":"QXNzaWdubWVudA=="}]}}'
    )
    assert decoded.complete  # the record itself decoded; Kafka keeps such bytes as they are


def test_offsets_tombstone_unknown_type_and_errors() -> None:
    tombstone = internal.decode_offsets_record(CONSUMER_GROUP_METADATA_KEY, None, 0)
    assert (tombstone.key_text, tombstone.payload_text) == ('{"type":"3","data":{"groupId":"group"}}', "<DELETE>")
    assert tombstone.value is None and tombstone.complete

    unknown = internal.decode_offsets_record(i16(32767) + s16("group"), CONSUMER_GROUP_METADATA_VALUE, 0)
    # VERBATIM
    assert (unknown.key_text, unknown.payload_text) == ("Unknown record type 32767 at offset 0, skipping.", None)
    assert unknown.problem.kind == "unknown-type"
    assert unknown.problem.raw_key == base64.b64encode(i16(32767) + s16("group")).decode()

    member_defaults = b"".join([  # new ConsumerGroupMemberMetadataValue() at v0 (Java's defaults: "", not null)
        i16(0),                          # value version
        cs(""), cs(""), cs(""), cs(""),  # InstanceId, RackId, ClientId, ClientHost
        ca(),                            # SubscribedTopicNames
        cs(""),                          # SubscribedTopicRegex
        i32(-1),                         # RebalanceTimeoutMs
        cs(""),                          # ServerAssignor
        NO_TAGS,                         # (ClassicMemberMetadata equals its default: not written)
    ])
    wrong = internal.decode_offsets_record(CONSUMER_GROUP_METADATA_KEY, member_defaults, 0)
    # VERBATIM ("Any parsing error is swallowed and reported"): read as ConsumerGroupMetadataValue, Epoch takes
    # 4 bytes, then "01" tagged field, tag 1, size ff ff ff ff 01 = 536870911
    assert wrong.key_text == (
        "Error at offset 0, skipping. Could not read record with version 0 from value's buffer due to: "
        "Error reading byte array of 536870911 byte(s): only 1 byte(s) available."
    )
    assert wrong.payload_text is None
    assert (wrong.problem.part, wrong.problem.offset) == ("value", 13)  # 2 + 4 + count + tag + 5-byte size
    assert wrong.key == {"type": 3, "name": "ConsumerGroupMetadataKey", "data": {"groupId": "group"}}


def test_offsets_missing_key_would_stop_kafka() -> None:
    decoded = internal.decode_offsets_record(None, None, 7)
    assert decoded.kafka_aborts and not decoded.complete
    assert decoded.key_text == ("Error at offset 7, skipping. Failed to decode message at offset 7 using offset "
                                "topic decoder (message had a missing key)")  # message VERBATIM


def test_offsets_short_key_and_unknown_value_version() -> None:
    short = internal.decode_offsets_record(b"\x00", None, 3)
    assert short.key_text == "Error at offset 3, skipping. Could not read version from key's buffer."
    commit_key = i16(1) + s16("g") + s16("t") + i32(0)
    future = internal.decode_offsets_record(commit_key, i16(9) + i64(1), 4)
    assert future.problem.kind == "unknown-version"
    assert future.key_text == (
        "Error at offset 4, skipping. unknown version 9 of OffsetCommitValue (kseg's schema has versions 0-4), "
        "raw value AAkAAAAAAAAAAQ=="
    )


@pytest.mark.parametrize(
    ("version", "body", "text"),
    [
        (1, i64(2) + s16("") + i64(1479457455691) + i64(1479543855691),  # offset, metadata, commit, expire (v1 only)
         '{"offset":2,"metadata":"","commitTimestamp":1479457455691,"expireTimestamp":1479543855691}'),
        (3, i64(35) + i32(-1) + s16("m") + i64(1560756288007),  # offset, leaderEpoch (v3+), metadata, commit
         '{"offset":35,"leaderEpoch":-1,"metadata":"m","commitTimestamp":1560756288007}'),
        (4, i64(0) + i32(5) + cs("") + i64(1) + NO_TAGS,  # v4: compact string and a tagged section
         '{"offset":0,"leaderEpoch":5,"metadata":"","commitTimestamp":1}'),
    ],
)
def test_offset_commit_value_versions(version: int, body: bytes, text: str) -> None:
    key = i16(1) + s16("g") + s16("t") + i32(0)  # OffsetCommitKey written at version 1: group, topic, partition
    decoded = internal.decode_offsets_record(key, i16(version) + body, 0)
    assert decoded.key_text == '{"type":"1","data":{"group":"g","topic":"t","partition":0}}'
    assert decoded.payload_text == f'{{"version":"{version}","data":{text}}}'


# --------------------------------------------------------------------------- __share_group_state

STATE_BATCH = i64(0) + i64(4) + i8(2) + i16(1) + NO_TAGS  # FirstOffset, LastOffset, DeliveryState, DeliveryCount
SHARE_KEY_FIELDS = s16("gs1") + uuid(SHARE_TOPIC) + i32(0)  # GroupId, TopicId, Partition


def test_share_state_snapshot_and_update() -> None:
    # Kafka 4.3.0's ShareSnapshotValue v0: SnapshotEpoch int32, StateEpoch, LeaderEpoch, StartOffset,
    # CreateTimestamp, WriteTimestamp, StateBatches, tags (DeliveryCompleteCount, tag 0, left at its default)
    snapshot_value = (i16(0) + i32(0) + i32(0) + i32(0) + i64(0) + i64(1700000000000) + i64(1700000000001)
                      + ca(STATE_BATCH) + NO_TAGS)
    snapshot = internal.decode_share_state_record(i16(0) + SHARE_KEY_FIELDS, snapshot_value, 0)
    # data as in 4.3.0's testShareGroupStateMessageParser (timestamps filled in); its value label is
    # "version" there, "type" in kseg's text until the dump text follows 4.3.0
    assert snapshot.key_text == (
        '{"type":"0","data":{"groupId":"gs1","topicId":"Uj5wn_FqTXirEASvVZRY1w","partition":0}}')
    assert snapshot.payload_text == (
        '{"type":"0","data":{"snapshotEpoch":0,"stateEpoch":0,"leaderEpoch":0,"startOffset":0,'
        '"createTimestamp":1700000000000,"writeTimestamp":1700000000001,"stateBatches":'
        '[{"firstOffset":0,"lastOffset":4,"deliveryState":2,"deliveryCount":1}]}}'
    )
    # ShareUpdateValue v0: SnapshotEpoch int32, LeaderEpoch, StartOffset, StateBatches, tags (no StateEpoch)
    update_value = i16(0) + i32(0) + i32(0) + i64(0) + ca(STATE_BATCH) + NO_TAGS
    update = internal.decode_share_state_record(i16(1) + SHARE_KEY_FIELDS, update_value, 0)
    assert update.key_text == (
        '{"type":"1","data":{"groupId":"gs1","topicId":"Uj5wn_FqTXirEASvVZRY1w","partition":0}}')
    assert update.payload_text == (
        '{"type":"0","data":{"snapshotEpoch":0,"leaderEpoch":0,"startOffset":0,"stateBatches":'
        '[{"firstOffset":0,"lastOffset":4,"deliveryState":2,"deliveryCount":1}]}}'
    )


def test_share_state_tombstone_unknown_and_error() -> None:
    assert internal.decode_share_state_record(i16(0) + SHARE_KEY_FIELDS, None, 0).payload_text == "<DELETE>"
    unknown = internal.decode_share_state_record(i16(32767) + SHARE_KEY_FIELDS, b"\x00\x00", 0)
    assert unknown.key_text == "Unknown record type 32767 at offset 0, skipping."
    # new ShareSnapshotValue() read as a ShareUpdateValue: StartOffset eats StartOffset's first half and
    # more, then a zero byte of CreateTimestamp = null StateBatches
    snapshot_defaults = i16(0) + i32(0) + i32(0) + i32(0) + i64(0) + i64(0) + i64(0) + ca() + NO_TAGS
    wrong = internal.decode_share_state_record(i16(1) + s16("group") + uuid(SHARE_TOPIC) + i32(0),
                                               snapshot_defaults, 0)
    assert wrong.key_text == ("Error at offset 0, skipping. Could not read record with version 0 from value's "
                              "buffer due to: non-nullable field stateBatches was serialized as null.")  # VERBATIM
    missing = internal.decode_share_state_record(None, None, 0)
    assert missing.kafka_aborts
    assert "share group state topic decoder (message had a missing key)" in missing.key_text


# --------------------------------------------------------------------------- __transaction_state


def transaction_value_v1(status: int, partitions: bytes, tags: bytes = NO_TAGS) -> bytes:
    return b"".join([
        i16(1),                          # value version 1 (flexible)
        i64(1334),                       # ProducerId
        i16(0),                          # ProducerEpoch
        i32(1000),                       # TransactionTimeoutMs
        i8(status),                      # TransactionStatus
        partitions,                      # TransactionPartitions (compact, nullable)
        i64(0),                          # TransactionLastUpdateTimestampMs
        i64(0),                          # TransactionStartTimestampMs
        tags,                            # PreviousProducerId/NextProducerId/ClientTransactionVersion live here
    ])


def test_transaction_record() -> None:
    partitions = ca(cs("topic") + ca(i32(0)) + NO_TAGS)  # {Topic "topic", PartitionIds [0]}
    decoded = internal.decode_transaction_record(i16(0) + s16("id"), transaction_value_v1(1, partitions), 0)
    # VERBATIM (TransactionLogTest.testTransactionMetadataParsing)
    assert decoded.key_text == "transaction_metadata::transactionalId=id"
    assert decoded.payload_text == ("producerId:1334,producerEpoch:0,state=Ongoing,partitions=[topic-0],"
                                    "txnLastUpdateTimestamp=0,txnTimeoutMs=1000")
    assert decoded.value["state"] == "Ongoing"
    tombstone = internal.decode_transaction_record(i16(0) + s16("id"), None, 0)
    assert (tombstone.key_text, tombstone.payload_text) == ("transaction_metadata::transactionalId=id", "<DELETE>")


def test_transaction_record_v0_and_empty_state() -> None:
    value = i16(0) + i64(5) + i16(2) + i32(60000) + i8(0) + i32(-1) + i64(77) + i64(-1)  # Empty: partitions null
    decoded = internal.decode_transaction_record(i16(0) + s16("tx"), value, 0)
    assert decoded.payload_text == ("producerId:5,producerEpoch:2,state=Empty,partitions=[],"
                                    "txnLastUpdateTimestamp=77,txnTimeoutMs=60000")


def test_transaction_future_tagged_fields_are_kept() -> None:
    # TransactionLogTest.testDeserializeFutureTransactionLogValue: unknown tags 100 and 101 at both levels
    extra = uv(2) + uv(100) + uv(4) + cs("foo") + uv(101) + uv(4) + i32(4000)
    partitions = ca(cs("topic") + ca(i32(1)) + extra)
    decoded = internal.decode_transaction_record(i16(0) + s16("id"), transaction_value_v1(4, partitions, extra), 0)
    assert decoded.complete
    data = decoded.value["data"]
    assert [t["tag"] for t in data[UNKNOWN_TAGS]] == [100, 101]
    assert [t["tag"] for t in data["transactionPartitions"][0][UNKNOWN_TAGS]] == [100, 101]
    assert "state=CompleteCommit,partitions=[topic-1]" in decoded.payload_text


def test_transaction_unknown_versions_and_states() -> None:
    unknown_key = internal.decode_transaction_record(i16(1) + s16("id"), b"\x00\x00", 0)
    assert (unknown_key.key_text, unknown_key.payload_text) == ("unknown::version=1", None)
    bad_state = internal.decode_transaction_record(i16(0) + s16("id"), transaction_value_v1(9, ca()), 5)
    assert bad_state.kafka_aborts
    assert bad_state.key_text == ("Error at offset 5, skipping. Unknown transaction state id 9 from the "
                                  "transaction status message")
    future = internal.decode_transaction_record(i16(0) + s16("id"), i16(2) + b"\x00", 5)
    assert future.kafka_aborts and "Unknown version 2 from the transaction log message value" in future.key_text


def test_partition_order_is_the_scala_hash_set_order() -> None:
    # Worked by hand: "foo".hashCode() = 101574; TopicPartition hash = 31 * (31 + p) + 101574 = 102535 + 31p;
    # improveHash xors in h >>> 16 (= 1); bucket = h & 15: p0 -> 6, p1 -> 7, p2 -> 4.  Iteration is by bucket.
    assert java_string_hash("foo") == 101574 and java_string_hash("hello") == 99162322
    assert [topic_partition_hash("foo", p) for p in range(3)] == [102535, 102566, 102597]
    assert scala_hash_set_order([("foo", [0, 1, 2])]) == [("foo", 2), ("foo", 0), ("foo", 1)]
    assert scala_hash_set_order([("foo", [1, 1])]) == [("foo", 1)]  # a set: duplicates go


# --------------------------------------------------------------------------- __cluster_metadata

REGISTER_BROKER_V0 = b"".join([  # new RegisterBrokerRecord().setBrokerId(0).setBrokerEpoch(10), version 0
    uv(1), uv(0), uv(0),             # frame version 1, api key 0, version 0
    i32(0),                          # BrokerId
    bytes(16),                       # IncarnationId: Uuid.ZERO_UUID
    i64(10),                         # BrokerEpoch
    ca(),                            # EndPoints
    ca(),                            # Features
    cs(""),                          # Rack (nullable; Java's default is "")
    b"\x01",                         # Fenced: default true
    NO_TAGS,
])


def test_metadata_records() -> None:
    broker = internal.decode_metadata_record(None, REGISTER_BROKER_V0, 0)
    assert broker.key_text is None
    # derived from RegisterBrokerRecordJsonConverter (DumpLogSegmentsTest only checks "BROKER_RECORD" is there)
    assert broker.payload_text == (
        '{"type":"REGISTER_BROKER_RECORD","version":0,"data":{"brokerId":0,"incarnationId":"AAAAAAAAAAAAAAAAAAAAAA",'
        '"brokerEpoch":10,"endPoints":[],"features":[],"rack":"","fenced":true}}'
    )
    topic_value = uv(1) + uv(2) + uv(0) + cs("test-topic") + uuid(TOPIC_ID) + NO_TAGS  # frame; Name, TopicId
    topic = internal.decode_metadata_record(None, topic_value, 2)
    assert topic.payload_text == (
        '{"type":"TOPIC_RECORD","version":0,"data":{"name":"test-topic","topicId":"JiPG0GbKRRqpJrShexbMfw"}}'
    )
    change = b"".join([  # PartitionChangeRecord v0: everything but PartitionId and TopicId is tagged
        uv(1), uv(5), uv(0),         # frame, api key 5, version 0
        i32(0), uuid(TOPIC_ID),      # PartitionId, TopicId
        uv(2),                       # 2 tagged fields
        uv(0) + uv(4) + ca(i32(0), i32(1), i32(2)),  # tag 0 Isr [0, 1, 2] (size 13; Kafka ignores it)
        uv(1) + uv(4) + i32(1),      # tag 1 Leader 1
    ])
    assert internal.decode_metadata_record(None, change, 3).payload_text == (
        '{"type":"PARTITION_CHANGE_RECORD","version":0,"data":{"partitionId":0,'
        '"topicId":"JiPG0GbKRRqpJrShexbMfw","isr":[0,1,2],"leader":1}}'
    )


@pytest.mark.parametrize(
    ("value", "text"),
    [
        # testDumpMetadataRecords' bogus record: writeUnsignedVarint(10000) twice
        (uv(10000) + uv(10000), "Could not deserialize metadata record due to unknown frame version 10000"
                                "(only frame version 1 is supported)"),
        (uv(0), "Could not deserialize metadata record with frame version 0. Note that upgrades from the "
                "preview release of KRaft in 2.8 to newer versions are not supported."),
        (uv(1) + uv(6) + uv(0), "org.apache.kafka.common.errors.UnsupportedVersionException: Unknown metadata id 6"),
        (uv(1) + uv(2) + uv(0) + cs("t"), "Failed to deserialize record with type 2"),
        (uv(1) + uv(20) + uv(0) + NO_TAGS + b"\x00\x00", "Found 2 byte(s) of garbage after 20"),
        (uv(1) + uv(40000), "Value for type was too large."),
        (b"\x81", "Error while reading frame version"),
    ],
)
def test_metadata_errors(value: bytes, text: str) -> None:
    decoded = internal.decode_metadata_record(None, value, 42)
    assert decoded.payload_text == f"Error at 42, skipping. {text}"
    assert not decoded.complete and not decoded.kafka_aborts


def test_metadata_unknown_version_is_shown_raw() -> None:
    decoded = internal.decode_metadata_record(None, uv(1) + uv(2) + uv(7) + b"\x01", 1)
    assert decoded.problem.kind == "unknown-version"
    assert decoded.payload_text == ("Error at 1, skipping. unknown version 7 of TopicRecord "
                                    "(kseg's schema has versions 0), raw value AQIHAQ==")


def test_metadata_historical_variant() -> None:
    # PartitionRecord v1 as trunk wrote it in November 2023: ELR tags 1 and 2 instead of Directories
    value = b"".join([
        uv(1), uv(3), uv(1),         # frame, PartitionRecord, version 1
        i32(0), uuid(TOPIC_ID),      # PartitionId, TopicId
        ca(i32(1)), ca(i32(1)),      # Replicas, Isr
        ca(), ca(),                  # RemovingReplicas, AddingReplicas
        i32(1), i32(0), i32(0),      # Leader, LeaderEpoch, PartitionEpoch
        uv(2), uv(1), uv(1), ca(), uv(2), uv(1), ca(),  # tags 1 and 2: empty arrays
    ])
    decoded = internal.decode_metadata_record(None, value, 24)
    assert decoded.complete
    assert decoded.value["schemaVariant"]["revision"] == "a35e021925d2ac371497a823a5ae81271193a3fd"
    assert decoded.payload_text.endswith('"partitionEpoch":0,"eligibleLeaderReplicas":[],"lastKnownELR":[]}}')


# --------------------------------------------------------------------------- control records


def control(type_id: int) -> bytes:
    return i16(0) + i16(type_id)  # control key: version 0, type


def test_control_records() -> None:
    header = internal.describe_control_record(control(3), i16(0) + i64(10000) + NO_TAGS)
    assert header.text == 'SnapshotHeader {"version":0,"lastContainedLogTimestamp":10000}'
    footer = internal.describe_control_record(control(4), i16(0) + NO_TAGS)
    assert footer.text == 'SnapshotFooter {"version":0}'
    kraft = internal.describe_control_record(control(5), i16(0) + i16(1) + NO_TAGS)
    assert kraft.text == 'KRaftVersion {"version":0,"kRaftVersion":1}'
    voter = b"".join([
        i32(1), uuid(SEGMENT_ID),                                  # VoterId, VoterDirectoryId
        ca(cs("CONTROLLER") + cs("localhost") + u16(9093) + NO_TAGS),  # Endpoints
        i16(0) + i16(1) + NO_TAGS,                                 # KRaftVersionFeature (struct)
        NO_TAGS,
    ])
    voters = internal.describe_control_record(control(6), i16(0) + ca(voter) + NO_TAGS)
    assert voters.text == (
        'KRaftVoters {"version":0,"voters":[{"voterId":1,"voterDirectoryId":"X5HJ16TOTVq6t4OyiVmQOw",'
        '"endpoints":[{"name":"CONTROLLER","host":"localhost","port":9093}],'
        '"kRaftVersionFeature":{"minSupportedVersion":0,"maxSupportedVersion":1}}]}'
    )
    leader = internal.describe_control_record(control(2), i16(0) + i32(1) + ca(i32(1) + NO_TAGS) + ca() + NO_TAGS)
    assert leader.text == "controlType: LEADER_CHANGE(2)"
    assert leader.data == {"version": 0, "leaderId": 1, "voters": [{"voterId": 1}], "grantingVoters": []}
    commit = internal.describe_control_record(control(1), i16(0) + i32(5))
    assert commit.text == "endTxnMarker: COMMIT coordinatorEpoch: 5"  # reference §6.9
    assert internal.describe_control_record(control(9), b"").text == "controlType: UNKNOWN(9)"
    broken = internal.describe_control_record(control(3), b"\x00")
    assert broken.problem and broken.data is None


# --------------------------------------------------------------------------- __remote_log_metadata


def topic_id_partition(name: str, topic_id: str, partition: int) -> bytes:
    return cs(name) + uuid(topic_id) + i32(partition) + NO_TAGS  # TopicIdPartitionEntry


def test_remote_partition_delete() -> None:
    value = b"".join([
        uv(1), uv(2), uv(0),                     # frame, RemotePartitionDeleteMetadataRecord, version 0
        topic_id_partition("foo", TOPIC_ID, 0),  # TopicIdPartition
        i32(0),                                  # BrokerId
        i64(0),                                  # EventTimestampMs
        i8(0),                                   # RemotePartitionDeleteState: DELETE_PARTITION_MARKED
        NO_TAGS,
    ])
    decoded = internal.decode_remote_log_record(None, value, 0)
    # VERBATIM format (testDumpRemoteLogMetadataOneRecordOneBatch), topic id filled in
    assert decoded.payload_text == (f"RemotePartitionDeleteMetadata{{topicPartition={TOPIC_ID}:foo-0, "
                                    "state=DELETE_PARTITION_MARKED, eventTimestampMs=0, brokerId=0}")


def test_remote_segment_update() -> None:
    value = b"".join([
        uv(1), uv(1), uv(0),                     # frame, RemoteLogSegmentMetadataUpdateRecord, version 0
        topic_id_partition("foo", TOPIC_ID, 0),  # RemoteLogSegmentId.TopicIdPartition
        uuid(SEGMENT_ID), NO_TAGS,               # RemoteLogSegmentId.Id, its tagged section
        i32(0), i64(0),                          # BrokerId, EventTimestampMs
        cb(bytes([0, 1, 2, 3])),                 # CustomMetadata
        i8(1),                                   # RemoteLogSegmentState: COPY_SEGMENT_FINISHED
        NO_TAGS,
    ])
    decoded = internal.decode_remote_log_record(None, value, 0)
    # VERBATIM format (testDumpRemoteLogMetadataMultipleRecordsOneBatch)
    assert decoded.payload_text == (
        f"RemoteLogSegmentMetadataUpdate{{remoteLogSegmentId=RemoteLogSegmentId{{topicIdPartition={TOPIC_ID}:foo-0, "
        f"id={SEGMENT_ID}}}, customMetadata=Optional[CustomMetadata{{4 bytes}}], state=COPY_SEGMENT_FINISHED, "
        "eventTimestampMs=0, brokerId=0}"
    )


def segment_metadata(epochs: bytes, start: int = 0) -> bytes:
    return b"".join([
        uv(1), uv(0), uv(0),                     # frame, RemoteLogSegmentMetadataRecord, version 0
        topic_id_partition("foo", TOPIC_ID, 3), uuid(SEGMENT_ID), NO_TAGS,  # RemoteLogSegmentId
        i64(start), i64(99),                     # StartOffset, EndOffset
        i32(1), i64(1700), i64(1800),            # BrokerId, MaxTimestampMs, EventTimestampMs
        epochs,                                  # SegmentLeaderEpochs
        i32(4096),                               # SegmentSizeInBytes
        cb(None),                                # CustomMetadata: null
        i8(0),                                   # RemoteLogSegmentState: COPY_SEGMENT_STARTED
        NO_TAGS,
    ])


def test_remote_segment_metadata_and_its_checks() -> None:
    epochs = ca(i32(2) + i64(50) + NO_TAGS, i32(0) + i64(0) + NO_TAGS)  # printed sorted by epoch (TreeMap)
    decoded = internal.decode_remote_log_record(None, segment_metadata(epochs), 9)
    # derived from RemoteLogSegmentMetadata.toString
    assert decoded.payload_text == (
        f"RemoteLogSegmentMetadata{{remoteLogSegmentId=RemoteLogSegmentId{{topicIdPartition={TOPIC_ID}:foo-3, "
        f"id={SEGMENT_ID}}}, startOffset=0, endOffset=99, brokerId=1, maxTimestampMs=1700, eventTimestampMs=1800, "
        "segmentLeaderEpochs={0=0, 2=50}, segmentSizeInBytes=4096, customMetadata=Optional.empty, "
        "state=COPY_SEGMENT_STARTED}"
    )
    empty = internal.decode_remote_log_record(None, segment_metadata(ca()), 9)
    assert empty.payload_text == "Error at offset 9, skipping. segmentLeaderEpochs can not be null or empty"
    negative = internal.decode_remote_log_record(None, segment_metadata(epochs, start=-1), 9)
    assert negative.payload_text == ("Error at offset 9, skipping. Unexpected start offset = -1. StartOffset for a "
                                     "remote segment cannot be negative")


def test_remote_corrupted_record() -> None:
    decoded = internal.decode_remote_log_record(None, b"corrupted", 0)
    # testDumpRemoteLogMetadataWithCorruption checks for "Could not deserialize metadata record"
    assert decoded.payload_text == ("Error at offset 0, skipping. Could not deserialize metadata record due to "
                                    "unknown frame version 99(only frame version 1 is supported)")


def test_decoders_by_option_name() -> None:
    assert sorted(internal.DECODERS) == [
        "cluster-metadata", "offsets", "remote-log-metadata", "share-group-state", "transaction-log"]
