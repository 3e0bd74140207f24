"""How Kafka's JVM code turns internal-topic records into text, where it is not JSON.

``kafka-dump-log`` prints some records through Java/Scala objects rather than
the generated JSON converters:

* ``--transaction-log-decoder`` lists a transaction's partitions by iterating a
  Scala 2.13 ``mutable.HashSet[TopicPartition]`` (``TransactionMetadata.
  topicPartitions``), so their order is the hash table's.  :func:`scala_hash_set_order`
  replays that table: Java's ``String.hashCode`` and ``TopicPartition.hashCode``,
  Scala's ``improveHash``, buckets kept sorted by hash, growth on ``sizeHint``
  and at the 0.75 load factor (``scala/collection/mutable/HashSet.scala``).
* ``--remote-log-metadata-decoder`` prints ``toString()`` of the objects
  ``RemoteLogMetadataSerde.deserialize`` builds; :func:`remote_log_metadata_text`
  rebuilds them from the decoded record (``storage/api/.../RemoteLogSegmentMetadata.java``
  and siblings), including the checks their constructors make.
"""

from __future__ import annotations

import base64
from typing import Any

from kseg.errors import InvalidRecord

_MASK32 = 0xFFFFFFFF


def _int32(value: int) -> int:
    value &= _MASK32
    return value - (1 << 32) if value & 0x80000000 else value


def java_string_hash(text: str) -> int:
    """``String.hashCode``: s[0]*31^(n-1) + ... over UTF-16 code units, in int arithmetic."""
    units = text.encode("utf-16-be", "surrogatepass")
    value = 0
    for i in range(0, len(units), 2):
        value = (31 * value + (units[i] << 8 | units[i + 1])) & _MASK32
    return _int32(value)


def topic_partition_hash(topic: str, partition: int) -> int:
    """``TopicPartition.hashCode``: 31 * (31 + partition) + topic.hashCode()."""
    return _int32(31 * (31 + partition) + java_string_hash(topic))


def _improve_hash(hash_code: int) -> int:
    """Scala's ``HashSet.improveHash``: h ^ (h >>> 16)."""
    return _int32(hash_code ^ ((hash_code & _MASK32) >> 16))


def _table_size_for(capacity: int) -> int:
    highest = 1 << (max(capacity - 1, 4).bit_length() - 1)
    return min(highest * 2, 1 << 30)


class _ScalaHashSet:
    """Just enough of Scala 2.13's ``mutable.HashSet`` to know its iteration order."""

    LOAD_FACTOR = 0.75

    def __init__(self) -> None:
        self.table: list[list[tuple[int, tuple[str, int]]]] = [[] for _ in range(_table_size_for(16))]
        self.threshold = int(len(self.table) * self.LOAD_FACTOR)
        self.size = 0

    def _grow(self, new_length: int) -> None:
        entries = [entry for bucket in self.table for entry in bucket]
        self.table = [[] for _ in range(new_length)]
        self.threshold = int(new_length * self.LOAD_FACTOR)
        for entry in entries:  # bucket order is preserved by the split, and buckets stay sorted by hash
            self.table[entry[0] & (new_length - 1)].append(entry)

    def _add_elem(self, elem: tuple[str, int], hashed: int) -> None:
        bucket = self.table[hashed & (len(self.table) - 1)]
        index = 0
        while index < len(bucket) and bucket[index][0] <= hashed:
            if bucket[index] == (hashed, elem):
                return
            index += 1
        bucket.insert(index, (hashed, elem))
        self.size += 1

    def add_all(self, elems: list[tuple[str, int]]) -> None:
        """``++=`` of an immutable Set: size hint first; Set1..Set4 go through ``add`` (which grows)."""
        target = _table_size_for(int((len(elems) + 1) / self.LOAD_FACTOR))
        if target > len(self.table):
            self._grow(target)
        for elem in elems:
            if len(elems) <= 4 and self.size + 1 >= self.threshold:
                self._grow(len(self.table) * 2)
            self._add_elem(elem, _improve_hash(topic_partition_hash(*elem)))

    def __iter__(self):
        for bucket in self.table:
            for _, elem in bucket:
                yield elem


def scala_hash_set_order(groups: list[tuple[str, list[int]]]) -> list[tuple[str, int]]:
    """The order ``TransactionMetadata.topicPartitions`` iterates after one ``addPartitions`` per topic.

    ``groups`` is ``TransactionPartitions`` as stored: (topic, partition ids).
    Within one topic the ids are first made a Scala immutable ``Set``
    (duplicates dropped).  Elements with equal hashes keep list order here;
    Scala would take them in its immutable set's trie order (a tie needs two
    different partitions with the same 32-bit hash, and is not modelled).
    """
    table = _ScalaHashSet()
    for topic, partitions in groups:
        table.add_all([(topic, p) for p in dict.fromkeys(partitions)])
    return list(table)


# --------------------------------------------------------------------------- remote log metadata

SEGMENT_STATES = {0: "COPY_SEGMENT_STARTED", 1: "COPY_SEGMENT_FINISHED", 2: "DELETE_SEGMENT_STARTED",
                  3: "DELETE_SEGMENT_FINISHED"}
PARTITION_DELETE_STATES = {0: "DELETE_PARTITION_MARKED", 1: "DELETE_PARTITION_STARTED",
                           2: "DELETE_PARTITION_FINISHED"}


