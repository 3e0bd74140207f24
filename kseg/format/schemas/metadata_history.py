"""Historical KRaft metadata layouts that the pinned definitions cannot read (hand-transcribed).

Between apache/kafka commits af747fbfed7 (2023-10-19, KAFKA-15581 "Introduce ELR")
and a94bc8d6d52 (2023-11-30, KAFKA-15922 "Add a MetadataVersion for JBOD"), trunk
numbered the versions of two records the other way round: version 1 added the
KIP-966 ELR fields as tagged fields, version 2 the KIP-858 directories.  No Apache
Kafka release wrote these layouts, but trunk builds of those weeks did, and such
logs exist (the real corpus holds one, written 2023-11-22 with metadata.version 16):
their ``PartitionRecord`` v1 carries tags 1 and 2 where the released layout
expects an untagged ``Directories`` array.

Transcribed from ``metadata/src/main/resources/common/metadata/{PartitionRecord,
PartitionChangeRecord}.json`` at a35e021925d2ac371497a823a5ae81271193a3fd (= a94bc8d6d52^,
the last commit before the renumbering).  kseg tries a variant only when a
record does not decode with the pinned definition (kafka-dump-log of that
definition reports ``Failed to deserialize record with type 3``), and marks the
result with the variant's note.  Versions 0 and 2 have the same layout in both
numberings; only version 1 differs.
"""

from kseg.format.messages import field, message

_DIR = "metadata/src/main/resources/common/metadata/"
_REVISION = "a35e021925d2ac371497a823a5ae81271193a3fd"
_NOTE = "trunk layout of 2023-10-19..2023-11-30 (v1 = KIP-966 ELR), never released"

PARTITION_RECORD = message(
    "PartitionRecord", api_key=3, valid="0-2", flexible="0+",
    source=_DIR + "PartitionRecord.json", revision=_REVISION, note=_NOTE,
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
        field("EligibleLeaderReplicas", "[]int32", "1+", nullable="1+", tagged="1+", tag=1, default="null"),
        field("LastKnownELR", "[]int32", "1+", nullable="1+", tagged="1+", tag=2, default="null"),
        field("Directories", "[]uuid", "2+"),
    ],
)

PARTITION_CHANGE_RECORD = message(
    "PartitionChangeRecord", api_key=5, valid="0-2", flexible="0+",
    source=_DIR + "PartitionChangeRecord.json", revision=_REVISION, note=_NOTE,
    fields=[
        field("PartitionId", "int32", "0+", default="-1"),
        field("TopicId", "uuid", "0+"),
        field("Isr", "[]int32", "0+", nullable="0+", tagged="0+", tag=0, default="null"),
        field("Leader", "int32", "0+", tagged="0+", tag=1, default="-2"),
        field("Replicas", "[]int32", "0+", nullable="0+", tagged="0+", tag=2, default="null"),
        field("RemovingReplicas", "[]int32", "0+", nullable="0+", tagged="0+", tag=3, default="null"),
        field("AddingReplicas", "[]int32", "0+", nullable="0+", tagged="0+", tag=4, default="null"),
        field("LeaderRecoveryState", "int8", "0+", tagged="0+", tag=5, default="-1"),
        field("EligibleLeaderReplicas", "[]int32", "1+", nullable="1+", tagged="1+", tag=6, default="null"),
        field("LastKnownELR", "[]int32", "1+", nullable="1+", tagged="1+", tag=7, default="null"),
        field("Directories", "[]uuid", "2+", nullable="2+", tagged="2+", tag=8, default="null"),
    ],
)

MESSAGES = (
    PARTITION_RECORD,
    PARTITION_CHANGE_RECORD,
)
