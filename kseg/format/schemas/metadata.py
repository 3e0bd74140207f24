"""KRaft ``__cluster_metadata`` record schemas (one per metadata record type, api keys 0-28).

Transcribed from ``metadata/src/main/resources/common/metadata/``
at Kafka 4.3.0, as the package docstring of :mod:`kseg.format.schemas` describes.
"""

from kseg.format.messages import field, message

_DIR = "metadata/src/main/resources/common/metadata/"

ABORT_TRANSACTION_RECORD = message(
    "AbortTransactionRecord", api_key=25, valid="0", flexible="0+",
    source=_DIR + "AbortTransactionRecord.json",
    fields=[
        field("Reason", "string", "0+", nullable="0+", tagged="0+", tag=0, default="null"),
    ],
)

ACCESS_CONTROL_ENTRY_RECORD = message(
    "AccessControlEntryRecord", api_key=18, valid="0", flexible="0+",
    source=_DIR + "AccessControlEntryRecord.json",
    fields=[
        field("Id", "uuid", "0+"),
        field("ResourceType", "int8", "0+"),
        field("ResourceName", "string", "0+"),
        field("PatternType", "int8", "0+"),
        field("Principal", "string", "0+"),
        field("Host", "string", "0+"),
        field("Operation", "int8", "0+"),
        field("PermissionType", "int8", "0+"),
    ],
)

BEGIN_TRANSACTION_RECORD = message(
    "BeginTransactionRecord", api_key=23, valid="0", flexible="0+",
    source=_DIR + "BeginTransactionRecord.json",
    fields=[
        field("Name", "string", "0+", nullable="0+", tagged="0+", tag=0, default="null"),
    ],
)

BROKER_REGISTRATION_CHANGE_RECORD = message(
    "BrokerRegistrationChangeRecord", api_key=17, valid="0-3", flexible="0+",
    source=_DIR + "BrokerRegistrationChangeRecord.json",
    fields=[
        field("BrokerId", "int32", "0+"),
        field("BrokerEpoch", "int64", "0+"),
        field("Fenced", "int8", "0+", tagged="0+", tag=0),
        field("InControlledShutdown", "int8", "1+", tagged="1+", tag=1),
        field("LogDirs", "[]uuid", "2+", tagged="2+", tag=2),
        field("CordonedLogDirs", "[]uuid", "3+", nullable="3+", tagged="3+", tag=3, default="null"),
    ],
)

CLEAR_ELR_RECORD = message(
    "ClearElrRecord", api_key=28, valid="0", flexible="0+",
    source=_DIR + "ClearElrRecord.json",
    fields=[
        field("TopicName", "string", "0+"),
    ],
)

CLIENT_QUOTA_RECORD = message(
    "ClientQuotaRecord", api_key=14, valid="0", flexible="0+",
    source=_DIR + "ClientQuotaRecord.json",
    fields=[
        field("Entity", "[]EntityData", "0+", fields=[
            field("EntityType", "string", "0+"),
            field("EntityName", "string", "0+", nullable="0+"),
        ]),
        field("Key", "string", "0+"),
        field("Value", "float64", "0+"),
        field("Remove", "bool", "0+"),
    ],
)

CONFIG_RECORD = message(
    "ConfigRecord", api_key=4, valid="0", flexible="0+",
    source=_DIR + "ConfigRecord.json",
    fields=[
        field("ResourceType", "int8", "0+"),
        field("ResourceName", "string", "0+"),
        field("Name", "string", "0+"),
        field("Value", "string", "0+", nullable="0+"),
    ],
)

DELEGATION_TOKEN_RECORD = message(
    "DelegationTokenRecord", api_key=10, valid="0", flexible="0+",
    source=_DIR + "DelegationTokenRecord.json",
    fields=[
        field("Owner", "string", "0+"),
        field("Requester", "string", "0+"),
        field("Renewers", "[]string", "0+"),
        field("IssueTimestamp", "int64", "0+"),
        field("MaxTimestamp", "int64", "0+"),
        field("ExpirationTimestamp", "int64", "0+"),
        field("TokenId", "string", "0+"),
    ],
)

END_TRANSACTION_RECORD = message(
    "EndTransactionRecord", api_key=24, valid="0", flexible="0+",
    source=_DIR + "EndTransactionRecord.json",
    fields=[
    ],
)

FEATURE_LEVEL_RECORD = message(
    "FeatureLevelRecord", api_key=12, valid="0", flexible="0+",
    source=_DIR + "FeatureLevelRecord.json",
    fields=[
        field("Name", "string", "0+"),
        field("FeatureLevel", "int16", "0+"),
    ],
)

FENCE_BROKER_RECORD = message(
    "FenceBrokerRecord", api_key=7, valid="0", flexible="0+",
    source=_DIR + "FenceBrokerRecord.json",
    fields=[
        field("Id", "int32", "0+"),
        field("Epoch", "int64", "0+"),
    ],
)

