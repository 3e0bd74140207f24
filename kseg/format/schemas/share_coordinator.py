"""``__share_group_state`` record schemas (the share coordinator's records).

Transcribed from apache/kafka ``share-coordinator/src/main/resources/common/message/``
at commit 1eb7644349cb07139d6a3c1ad1986979647cac99 (2024-10-25, version 4.0.0-SNAPSHOT).
Each ``message(...)`` names its source file, ``validVersions`` and ``flexibleVersions``;
fields keep Kafka's names, types, versions, nullable/tagged versions, tags and defaults, in
Kafka's order.  Left out because they do not change what is read or printed: ``about``,
``entityType``, ``mapKey``, ``ignorable``, ``zeroCopy``.  A field without ``versions`` in
Kafka's file takes its ``taggedVersions`` (as Kafka's generator does); here both are written.
``tests/format/test_schema_transcription.py`` compares this file with the source.
"""

from kseg.format.messages import field, message

_DIR = "share-coordinator/src/main/resources/common/message/"

SHARE_SNAPSHOT_KEY = message(
    "ShareSnapshotKey", valid="0", flexible="none",
    source=_DIR + "ShareSnapshotKey.json",
    fields=[
        field("GroupId", "string", "0"),
        field("TopicId", "uuid", "0"),
        field("Partition", "int32", "0"),
    ],
)

SHARE_SNAPSHOT_VALUE = message(
    "ShareSnapshotValue", valid="0", flexible="0+",
    source=_DIR + "ShareSnapshotValue.json",
    fields=[
        field("SnapshotEpoch", "uint16", "0"),
        field("StateEpoch", "int32", "0+"),
        field("LeaderEpoch", "int32", "0+"),
        field("StartOffset", "int64", "0"),
        field("StateBatches", "[]StateBatch", "0", fields=[
            field("FirstOffset", "int64", "0"),
            field("LastOffset", "int64", "0"),
            field("DeliveryState", "int8", "0"),
            field("DeliveryCount", "int16", "0"),
        ]),
    ],
)

SHARE_UPDATE_KEY = message(
    "ShareUpdateKey", valid="1", flexible="none",
    source=_DIR + "ShareUpdateKey.json",
    fields=[
        field("GroupId", "string", "1"),
        field("TopicId", "uuid", "1"),
        field("Partition", "int32", "1"),
    ],
)

SHARE_UPDATE_VALUE = message(
    "ShareUpdateValue", valid="0", flexible="0+",
    source=_DIR + "ShareUpdateValue.json",
    fields=[
        field("SnapshotEpoch", "uint16", "0"),
        field("LeaderEpoch", "int32", "0+"),
        field("StartOffset", "int64", "0"),
        field("StateBatches", "[]StateBatch", "0", fields=[
            field("FirstOffset", "int64", "0"),
            field("LastOffset", "int64", "0"),
            field("DeliveryState", "int8", "0"),
            field("DeliveryCount", "int16", "0"),
        ]),
    ],
)

MESSAGES = (
    SHARE_SNAPSHOT_KEY,
    SHARE_SNAPSHOT_VALUE,
    SHARE_UPDATE_KEY,
    SHARE_UPDATE_VALUE,
)
