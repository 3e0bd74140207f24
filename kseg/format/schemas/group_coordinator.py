"""``__consumer_offsets`` record schemas (the group coordinator's records).

Transcribed from apache/kafka ``group-coordinator/src/main/resources/common/message/``
at commit 1eb7644349cb07139d6a3c1ad1986979647cac99 (2024-10-25, version 4.0.0-SNAPSHOT).
Each ``message(...)`` names its source file, ``validVersions`` and ``flexibleVersions``;
fields keep Kafka's names, types, versions, nullable/tagged versions, tags and defaults, in
Kafka's order.  Left out because they do not change what is read or printed: ``about``,
``entityType``, ``mapKey``, ``ignorable``, ``zeroCopy``.  A field without ``versions`` in
Kafka's file takes its ``taggedVersions`` (as Kafka's generator does); here both are written.
``tests/format/test_schema_transcription.py`` compares this file with the source.
"""

from kseg.format.messages import field, message

_DIR = "group-coordinator/src/main/resources/common/message/"

CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT_KEY = message(
    "ConsumerGroupCurrentMemberAssignmentKey", valid="8", flexible="none",
    source=_DIR + "ConsumerGroupCurrentMemberAssignmentKey.json",
    fields=[
        field("GroupId", "string", "8"),
        field("MemberId", "string", "8"),
    ],
)

# commonStructs.TopicPartitions of ConsumerGroupCurrentMemberAssignmentValue
_TOPIC_PARTITIONS = [
    field("TopicId", "uuid", "0+"),
    field("Partitions", "[]int32", "0+"),
]
CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT_VALUE = message(
    "ConsumerGroupCurrentMemberAssignmentValue", valid="0", flexible="0+",
    source=_DIR + "ConsumerGroupCurrentMemberAssignmentValue.json",
    fields=[
        field("MemberEpoch", "int32", "0+"),
        field("PreviousMemberEpoch", "int32", "0+"),
        field("State", "int8", "0+"),
        field("AssignedPartitions", "[]TopicPartitions", "0+", fields=_TOPIC_PARTITIONS),
        field("PartitionsPendingRevocation", "[]TopicPartitions", "0+", fields=_TOPIC_PARTITIONS),
    ],
)

CONSUMER_GROUP_MEMBER_METADATA_KEY = message(
    "ConsumerGroupMemberMetadataKey", valid="5", flexible="none",
    source=_DIR + "ConsumerGroupMemberMetadataKey.json",
    fields=[
        field("GroupId", "string", "5"),
        field("MemberId", "string", "5"),
    ],
)

CONSUMER_GROUP_MEMBER_METADATA_VALUE = message(
    "ConsumerGroupMemberMetadataValue", valid="0", flexible="0+",
    source=_DIR + "ConsumerGroupMemberMetadataValue.json",
    fields=[
        field("InstanceId", "string", "0+", nullable="0+"),
        field("RackId", "string", "0+", nullable="0+"),
        field("ClientId", "string", "0+"),
        field("ClientHost", "string", "0+"),
        field("SubscribedTopicNames", "[]string", "0+"),
        field("SubscribedTopicRegex", "string", "0+", nullable="0+"),
        field("RebalanceTimeoutMs", "int32", "0+", default="-1"),
        field("ServerAssignor", "string", "0+", nullable="0+"),
        field("ClassicMemberMetadata", "ClassicMemberMetadata", "0+",
              nullable="0+", tagged="0+", tag=0, fields=[
            field("SessionTimeoutMs", "int32", "0+"),
            field("SupportedProtocols", "[]ClassicProtocol", "0+", fields=[
                field("Name", "string", "0+"),
                field("Metadata", "bytes", "0+"),
            ]),
        ]),
    ],
)

CONSUMER_GROUP_METADATA_KEY = message(
    "ConsumerGroupMetadataKey", valid="3", flexible="none",
    source=_DIR + "ConsumerGroupMetadataKey.json",
    fields=[
        field("GroupId", "string", "3"),
    ],
)

CONSUMER_GROUP_METADATA_VALUE = message(
    "ConsumerGroupMetadataValue", valid="0", flexible="0+",
    source=_DIR + "ConsumerGroupMetadataValue.json",
    fields=[
        field("Epoch", "int32", "0+"),
    ],
)

