"""The records of one batch as Kafka's iterator hands them out, and what it throws.

Its own small module because both the events (:class:`~kseg.ops.dump.events.EncodedRecords`
decodes on demand) and the .log walk need it.
"""

from __future__ import annotations

from kseg.errors import KsegError
from kseg.format import Batch
from kseg.format.compression import DEFAULT_MAX_DECOMPRESSED
from kseg.format.model import Record
from kseg.format.v2 import V2Batch


def decode_records(
    batch: Batch, max_batch_bytes: int = DEFAULT_MAX_DECOMPRESSED
) -> tuple[list[Record], KsegError | None]:
    """The records Kafka's iterator hands out before it throws, and what it throws.

    Kafka's V2 iterator notices left-over bytes only when asked for the last
    record, and then throws instead of returning it: so when kseg's decoder
    reports "records still remaining" after the last record, that record is
    dropped.  A compressed V2 batch hands out nothing when any record fails
    (:func:`hands_out_none`).  One batch is decoded at a time.
    """
    try:
        return list(batch.iter_records(max_batch_bytes)), None
    except KsegError:
        pass
    records: list[Record] = []
    try:
        for record in batch.iter_records(max_batch_bytes):
            records.append(record)  # noqa: PERF402 - what was read before the error is kept
    except KsegError as err:
        if hands_out_none(batch):
            return [], err
        if err.field == "batch.records" and records:
            records.pop()
        return records, err
    return records, None


def hands_out_none(batch: Batch) -> bool:
    """Does Kafka's iterator hand out no record of this batch when one of them fails?

    ``DefaultRecordBatch.iterator()`` reads a compressed batch's records into a list
    before returning the first ("we decompress the full record set here"), so an
    exception anywhere in them leaves kafka-dump-log with none of them; an
    uncompressed batch is read lazily, record by record.
    """
    return isinstance(batch, V2Batch) and batch.codec_id != 0