NO_OP_RECORD = message(
    "NoOpRecord", api_key=20, valid="0", flexible="0+",
    source=_DIR + "NoOpRecord.json",
    fields=[
    ],
)

PARTITION_CHANGE_RECORD = message(
    "PartitionChangeRecord", api_key=5, valid="0-2", flexible="0+",
    source=_DIR + "PartitionChangeRecord.json",
    fields=[
        field("PartitionId", "int32", "0+", default="-1"),
        field("TopicId", "uuid", "0+"),
        field("Isr", "[]int32", "0+", nullable="0+", tagged="0+", tag=0, default="null"),
        field("Leader", "int32", "0+", tagged="0+", tag=1, default="-2"),
        field("Replicas", "[]int32", "0+", nullable="0+", tagged="0+", tag=2, default="null"),
        field("RemovingReplicas", "[]int32", "0+", nullable="0+", tagged="0+", tag=3, default="null"),
        field("AddingReplicas", "[]int32", "0+", nullable="0+", tagged="0+", tag=4, default="null"),
        field("LeaderRecoveryState", "int8", "0+", tagged="0+", tag=5, default="-1"),
        field("Directories", "[]uuid", "1+", nullable="1+", tagged="1+", tag=8, default="null"),
        field("EligibleLeaderReplicas", "[]int32", "2+", nullable="2+", tagged="2+", tag=6, default="null"),
        field("LastKnownElr", "[]int32", "2+", nullable="2+", tagged="2+", tag=7, default="null"),
    ],
)

PARTITION_RECORD = message(
    "PartitionRecord", api_key=3, valid="0-2", flexible="0+",
    source=_DIR + "PartitionRecord.json",
    fields=[
        field("PartitionId", "int32", "0+", default="-1"),
        field("TopicId", "uuid", "0+"),
        field("Replicas", "[]int32", "0+"),
        field("Isr", "[]int32", "0+"),
        field("RemovingReplicas", "[]int32", "0+"),
        field("AddingReplicas", "[]int32", "0+"),
        field("Leader", "int32", "0+", default="-1"),
        field("LeaderRecoveryState", "int8", "0+", tagged="0+", tag=0, default="0"),
        field("LeaderEpoch", "int32", "0+", default="-1"),
        field("PartitionEpoch", "int32", "0+", default="-1"),
        field("Directories", "[]uuid", "1+"),
        field("EligibleLeaderReplicas", "[]int32", "2+", nullable="2+", tagged="2+", tag=1, default="null"),
        field("LastKnownElr", "[]int32", "2+", nullable="2+", tagged="2+", tag=2, default="null"),
    ],
)

PRODUCER_IDS_RECORD = message(
    "ProducerIdsRecord", api_key=15, valid="0", flexible="0+",
    source=_DIR + "ProducerIdsRecord.json",
    fields=[
        field("BrokerId", "int32", "0+"),
        field("BrokerEpoch", "int64", "0+", default="-1"),
        field("NextProducerId", "int64", "0+"),
    ],
)

REGISTER_BROKER_RECORD = message(
    "RegisterBrokerRecord", api_key=0, valid="0-4", flexible="0+",
    source=_DIR + "RegisterBrokerRecord.json",
    fields=[
        field("BrokerId", "int32", "0+"),
        field("IsMigratingZkBroker", "bool", "2+", default="false"),
        field("IncarnationId", "uuid", "0+"),
        field("BrokerEpoch", "int64", "0+"),
        field("EndPoints", "[]BrokerEndpoint", "0+", fields=[
            field("Name", "string", "0+"),
            field("Host", "string", "0+"),
            field("Port", "uint16", "0+"),
            field("SecurityProtocol", "int16", "0+"),
        ]),
        field("Features", "[]BrokerFeature", "0+", fields=[
            field("Name", "string", "0+"),
            field("MinSupportedVersion", "int16", "0+"),
            field("MaxSupportedVersion", "int16", "0+"),
        ]),
        field("Rack", "string", "0+", nullable="0+"),
        field("Fenced", "bool", "0+", default="true"),
        field("InControlledShutdown", "bool", "1+", default="false"),
        field("LogDirs", "[]uuid", "3+", tagged="3+", tag=0),
        field("CordonedLogDirs", "[]uuid", "4+", nullable="4+", tagged="4+", tag=1, default="null"),
    ],
)

