"""Record decoders for Kafka's internal topics, giving kafka-dump-log's text and structured JSON.

One function per ``kafka-dump-log`` decoder option; each takes a record's key
and value bytes (``None`` for null) and its offset, and returns a
:class:`Decoded`:

=================================  =======================================  ==============================
function                           kafka-dump-log option                    topic
=================================  =======================================  ==============================
:func:`decode_offsets_record`      ``--offsets-decoder``                    ``__consumer_offsets``
:func:`decode_transaction_record`  ``--transaction-log-decoder``            ``__transaction_state``
:func:`decode_metadata_record`     ``--cluster-metadata-decoder``           ``__cluster_metadata``
:func:`decode_remote_log_record`   ``--remote-log-metadata-decoder``        ``__remote_log_metadata``
:func:`decode_share_state_record`  ``--share-group-state-decoder``          ``__share_group_state``
=================================  =======================================  ==============================

``key_text``/``payload_text`` are what kafka-dump-log prints after `` key: ``
and `` payload: `` (``None``: that part is not printed), with its error texts
(``Error at offset <o>, skipping. <message>``, ``Unknown record type <t> at
offset <o>, skipping.``, ``<DELETE>``); ``key``/``value`` are the same records
as structured JSON for ``--format json``.  Control records never reach these
decoders (Kafka does not call them for control batches):
:func:`describe_control_record` gives the text kafka-dump-log prints for
those.  Where kafka-dump-log would stop the whole run (a missing key for the
offsets decoder, most failures of the transaction-log decoder),
``kafka_aborts`` is set and the texts carry kseg's error line instead.

Byte layouts are in the reference (§7, §8) and in the schema transcriptions
(:mod:`kseg.format.schemas`); decoding is :mod:`kseg.format.messages`.
"""

from __future__ import annotations

import base64
import struct
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import Any

from kseg.errors import KsegError
from kseg.format import schemas
from kseg.format.control import ABORT, COMMIT, decode_control_key, decode_end_txn_marker
from kseg.format.crc import crc32c
from kseg.format.jvm_text import JavaException, remote_log_metadata_text, scala_hash_set_order
from kseg.format.messages import (
    Message,
    MessageDecodeError,
    UnknownVersion,
    decode_message,
    kafka_json,
    read_unsigned_varint,
)

VERSION_PREFIX = struct.Struct(">h")  # int16 version (or record type) in front of a coordinator key/value

#: ``GroupCoordinatorRecordSerde``: record type -> (key message, value message).
OFFSETS_RECORD_TYPES = {
    0: ("OffsetCommitKey", "OffsetCommitValue"),
    1: ("OffsetCommitKey", "OffsetCommitValue"),
    2: ("GroupMetadataKey", "GroupMetadataValue"),
    3: ("ConsumerGroupMetadataKey", "ConsumerGroupMetadataValue"),
    4: ("ConsumerGroupPartitionMetadataKey", "ConsumerGroupPartitionMetadataValue"),
    5: ("ConsumerGroupMemberMetadataKey", "ConsumerGroupMemberMetadataValue"),
    6: ("ConsumerGroupTargetAssignmentMetadataKey", "ConsumerGroupTargetAssignmentMetadataValue"),
    7: ("ConsumerGroupTargetAssignmentMemberKey", "ConsumerGroupTargetAssignmentMemberValue"),
    8: ("ConsumerGroupCurrentMemberAssignmentKey", "ConsumerGroupCurrentMemberAssignmentValue"),
    9: ("ShareGroupPartitionMetadataKey", "ShareGroupPartitionMetadataValue"),
    10: ("ShareGroupMemberMetadataKey", "ShareGroupMemberMetadataValue"),
    11: ("ShareGroupMetadataKey", "ShareGroupMetadataValue"),
    12: ("ShareGroupTargetAssignmentMetadataKey", "ShareGroupTargetAssignmentMetadataValue"),
    13: ("ShareGroupTargetAssignmentMemberKey", "ShareGroupTargetAssignmentMemberValue"),
    14: ("ShareGroupCurrentMemberAssignmentKey", "ShareGroupCurrentMemberAssignmentValue"),
    15: ("ShareGroupStatePartitionMetadataKey", "ShareGroupStatePartitionMetadataValue"),
}
#: ``ShareCoordinatorRecordSerde``: record type -> (key message, value message).
SHARE_STATE_RECORD_TYPES = {
    0: ("ShareSnapshotKey", "ShareSnapshotValue"),
    1: ("ShareUpdateKey", "ShareUpdateValue"),
}
#: ``TransactionState.fromId``.
TRANSACTION_STATES = ("Empty", "Ongoing", "PrepareCommit", "PrepareAbort", "CompleteCommit",
                      "CompleteAbort", "Dead", "PrepareEpochFence")
