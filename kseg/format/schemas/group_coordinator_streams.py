"""``__consumer_offsets`` streams-group record schemas (KIP-1071, record types 17, 19-23).

Transcribed from ``group-coordinator/src/main/resources/common/message/``
at Kafka 4.3.0, as the package docstring of :mod:`kseg.format.schemas` describes.
"""

from kseg.format.messages import field, message

_DIR = "group-coordinator/src/main/resources/common/message/"

STREAMS_GROUP_CURRENT_MEMBER_ASSIGNMENT_KEY = message(
    "StreamsGroupCurrentMemberAssignmentKey", api_key=22, valid="0", flexible="none",
    source=_DIR + "StreamsGroupCurrentMemberAssignmentKey.json",
    fields=[
        field("GroupId", "string", "0"),
        field("MemberId", "string", "0"),
    ],
)

# commonStructs.TaskIds of StreamsGroupCurrentMemberAssignmentValue
_STREAMS_GROUP_CURRENT_MEMBER_ASSIGNMENT_VALUE_TASK_IDS = [
    field("SubtopologyId", "string", "0+"),
    field("Partitions", "[]int32", "0+"),
    field("AssignmentEpochs", "[]int32", "0+", nullable="0+", tagged="0+", tag=0),
]
STREAMS_GROUP_CURRENT_MEMBER_ASSIGNMENT_VALUE = message(
    "StreamsGroupCurrentMemberAssignmentValue", api_key=22, valid="0", flexible="0+",
    source=_DIR + "StreamsGroupCurrentMemberAssignmentValue.json",
    fields=[
        field("MemberEpoch", "int32", "0+"),
        field("PreviousMemberEpoch", "int32", "0+"),
        field("State", "int8", "0+"),
        field("ActiveTasks", "[]TaskIds", "0+",
              fields=_STREAMS_GROUP_CURRENT_MEMBER_ASSIGNMENT_VALUE_TASK_IDS),
        field("StandbyTasks", "[]TaskIds", "0+",
              fields=_STREAMS_GROUP_CURRENT_MEMBER_ASSIGNMENT_VALUE_TASK_IDS),
        field("WarmupTasks", "[]TaskIds", "0+",
              fields=_STREAMS_GROUP_CURRENT_MEMBER_ASSIGNMENT_VALUE_TASK_IDS),
        field("ActiveTasksPendingRevocation", "[]TaskIds", "0+",
              fields=_STREAMS_GROUP_CURRENT_MEMBER_ASSIGNMENT_VALUE_TASK_IDS),
        field("StandbyTasksPendingRevocation", "[]TaskIds", "0+",
              fields=_STREAMS_GROUP_CURRENT_MEMBER_ASSIGNMENT_VALUE_TASK_IDS),
        field("WarmupTasksPendingRevocation", "[]TaskIds", "0+",
              fields=_STREAMS_GROUP_CURRENT_MEMBER_ASSIGNMENT_VALUE_TASK_IDS),
    ],
)

STREAMS_GROUP_MEMBER_METADATA_KEY = message(
    "StreamsGroupMemberMetadataKey", api_key=19, valid="0", flexible="none",
    source=_DIR + "StreamsGroupMemberMetadataKey.json",
    fields=[
        field("GroupId", "string", "0"),
        field("MemberId", "string", "0"),
    ],
)

