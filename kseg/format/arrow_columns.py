"""Record rows of V2 batches as Arrow buffers, built by the compiled core (the Spark source's fast path).

The Spark source (:mod:`kseg.spark.rows`) hands Spark one row per record.  Its
pure-Python path -- the reference -- reads each batch's records as columns
(:mod:`kseg.spark.decode`, over :class:`~kseg.format.records.RecordScan`) and
has pyarrow convert those Python lists.  With the compiled core (docs/core.md)
:class:`CoreRecordColumns` appends each batch's records straight into Arrow's
buffers (``kseg._core.RecordColumns``, ``rust/kseg-wire/src/columns.rs``):
offsets, timestamps, timestamp types, keys, values, headers and sequences, as
the pure path computes them; :mod:`kseg.spark.record_arrays` wraps the buffers
with ``pyarrow.Array.from_buffers``.  No pyarrow here: this layer stays free
of the Spark extra.

The core takes a batch only where the pure path would use the record scanner
(a magic-2 data batch whose records the scanner accepts) and every header key
is UTF-8; anything else -- a control or legacy batch, a codec error, a damaged
record, a header key Java would decode with replacement characters -- is
declined (``None``, nothing appended) and the caller runs the pure path for
that batch, which also explains damage with Kafka's messages.
tests/core/test_core_columns.py prove both paths give identical Arrow tables.
"""

from __future__ import annotations

from typing import NamedTuple

from kseg.errors import KsegError
from kseg.format._core import CORE, call
from kseg.format.layout import MIN_V2_BATCH_LENGTH, TIMESTAMP_TYPE_MASK
from kseg.format.v0v1 import LegacyBatch
from kseg.format.v2 import V2Batch


class VarBuffers(NamedTuple):
    """An Arrow binary/string column: validity bitmap (None: no nulls), null count, int32 offsets, bytes."""

    validity: bytes | None
    nulls: int
    offsets: bytes
    data: bytes


class RecordBuffers(NamedTuple):
    """A chunk of record rows as Arrow buffers (fixed-width columns native-endian, as Arrow's default)."""

    rows: int
    offsets: bytes  # int64 per row
    timestamps: bytes  # int64 per row
    sequences: bytes  # int32 per row
    timestamp_types: VarBuffers  # string
    keys: VarBuffers  # binary
    values: VarBuffers  # binary
    header_offsets: bytes  # int32 list offsets, rows + 1, into the header rows below
    header_keys: VarBuffers  # string, one per header
    header_values: VarBuffers  # binary, one per header


class CoreRecordColumns:
    """A chunk of record rows being built by the core: :meth:`add` batches, :meth:`take` the buffers."""

    __slots__ = ("_core",)

    def __init__(self) -> None:
        assert CORE is not None  # record_columns() makes one only with the core
        self._core = CORE.RecordColumns()

    @property
    def rows(self) -> int:
        return self._core.rows

    def add(self, batch: V2Batch | LegacyBatch, max_batch_bytes: int) -> tuple[int, int] | None:
        """(rows, key and value bytes) appended for ``batch``'s records, or None: the pure path takes it.

        ``max_batch_bytes`` is the read cap of a compressed batch (a batch past it is declined,
        and the pure path reports it).
        """
        if type(batch) is not V2Batch or batch.is_control or batch.batch_length < MIN_V2_BATCH_LENGTH:
            return None
        count = batch.records_count
        if count <= 0:
            return (0, 0) if count == 0 else None  # no records: no rows (as RecordScan's empty columns)
        try:
            data, start, end, _, _ = batch._records_bytes(max_batch_bytes)  # the scanner's own region
        except (KsegError, MemoryError):
            return None
        log_append_time = batch.max_timestamp if batch.attributes & TIMESTAMP_TYPE_MASK else None
        added = call(self._core.add, batch.position, data, start, end, count, batch.base_offset,
                     batch.base_timestamp, log_append_time, batch.base_sequence)
        return None if added is NotImplemented else added

    def take(self) -> RecordBuffers:
        """The buffers of the rows added so far; the builder starts over empty."""
        (rows, offsets, timestamps, sequences, timestamp_types, keys, values,
         header_offsets, header_keys, header_values) = self._core.take()
        return RecordBuffers(rows, offsets, timestamps, sequences, VarBuffers(*timestamp_types), VarBuffers(*keys),
                             VarBuffers(*values), header_offsets, VarBuffers(*header_keys), VarBuffers(*header_values))


def record_columns() -> CoreRecordColumns | None:
    """A core builder of record rows, or None on the pure-Python path (``KSEG_PURE=1``, no core)."""
    return CoreRecordColumns() if CORE is not None else None