TRANSACTION_VERSIONS = (0, 1, 2)  # TransactionVersion TV_0..TV_2 (``fromFeatureLevel``)
METADATA_FRAME_VERSION = 1  # AbstractApiMessageSerde.DEFAULT_FRAME_VERSION


@dataclass(frozen=True, slots=True)
class Problem:
    """Why a record was not (fully) decoded; ``raw_*`` hold the bytes as standard base64."""

    kind: str  # "error", "unknown-type" or "unknown-version"
    part: str  # "key" or "value"
    message: str  # kseg's explanation (Kafka's own text is in the Decoded texts)
    offset: int | None  # byte in the key/value where decoding stopped
    field: str | None
    raw_key: str | None
    raw_value: str | None

    def as_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind, "part": self.part, "message": self.message, "offset": self.offset,
            "field": self.field, "rawKey": self.raw_key, "rawValue": self.raw_value,
        }


@dataclass(frozen=True, slots=True)
class Decoded:
    """One record as a decoder sees it: kafka-dump-log's text parts and the structured form."""

    key_text: str | None
    payload_text: str | None
    key: dict[str, Any] | None = None
    value: dict[str, Any] | None = None
    problem: Problem | None = None
    kafka_aborts: bool = False

    @property
    def complete(self) -> bool:
        """Every byte of key and value was understood."""
        return self.problem is None

    def as_json(self) -> dict[str, Any]:
        """The record for ``--format json``: ``key``, ``value`` and, when something failed, ``problem``."""
        out: dict[str, Any] = {"key": self.key, "value": self.value}
        if self.problem is not None:
            out["problem"] = self.problem.as_dict()
        return out


class _Failed(Exception):
    """Internal: a record cannot be decoded; carries Kafka's message and kseg's."""

    def __init__(self, kind: str, part: str, kafka_message: str, message: str,
                 offset: int | None = None, field: str | None = None) -> None:
        super().__init__(message)
        self.kind, self.part, self.kafka_message, self.message = kind, part, kafka_message, message
        self.offset, self.field = offset, field


def _b64(data: bytes | None) -> str | None:
    return None if data is None else base64.b64encode(data).decode("ascii")


def _problem(failed: _Failed, key: bytes | None, value: bytes | None) -> Problem:
    return Problem(failed.kind, failed.part, failed.message, failed.offset, failed.field,
                   _b64(key), _b64(value))


def _read_prefix(data: bytes, part: str) -> int:
    """The int16 in front of a coordinator key or value (``CoordinatorRecordSerde.readVersion``)."""
    if len(data) < VERSION_PREFIX.size:
        raise _Failed("error", part, f"Could not read version from {part}'s buffer.",
                      f"{part} has {len(data)} byte(s), too few for its version", 0)
    return VERSION_PREFIX.unpack_from(data)[0]


def _decode_part(schema: Message, version: int, data: bytes, part: str) -> dict[str, Any]:
    """A coordinator key or value after its int16 prefix (trailing bytes ignored, as Kafka does)."""
    try:
        decoded, _ = decode_message(schema, version, data, VERSION_PREFIX.size)
    except UnknownVersion as err:
        text = f"{err.message}, raw {part} {_b64(data)}"
        raise _Failed("unknown-version", part, text, err.message, 0) from err
    except MessageDecodeError as err:
        text = (f"Could not read record with version {version} from {part}'s buffer "
                f"due to: {err.kafka_message}.")
        offset = (err.offset or 0) + VERSION_PREFIX.size
        raise _Failed("error", part, text, err.message, offset, err.field) from err
    return decoded


# --------------------------------------------------------------------------- coordinator records


