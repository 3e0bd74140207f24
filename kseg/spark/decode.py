"""Records of a batch as columns (offsets, timestamps, keys, ...): what the Spark source turns into Arrow.

The data source needs columns, not record objects.  A magic-2 data batch is
read by the one record scanner (:meth:`kseg.format.v2.V2Batch.scan`, see
:mod:`kseg.format.records`), whose columns are taken as they are; anything it
does not answer for -- a damaged record, a codec error, a control batch, a
V0/V1 batch -- is decoded with ``iter_records`` and transposed, which raises
Kafka's own located errors where there are any.  tests/spark/test_rows.py
checks that both give the same columns.
"""

from __future__ import annotations

from collections.abc import Sequence

from kseg.format import Batch
from kseg.format.compression import DEFAULT_MAX_DECOMPRESSED
from kseg.format.layout import TIMESTAMP_TYPE_MASK
from kseg.format.model import CREATE_TIME, LOG_APPEND_TIME
from kseg.format.v2 import V2Batch

#: offsets, timestamps, keys, values, headers, sequences, timestamp types: one entry per record.
Columns = tuple[Sequence, Sequence, Sequence, Sequence, Sequence, Sequence, Sequence]


def batch_columns(batch: Batch, max_batch_bytes: int = DEFAULT_MAX_DECOMPRESSED) -> Columns:
    """The records of a batch as columns; raises the full decoder's KsegError on damage.

    ``max_batch_bytes`` is the read cap (``--max-batch-bytes``): a batch past it raises, naming it.
    """
    if type(batch) is V2Batch:
        fast = v2_columns(batch, max_batch_bytes)
        if fast is not None:
            return fast
    records = list(batch.iter_records(max_batch_bytes))
    if not records:
        return ((),) * 7
    fields = list(zip(*records, strict=True))
    return fields[0], fields[1], fields[2], fields[3], fields[4], fields[5], fields[13]


def v2_columns(batch: V2Batch, max_batch_bytes: int = DEFAULT_MAX_DECOMPRESSED) -> Columns | None:
    """Columns of a well-formed magic-2 data batch, or None to use the full decoder."""
    if batch.is_control:
        return None
    scan = batch.scan(max_batch_bytes)
    if scan is None:
        return None
    count = scan.count
    if batch.attributes & TIMESTAMP_TYPE_MASK:
        timestamps: Sequence[int] = [batch.max_timestamp] * count
        kind = LOG_APPEND_TIME
    else:
        timestamps = scan.timestamps()
        kind = CREATE_TIME
    return (scan.offsets(), timestamps, scan.keys(), scan.values(), scan.headers(),
            scan.sequences(batch.base_sequence), [kind] * count)
