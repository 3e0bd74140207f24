"""``__share_group_state`` record schemas (the share coordinator's records).

Transcribed from ``share-coordinator/src/main/resources/common/message/``
at Kafka 4.3.0 (confluentinc/kafka a9ce3221537b8653448750697915607dc7936cf3, "Bump version to 4.3.0";
the same files are in ``shared/reference/kafka-4.3.0-messages/``).
Each ``message(...)`` names its source file, ``apiKey`` (the record type of coordinator records),
``validVersions`` and ``flexibleVersions``; fields keep Kafka's names, types, versions, nullable/tagged
versions, tags and defaults, in Kafka's order.  Left out because they do not change what is read or
printed: ``about``, ``entityType``, ``mapKey``, ``ignorable``, ``zeroCopy``, the message ``type``.  A field
without ``versions`` in Kafka's file takes its ``taggedVersions`` (as Kafka's generator does); here both
are written.  ``tests/format/test_schema_transcription.py`` compares this file with Kafka's, field by
field, version by version.
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