# commonStructs.Endpoint of StreamsGroupMemberMetadataValue
_STREAMS_GROUP_MEMBER_METADATA_VALUE_ENDPOINT = [
    field("Host", "string", "0+"),
    field("Port", "uint16", "0+"),
]
# commonStructs.KeyValue of StreamsGroupMemberMetadataValue
_STREAMS_GROUP_MEMBER_METADATA_VALUE_KEY_VALUE = [
    field("Key", "string", "0+"),
    field("Value", "string", "0+"),
]
STREAMS_GROUP_MEMBER_METADATA_VALUE = message(
    "StreamsGroupMemberMetadataValue", api_key=19, valid="0", flexible="0+",
    source=_DIR + "StreamsGroupMemberMetadataValue.json",
    fields=[
        field("InstanceId", "string", "0+", nullable="0+"),
        field("RackId", "string", "0+", nullable="0+"),
        field("ClientId", "string", "0+"),
        field("ClientHost", "string", "0+"),
        field("RebalanceTimeoutMs", "int32", "0+", default="-1"),
        field("TopologyEpoch", "int32", "0+"),
        field("ProcessId", "string", "0+"),
        field("UserEndpoint", "Endpoint", "0+", nullable="0+", default="null",
              fields=_STREAMS_GROUP_MEMBER_METADATA_VALUE_ENDPOINT),
        field("ClientTags", "[]KeyValue", "0+", fields=_STREAMS_GROUP_MEMBER_METADATA_VALUE_KEY_VALUE),
    ],
)

STREAMS_GROUP_METADATA_KEY = message(
    "StreamsGroupMetadataKey", api_key=17, valid="0", flexible="none",
    source=_DIR + "StreamsGroupMetadataKey.json",
    fields=[
        field("GroupId", "string", "0"),
    ],
)

# commonStructs.LastAssignmentConfig of StreamsGroupMetadataValue
_STREAMS_GROUP_METADATA_VALUE_LAST_ASSIGNMENT_CONFIG = [
    field("Key", "string", "0+"),
    field("Value", "string", "0+"),
]
STREAMS_GROUP_METADATA_VALUE = message(
    "StreamsGroupMetadataValue", api_key=17, valid="0", flexible="0+",
    source=_DIR + "StreamsGroupMetadataValue.json",
    fields=[
        field("Epoch", "int32", "0+"),
        field("MetadataHash", "int64", "0+"),
        field("ValidatedTopologyEpoch", "int32", "0+", tagged="0+", tag=0, default="-1"),
        field("LastAssignmentConfigs", "[]LastAssignmentConfig", "0+", nullable="0+", tagged="0+", tag=1,
              fields=_STREAMS_GROUP_METADATA_VALUE_LAST_ASSIGNMENT_CONFIG),
    ],
)

STREAMS_GROUP_TARGET_ASSIGNMENT_MEMBER_KEY = message(
    "StreamsGroupTargetAssignmentMemberKey", api_key=21, valid="0", flexible="none",
    source=_DIR + "StreamsGroupTargetAssignmentMemberKey.json",
    fields=[
        field("GroupId", "string", "0"),
        field("MemberId", "string", "0"),
    ],
)

# commonStructs.TaskIds of StreamsGroupTargetAssignmentMemberValue
_STREAMS_GROUP_TARGET_ASSIGNMENT_MEMBER_VALUE_TASK_IDS = [
    field("SubtopologyId", "string", "0+"),
    field("Partitions", "[]int32", "0+"),
]
STREAMS_GROUP_TARGET_ASSIGNMENT_MEMBER_VALUE = message(
    "StreamsGroupTargetAssignmentMemberValue", api_key=21, valid="0", flexible="0+",
    source=_DIR + "StreamsGroupTargetAssignmentMemberValue.json",
    fields=[
        field("ActiveTasks", "[]TaskIds", "0+",
              fields=_STREAMS_GROUP_TARGET_ASSIGNMENT_MEMBER_VALUE_TASK_IDS),
        field("StandbyTasks", "[]TaskIds", "0+",
              fields=_STREAMS_GROUP_TARGET_ASSIGNMENT_MEMBER_VALUE_TASK_IDS),
        field("WarmupTasks", "[]TaskIds", "0+",
              fields=_STREAMS_GROUP_TARGET_ASSIGNMENT_MEMBER_VALUE_TASK_IDS),
    ],
)

