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

from collections.abc import Callable

from kseg.format.internal.common import VERSION_PREFIX, Decoded, Problem
from kseg.format.internal.control_records import (
    KRAFT_CONTROL,
    ControlRecord,
    decode_kraft_control_value,
    describe_control_record,
)
from kseg.format.internal.coordinator import (
    OFFSETS_RECORD_TYPES,
    SHARE_STATE_RECORD_TYPES,
    decode_offsets_record,
    decode_share_state_record,
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
    "decode_kraft_control_value",
    "decode_metadata_record",
    "decode_offsets_record",
    "decode_producer_snapshot",
    "decode_remote_log_record",
    "decode_share_state_record",
    "decode_transaction_record",
    "describe_control_record",
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
