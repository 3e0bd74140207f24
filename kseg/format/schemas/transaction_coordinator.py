"""``__transaction_state`` record schemas (the transaction coordinator's records).

Transcribed from ``transaction-coordinator/src/main/resources/common/message/``
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

_DIR = "transaction-coordinator/src/main/resources/common/message/"

TRANSACTION_LOG_KEY = message(
    "TransactionLogKey", api_key=0, valid="0", flexible="none",
    source=_DIR + "TransactionLogKey.json",
    fields=[
        field("TransactionalId", "string", "0"),
    ],
)

TRANSACTION_LOG_VALUE = message(
    "TransactionLogValue", api_key=0, valid="0-1", flexible="1+",
    source=_DIR + "TransactionLogValue.json",
    fields=[
        field("ProducerId", "int64", "0+"),
        field("PreviousProducerId", "int64", "1+", tagged="1+", tag=0, default="-1"),
        field("NextProducerId", "int64", "1+", tagged="1+", tag=1, default="-1"),
        field("ProducerEpoch", "int16", "0+"),
        field("NextProducerEpoch", "int16", "1+", tagged="1+", tag=3, default="-1"),
        field("TransactionTimeoutMs", "int32", "0+"),
        field("TransactionStatus", "int8", "0+"),
        field("TransactionPartitions", "[]PartitionsSchema", "0+", nullable="0+", fields=[
            field("Topic", "string", "0+"),
            field("PartitionIds", "[]int32", "0+"),
        ]),
        field("TransactionLastUpdateTimestampMs", "int64", "0+"),
        field("TransactionStartTimestampMs", "int64", "0+"),
        field("ClientTransactionVersion", "int16", "1+", tagged="1+", tag=2, default="0"),
    ],
)

MESSAGES = (
    TRANSACTION_LOG_KEY,
    TRANSACTION_LOG_VALUE,
)