def _coordinator_record(
    key: bytes | None, value: bytes | None, offset: int, *, family: str,
    types: dict[int, tuple[str, str]], value_label: str, decoder_name: str,
) -> Decoded:
    """``OffsetsMessageParser`` / ``ShareGroupStateMessageParser`` over ``CoordinatorRecordSerde``."""
    if key is None:
        text = (f"Failed to decode message at offset {offset} using {decoder_name} decoder "
                "(message had a missing key)")
        failed = _Failed("error", "key", text, "the record has no key")
        return Decoded(f"Error at offset {offset}, skipping. {text}", None,
                       problem=_problem(failed, key, value), kafka_aborts=True)
    key_json: dict[str, Any] | None = None
    try:
        record_type = _read_prefix(key, "key")
        if record_type not in types:
            text = f"Unknown record type {record_type} at offset {offset}, skipping."
            raise _Failed("unknown-type", "key", text, f"unknown record type {record_type}", 0)
        key_name, value_name = types[record_type]
        key_data = _decode_part(schemas.get(family, key_name), record_type, key, "key")
        key_json = {"type": record_type, "name": key_name, "data": key_data}
        key_text = kafka_json({"type": str(record_type), "data": key_data})
        if value is None:
            return Decoded(key_text, "<DELETE>", key_json, None)
        version = _read_prefix(value, "value")
        value_data = _decode_part(schemas.get(family, value_name), version, value, "value")
        if value_name == "GroupMetadataValue":
            value_data = _expand_consumer_protocol(value_data)
    except _Failed as failed:
        text = failed.kafka_message if failed.kind == "unknown-type" else \
            f"Error at offset {offset}, skipping. {failed.kafka_message}"
        return Decoded(text, None, key_json, None, _problem(failed, key, value))
    value_json = {"version": version, "name": value_name, "data": value_data}
    payload_text = kafka_json({value_label: str(version), "data": value_data})
    return Decoded(key_text, payload_text, key_json, value_json)


def decode_offsets_record(key: bytes | None, value: bytes | None, offset: int) -> Decoded:
    """A ``__consumer_offsets`` record, as ``kafka-dump-log --offsets-decoder`` shows it.

    Text: key ``{"type":"<t>","data":{...}}`` and payload ``{"version":"<v>","data":{...}}``
    (both numbers as strings), ``<DELETE>`` for a tombstone; for a classic
    group whose ``protocolType`` is ``consumer`` each member's subscription and
    assignment are expanded (kept as base64 when they do not parse).
    """
    return _coordinator_record(key, value, offset, family="group_coordinator", types=OFFSETS_RECORD_TYPES,
                               value_label="version", decoder_name="offset topic")


def decode_share_state_record(key: bytes | None, value: bytes | None, offset: int) -> Decoded:
    """A ``__share_group_state`` record, as ``--share-group-state-decoder`` shows it.

    Same framing and text as the offsets decoder, except that the value is
    labelled ``"type"`` instead of ``"version"`` (``{"type":"0","data":{...}}``).
    """
    return _coordinator_record(key, value, offset, family="share_coordinator", types=SHARE_STATE_RECORD_TYPES,
                               value_label="type", decoder_name="share group state topic")


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


# --------------------------------------------------------------------------- __transaction_state


def decode_transaction_record(key: bytes | None, value: bytes | None, offset: int) -> Decoded:
    """A ``__transaction_state`` record, as ``--transaction-log-decoder`` shows it.

    Text: key ``transaction_metadata::transactionalId=<id>``; payload
    ``producerId:<pid>,producerEpoch:<e>,state=<State>,partitions=[t-p,...],txnLastUpdateTimestamp=<ms>,
    txnTimeoutMs=<ms>`` (partitions in Scala hash-set order), ``<DELETE>`` for a tombstone,
    key ``unknown::version=<v>`` and no payload for a key version other than 0.
    """
    try:
        return _transaction_record(key, value)
    except _Failed as failed:
        return Decoded(f"Error at offset {offset}, skipping. {failed.kafka_message}", None,
                       problem=_problem(failed, key, value), kafka_aborts=True)


def _transaction_record(key: bytes | None, value: bytes | None) -> Decoded:
    if key is None or len(key) < VERSION_PREFIX.size:
        raise _Failed("error", "key", "null" if key is None else "java.nio.BufferUnderflowException",
                      "the key is missing or shorter than its version", 0)
    key_version = VERSION_PREFIX.unpack_from(key)[0]
    if key_version != 0:
        problem = Problem("unknown-version", "key", f"unknown key version {key_version}", 0, None,
                          _b64(key), _b64(value))
        return Decoded(f"unknown::version={key_version}", None, None, None, problem)
    key_data = _decode_or_abort(schemas.get("transaction_coordinator", "TransactionLogKey"), 0, key, "key")
    key_json = {"version": 0, "name": "TransactionLogKey", "data": key_data}
    key_text = f"transaction_metadata::transactionalId={key_data['transactionalId']}"
    if value is None:
        return Decoded(key_text, "<DELETE>", key_json, None)
    if len(value) < VERSION_PREFIX.size:
        raise _Failed("error", "value", "java.nio.BufferUnderflowException",
                      "value shorter than its version", 0)
    version = VERSION_PREFIX.unpack_from(value)[0]
    schema = schemas.get("transaction_coordinator", "TransactionLogValue")
    if version not in schema.valid:
        text = f"Unknown version {version} from the transaction log message value"
        raise _Failed("unknown-version", "value", text, f"unknown value version {version}", 0)
    data = _decode_or_abort(schema, version, value, "value")
    value_json = {"version": version, "name": "TransactionLogValue", "data": data,
                  "state": _transaction_state(data)}
    return Decoded(key_text, _transaction_text(data, value_json["state"]), key_json, value_json)


