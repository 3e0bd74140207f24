"""The wire formats: the one place that knows several magics exist.

Every log entry, whatever its magic, starts with the same 17 bytes::

     0  offset (V0/V1) or baseOffset (V2)   int64
     8  size: bytes after this field        int32
    12  crc (V0/V1) or partitionLeaderEpoch (V2)
    16  magic                               int8

:class:`~kseg.format.walk.BatchWalk` (the one walker) steps through a buffer
entry by entry exactly as Kafka's ``FileLogInputStream.nextBatch`` does, and
remembers where and why it stopped; :mod:`kseg.format.scan` goes on past
damage; :func:`read_batch` decodes the entry at one position; every fixed
layout is in :mod:`kseg.format.layout`.  Everything above this
package handles batches through the attributes shared by
:class:`~kseg.format.v2.V2Batch` and :class:`~kseg.format.v0v1.LegacyBatch`.
"""

from __future__ import annotations

from collections.abc import Sequence

from kseg.errors import EncodeError, Truncated
from kseg.format import compression, v0v1_encode, v2
from kseg.format.layout import (
    HEADER_SIZE_UP_TO_MAGIC,
    LOG_OVERHEAD,
    MAGIC_OFFSET,
    MIN_RECORD_OVERHEAD,
    Buffer,
)
from kseg.format.model import CREATE_TIME, RecordSpec
from kseg.format.v0v1 import LegacyBatch
from kseg.format.v2 import V2Batch
from kseg.format.walk import (
    BAD_SIZE,
    END_OF_DATA,
    PARTIAL_BATCH,
    SHORT_TAIL,
    BatchWalk,
    WalkEnd,
    iter_batches,
)

Batch = V2Batch | LegacyBatch


def read_batch(buf: Buffer, position: int) -> Batch:
    """The entry at ``position``: magic < 2 is read as a legacy message, anything else as V2 (as Kafka does)."""
    if position < 0 or position + HEADER_SIZE_UP_TO_MAGIC > len(buf):
        raise Truncated("fewer than 17 bytes left: no entry can start here", offset=position, field="batch")
    raw = buf[position + MAGIC_OFFSET]
    magic = raw - 0x100 if raw >= 0x80 else raw  # an int8 in Kafka
    return LegacyBatch(buf, position) if magic < 2 else V2Batch(buf, position)


def encode_batch(
    records: Sequence[RecordSpec],
    *,
    magic: int = 2,
    codec: int | str = compression.CODEC_NONE,
    level: int | None = None,
    timestamp_type: str = CREATE_TIME,
    log_append_time: int = -1,
    base_offset: int | None = None,
    producer_id: int = -1,
    producer_epoch: int = -1,
    base_sequence: int = -1,
    is_transactional: bool = False,
    is_control: bool = False,
    partition_leader_epoch: int = -1,
    delete_horizon_ms: int = -1,
) -> bytes:
    """Bytes of what ``MemoryRecordsBuilder(...).build()`` produces for these records.

    Magic 2 gives one batch; magic 0/1 give one message per record, or one
    wrapper when compressed.  What a magic cannot hold (headers, producer
    state, control records, a delete horizon or zstd below magic 2) raises
    :class:`~kseg.errors.EncodeError`, as Kafka's builder refuses it; so do
    offsets that do not increase, timestamps below -1 and producer fields
    Kafka never writes (tests/interop checks each refusal against Kafka).
    ``delete_horizon_ms`` is written (magic 2) only when >= 0, as in Kafka.
    """
    codec_id = compression.codec_id(codec)
    if magic == 2:
        return v2.encode_batch(
            records,
            base_offset=base_offset,
            codec=codec_id,
            level=level,
            timestamp_type=timestamp_type,
            log_append_time=log_append_time,
            producer_id=producer_id,
            producer_epoch=producer_epoch,
            base_sequence=base_sequence,
            is_transactional=is_transactional,
            is_control=is_control,
            partition_leader_epoch=partition_leader_epoch,
            delete_horizon_ms=delete_horizon_ms,
        )
    if magic in (0, 1):
        _refuse_v2_only_fields(magic, is_transactional, is_control, producer_id, delete_horizon_ms)
        return v0v1_encode.encode_message_set(
            records,
            magic=magic,
            codec=codec_id,
            level=level,
            timestamp_type=timestamp_type,
            log_append_time=log_append_time,
            base_offset=base_offset,
        )
    raise EncodeError(f"unknown magic {magic}")


def _refuse_v2_only_fields(
    magic: int, is_transactional: bool, is_control: bool, producer_id: int, delete_horizon_ms: int
) -> None:
    """What ``MemoryRecordsBuilder`` refuses below magic 2, with Kafka's messages.

    Kafka checks the producer id last (at close, after the epoch and sequence
    checks); here it is checked up front, so an input with two faults may name
    a different one, but whatever Kafka refuses is refused.
    """
    if is_transactional:
        raise EncodeError(f"Transactional records are not supported for magic {magic}")
    if is_control:
        raise EncodeError(f"Control records are not supported for magic {magic}")
    if delete_horizon_ms != -1:
        raise EncodeError(f"Delete horizon timestamp is not supported for magic {magic}")
    if producer_id != -1:
        raise EncodeError(f"Idempotent messages are not supported for magic {magic}")


__all__ = [
    "BAD_SIZE",
    "END_OF_DATA",
    "HEADER_SIZE_UP_TO_MAGIC",
    "LOG_OVERHEAD",
    "MIN_RECORD_OVERHEAD",
    "PARTIAL_BATCH",
    "SHORT_TAIL",
    "Batch",
    "BatchWalk",
    "LegacyBatch",
    "RecordSpec",
    "V2Batch",
    "WalkEnd",
    "encode_batch",
    "iter_batches",
    "read_batch",
]
