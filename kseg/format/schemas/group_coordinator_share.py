"""``__consumer_offsets`` share-group record schemas (KIP-932, record types 10-15).

Transcribed from ``group-coordinator/src/main/resources/common/message/``
at Kafka 4.3.0, as the package docstring of :mod:`kseg.format.schemas` describes.
"""

from kseg.format.messages import field, message

_DIR = "group-coordinator/src/main/resources/common/message/"

SHARE_GROUP_CURRENT_MEMBER_ASSIGNMENT_KEY = message(
    "ShareGroupCurrentMemberAssignmentKey", api_key=14, valid="0", flexible="none",
    source=_DIR + "ShareGroupCurrentMemberAssignmentKey.json",
    fields=[
        field("GroupId", "string", "0"),
        field("MemberId", "string", "0"),
    ],
)

# commonStructs.TopicPartitions of ShareGroupCurrentMemberAssignmentValue
_SHARE_GROUP_CURRENT_MEMBER_ASSIGNMENT_VALUE_TOPIC_PARTITIONS = [
    field("TopicId", "uuid", "0+"),
    field("Partitions", "[]int32", "0+"),
]
SHARE_GROUP_CURRENT_MEMBER_ASSIGNMENT_VALUE = message(
    "ShareGroupCurrentMemberAssignmentValue", api_key=14, valid="0", flexible="0+",
    source=_DIR + "ShareGroupCurrentMemberAssignmentValue.json",
    fields=[
        field("MemberEpoch", "int32", "0+"),
        field("PreviousMemberEpoch", "int32", "0+"),
        field("State", "int8", "0+"),
        field("AssignedPartitions", "[]TopicPartitions", "0+",
              fields=_SHARE_GROUP_CURRENT_MEMBER_ASSIGNMENT_VALUE_TOPIC_PARTITIONS),
    ],
)

SHARE_GROUP_MEMBER_METADATA_KEY = message(
    "ShareGroupMemberMetadataKey", api_key=10, valid="0", flexible="none",
    source=_DIR + "ShareGroupMemberMetadataKey.json",
    fields=[
        field("GroupId", "string", "0"),
        field("MemberId", "string", "0"),
    ],
)

SHARE_GROUP_MEMBER_METADATA_VALUE = message(
    "ShareGroupMemberMetadataValue", api_key=10, valid="0", flexible="0+",
    source=_DIR + "ShareGroupMemberMetadataValue.json",
    fields=[
        field("RackId", "string", "0+", nullable="0+"),
        field("ClientId", "string", "0+"),
        field("ClientHost", "string", "0+"),
        field("SubscribedTopicNames", "[]string", "0+"),
    ],
)

SHARE_GROUP_METADATA_KEY = message(
    "ShareGroupMetadataKey", api_key=11, valid="0", flexible="none",
    source=_DIR + "ShareGroupMetadataKey.json",
    fields=[
        field("GroupId", "string", "0"),
    ],
)

SHARE_GROUP_METADATA_VALUE = message(
    "ShareGroupMetadataValue", api_key=11, valid="0", flexible="0+",
    source=_DIR + "ShareGroupMetadataValue.json",
    fields=[
        field("Epoch", "int32", "0+"),
        field("MetadataHash", "int64", "0+"),
    ],
)

SHARE_GROUP_STATE_PARTITION_METADATA_KEY = message(
    "ShareGroupStatePartitionMetadataKey", api_key=15, valid="0", flexible="none",
    source=_DIR + "ShareGroupStatePartitionMetadataKey.json",
    fields=[
        field("GroupId", "string", "0"),
    ],
)

