"""``__consumer_offsets`` and ``__share_group_state``: coordinator records (``CoordinatorRecordSerde``).

Key and value each start with an int16 (the key's is the record type, the
value's its version) followed by a generated message; the record type names
the pair of messages.  Both decoders share the framing and the text of
``OffsetsMessageParser`` / ``ShareGroupStateMessageParser``.
"""

from __future__ import annotations

import base64
from collections.abc import Collection
from typing import Any

from kseg.errors import KsegError
from kseg.format import schemas
from kseg.format.internal.common import (
    VERSION_PREFIX,
    Decoded,
    Failed,
    as_problem,
    b64,
    read_prefix,
)
from kseg.format.messages import Message, MessageDecodeError, UnknownVersion, decode_message, kafka_json

#: ``CoordinatorRecordType`` of Kafka 4.3.0's group coordinator (``GroupCoordinatorRecordSerde``; generated
#: by generator/src/main/java/org/apache/kafka/message/CoordinatorRecordTypeGenerator.java from the
#: ``apiKey`` of the ``coordinator-key``/``coordinator-value`` pairs in
#: ``group-coordinator/src/main/resources/common/message/``): record type -> (key message, value message).
#: Types 9 (``ShareGroupPartitionMetadata``, Kafka 4.0's share groups early access) and 18
#: (``StreamsGroupPartitionMetadata``, removed before any release) are unknown to 4.3, as to kseg.
OFFSETS_RECORD_TYPES = {
    0: ("LegacyOffsetCommitKey", "LegacyOffsetCommitValue"),
    1: ("OffsetCommitKey", "OffsetCommitValue"),
    2: ("GroupMetadataKey", "GroupMetadataValue"),
    3: ("ConsumerGroupMetadataKey", "ConsumerGroupMetadataValue"),
    4: ("ConsumerGroupPartitionMetadataKey", "ConsumerGroupPartitionMetadataValue"),
    5: ("ConsumerGroupMemberMetadataKey", "ConsumerGroupMemberMetadataValue"),
    6: ("ConsumerGroupTargetAssignmentMetadataKey", "ConsumerGroupTargetAssignmentMetadataValue"),
    7: ("ConsumerGroupTargetAssignmentMemberKey", "ConsumerGroupTargetAssignmentMemberValue"),
    8: ("ConsumerGroupCurrentMemberAssignmentKey", "ConsumerGroupCurrentMemberAssignmentValue"),
    10: ("ShareGroupMemberMetadataKey", "ShareGroupMemberMetadataValue"),
    11: ("ShareGroupMetadataKey", "ShareGroupMetadataValue"),
    12: ("ShareGroupTargetAssignmentMetadataKey", "ShareGroupTargetAssignmentMetadataValue"),
    13: ("ShareGroupTargetAssignmentMemberKey", "ShareGroupTargetAssignmentMemberValue"),
    14: ("ShareGroupCurrentMemberAssignmentKey", "ShareGroupCurrentMemberAssignmentValue"),
    15: ("ShareGroupStatePartitionMetadataKey", "ShareGroupStatePartitionMetadataValue"),
    16: ("ConsumerGroupRegularExpressionKey", "ConsumerGroupRegularExpressionValue"),
    17: ("StreamsGroupMetadataKey", "StreamsGroupMetadataValue"),
    19: ("StreamsGroupMemberMetadataKey", "StreamsGroupMemberMetadataValue"),
    20: ("StreamsGroupTargetAssignmentMetadataKey", "StreamsGroupTargetAssignmentMetadataValue"),
    21: ("StreamsGroupTargetAssignmentMemberKey", "StreamsGroupTargetAssignmentMemberValue"),
    22: ("StreamsGroupCurrentMemberAssignmentKey", "StreamsGroupCurrentMemberAssignmentValue"),
    23: ("StreamsGroupTopologyKey", "StreamsGroupTopologyValue"),
}
#: ``CoordinatorRecordType`` of Kafka 4.3.0's share coordinator: record type -> (key message, value message).
SHARE_STATE_RECORD_TYPES = {
    0: ("ShareSnapshotKey", "ShareSnapshotValue"),
    1: ("ShareUpdateKey", "ShareUpdateValue"),
}
#: The layout a coordinator key is read with.  ``CoordinatorRecordSerde.deserialize``
#: (coordinator-common/src/main/java/org/apache/kafka/coordinator/common/runtime/CoordinatorRecordSerde.java)
#: reads the key message "at version" record type, but every key is a ``coordinator-key`` message whose only
#: valid version is 0 (generator/src/main/java/org/apache/kafka/message/MessageSpec.java enforces it), and
#: the generated ``read`` of such a message checks no version: every field is read as in version 0 and
#: there are no tagged fields (``generateClassReader`` in .../message/MessageDataGenerator.java).
KEY_LAYOUT_VERSION = 0