REGISTER_CONTROLLER_RECORD = message(
    "RegisterControllerRecord", api_key=27, valid="0", flexible="0+",
    source=_DIR + "RegisterControllerRecord.json",
    fields=[
        field("ControllerId", "int32", "0+"),
        field("IncarnationId", "uuid", "0+"),
        field("ZkMigrationReady", "bool", "0+"),
        field("EndPoints", "[]ControllerEndpoint", "0+", fields=[
            field("Name", "string", "0+"),
            field("Host", "string", "0+"),
            field("Port", "uint16", "0+"),
            field("SecurityProtocol", "int16", "0+"),
        ]),
        field("Features", "[]ControllerFeature", "0+", fields=[
            field("Name", "string", "0+"),
            field("MinSupportedVersion", "int16", "0+"),
            field("MaxSupportedVersion", "int16", "0+"),
        ]),
    ],
)

REMOVE_ACCESS_CONTROL_ENTRY_RECORD = message(
    "RemoveAccessControlEntryRecord", api_key=19, valid="0", flexible="0+",
    source=_DIR + "RemoveAccessControlEntryRecord.json",
    fields=[
        field("Id", "uuid", "0+"),
    ],
)

REMOVE_DELEGATION_TOKEN_RECORD = message(
    "RemoveDelegationTokenRecord", api_key=26, valid="0", flexible="0+",
    source=_DIR + "RemoveDelegationTokenRecord.json",
    fields=[
        field("TokenId", "string", "0+"),
    ],
)

REMOVE_TOPIC_RECORD = message(
    "RemoveTopicRecord", api_key=9, valid="0", flexible="0+",
    source=_DIR + "RemoveTopicRecord.json",
    fields=[
        field("TopicId", "uuid", "0+"),
    ],
)

REMOVE_USER_SCRAM_CREDENTIAL_RECORD = message(
    "RemoveUserScramCredentialRecord", api_key=22, valid="0", flexible="0+",
    source=_DIR + "RemoveUserScramCredentialRecord.json",
    fields=[
        field("Name", "string", "0+"),
        field("Mechanism", "int8", "0+"),
    ],
)

TOPIC_RECORD = message(
    "TopicRecord", api_key=2, valid="0", flexible="0+",
    source=_DIR + "TopicRecord.json",
    fields=[
        field("Name", "string", "0+"),
        field("TopicId", "uuid", "0+"),
    ],
)

UNFENCE_BROKER_RECORD = message(
    "UnfenceBrokerRecord", api_key=8, valid="0", flexible="0+",
    source=_DIR + "UnfenceBrokerRecord.json",
    fields=[
        field("Id", "int32", "0+"),
        field("Epoch", "int64", "0+"),
    ],
)

UNREGISTER_BROKER_RECORD = message(
    "UnregisterBrokerRecord", api_key=1, valid="0", flexible="0+",
    source=_DIR + "UnregisterBrokerRecord.json",
    fields=[
        field("BrokerId", "int32", "0+"),
        field("BrokerEpoch", "int64", "0+"),
    ],
)

USER_SCRAM_CREDENTIAL_RECORD = message(
    "UserScramCredentialRecord", api_key=11, valid="0", flexible="0+",
    source=_DIR + "UserScramCredentialRecord.json",
    fields=[
        field("Name", "string", "0+"),
        field("Mechanism", "int8", "0+"),
        field("Salt", "bytes", "0+"),
        field("StoredKey", "bytes", "0+"),
        field("ServerKey", "bytes", "0+"),
        field("Iterations", "int32", "0+"),
    ],
)

ZK_MIGRATION_STATE_RECORD = message(
    "ZkMigrationStateRecord", api_key=21, valid="0", flexible="0+",
    source=_DIR + "ZkMigrationRecord.json",
    fields=[
        field("ZkMigrationState", "int8", "0+"),
    ],
)

MESSAGES = (
    ABORT_TRANSACTION_RECORD,
    ACCESS_CONTROL_ENTRY_RECORD,
    BEGIN_TRANSACTION_RECORD,
    BROKER_REGISTRATION_CHANGE_RECORD,
    CLEAR_ELR_RECORD,
    CLIENT_QUOTA_RECORD,
    CONFIG_RECORD,
    DELEGATION_TOKEN_RECORD,
    END_TRANSACTION_RECORD,
    FEATURE_LEVEL_RECORD,
    FENCE_BROKER_RECORD,
    NO_OP_RECORD,
    PARTITION_CHANGE_RECORD,
    PARTITION_RECORD,
    PRODUCER_IDS_RECORD,
    REGISTER_BROKER_RECORD,
    REGISTER_CONTROLLER_RECORD,
    REMOVE_ACCESS_CONTROL_ENTRY_RECORD,
    REMOVE_DELEGATION_TOKEN_RECORD,
    REMOVE_TOPIC_RECORD,
    REMOVE_USER_SCRAM_CREDENTIAL_RECORD,
    TOPIC_RECORD,
    UNFENCE_BROKER_RECORD,
    UNREGISTER_BROKER_RECORD,
    USER_SCRAM_CREDENTIAL_RECORD,
    ZK_MIGRATION_STATE_RECORD,
)