STREAMS_GROUP_TARGET_ASSIGNMENT_METADATA_KEY = message(
    "StreamsGroupTargetAssignmentMetadataKey", api_key=20, valid="0", flexible="none",
    source=_DIR + "StreamsGroupTargetAssignmentMetadataKey.json",
    fields=[
        field("GroupId", "string", "0"),
    ],
)

STREAMS_GROUP_TARGET_ASSIGNMENT_METADATA_VALUE = message(
    "StreamsGroupTargetAssignmentMetadataValue", api_key=20, valid="0", flexible="0+",
    source=_DIR + "StreamsGroupTargetAssignmentMetadataValue.json",
    fields=[
        field("AssignmentEpoch", "int32", "0+"),
        field("AssignmentTimestamp", "int64", "0+", tagged="0+", tag=0, default="0"),
    ],
)

STREAMS_GROUP_TOPOLOGY_KEY = message(
    "StreamsGroupTopologyKey", api_key=23, valid="0", flexible="none",
    source=_DIR + "StreamsGroupTopologyKey.json",
    fields=[
        field("GroupId", "string", "0"),
    ],
)

# commonStructs.TopicConfig of StreamsGroupTopologyValue
_STREAMS_GROUP_TOPOLOGY_VALUE_TOPIC_CONFIG = [
    field("key", "string", "0+"),
    field("value", "string", "0+"),
]
# commonStructs.TopicInfo of StreamsGroupTopologyValue
_STREAMS_GROUP_TOPOLOGY_VALUE_TOPIC_INFO = [
    field("Name", "string", "0+"),
    field("Partitions", "int32", "0+"),
    field("ReplicationFactor", "int16", "0+"),
    field("TopicConfigs", "[]TopicConfig", "0+", fields=_STREAMS_GROUP_TOPOLOGY_VALUE_TOPIC_CONFIG),
]
STREAMS_GROUP_TOPOLOGY_VALUE = message(
    "StreamsGroupTopologyValue", api_key=23, valid="0", flexible="0+",
    source=_DIR + "StreamsGroupTopologyValue.json",
    fields=[
        field("Epoch", "int32", "0+"),
        field("Subtopologies", "[]Subtopology", "0+", fields=[
            field("SubtopologyId", "string", "0+"),
            field("SourceTopics", "[]string", "0+"),
            field("SourceTopicRegex", "[]string", "0+"),
            field("StateChangelogTopics", "[]TopicInfo", "0+",
                  fields=_STREAMS_GROUP_TOPOLOGY_VALUE_TOPIC_INFO),
            field("RepartitionSinkTopics", "[]string", "0+"),
            field("RepartitionSourceTopics", "[]TopicInfo", "0+",
                  fields=_STREAMS_GROUP_TOPOLOGY_VALUE_TOPIC_INFO),
            field("CopartitionGroups", "[]CopartitionGroup", "0+", fields=[
                field("SourceTopics", "[]int16", "0+"),
                field("SourceTopicRegex", "[]int16", "0+"),
                field("RepartitionSourceTopics", "[]int16", "0+"),
            ]),
        ]),
    ],
)

MESSAGES = (
    STREAMS_GROUP_CURRENT_MEMBER_ASSIGNMENT_KEY,
    STREAMS_GROUP_CURRENT_MEMBER_ASSIGNMENT_VALUE,
    STREAMS_GROUP_MEMBER_METADATA_KEY,
    STREAMS_GROUP_MEMBER_METADATA_VALUE,
    STREAMS_GROUP_METADATA_KEY,
    STREAMS_GROUP_METADATA_VALUE,
    STREAMS_GROUP_TARGET_ASSIGNMENT_MEMBER_KEY,
    STREAMS_GROUP_TARGET_ASSIGNMENT_MEMBER_VALUE,
    STREAMS_GROUP_TARGET_ASSIGNMENT_METADATA_KEY,
    STREAMS_GROUP_TARGET_ASSIGNMENT_METADATA_VALUE,
    STREAMS_GROUP_TOPOLOGY_KEY,
    STREAMS_GROUP_TOPOLOGY_VALUE,
)