CONSUMER_GROUP_PARTITION_METADATA_KEY = message(
    "ConsumerGroupPartitionMetadataKey", valid="4", flexible="none",
    source=_DIR + "ConsumerGroupPartitionMetadataKey.json",
    fields=[
        field("GroupId", "string", "4"),
    ],
)

CONSUMER_GROUP_PARTITION_METADATA_VALUE = message(
    "ConsumerGroupPartitionMetadataValue", valid="0", flexible="0+",
    source=_DIR + "ConsumerGroupPartitionMetadataValue.json",
    fields=[
        field("Topics", "[]TopicMetadata", "0+", fields=[
            field("TopicId", "uuid", "0+"),
            field("TopicName", "string", "0+"),
            field("NumPartitions", "int32", "0+"),
            field("PartitionMetadata", "[]PartitionMetadata", "0+", fields=[
                field("Partition", "int32", "0+"),
                field("Racks", "[]string", "0+"),
            ]),
        ]),
    ],
)

CONSUMER_GROUP_TARGET_ASSIGNMENT_MEMBER_KEY = message(
    "ConsumerGroupTargetAssignmentMemberKey", valid="7", flexible="none",
    source=_DIR + "ConsumerGroupTargetAssignmentMemberKey.json",
    fields=[
        field("GroupId", "string", "7"),
        field("MemberId", "string", "7"),
    ],
)

CONSUMER_GROUP_TARGET_ASSIGNMENT_MEMBER_VALUE = message(
    "ConsumerGroupTargetAssignmentMemberValue", valid="0", flexible="0+",
    source=_DIR + "ConsumerGroupTargetAssignmentMemberValue.json",
    fields=[
        field("TopicPartitions", "[]TopicPartition", "0+", fields=[
            field("TopicId", "uuid", "0+"),
            field("Partitions", "[]int32", "0+"),
        ]),
    ],
)

CONSUMER_GROUP_TARGET_ASSIGNMENT_METADATA_KEY = message(
    "ConsumerGroupTargetAssignmentMetadataKey", valid="6", flexible="none",
    source=_DIR + "ConsumerGroupTargetAssignmentMetadataKey.json",
    fields=[
        field("GroupId", "string", "6"),
    ],
)

CONSUMER_GROUP_TARGET_ASSIGNMENT_METADATA_VALUE = message(
    "ConsumerGroupTargetAssignmentMetadataValue", valid="0", flexible="0+",
    source=_DIR + "ConsumerGroupTargetAssignmentMetadataValue.json",
    fields=[
        field("AssignmentEpoch", "int32", "0+"),
    ],
)

GROUP_METADATA_KEY = message(
    "GroupMetadataKey", valid="2", flexible="none",
    source=_DIR + "GroupMetadataKey.json",
    fields=[
        field("group", "string", "2"),
    ],
)

# commonStructs.MemberMetadata of GroupMetadataValue
_MEMBER_METADATA = [
    field("memberId", "string", "0+"),
    field("groupInstanceId", "string", "3+", nullable="3+", default="null"),
    field("clientId", "string", "0+"),
    field("clientHost", "string", "0+"),
    field("rebalanceTimeout", "int32", "1+", default="-1"),
    field("sessionTimeout", "int32", "0+"),
    field("subscription", "bytes", "0+"),
    field("assignment", "bytes", "0+"),
]
GROUP_METADATA_VALUE = message(
    "GroupMetadataValue", valid="0-4", flexible="4+",
    source=_DIR + "GroupMetadataValue.json",
    fields=[
        field("protocolType", "string", "0+"),
        field("generation", "int32", "0+"),
        field("protocol", "string", "0+", nullable="0+"),
        field("leader", "string", "0+", nullable="0+"),
        field("currentStateTimestamp", "int64", "2+", default="-1"),
        field("members", "[]MemberMetadata", "0+", fields=_MEMBER_METADATA),
    ],
)

OFFSET_COMMIT_KEY = message(
    "OffsetCommitKey", valid="0-1", flexible="none",
    source=_DIR + "OffsetCommitKey.json",
    fields=[
        field("group", "string", "0-1"),
        field("topic", "string", "0-1"),
        field("partition", "int32", "0-1"),
    ],
)

