"""``__share_group_state`` record schemas (the share coordinator's records).

Transcribed from ``share-coordinator/src/main/resources/common/message/``
at Kafka 4.3.0, as the package docstring of :mod:`kseg.format.schemas` describes.
"""

from kseg.format.messages import field, message

_DIR = "share-coordinator/src/main/resources/common/message/"

SHARE_SNAPSHOT_KEY = message(
    "ShareSnapshotKey", api_key=0, valid="0", flexible="none",
    source=_DIR + "ShareSnapshotKey.json",
    fields=[
        field("GroupId", "string", "0"),
        field("TopicId", "uuid", "0"),
        field("Partition", "int32", "0"),
    ],
)

SHARE_SNAPSHOT_VALUE = message(
    "ShareSnapshotValue", api_key=0, valid="0", flexible="0+",
    source=_DIR + "ShareSnapshotValue.json",
    fields=[
        field("SnapshotEpoch", "int32", "0+"),
        field("StateEpoch", "int32", "0+"),
        field("LeaderEpoch", "int32", "0+"),
        field("StartOffset", "int64", "0+"),
        field("DeliveryCompleteCount", "int32", "0+", tagged="0+", tag=0, default="-1"),
        field("CreateTimestamp", "int64", "0+"),
        field("WriteTimestamp", "int64", "0+"),
        field("StateBatches", "[]StateBatch", "0+", fields=[
            field("FirstOffset", "int64", "0+"),
            field("LastOffset", "int64", "0+"),
            field("DeliveryState", "int8", "0+"),
            field("DeliveryCount", "int16", "0+"),
        ]),
    ],
)

SHARE_UPDATE_KEY = message(
    "ShareUpdateKey", api_key=1, valid="0", flexible="none",
    source=_DIR + "ShareUpdateKey.json",
    fields=[
        field("GroupId", "string", "0"),
        field("TopicId", "uuid", "0"),
        field("Partition", "int32", "0"),
    ],
)

SHARE_UPDATE_VALUE = message(
    "ShareUpdateValue", api_key=1, valid="0", flexible="0+",
    source=_DIR + "ShareUpdateValue.json",
    fields=[
        field("SnapshotEpoch", "int32", "0+"),
        field("LeaderEpoch", "int32", "0+"),
        field("StartOffset", "int64", "0+"),
        field("DeliveryCompleteCount", "int32", "0+", tagged="0+", tag=0, default="-1"),
        field("StateBatches", "[]StateBatch", "0+", fields=[
            field("FirstOffset", "int64", "0+"),
            field("LastOffset", "int64", "0+"),
            field("DeliveryState", "int8", "0+"),
            field("DeliveryCount", "int16", "0+"),
        ]),
    ],
)

MESSAGES = (
    SHARE_SNAPSHOT_KEY,
    SHARE_SNAPSHOT_VALUE,
    SHARE_UPDATE_KEY,
    SHARE_UPDATE_VALUE,
)