def _decode_or_abort(schema: Message, version: int, data: bytes, part: str) -> dict[str, Any]:
    """Transaction-log parts: any failure escapes Kafka's parser (the run stops)."""
    try:
        decoded, _ = decode_message(schema, version, data, VERSION_PREFIX.size)
    except MessageDecodeError as err:
        raise _Failed("error", part, err.kafka_message, err.message,
                      (err.offset or 0) + VERSION_PREFIX.size, err.field) from err
    return decoded


def _transaction_state(data: dict[str, Any]) -> str:
    status = data["transactionStatus"]
    if not 0 <= status < len(TRANSACTION_STATES):
        text = f"Unknown transaction state id {status} from the transaction status message"
        raise _Failed("error", "value", text, f"unknown transaction state {status}", None,
                      "transactionStatus")
    client_version = data.get("clientTransactionVersion", 0)
    if client_version not in TRANSACTION_VERSIONS:
        raise _Failed("error", "value", f"No feature:transaction.version with feature level {client_version}",
                      f"unknown transaction.version {client_version}", None, "clientTransactionVersion")
    return TRANSACTION_STATES[status]


def _transaction_text(data: dict[str, Any], state: str) -> str:
    """``TransactionLog.formatRecordKeyAndValue``'s value string."""
    partitions: list[tuple[str, int]] = []
    if state != "Empty":
        groups = data["transactionPartitions"]
        if groups is None:
            raise _Failed("error", "value", "null", "a non-Empty transaction with null partitions", None,
                          "transactionPartitions")
        partitions = scala_hash_set_order([(g["topic"], g["partitionIds"]) for g in groups])
    listed = ",".join(f"{topic}-{partition}" for topic, partition in partitions)
    return (f"producerId:{data['producerId']},producerEpoch:{data['producerEpoch']},state={state},"
            f"partitions=[{listed}],txnLastUpdateTimestamp={data['transactionLastUpdateTimestampMs']},"
            f"txnTimeoutMs={data['transactionTimeoutMs']}")


# --------------------------------------------------------------------------- KRaft frames


@cache
def metadata_type_name(message_name: str) -> str:
    """``MetadataRecordType`` constant name: Kafka's ``toSnakeCase`` upper-cased (``TOPIC_RECORD``)."""
    out: list[str] = []
    previous_upper = True
    for ch in message_name:
        if ch.isupper():
            if not previous_upper:
                out.append("_")
            out.append(ch.lower())
            previous_upper = True
        else:
            out.append(ch)
            previous_upper = False
    return "".join(out).upper()


def _frame_short(value: bytes, pos: int, entity: str) -> tuple[int, int]:
    """``AbstractApiMessageSerde.unsignedIntToShort``."""
    try:
        number, pos = read_unsigned_varint(value, pos)
    except MessageDecodeError as err:
        text = f"Error while reading {entity}"
        raise _Failed("error", "value", text, f"{entity}: {err.message}", pos) from err
    if number > 0x7FFF:
        text = f"Value for {entity} was too large."
        raise _Failed("error", "value", text, f"{entity} {number} > 32767", pos)
    return (number + 0x8000) % 0x10000 - 0x8000, pos  # Java's (short) cast