# commonStructs.TopicPartitionsInfo of ShareGroupStatePartitionMetadataValue
_SHARE_GROUP_STATE_PARTITION_METADATA_VALUE_TOPIC_PARTITIONS_INFO = [
    field("TopicId", "uuid", "0+"),
    field("TopicName", "string", "0+"),
    field("Partitions", "[]int32", "0+"),
]
# commonStructs.TopicInfo of ShareGroupStatePartitionMetadataValue
_SHARE_GROUP_STATE_PARTITION_METADATA_VALUE_TOPIC_INFO = [
    field("TopicId", "uuid", "0+"),
    field("TopicName", "string", "0+"),
]
SHARE_GROUP_STATE_PARTITION_METADATA_VALUE = message(
    "ShareGroupStatePartitionMetadataValue", api_key=15, valid="0", flexible="0+",
    source=_DIR + "ShareGroupStatePartitionMetadataValue.json",
    fields=[
        field("InitializingTopics", "[]TopicPartitionsInfo", "0+",
              fields=_SHARE_GROUP_STATE_PARTITION_METADATA_VALUE_TOPIC_PARTITIONS_INFO),
        field("InitializedTopics", "[]TopicPartitionsInfo", "0+",
              fields=_SHARE_GROUP_STATE_PARTITION_METADATA_VALUE_TOPIC_PARTITIONS_INFO),
        field("DeletingTopics", "[]TopicInfo", "0+",
              fields=_SHARE_GROUP_STATE_PARTITION_METADATA_VALUE_TOPIC_INFO),
    ],
)

SHARE_GROUP_TARGET_ASSIGNMENT_MEMBER_KEY = message(
    "ShareGroupTargetAssignmentMemberKey", api_key=13, valid="0", flexible="none",
    source=_DIR + "ShareGroupTargetAssignmentMemberKey.json",
    fields=[
        field("GroupId", "string", "0"),
        field("MemberId", "string", "0"),
    ],
)

SHARE_GROUP_TARGET_ASSIGNMENT_MEMBER_VALUE = message(
    "ShareGroupTargetAssignmentMemberValue", api_key=13, valid="0", flexible="0+",
    source=_DIR + "ShareGroupTargetAssignmentMemberValue.json",
    fields=[
        field("TopicPartitions", "[]TopicPartition", "0+", fields=[
            field("TopicId", "uuid", "0+"),
            field("Partitions", "[]int32", "0+"),
        ]),
    ],
)

SHARE_GROUP_TARGET_ASSIGNMENT_METADATA_KEY = message(
    "ShareGroupTargetAssignmentMetadataKey", api_key=12, valid="0", flexible="none",
    source=_DIR + "ShareGroupTargetAssignmentMetadataKey.json",
    fields=[
        field("GroupId", "string", "0"),
    ],
)

SHARE_GROUP_TARGET_ASSIGNMENT_METADATA_VALUE = message(
    "ShareGroupTargetAssignmentMetadataValue", api_key=12, valid="0", flexible="0+",
    source=_DIR + "ShareGroupTargetAssignmentMetadataValue.json",
    fields=[
        field("AssignmentEpoch", "int32", "0+"),
        field("AssignmentTimestamp", "int64", "0+", tagged="0+", tag=0, default="0"),
    ],
)

MESSAGES = (
    SHARE_GROUP_CURRENT_MEMBER_ASSIGNMENT_KEY,
    SHARE_GROUP_CURRENT_MEMBER_ASSIGNMENT_VALUE,
    SHARE_GROUP_MEMBER_METADATA_KEY,
    SHARE_GROUP_MEMBER_METADATA_VALUE,
    SHARE_GROUP_METADATA_KEY,
    SHARE_GROUP_METADATA_VALUE,
    SHARE_GROUP_STATE_PARTITION_METADATA_KEY,
    SHARE_GROUP_STATE_PARTITION_METADATA_VALUE,
    SHARE_GROUP_TARGET_ASSIGNMENT_MEMBER_KEY,
    SHARE_GROUP_TARGET_ASSIGNMENT_MEMBER_VALUE,
    SHARE_GROUP_TARGET_ASSIGNMENT_METADATA_KEY,
    SHARE_GROUP_TARGET_ASSIGNMENT_METADATA_VALUE,
)
