"""``__remote_log_metadata`` record schemas and the producer-state snapshot (storage module).

Transcribed from ``storage/src/main/resources/message/``
at Kafka 4.3.0, as the package docstring of :mod:`kseg.format.schemas` describes.
"""

from kseg.format.messages import field, message

_DIR = "storage/src/main/resources/message/"

PRODUCER_SNAPSHOT = message(
    "ProducerSnapshot", valid="1", flexible="none",
    source=_DIR + "ProducerSnapshot.json",
    fields=[
        field("Crc", "uint32", "1"),
        field("ProducerEntries", "[]ProducerEntry", "1", fields=[
            field("ProducerId", "int64", "1"),
            field("Epoch", "int16", "1"),
            field("LastSequence", "int32", "1"),
            field("LastOffset", "int64", "1"),
            field("OffsetDelta", "int32", "1"),
            field("Timestamp", "int64", "1"),
            field("CoordinatorEpoch", "int32", "1"),
            field("CurrentTxnFirstOffset", "int64", "1"),
        ]),
    ],
)

REMOTE_LOG_SEGMENT_METADATA_RECORD = message(
    "RemoteLogSegmentMetadataRecord", api_key=0, valid="0", flexible="0+",
    source=_DIR + "RemoteLogSegmentMetadataRecord.json",
    fields=[
        field("RemoteLogSegmentId", "RemoteLogSegmentIdEntry", "0+", fields=[
            field("TopicIdPartition", "TopicIdPartitionEntry", "0+", fields=[
                field("Name", "string", "0+"),
                field("Id", "uuid", "0+"),
                field("Partition", "int32", "0+"),
            ]),
            field("Id", "uuid", "0+"),
        ]),
        field("StartOffset", "int64", "0+"),
        field("EndOffset", "int64", "0+"),
        field("BrokerId", "int32", "0+"),
        field("MaxTimestampMs", "int64", "0+"),
        field("EventTimestampMs", "int64", "0+"),
        field("SegmentLeaderEpochs", "[]SegmentLeaderEpochEntry", "0+", fields=[
            field("LeaderEpoch", "int32", "0+"),
            field("Offset", "int64", "0+"),
        ]),
        field("SegmentSizeInBytes", "int32", "0+"),
        field("CustomMetadata", "bytes", "0+", nullable="0+", default="null"),
        field("RemoteLogSegmentState", "int8", "0+"),
        field("TxnIndexEmpty", "bool", "0+", tagged="0+", tag=0),
    ],
)

REMOTE_LOG_SEGMENT_METADATA_SNAPSHOT_RECORD = message(
    "RemoteLogSegmentMetadataSnapshotRecord", api_key=3, valid="0", flexible="0+",
    source=_DIR + "RemoteLogSegmentMetadataSnapshotRecord.json",
    fields=[
        field("SegmentId", "uuid", "0+"),
        field("StartOffset", "int64", "0+"),
        field("EndOffset", "int64", "0+"),
        field("BrokerId", "int32", "0+"),
        field("MaxTimestampMs", "int64", "0+"),
        field("EventTimestampMs", "int64", "0+"),
        field("SegmentLeaderEpochs", "[]SegmentLeaderEpochEntry", "0+", fields=[
            field("LeaderEpoch", "int32", "0+"),
            field("Offset", "int64", "0+"),
        ]),
        field("SegmentSizeInBytes", "int32", "0+"),
        field("CustomMetadata", "bytes", "0+", nullable="0+", default="null"),
        field("RemoteLogSegmentState", "int8", "0+"),
        field("TxnIndexEmpty", "bool", "0+", tagged="0+", tag=0),
    ],
)

REMOTE_LOG_SEGMENT_METADATA_UPDATE_RECORD = message(
    "RemoteLogSegmentMetadataUpdateRecord", api_key=1, valid="0", flexible="0+",
    source=_DIR + "RemoteLogSegmentMetadataUpdateRecord.json",
    fields=[
        field("RemoteLogSegmentId", "RemoteLogSegmentIdEntry", "0+", fields=[
            field("TopicIdPartition", "TopicIdPartitionEntry", "0+", fields=[
                field("Name", "string", "0+"),
                field("Id", "uuid", "0+"),
                field("Partition", "int32", "0+"),
            ]),
            field("Id", "uuid", "0+"),
        ]),
        field("BrokerId", "int32", "0+"),
        field("EventTimestampMs", "int64", "0+"),
        field("CustomMetadata", "bytes", "0+", nullable="0+", default="null"),
        field("RemoteLogSegmentState", "int8", "0+"),
    ],
)

REMOTE_PARTITION_DELETE_METADATA_RECORD = message(
    "RemotePartitionDeleteMetadataRecord", api_key=2, valid="0", flexible="0+",
    source=_DIR + "RemotePartitionDeleteMetadataRecord.json",
    fields=[
        field("TopicIdPartition", "TopicIdPartitionEntry", "0+", fields=[
            field("Name", "string", "0+"),
            field("Id", "uuid", "0+"),
            field("Partition", "int32", "0+"),
        ]),
        field("BrokerId", "int32", "0+"),
        field("EventTimestampMs", "int64", "0+"),
        field("RemotePartitionDeleteState", "int8", "0+"),
    ],
)

MESSAGES = (
    PRODUCER_SNAPSHOT,
    REMOTE_LOG_SEGMENT_METADATA_RECORD,
    REMOTE_LOG_SEGMENT_METADATA_SNAPSHOT_RECORD,
    REMOTE_LOG_SEGMENT_METADATA_UPDATE_RECORD,
    REMOTE_PARTITION_DELETE_METADATA_RECORD,
)