def _read_frame(value: bytes | None, family: str) -> tuple[Message, int, dict[str, Any]]:
    """``AbstractApiMessageSerde.read``: frame version 1, api key, version, message, nothing left over."""
    if value is None:
        raise _Failed("error", "value", "Error while reading frame version", "the record has no value")
    frame_version, pos = _frame_short(value, 0, "frame version")
    if frame_version == 0:
        text = ("Could not deserialize metadata record with frame version 0. Note that upgrades from the "
                "preview release of KRaft in 2.8 to newer versions are not supported.")
        raise _Failed("error", "value", text, "frame version 0 (KRaft preview)", 0)
    if frame_version != METADATA_FRAME_VERSION:
        text = (f"Could not deserialize metadata record due to unknown frame version {frame_version}"
                "(only frame version 1 is supported)")
        raise _Failed("error", "value", text, f"frame version {frame_version}", 0)
    type_pos = pos
    api_key, pos = _frame_short(value, pos, "type")
    version, pos = _frame_short(value, pos, "version")
    schema = schemas.by_api_key(family).get(api_key)
    if schema is None:
        text = f"org.apache.kafka.common.errors.UnsupportedVersionException: Unknown metadata id {api_key}"
        raise _Failed("unknown-type", "value", text, f"unknown api key {api_key}", type_pos)
    try:
        return schema, version, _decode_framed(schema, api_key, version, value, pos)
    except _Failed as failed:
        if failed.kind == "unknown-version":
            raise
        for variant in schemas.variants(family, schema.name):
            try:
                return variant, version, _decode_framed(variant, api_key, version, value, pos)
            except _Failed:
                continue
        raise


def _decode_framed(schema: Message, api_key: int, version: int, value: bytes, pos: int) -> dict[str, Any]:
    """The message after the frame: every byte must belong to it."""
    try:
        data, stop = decode_message(schema, version, value, pos)
    except UnknownVersion as err:
        raise _Failed("unknown-version", "value", f"{err.message}, raw value {_b64(value)}", err.message,
                      pos) from err
    except MessageDecodeError as err:
        raise _Failed("error", "value", f"Failed to deserialize record with type {api_key}", err.message,
                      (err.offset or 0) + pos, err.field) from err
    if stop != len(value):
        left = len(value) - stop
        raise _Failed("error", "value", f"Found {left} byte(s) of garbage after {api_key}",
                      f"{left} byte(s) left after {schema.name}", stop)
    return data


def decode_metadata_record(key: bytes | None, value: bytes | None, offset: int) -> Decoded:
    """A KRaft ``__cluster_metadata`` data record, as ``--cluster-metadata-decoder`` shows it.

    No key text; payload ``{"type":"<TYPE>","version":<n>,"data":{...}}`` or
    ``Error at <offset>, skipping. <message>`` (Kafka's wording has no "offset" here).
    """
    try:
        schema, version, data = _read_frame(value, "metadata")
    except _Failed as failed:
        return Decoded(None, f"Error at {offset}, skipping. {failed.kafka_message}",
                       problem=_problem(failed, key, value))
    type_name = metadata_type_name(schema.name)
    value_json = {"type": type_name, "apiKey": schema.api_key, "version": version, "data": data}
    if schema.revision is not None:
        value_json["schemaVariant"] = {"revision": schema.revision, "note": schema.note}
    return Decoded(None, kafka_json({"type": type_name, "version": version, "data": data}), None, value_json)


def decode_remote_log_record(key: bytes | None, value: bytes | None, offset: int) -> Decoded:
    """A ``__remote_log_metadata`` record as ``--remote-log-metadata-decoder`` shows it: a ``toString()``."""
    try:
        schema, version, data = _read_frame(value, "storage")
        text = remote_log_metadata_text(schema.api_key or 0, data)
    except _Failed as failed:
        return Decoded(None, f"Error at offset {offset}, skipping. {_remote_null(failed, value)}",
                       problem=_problem(failed, key, value))
    except JavaException as err:
        failed = _Failed("error", "value", err.kafka_message, err.message, None, err.field)
        return Decoded(None, f"Error at offset {offset}, skipping. {err.kafka_message}",
                       problem=_problem(failed, key, value))
    value_json = {"type": metadata_type_name(schema.name), "apiKey": schema.api_key, "version": version,
                  "data": data}
    return Decoded(None, text, None, value_json)


def _remote_null(failed: _Failed, value: bytes | None) -> str:
    """A null value fails before framing there: ``record.value.remaining`` (JDK 15+ helpful NPE text)."""
    if value is None:
        return ('Cannot invoke "java.nio.ByteBuffer.remaining()" because the return value of '
                '"org.apache.kafka.common.record.Record.value()" is null')
    return failed.kafka_message


# --------------------------------------------------------------------------- control records