OFFSET_COMMIT_VALUE = message(
    "OffsetCommitValue", valid="0-4", flexible="4+",
    source=_DIR + "OffsetCommitValue.json",
    fields=[
        field("offset", "int64", "0+"),
        field("leaderEpoch", "int32", "3+", default="-1"),
        field("metadata", "string", "0+"),
        field("commitTimestamp", "int64", "0+"),
        field("expireTimestamp", "int64", "1", default="-1"),
    ],
)

SHARE_GROUP_CURRENT_MEMBER_ASSIGNMENT_KEY = message(
    "ShareGroupCurrentMemberAssignmentKey", valid="14", flexible="none",
    source=_DIR + "ShareGroupCurrentMemberAssignmentKey.json",
    fields=[
        field("GroupId", "string", "14"),
        field("MemberId", "string", "14"),
    ],
)

# ShareGroupCurrentMemberAssignmentValue reuses commonStructs.TopicPartitions (identical)
SHARE_GROUP_CURRENT_MEMBER_ASSIGNMENT_VALUE = message(
    "ShareGroupCurrentMemberAssignmentValue", valid="0", flexible="0+",
    source=_DIR + "ShareGroupCurrentMemberAssignmentValue.json",
    fields=[
        field("MemberEpoch", "int32", "0+"),
        field("PreviousMemberEpoch", "int32", "0+"),
        field("State", "int8", "0+"),
        field("AssignedPartitions", "[]TopicPartitions", "0+", fields=_TOPIC_PARTITIONS),
    ],
)

SHARE_GROUP_MEMBER_METADATA_KEY = message(
    "ShareGroupMemberMetadataKey", valid="10", flexible="none",
    source=_DIR + "ShareGroupMemberMetadataKey.json",
    fields=[
        field("GroupId", "string", "10"),
        field("MemberId", "string", "10"),
    ],
)

SHARE_GROUP_MEMBER_METADATA_VALUE = message(
    "ShareGroupMemberMetadataValue", valid="0", flexible="0+",
    source=_DIR + "ShareGroupMemberMetadataValue.json",
    fields=[
        field("RackId", "string", "0+", nullable="0+"),
        field("ClientId", "string", "0+"),
        field("ClientHost", "string", "0+"),
        field("SubscribedTopicNames", "[]string", "0+"),
    ],
)

SHARE_GROUP_METADATA_KEY = message(
    "ShareGroupMetadataKey", valid="11", flexible="none",
    source=_DIR + "ShareGroupMetadataKey.json",
    fields=[
        field("GroupId", "string", "11"),
    ],
)

SHARE_GROUP_METADATA_VALUE = message(
    "ShareGroupMetadataValue", valid="0", flexible="0+",
    source=_DIR + "ShareGroupMetadataValue.json",
    fields=[
        field("Epoch", "int32", "0+"),
    ],
)

SHARE_GROUP_PARTITION_METADATA_KEY = message(
    "ShareGroupPartitionMetadataKey", valid="9", flexible="none",
    source=_DIR + "ShareGroupPartitionMetadataKey.json",
    fields=[
        field("GroupId", "string", "9"),
    ],
)

SHARE_GROUP_PARTITION_METADATA_VALUE = message(
    "ShareGroupPartitionMetadataValue", valid="0", flexible="0+",
    source=_DIR + "ShareGroupPartitionMetadataValue.json",
    fields=[
        field("Topics", "[]TopicMetadata", "0+", fields=[
            field("TopicId", "uuid", "0+"),
            field("TopicName", "string", "0+"),
            field("NumPartitions", "int32", "0+"),
            field("PartitionMetadata", "[]PartitionMetadata", "0+", fields=[
                field("Partition", "int32", "0+"),
                field("Racks", "[]string", "0+"),
            ]),
        ]),
    ],
)

SHARE_GROUP_STATE_PARTITION_METADATA_KEY = message(
    "ShareGroupStatePartitionMetadataKey", valid="15", flexible="none",
    source=_DIR + "ShareGroupStatePartitionMetadataKey.json",
    fields=[
        field("GroupId", "string", "15"),
    ],
)