def _decode_part(
    schema: Message, version: int, data: bytes, part: str, layout: int | None = None,
) -> dict[str, Any]:
    """A coordinator key or value after its int16 prefix (trailing bytes ignored, as Kafka does).

    ``version`` is what Kafka's messages name; ``layout`` the version the bytes are read with, when another.
    """
    try:
        decoded, _ = decode_message(schema, version if layout is None else layout, data, VERSION_PREFIX.size)
    except UnknownVersion as err:
        text = f"{err.message}, raw {part} {b64(data)}"
        raise Failed("unknown-version", part, text, err.message, 0) from err
    except MessageDecodeError as err:
        text = (f"Could not read record with version {version} from {part}'s buffer "
                f"due to: {err.kafka_message}.")
        offset = (err.offset or 0) + VERSION_PREFIX.size
        raise Failed("error", part, text, err.message, offset, err.field) from err
    return decoded


#: ``TransactionCoordinatorRecordSerde`` (Kafka 4.1 and later): record type -> (key message, value message).
TRANSACTION_RECORD_TYPES = {0: ("TransactionLogKey", "TransactionLogValue")}
#: The missing-key text names the decoder up to 4.0; 4.1's CoordinatorRecordMessageParser says "the specified".
SPECIFIED_DECODER = "the specified"


def _coordinator_record(
    key: bytes | None, value: bytes | None, offset: int, *, family: str,
    types: dict[int, tuple[str, str]], value_label: str, decoder_name: str,
    known: Collection[int] | None = None,
) -> Decoded:
    """``OffsetsMessageParser`` / ``ShareGroupStateMessageParser`` over ``CoordinatorRecordSerde``.

    ``known``: the record types the release's tool decodes (None: all of ``types``); any other is
    ``Unknown record type``, as Kafka's serde or ``prepareKey`` reports it."""
    if key is None:
        text = (f"Failed to decode message at offset {offset} using {decoder_name} decoder "
                "(message had a missing key)")
        failed = Failed("error", "key", text, "the record has no key")
        return Decoded(f"Error at offset {offset}, skipping. {text}", None,
                       problem=as_problem(failed, key, value), kafka_aborts=True)
    key_json: dict[str, Any] | None = None
    try:
        record_type = read_prefix(key, "key")
        if record_type not in types or (known is not None and record_type not in known):
            text = f"Unknown record type {record_type} at offset {offset}, skipping."
            raise Failed("unknown-type", "key", text, f"unknown record type {record_type}", 0)
        key_name, value_name = types[record_type]
        key_data = _decode_part(schemas.get(family, key_name), record_type, key, "key", KEY_LAYOUT_VERSION)
        key_json = {"type": record_type, "name": key_name, "data": key_data}
        key_text = kafka_json({"type": str(record_type), "data": key_data})
        if value is None:
            return Decoded(key_text, "<DELETE>", key_json, None)
        version = read_prefix(value, "value")
        value_schema = schemas.get(family, value_name)
        if known is not None and version not in value_schema.valid:
            # Kafka 4.0+ CoordinatorRecordSerde.deserialize: UnknownRecordVersionException (Deserializer.java)
            text = f"Found an unknown record version {version} for {record_type} type"
            raise Failed("unknown-version", "value", text, f"unknown value version {version}", 0)
        value_data = _decode_part(schemas.get(family, value_name), version, value, "value")
        if value_name == "GroupMetadataValue":
            value_data = _expand_consumer_protocol(value_data)
    except Failed as failed:
        text = failed.kafka_message if failed.kind == "unknown-type" else \
            f"Error at offset {offset}, skipping. {failed.kafka_message}"
        return Decoded(text, None, key_json, None, as_problem(failed, key, value))
    value_json = {"version": version, "name": value_name, "data": value_data}
    payload_text = kafka_json({value_label: str(version), "data": value_data})
    return Decoded(key_text, payload_text, key_json, value_json)