#: Control types whose value is a generated message, and the label kafka-dump-log prints before its JSON.
KRAFT_CONTROL = {
    2: ("LeaderChangeMessage", None),  # printed as "controlType: LEADER_CHANGE(2)"
    3: ("SnapshotHeaderRecord", "SnapshotHeader"),
    4: ("SnapshotFooterRecord", "SnapshotFooter"),
    5: ("KRaftVersionRecord", "KRaftVersion"),
    6: ("VotersRecord", "KRaftVoters"),
}


@dataclass(frozen=True, slots=True)
class ControlRecord:
    """A control record: the text kafka-dump-log appends to its record line, and the structured form."""

    type_id: int  # -1 for a type Kafka does not know
    name: str  # "COMMIT", "SNAPSHOT_HEADER", ... or "UNKNOWN"
    text: str  # e.g. "endTxnMarker: COMMIT coordinatorEpoch: 5", "SnapshotHeader {...}"
    data: dict[str, Any] | None
    problem: str | None = None  # why the value could not be read (kafka-dump-log would stop)

    def as_json(self) -> dict[str, Any]:
        return {"controlType": self.name, "typeId": self.type_id, "data": self.data, "problem": self.problem}


def decode_kraft_control_value(type_id: int, value: bytes | None) -> dict[str, Any]:
    """A KRaft control value (types 2-6) in its JSON converter's shape (``ControlRecordUtils``: read at v0).

    kafka-dump-log writes the JSON at the version in the record's ``Version``
    field; every field of these schemas exists from version 0, so the output is the same.
    """
    message_name, _ = KRAFT_CONTROL[type_id]
    decoded, _ = decode_message(schemas.get("clients", message_name), 0, value or b"")
    return decoded


def describe_control_record(key: bytes | None, value: bytes | None) -> ControlRecord:
    """What kafka-dump-log prints for a control record (``dumpLog``), after ``headerKeys: [...]``."""
    try:
        control_key = decode_control_key(key)
    except KsegError as err:
        return ControlRecord(-1, "UNKNOWN", f"controlType: ? ({err.message})", None, err.message)
    type_id, name = control_key.type_id, control_key.name
    try:
        if type_id in (ABORT, COMMIT):
            marker = decode_end_txn_marker(value)
            data = {"version": marker.version, "coordinatorEpoch": marker.coordinator_epoch}
            text = f"endTxnMarker: {name} coordinatorEpoch: {marker.coordinator_epoch}"
            return ControlRecord(type_id, name, text, data)
        if type_id in KRAFT_CONTROL:
            data = decode_kraft_control_value(type_id, value)
            label = KRAFT_CONTROL[type_id][1]
            text = f"{label} {kafka_json(data)}" if label else f"controlType: {name}({type_id})"
            return ControlRecord(type_id, name, text, data)
    except KsegError as err:
        return ControlRecord(type_id, name, f"controlType: {name}({type_id})", None, err.message)
    return ControlRecord(type_id, name, f"controlType: {name}({control_key.raw_type})", None)


# --------------------------------------------------------------------------- producer snapshots

PRODUCER_SNAPSHOT_CRC_FROM = 6  # the CRC covers everything after the int16 version and the uint32 CRC


def decode_producer_snapshot(data: bytes) -> dict[str, Any]:
    """A producer-state ``.snapshot`` read through the ``ProducerSnapshot`` schema (``readSnapshot``).

    Returns ``{"version", "data", "computedCrc", "crcValid"}``; raises
    :class:`~kseg.errors.KsegError` (Kafka: ``CorruptSnapshotException``) when
    the bytes do not parse, as in ``Snapshot failed schema validation: ...``.
    """
    if len(data) < VERSION_PREFIX.size:
        raise MessageDecodeError("snapshot shorter than its version", kafka_message="null", offset=0,
                                 field=None)
    version = VERSION_PREFIX.unpack_from(data)[0]
    schema = schemas.get("storage", "ProducerSnapshot")
    decoded, _ = decode_message(schema, version, data, VERSION_PREFIX.size)
    computed = crc32c(data[PRODUCER_SNAPSHOT_CRC_FROM:])
    return {"version": version, "data": decoded, "computedCrc": computed,
            "crcValid": computed == decoded["crc"]}


#: The decoders by kafka-dump-log option name (without ``--`` and ``-decoder``).
DECODERS: dict[str, Callable[[bytes | None, bytes | None, int], Decoded]] = {
    "offsets": decode_offsets_record,
    "transaction-log": decode_transaction_record,
    "cluster-metadata": decode_metadata_record,
    "remote-log-metadata": decode_remote_log_record,
    "share-group-state": decode_share_state_record,
}
