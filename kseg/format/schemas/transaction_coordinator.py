"""``__transaction_state`` record schemas (the transaction coordinator's records).

Transcribed from ``transaction-coordinator/src/main/resources/common/message/``
at Kafka 4.3.0, as the package docstring of :mod:`kseg.format.schemas` describes.
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