def decode_offsets_record(key: bytes | None, value: bytes | None, offset: int, *,
                          known: Collection[int] | None = None, specified: bool = False) -> Decoded:
    """A ``__consumer_offsets`` record, as ``kafka-dump-log --offsets-decoder`` shows it.

    Text: key ``{"type":"<t>","data":{...}}`` and payload ``{"version":"<v>","data":{...}}``
    (both numbers as strings), ``<DELETE>`` for a tombstone; for a classic
    group whose ``protocolType`` is ``consumer`` each member's subscription and
    assignment are expanded (kept as base64 when they do not parse).  ``known``/``specified``: the
    release's record types and missing-key text (kseg.ops.dump.dialect).
    """
    return _coordinator_record(key, value, offset, family="group_coordinator", types=OFFSETS_RECORD_TYPES,
                               value_label="version", decoder_name=SPECIFIED_DECODER if specified else "offset topic",
                               known=known)


def decode_share_state_record(key: bytes | None, value: bytes | None, offset: int, *,
                              specified: bool = False) -> Decoded:
    """A ``__share_group_state`` record, as ``--share-group-state-decoder`` shows it.

    Same framing and text as the offsets decoder, except that Kafka 4.0 labels
    the value ``"type"`` instead of ``"version"`` (``{"type":"0","data":{...}}``);
    from 4.1 (``specified``) it is ``CoordinatorRecordMessageParser``'s: ``"version"``
    and the missing-key text of the other decoders.
    """
    return _coordinator_record(key, value, offset, family="share_coordinator", types=SHARE_STATE_RECORD_TYPES,
                               value_label="version" if specified else "type",
                               decoder_name=SPECIFIED_DECODER if specified else "share group state topic",
                               known=tuple(SHARE_STATE_RECORD_TYPES) if specified else None)


def decode_transaction_record_json(key: bytes | None, value: bytes | None, offset: int) -> Decoded:
    """A ``__transaction_state`` record, as Kafka 4.1 and later print it (``TransactionLogMessageParser``
    over ``TransactionCoordinatorRecordSerde``): key ``{"type":"0","data":{"transactionalId":...}}``,
    payload ``{"version":"<v>","data":{...}}`` (TransactionLogValueJsonConverter), ``<DELETE>``.

    Only the texts come from here; the structured key and value (``--format json``) stay those of
    :func:`kseg.format.internal.transactions.decode_transaction_record`, which the caller passes in.
    """
    return _coordinator_record(key, value, offset, family="transaction_coordinator", types=TRANSACTION_RECORD_TYPES,
                               value_label="version", decoder_name=SPECIFIED_DECODER, known=(0,))


def _expand_consumer_protocol(data: dict[str, Any]) -> dict[str, Any]:
    """``prepareGroupMetadataValue``: parse members' subscription/assignment when protocolType is consumer."""
    if data.get("protocolType") != "consumer" or not isinstance(data.get("members"), list):
        return data
    members = []
    for member in data["members"]:
        member = dict(member)
        for name, message_name in (("subscription", "ConsumerProtocolSubscription"),
                                   ("assignment", "ConsumerProtocolAssignment")):
            if isinstance(member.get(name), str):
                member[name] = _embedded_protocol(message_name, member[name])
        members.append(member)
    return {**data, "members": members}


def _embedded_protocol(message_name: str, encoded: str) -> Any:
    """An int16 version + message; on any failure the base64 text stays (Kafka swallows the error)."""
    raw = base64.b64decode(encoded)
    if len(raw) < VERSION_PREFIX.size:
        return encoded
    try:
        parsed, _ = decode_message(schemas.get("clients", message_name), VERSION_PREFIX.unpack_from(raw)[0],
                                   raw, VERSION_PREFIX.size)
    except KsegError:
        return encoded
    return parsed
