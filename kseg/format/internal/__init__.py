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

The package has one module per family: :mod:`.coordinator` (offsets, share
state), :mod:`.transactions`, :mod:`.kraft` (cluster and remote-log
metadata, with :mod:`.remote_log` for the latter's Java ``toString()``),
:mod:`.control_records` and :mod:`.producer_snapshot`; :mod:`.common` holds
the result types.  Import from here.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from functools import partial

from kseg.format.internal.common import VERSION_PREFIX, Decoded, Problem
from kseg.format.internal.control_records import (
    KRAFT_CONTROL,
    ControlRecord,
    control_json_text,
    decode_kraft_control_value,
    describe_control_record,
)
from kseg.format.internal.coordinator import (
    OFFSETS_RECORD_TYPES,
    SHARE_STATE_RECORD_TYPES,
    decode_offsets_record,
    decode_share_state_record,
    decode_transaction_record_json,
)
from kseg.format.internal.kraft import (
    METADATA_FRAME_VERSION,
    decode_metadata_record,
    decode_remote_log_record,
    metadata_type_name,
)
from kseg.format.internal.producer_snapshot import decode_producer_snapshot
from kseg.format.internal.transactions import (
    TRANSACTION_STATES,
    TRANSACTION_VERSIONS,
    decode_transaction_record,
)

__all__ = [
    "DECODERS",
    "KRAFT_CONTROL",
    "METADATA_FRAME_VERSION",
    "OFFSETS_RECORD_TYPES",
    "SHARE_STATE_RECORD_TYPES",
    "TRANSACTION_STATES",
    "TRANSACTION_VERSIONS",
    "VERSION_PREFIX",
    "ControlRecord",
    "Decoded",
    "Problem",
    "control_json_text",
    "decode_kraft_control_value",
    "decode_metadata_record",
    "decode_offsets_record",
    "decode_producer_snapshot",
    "decode_remote_log_record",
    "decode_share_state_record",
    "decode_transaction_record",
    "decode_transaction_record_json",
    "describe_control_record",
    "dialect_decoder",
    "metadata_type_name",
]

#: The decoders by kafka-dump-log option name (without ``--`` and ``-decoder``).
DECODERS: dict[str, Callable[[bytes | None, bytes | None, int], Decoded]] = {
    "offsets": decode_offsets_record,
    "transaction-log": decode_transaction_record,
    "cluster-metadata": decode_metadata_record,
    "remote-log-metadata": decode_remote_log_record,
    "share-group-state": decode_share_state_record,
}


Decoder = Callable[[bytes | None, bytes | None, int], Decoded]


def _transaction_record_json(key: bytes | None, value: bytes | None, offset: int) -> Decoded:
    """4.1+ texts (:func:`decode_transaction_record_json`) with the structured form kseg's JSON keeps."""
    texts = decode_transaction_record_json(key, value, offset)
    legacy = decode_transaction_record(key, value, offset)
    return Decoded(texts.key_text, texts.payload_text, legacy.key, legacy.value,
                   legacy.problem or texts.problem, kafka_aborts=texts.kafka_aborts)


def dialect_decoder(name: str, *, coordinator_json: bool, offsets_known: Collection[int] | None,
                    txn_idx_empty: bool, record_internal: bool = True) -> Decoder:
    """The decoder ``name`` speaking one release's text (flags from kseg.ops.dump.dialect.Dialect).

    ``coordinator_json``: Kafka 4.1's CoordinatorRecordMessageParser for offsets, transactions and share
    state; ``offsets_known``: the ``__consumer_offsets`` record types that release decodes;
    ``txn_idx_empty``: 4.0's ``txnIdxEmpty=`` in remote-log segment texts; ``record_internal``: 4.3's package
    of ``Record`` in the message for a remote-log record without value.
    """
    if name == "offsets":
        return partial(decode_offsets_record, known=offsets_known, specified=coordinator_json)
    if name == "transaction-log":
        return _transaction_record_json if coordinator_json else decode_transaction_record
    if name == "share-group-state":
        return partial(decode_share_state_record, specified=coordinator_json)
    if name == "remote-log-metadata":
        return partial(decode_remote_log_record, txn_idx_empty=txn_idx_empty, record_internal=record_internal)
    return DECODERS[name]
