"""KRaft control-record values and the consumer embedded protocol (clients module).

Transcribed from ``clients/src/main/resources/common/message/``
at Kafka 4.3.0, as the package docstring of :mod:`kseg.format.schemas` describes.

Only the files kseg decodes with the generic decoder; the control-record key
(``ControlRecordTypeSchema``) and ``EndTxnMarker`` are fixed structs in :mod:`kseg.format.control`.
"""

from kseg.format.messages import field, message

_DIR = "clients/src/main/resources/common/message/"

CONSUMER_PROTOCOL_ASSIGNMENT = message(
    "ConsumerProtocolAssignment", valid="0-3", flexible="none",
    source=_DIR + "ConsumerProtocolAssignment.json",
    fields=[
        field("AssignedPartitions", "[]TopicPartition", "0+", fields=[
            field("Topic", "string", "0+"),
            field("Partitions", "[]int32", "0+"),
        ]),
        field("UserData", "bytes", "0+", nullable="0+", default="null"),
    ],
)

CONSUMER_PROTOCOL_SUBSCRIPTION = message(
    "ConsumerProtocolSubscription", valid="0-3", flexible="none",
    source=_DIR + "ConsumerProtocolSubscription.json",
    fields=[
        field("Topics", "[]string", "0+"),
        field("UserData", "bytes", "0+", nullable="0+", default="null"),
        field("OwnedPartitions", "[]TopicPartition", "1+", fields=[
            field("Topic", "string", "1+"),
            field("Partitions", "[]int32", "1+"),
        ]),
        field("GenerationId", "int32", "2+", default="-1"),
        field("RackId", "string", "3+", nullable="3+", default="null"),
    ],
)

KRAFT_VERSION_RECORD = message(
    "KRaftVersionRecord", valid="0", flexible="0+",
    source=_DIR + "KRaftVersionRecord.json",
    fields=[
        field("Version", "int16", "0+"),
        field("KRaftVersion", "int16", "0+"),
    ],
)

# commonStructs.Voter of LeaderChangeMessage
_LEADER_CHANGE_MESSAGE_VOTER = [
    field("VoterId", "int32", "0+"),
    field("VoterDirectoryId", "uuid", "1+"),
]
LEADER_CHANGE_MESSAGE = message(
    "LeaderChangeMessage", valid="0-1", flexible="0+",
    source=_DIR + "LeaderChangeMessage.json",
    fields=[
        field("Version", "int16", "0+"),
        field("LeaderId", "int32", "0+"),
        field("Voters", "[]Voter", "0+", fields=_LEADER_CHANGE_MESSAGE_VOTER),
        field("GrantingVoters", "[]Voter", "0+", fields=_LEADER_CHANGE_MESSAGE_VOTER),
    ],
)

SNAPSHOT_FOOTER_RECORD = message(
    "SnapshotFooterRecord", valid="0", flexible="0+",
    source=_DIR + "SnapshotFooterRecord.json",
    fields=[
        field("Version", "int16", "0+"),
    ],
)

SNAPSHOT_HEADER_RECORD = message(
    "SnapshotHeaderRecord", valid="0", flexible="0+",
    source=_DIR + "SnapshotHeaderRecord.json",
    fields=[
        field("Version", "int16", "0+"),
        field("LastContainedLogTimestamp", "int64", "0+"),
    ],
)

VOTERS_RECORD = message(
    "VotersRecord", valid="0", flexible="0+",
    source=_DIR + "VotersRecord.json",
    fields=[
        field("Version", "int16", "0+"),
        field("Voters", "[]Voter", "0+", fields=[
            field("VoterId", "int32", "0+"),
            field("VoterDirectoryId", "uuid", "0+"),
            field("Endpoints", "[]Endpoint", "0+", fields=[
                field("Name", "string", "0+"),
                field("Host", "string", "0+"),
                field("Port", "uint16", "0+"),
            ]),
            field("KRaftVersionFeature", "KRaftVersionFeature", "0+", fields=[
                field("MinSupportedVersion", "int16", "0+"),
                field("MaxSupportedVersion", "int16", "0+"),
            ]),
        ]),
    ],
)

MESSAGES = (
    CONSUMER_PROTOCOL_ASSIGNMENT,
    CONSUMER_PROTOCOL_SUBSCRIPTION,
    KRAFT_VERSION_RECORD,
    LEADER_CHANGE_MESSAGE,
    SNAPSHOT_FOOTER_RECORD,
    SNAPSHOT_HEADER_RECORD,
    VOTERS_RECORD,
)
