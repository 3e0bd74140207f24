"""``__consumer_offsets`` record schemas: offsets, classic and consumer groups (record types 0-8, 16).

Transcribed from ``group-coordinator/src/main/resources/common/message/``
at Kafka 4.3.0, as the package docstring of :mod:`kseg.format.schemas` describes.

Share-group (10-15) and streams-group (17, 19-23) records are in :mod:`.group_coordinator_share` and
:mod:`.group_coordinator_streams`; ``MESSAGES`` here holds all three.
"""

from kseg.format.messages import field, message
from kseg.format.schemas.group_coordinator_share import MESSAGES as _SHARE_GROUP_MESSAGES
from kseg.format.schemas.group_coordinator_streams import MESSAGES as _STREAMS_GROUP_MESSAGES

_DIR = "group-coordinator/src/main/resources/common/message/"

CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT_KEY = message(
    "ConsumerGroupCurrentMemberAssignmentKey", api_key=8, valid="0", flexible="none",
    source=_DIR + "ConsumerGroupCurrentMemberAssignmentKey.json",
    fields=[
        field("GroupId", "string", "0"),
        field("MemberId", "string", "0"),
    ],
)

# commonStructs.TopicPartitions of ConsumerGroupCurrentMemberAssignmentValue
_CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT_VALUE_TOPIC_PARTITIONS = [
    field("TopicId", "uuid", "0+"),
    field("Partitions", "[]int32", "0+"),
    field("AssignmentEpochs", "[]int32", "0+", nullable="0+", tagged="0+", tag=0),
]
CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT_VALUE = message(
    "ConsumerGroupCurrentMemberAssignmentValue", api_key=8, valid="0", flexible="0+",
    source=_DIR + "ConsumerGroupCurrentMemberAssignmentValue.json",
    fields=[
        field("MemberEpoch", "int32", "0+"),
        field("PreviousMemberEpoch", "int32", "0+"),
        field("State", "int8", "0+"),
        field("AssignedPartitions", "[]TopicPartitions", "0+",
              fields=_CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT_VALUE_TOPIC_PARTITIONS),
        field("PartitionsPendingRevocation", "[]TopicPartitions", "0+",
              fields=_CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT_VALUE_TOPIC_PARTITIONS),
    ],
)

CONSUMER_GROUP_MEMBER_METADATA_KEY = message(
    "ConsumerGroupMemberMetadataKey", api_key=5, valid="0", flexible="none",
    source=_DIR + "ConsumerGroupMemberMetadataKey.json",
    fields=[
        field("GroupId", "string", "0"),
        field("MemberId", "string", "0"),
    ],
)

CONSUMER_GROUP_MEMBER_METADATA_VALUE = message(
    "ConsumerGroupMemberMetadataValue", api_key=5, valid="0", flexible="0+",
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
        field("ClassicMemberMetadata", "ClassicMemberMetadata", "0+", nullable="0+", tagged="0+", tag=0,
              fields=[
            field("SessionTimeoutMs", "int32", "0+"),
            field("SupportedProtocols", "[]ClassicProtocol", "0+", fields=[
                field("Name", "string", "0+"),
                field("Metadata", "bytes", "0+"),
            ]),
        ]),
    ],
)

CONSUMER_GROUP_METADATA_KEY = message(
    "ConsumerGroupMetadataKey", api_key=3, valid="0", flexible="none",
    source=_DIR + "ConsumerGroupMetadataKey.json",
    fields=[
        field("GroupId", "string", "0"),
    ],
)

CONSUMER_GROUP_METADATA_VALUE = message(
    "ConsumerGroupMetadataValue", api_key=3, valid="0", flexible="0+",
    source=_DIR + "ConsumerGroupMetadataValue.json",
    fields=[
        field("Epoch", "int32", "0+"),
        field("MetadataHash", "int64", "0+", tagged="0+", tag=0, default="0"),
    ],
)

CONSUMER_GROUP_PARTITION_METADATA_KEY = message(
    "ConsumerGroupPartitionMetadataKey", api_key=4, valid="0", flexible="none",
    source=_DIR + "ConsumerGroupPartitionMetadataKey.json",
    fields=[
        field("GroupId", "string", "0"),
    ],
)