class JavaException(InvalidRecord):
    """What a Java constructor would throw; ``kafka_message`` is its ``getMessage()``."""

    def __init__(self, kafka_message: str, explanation: str) -> None:
        super().__init__(explanation, field="value")
        self.kafka_message = kafka_message


def _topic_id_partition(entry: dict[str, Any]) -> str:
    """``TopicIdPartition.toString``: ``<topicId>:<topic>-<partition>``."""
    return f"{entry['id']}:{entry['name']}-{entry['partition']}"


def _custom_metadata(value: str | None) -> str:
    """``Optional<CustomMetadata>.toString``."""
    if value is None:
        return "Optional.empty"
    return f"Optional[CustomMetadata{{{len(base64.b64decode(value))} bytes}}]"


def _leader_epochs(entries: list[dict[str, Any]]) -> str:
    """A ``HashMap`` of the entries (last one wins) copied into a ``TreeMap``, printed ``{k=v, ...}``."""
    if not entries:
        raise JavaException("segmentLeaderEpochs can not be null or empty", "no segment leader epochs")
    epochs = {entry["leaderEpoch"]: entry["offset"] for entry in entries}
    return "{" + ", ".join(f"{k}={epochs[k]}" for k in sorted(epochs)) + "}"


def _state(states: dict[int, str], state_id: int, null_message: str) -> str:
    """``RemoteLogSegmentState.forId`` (null for an unknown id, which the constructor then rejects)."""
    if state_id not in states:
        raise JavaException(null_message, f"unknown state id {state_id}")
    return states[state_id]


def _segment_metadata(data: dict[str, Any]) -> str:
    start, end = data["startOffset"], data["endOffset"]
    if start < 0:
        raise JavaException(
            f"Unexpected start offset = {start}. StartOffset for a remote segment cannot be negative",
            "negative start offset",
        )
    if end < start:
        raise JavaException(
            f"Unexpected end offset = {end}. EndOffset for a remote segment cannot be less than "
            f"startOffset = {start}",
            "end offset before start offset",
        )
    epochs = _leader_epochs(data["segmentLeaderEpochs"])
    state = _state(SEGMENT_STATES, data["remoteLogSegmentState"], "state can not be null")
    segment_id = data["remoteLogSegmentId"]
    return (
        "RemoteLogSegmentMetadata{remoteLogSegmentId="
        f"RemoteLogSegmentId{{topicIdPartition={_topic_id_partition(segment_id['topicIdPartition'])}, "
        f"id={segment_id['id']}}}, startOffset={start}, endOffset={end}, brokerId={data['brokerId']}, "
        f"maxTimestampMs={data['maxTimestampMs']}, eventTimestampMs={data['eventTimestampMs']}, "
        f"segmentLeaderEpochs={epochs}, segmentSizeInBytes={data['segmentSizeInBytes']}, "
        f"customMetadata={_custom_metadata(data.get('customMetadata'))}, state={state}}}"
    )


def _segment_update(data: dict[str, Any]) -> str:
    state = _state(SEGMENT_STATES, data["remoteLogSegmentState"], "state can not be null")
    segment_id = data["remoteLogSegmentId"]
    return (
        "RemoteLogSegmentMetadataUpdate{remoteLogSegmentId="
        f"RemoteLogSegmentId{{topicIdPartition={_topic_id_partition(segment_id['topicIdPartition'])}, "
        f"id={segment_id['id']}}}, customMetadata={_custom_metadata(data.get('customMetadata'))}, "
        f"state={state}, eventTimestampMs={data['eventTimestampMs']}, brokerId={data['brokerId']}}}"
    )


def _partition_delete(data: dict[str, Any]) -> str:
    state = _state(PARTITION_DELETE_STATES, data["remotePartitionDeleteState"], "null")
    return (
        f"RemotePartitionDeleteMetadata{{topicPartition={_topic_id_partition(data['topicIdPartition'])}, "
        f"state={state}, eventTimestampMs={data['eventTimestampMs']}, brokerId={data['brokerId']}}}"
    )


def _segment_snapshot(data: dict[str, Any]) -> str:
    state = _state(SEGMENT_STATES, data["remoteLogSegmentState"], "state can not be null")
    epochs = _leader_epochs(data["segmentLeaderEpochs"])
    return (
        f"RemoteLogSegmentMetadataSnapshot{{segmentId={data['segmentId']}, "
        f"startOffset={data['startOffset']}, "
        f"endOffset={data['endOffset']}, maxTimestampMs={data['maxTimestampMs']}, "
        f"segmentLeaderEpochs={epochs}, segmentSizeInBytes={data['segmentSizeInBytes']}, "
        f"customMetadata={_custom_metadata(data.get('customMetadata'))}, state={state}}}"
    )


_REMOTE_TEXT = {0: _segment_metadata, 1: _segment_update, 2: _partition_delete, 3: _segment_snapshot}


def remote_log_metadata_text(api_key: int, data: dict[str, Any]) -> str:
    """``RemoteLogMetadataSerde.deserialize(bytes).toString()`` for a decoded record of ``api_key`` 0-3.

    Raises :class:`JavaException` where a constructor would throw (an empty
    leader-epoch list, a negative start offset, an unknown state id, ...).
    """
    return _REMOTE_TEXT[api_key](data)
