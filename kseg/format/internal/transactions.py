"""``__transaction_state``: ``TransactionLog`` keys and values, as ``--transaction-log-decoder`` prints them.

Unlike the coordinator decoders, most failures here stop kafka-dump-log's
whole run (``kafka_aborts``); the partitions are listed in Scala hash-set
order (:func:`kseg.format.jvm_text.scala_hash_set_order`).
"""

from __future__ import annotations

from typing import Any

from kseg.format import schemas
from kseg.format.internal.common import VERSION_PREFIX, Decoded, Failed, Problem, as_problem, b64
from kseg.format.jvm_text import scala_hash_set_order
from kseg.format.messages import Message, MessageDecodeError, decode_message

#: ``TransactionState.fromId``.
TRANSACTION_STATES = ("Empty", "Ongoing", "PrepareCommit", "PrepareAbort", "CompleteCommit",
                      "CompleteAbort", "Dead", "PrepareEpochFence")
TRANSACTION_VERSIONS = (0, 1, 2)  # TransactionVersion TV_0..TV_2 (``fromFeatureLevel``)


def decode_transaction_record(key: bytes | None, value: bytes | None, offset: int) -> Decoded:
    """A ``__transaction_state`` record, as ``--transaction-log-decoder`` shows it.

    Text: key ``transaction_metadata::transactionalId=<id>``; payload
    ``producerId:<pid>,producerEpoch:<e>,state=<State>,partitions=[t-p,...],txnLastUpdateTimestamp=<ms>,
    txnTimeoutMs=<ms>`` (partitions in Scala hash-set order), ``<DELETE>`` for a tombstone,
    key ``unknown::version=<v>`` and no payload for a key version other than 0.
    """
    try:
        return _transaction_record(key, value)
    except Failed as failed:
        return Decoded(f"Error at offset {offset}, skipping. {failed.kafka_message}", None,
                       problem=as_problem(failed, key, value), kafka_aborts=True)


def _transaction_record(key: bytes | None, value: bytes | None) -> Decoded:
    if key is None or len(key) < VERSION_PREFIX.size:
        raise Failed("error", "key", "null" if key is None else "java.nio.BufferUnderflowException",
                      "the key is missing or shorter than its version", 0)
    key_version = VERSION_PREFIX.unpack_from(key)[0]
    if key_version != 0:
        problem = Problem("unknown-version", "key", f"unknown key version {key_version}", 0, None,
                          b64(key), b64(value))
        return Decoded(f"unknown::version={key_version}", None, None, None, problem)
    key_data = _decode_or_abort(schemas.get("transaction_coordinator", "TransactionLogKey"), 0, key, "key")
    key_json = {"version": 0, "name": "TransactionLogKey", "data": key_data}
    key_text = f"transaction_metadata::transactionalId={key_data['transactionalId']}"
    if value is None:
        return Decoded(key_text, "<DELETE>", key_json, None)
    if len(value) < VERSION_PREFIX.size:
        raise Failed("error", "value", "java.nio.BufferUnderflowException",
                      "value shorter than its version", 0)
    version = VERSION_PREFIX.unpack_from(value)[0]
    schema = schemas.get("transaction_coordinator", "TransactionLogValue")
    if version not in schema.valid:
        text = f"Unknown version {version} from the transaction log message value"
        raise Failed("unknown-version", "value", text, f"unknown value version {version}", 0)
    data = _decode_or_abort(schema, version, value, "value")
    value_json = {"version": version, "name": "TransactionLogValue", "data": data,
                  "state": _transaction_state(data)}
    return Decoded(key_text, _transaction_text(data, value_json["state"]), key_json, value_json)


def _decode_or_abort(schema: Message, version: int, data: bytes, part: str) -> dict[str, Any]:
    """Transaction-log parts: any failure escapes Kafka's parser (the run stops)."""
    try:
        decoded, _ = decode_message(schema, version, data, VERSION_PREFIX.size)
    except MessageDecodeError as err:
        raise Failed("error", part, err.kafka_message, err.message,
                      (err.offset or 0) + VERSION_PREFIX.size, err.field) from err
    return decoded


def _transaction_state(data: dict[str, Any]) -> str:
    status = data["transactionStatus"]
    if not 0 <= status < len(TRANSACTION_STATES):
        text = f"Unknown transaction state id {status} from the transaction status message"
        raise Failed("error", "value", text, f"unknown transaction state {status}", None,
                      "transactionStatus")
    client_version = data.get("clientTransactionVersion", 0)
    if client_version not in TRANSACTION_VERSIONS:
        raise Failed("error", "value", f"No feature:transaction.version with feature level {client_version}",
                      f"unknown transaction.version {client_version}", None, "clientTransactionVersion")
    return TRANSACTION_STATES[status]


def _transaction_text(data: dict[str, Any], state: str) -> str:
    """``TransactionLog.formatRecordKeyAndValue``'s value string."""
    partitions: list[tuple[str, int]] = []
    if state != "Empty":
        groups = data["transactionPartitions"]
        if groups is None:
            raise Failed("error", "value", "null", "a non-Empty transaction with null partitions", None,
                          "transactionPartitions")
        partitions = scala_hash_set_order([(g["topic"], g["partitionIds"]) for g in groups])
    listed = ",".join(f"{topic}-{partition}" for topic, partition in partitions)
    return (f"producerId:{data['producerId']},producerEpoch:{data['producerEpoch']},state={state},"
            f"partitions=[{listed}],txnLastUpdateTimestamp={data['transactionLastUpdateTimestampMs']},"
            f"txnTimeoutMs={data['transactionTimeoutMs']}")