CONSUMER_GROUP_PARTITION_METADATA_VALUE = message(
    "ConsumerGroupPartitionMetadataValue", api_key=4, valid="0", flexible="0+",
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

CONSUMER_GROUP_REGULAR_EXPRESSION_KEY = message(
    "ConsumerGroupRegularExpressionKey", api_key=16, valid="0", flexible="none",
    source=_DIR + "ConsumerGroupRegularExpressionKey.json",
    fields=[
        field("GroupId", "string", "0"),
        field("RegularExpression", "string", "0"),
    ],
)

CONSUMER_GROUP_REGULAR_EXPRESSION_VALUE = message(
    "ConsumerGroupRegularExpressionValue", api_key=16, valid="0", flexible="0+",
    source=_DIR + "ConsumerGroupRegularExpressionValue.json",
    fields=[
        field("Topics", "[]string", "0+"),
        field("Version", "int64", "0+"),
        field("Timestamp", "int64", "0+"),
    ],
)

CONSUMER_GROUP_TARGET_ASSIGNMENT_MEMBER_KEY = message(
    "ConsumerGroupTargetAssignmentMemberKey", api_key=7, valid="0", flexible="none",
    source=_DIR + "ConsumerGroupTargetAssignmentMemberKey.json",
    fields=[
        field("GroupId", "string", "0"),
        field("MemberId", "string", "0"),
    ],
)

CONSUMER_GROUP_TARGET_ASSIGNMENT_MEMBER_VALUE = message(
    "ConsumerGroupTargetAssignmentMemberValue", api_key=7, valid="0", flexible="0+",
    source=_DIR + "ConsumerGroupTargetAssignmentMemberValue.json",
    fields=[
        field("TopicPartitions", "[]TopicPartition", "0+", fields=[
            field("TopicId", "uuid", "0+"),
            field("Partitions", "[]int32", "0+"),
        ]),
    ],
)

CONSUMER_GROUP_TARGET_ASSIGNMENT_METADATA_KEY = message(
    "ConsumerGroupTargetAssignmentMetadataKey", api_key=6, valid="0", flexible="none",
    source=_DIR + "ConsumerGroupTargetAssignmentMetadataKey.json",
    fields=[
        field("GroupId", "string", "0"),
    ],
)

CONSUMER_GROUP_TARGET_ASSIGNMENT_METADATA_VALUE = message(
    "ConsumerGroupTargetAssignmentMetadataValue", api_key=6, valid="0", flexible="0+",
    source=_DIR + "ConsumerGroupTargetAssignmentMetadataValue.json",
    fields=[
        field("AssignmentEpoch", "int32", "0+"),
        field("AssignmentTimestamp", "int64", "0+", tagged="0+", tag=0, default="0"),
    ],
)

GROUP_METADATA_KEY = message(
    "GroupMetadataKey", api_key=2, valid="0", flexible="none",
    source=_DIR + "GroupMetadataKey.json",
    fields=[
        field("group", "string", "0"),
    ],
)

# commonStructs.MemberMetadata of GroupMetadataValue
_GROUP_METADATA_VALUE_MEMBER_METADATA = [
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
    "GroupMetadataValue", api_key=2, valid="0-4", flexible="4+",
    source=_DIR + "GroupMetadataValue.json",
    fields=[
        field("protocolType", "string", "0+"),
        field("generation", "int32", "0+"),
        field("protocol", "string", "0+", nullable="0+"),
        field("leader", "string", "0+", nullable="0+"),
        field("currentStateTimestamp", "int64", "2+", default="-1"),
        field("members", "[]MemberMetadata", "0+", fields=_GROUP_METADATA_VALUE_MEMBER_METADATA),
    ],
)

LEGACY_OFFSET_COMMIT_KEY = message(
    "LegacyOffsetCommitKey", api_key=0, valid="0", flexible="none",
    source=_DIR + "LegacyOffsetCommitKey.json",
    fields=[
        field("group", "string", "0"),
        field("topic", "string", "0"),
        field("partition", "int32", "0"),
    ],
)

LEGACY_OFFSET_COMMIT_VALUE = message(
    "LegacyOffsetCommitValue", api_key=0, valid="0", flexible="none",
    source=_DIR + "LegacyOffsetCommitValue.json",
    fields=[
        field("offset", "int64", "0"),
        field("metadata", "string", "0"),
        field("commitTimestamp", "int64", "0"),
    ],
)

OFFSET_COMMIT_KEY = message(
    "OffsetCommitKey", api_key=1, valid="0", flexible="none",
    source=_DIR + "OffsetCommitKey.json",
    fields=[
        field("group", "string", "0"),
        field("topic", "string", "0"),
        field("partition", "int32", "0"),
    ],
)

OFFSET_COMMIT_VALUE = message(
    "OffsetCommitValue", api_key=1, valid="0-4", flexible="4+",
    source=_DIR + "OffsetCommitValue.json",
    fields=[
        field("offset", "int64", "0+"),
        field("leaderEpoch", "int32", "3+", default="-1"),
        field("metadata", "string", "0+"),
        field("commitTimestamp", "int64", "0+"),
        field("expireTimestamp", "int64", "1", default="-1"),
        field("topicId", "uuid", "4+", tagged="4+", tag=0),
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
    CONSUMER_GROUP_REGULAR_EXPRESSION_KEY,
    CONSUMER_GROUP_REGULAR_EXPRESSION_VALUE,
    CONSUMER_GROUP_TARGET_ASSIGNMENT_MEMBER_KEY,
    CONSUMER_GROUP_TARGET_ASSIGNMENT_MEMBER_VALUE,
    CONSUMER_GROUP_TARGET_ASSIGNMENT_METADATA_KEY,
    CONSUMER_GROUP_TARGET_ASSIGNMENT_METADATA_VALUE,
    GROUP_METADATA_KEY,
    GROUP_METADATA_VALUE,
    LEGACY_OFFSET_COMMIT_KEY,
    LEGACY_OFFSET_COMMIT_VALUE,
    OFFSET_COMMIT_KEY,
    OFFSET_COMMIT_VALUE,
    *_SHARE_GROUP_MESSAGES,
    *_STREAMS_GROUP_MESSAGES,
)