# commonStructs.TopicPartitionsInfo of ShareGroupStatePartitionMetadataValue
_TOPIC_PARTITIONS_INFO = [
    field("TopicId", "uuid", "0+"),
    field("TopicName", "string", "0+"),
    field("Partitions", "[]int32", "0+"),
]
# commonStructs.TopicInfo of ShareGroupStatePartitionMetadataValue
_TOPIC_INFO = [
    field("TopicId", "uuid", "0+"),
    field("TopicName", "string", "0+"),
]
SHARE_GROUP_STATE_PARTITION_METADATA_VALUE = message(
    "ShareGroupStatePartitionMetadataValue", valid="0", flexible="0+",
    source=_DIR + "ShareGroupStatePartitionMetadataValue.json",
    fields=[
        field("InitializedTopics", "[]TopicPartitionsInfo", "0+", fields=_TOPIC_PARTITIONS_INFO),
        field("DeletingTopics", "[]TopicInfo", "0+", fields=_TOPIC_INFO),
    ],
)

SHARE_GROUP_TARGET_ASSIGNMENT_MEMBER_KEY = message(
    "ShareGroupTargetAssignmentMemberKey", valid="13", flexible="none",
    source=_DIR + "ShareGroupTargetAssignmentMemberKey.json",
    fields=[
        field("GroupId", "string", "13"),
        field("MemberId", "string", "13"),
    ],
)

SHARE_GROUP_TARGET_ASSIGNMENT_MEMBER_VALUE = message(
    "ShareGroupTargetAssignmentMemberValue", valid="0", flexible="0+",
    source=_DIR + "ShareGroupTargetAssignmentMemberValue.json",
    fields=[
        field("TopicPartitions", "[]TopicPartition", "0+", fields=[
            field("TopicId", "uuid", "0+"),
            field("Partitions", "[]int32", "0+"),
        ]),
    ],
)

SHARE_GROUP_TARGET_ASSIGNMENT_METADATA_KEY = message(
    "ShareGroupTargetAssignmentMetadataKey", valid="12", flexible="none",
    source=_DIR + "ShareGroupTargetAssignmentMetadataKey.json",
    fields=[
        field("GroupId", "string", "12"),
    ],
)

SHARE_GROUP_TARGET_ASSIGNMENT_METADATA_VALUE = message(
    "ShareGroupTargetAssignmentMetadataValue", valid="0", flexible="0+",
    source=_DIR + "ShareGroupTargetAssignmentMetadataValue.json",
    fields=[
        field("AssignmentEpoch", "int32", "0+"),
    ],
)

MESSAGES = (
    CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT_KEY,
    CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT_VALUE,
    CONSUMER_GROUP_MEMBER_METADATA_KEY,
    CONSUMER_GROUP_MEMBER_METADATA_VALUE,
    CONSUMER_GROUP_METADATA_KEY,
    CONSUMER_GROUP_METADATA_VALUE,
    CONSUMER_GROUP_PARTITION_METADATA_KEY,
    CONSUMER_GROUP_PARTITION_METADATA_VALUE,
    CONSUMER_GROUP_TARGET_ASSIGNMENT_MEMBER_KEY,
    CONSUMER_GROUP_TARGET_ASSIGNMENT_MEMBER_VALUE,
    CONSUMER_GROUP_TARGET_ASSIGNMENT_METADATA_KEY,
    CONSUMER_GROUP_TARGET_ASSIGNMENT_METADATA_VALUE,
    GROUP_METADATA_KEY,
    GROUP_METADATA_VALUE,
    OFFSET_COMMIT_KEY,
    OFFSET_COMMIT_VALUE,
    SHARE_GROUP_CURRENT_MEMBER_ASSIGNMENT_KEY,
    SHARE_GROUP_CURRENT_MEMBER_ASSIGNMENT_VALUE,
    SHARE_GROUP_MEMBER_METADATA_KEY,
    SHARE_GROUP_MEMBER_METADATA_VALUE,
    SHARE_GROUP_METADATA_KEY,
    SHARE_GROUP_METADATA_VALUE,
    SHARE_GROUP_PARTITION_METADATA_KEY,
    SHARE_GROUP_PARTITION_METADATA_VALUE,
    SHARE_GROUP_STATE_PARTITION_METADATA_KEY,
    SHARE_GROUP_STATE_PARTITION_METADATA_VALUE,
    SHARE_GROUP_TARGET_ASSIGNMENT_MEMBER_KEY,
    SHARE_GROUP_TARGET_ASSIGNMENT_MEMBER_VALUE,
    SHARE_GROUP_TARGET_ASSIGNMENT_METADATA_KEY,
    SHARE_GROUP_TARGET_ASSIGNMENT_METADATA_VALUE,
)
