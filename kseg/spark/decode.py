"""Records of a batch as columns (offsets, timestamps, keys, ...): the hot loop of the Spark source.

The data source needs columns, not record objects.  For a well-formed magic-2
data batch :func:`v2_columns` reads the record layout (see
:mod:`kseg.format.v2`) once, straight into per-column lists, which skips
building one 14-field ``Record`` per record and transposing them again.

Like ``kseg.format.v2_json`` it is a fast path, not a second authority: at
anything unexpected -- a bound overrun, a negative length, a length that does
not match what was read, bytes left over, offsets or timestamps near the int64
limits, a negative offset delta, a control batch, a codec error -- it returns
None and :func:`batch_columns` decodes with ``iter_records``, which raises
Kafka's own located errors.  tests/spark/test_rows.py checks that both give
the same columns.
"""

from __future__ import annotations

from collections.abc import Sequence

from kseg.errors import KsegError
from kseg.format import Batch, compression
from kseg.format.model import CREATE_TIME, INT64_MAX, INT64_MIN, LOG_APPEND_TIME
from kseg.format.v2 import MAGIC, RECORD_BATCH_OVERHEAD, TIMESTAMP_TYPE_MASK, V2Batch
from kseg.format.varint import decode_varint, decode_varlong

_SAFE = 2**31  # bases this far from the int64 limits cannot wrap with an int32 delta

#: offsets, timestamps, keys, values, headers, sequences, timestamp types: one entry per record.
Columns = tuple[Sequence, Sequence, Sequence, Sequence, Sequence, Sequence, Sequence]


def batch_columns(batch: Batch) -> Columns:
    """The records of a batch as columns; raises the full decoder's KsegError on damage."""
    if type(batch) is V2Batch:
        fast = v2_columns(batch)
        if fast is not None:
            return fast
    records = list(batch.iter_records())
    if not records:
        return ((),) * 7  # type: ignore[return-value]
    fields = list(zip(*records))
    return fields[0], fields[1], fields[2], fields[3], fields[4], fields[5], fields[13]


def v2_columns(batch: V2Batch) -> Columns | None:
    """Columns of a well-formed magic-2 data batch, or None to use the full decoder."""
    if batch.is_control or batch.batch_length < RECORD_BATCH_OVERHEAD - 12:
        return None
    count = batch.records_count
    if count <= 0:
        return ((),) * 7 if count == 0 else None  # type: ignore[return-value]
    base_offset, base_timestamp = batch.base_offset, batch.base_timestamp
    if not (INT64_MIN + _SAFE <= base_offset <= INT64_MAX - _SAFE
            and INT64_MIN + _SAFE <= base_timestamp <= INT64_MAX - _SAFE):
        return None
    start = batch.position + RECORD_BATCH_OVERHEAD
    end = batch.position + batch.size
    buf = batch.buf
    if end > len(buf):
        return None
    if batch.codec_id != compression.CODEC_NONE:
        try:
            buf = compression.decompress(batch.codec_id, memoryview(buf)[start:end], magic=MAGIC)
        except (KsegError, MemoryError):
            return None
        start, end = 0, len(buf)
    elif isinstance(buf, memoryview):
        buf, start, end = bytes(buf[start:end]), 0, end - start
    try:
        parsed = _parse(buf, start, end, count, base_timestamp)
    except (IndexError, KsegError):
        return None
    if parsed is None:
        return None
    deltas, timestamp_deltas, keys, values, headers = parsed
    if batch.attributes & TIMESTAMP_TYPE_MASK:
        timestamps: Sequence[int] = [batch.max_timestamp] * count
        kind = LOG_APPEND_TIME
    else:
        timestamps = [base_timestamp + d for d in timestamp_deltas]
        kind = CREATE_TIME
    base_sequence = batch.base_sequence
    if base_sequence >= 0:
        sequences: Sequence[int] = [
            s - 0x80000000 if s > 0x7FFFFFFF else s for s in (base_sequence + d for d in deltas)
        ]
    else:
        sequences = [-1] * count
    offsets = [base_offset + d for d in deltas]
    return offsets, timestamps, keys, values, headers, sequences, [kind] * count


def _parse(
    buf, pos: int, end: int, count: int, base_timestamp: int
) -> tuple[list, list, list, list, list] | None:
    """Offset deltas, timestamp deltas, keys, values and headers of ``count`` records in ``buf[pos:end]``."""
    deltas: list[int] = []
    timestamp_deltas: list[int] = []
    keys: list[bytes | None] = []
    values: list[bytes | None] = []
    headers: list[tuple] = []
    for _ in range(count):
        if pos >= end:
            return None
        b = buf[pos]  # -- length (1 or 2 bytes inline; longer ones through decode_varint)
        if b < 0x80:
            length = (b >> 1) ^ -(b & 1)
            pos += 1
        elif buf[pos + 1] < 0x80:
            b = (b & 0x7F) | (buf[pos + 1] << 7)
            length = (b >> 1) ^ -(b & 1)
            pos += 2
        else:
            length, pos = decode_varint(buf, pos, end)
        if length < 0 or length > end - pos:
            return None
        record_end = pos + length
        pos += 1  # attributes
        b = buf[pos]  # -- timestamp delta
        if b < 0x80:
            timestamp_delta = (b >> 1) ^ -(b & 1)
            pos += 1
        elif buf[pos + 1] < 0x80:
            b = (b & 0x7F) | (buf[pos + 1] << 7)
            timestamp_delta = (b >> 1) ^ -(b & 1)
            pos += 2
        else:
            timestamp_delta, pos = decode_varlong(buf, pos, record_end)
            if not INT64_MIN <= base_timestamp + timestamp_delta <= INT64_MAX:
                return None  # Java wraps the sum; the full decoder knows how
        b = buf[pos]  # -- offset delta
        if b < 0x80:
            offset_delta = (b >> 1) ^ -(b & 1)
            pos += 1
        elif buf[pos + 1] < 0x80:
            b = (b & 0x7F) | (buf[pos + 1] << 7)
            offset_delta = (b >> 1) ^ -(b & 1)
            pos += 2
        else:
            offset_delta, pos = decode_varint(buf, pos, record_end)
        if offset_delta < 0:
            return None
        b = buf[pos]  # -- key
        if b < 0x80:
            size = (b >> 1) ^ -(b & 1)
            pos += 1
        elif buf[pos + 1] < 0x80:
            b = (b & 0x7F) | (buf[pos + 1] << 7)
            size = (b >> 1) ^ -(b & 1)
            pos += 2
        else:
            size, pos = decode_varint(buf, pos, record_end)
        if size >= 0:
            if pos + size > record_end:
                return None
            keys.append(buf[pos : pos + size])
            pos += size
        else:
            keys.append(None)
        b = buf[pos]  # -- value
        if b < 0x80:
            size = (b >> 1) ^ -(b & 1)
            pos += 1
        elif buf[pos + 1] < 0x80:
            b = (b & 0x7F) | (buf[pos + 1] << 7)
            size = (b >> 1) ^ -(b & 1)
            pos += 2
        else:
            size, pos = decode_varint(buf, pos, record_end)
        if size >= 0:
            if pos + size > record_end:
                return None
            values.append(buf[pos : pos + size])
            pos += size
        else:
            values.append(None)
        if buf[pos] == 0:  # -- headers
            headers.append(())
            pos += 1
        else:
            record_headers, pos = _headers(buf, pos, record_end)
            headers.append(record_headers)
        if pos != record_end:
            return None
        deltas.append(offset_delta)
        timestamp_deltas.append(timestamp_delta)
    if pos != end:
        return None
    return deltas, timestamp_deltas, keys, values, headers


def _small_varint(buf, pos: int, end: int) -> tuple[int, int]:
    b = buf[pos]
    if b < 0x80:
        return (b >> 1) ^ -(b & 1), pos + 1
    return decode_varint(buf, pos, end)


def _headers(buf, pos: int, end: int) -> tuple[tuple, int]:
    """One record's headers as (key bytes, value bytes | None) pairs; IndexError at anything odd."""
    count, pos = _small_varint(buf, pos, end)
    if count < 0 or count > end - pos:
        raise IndexError
    out = []
    for _ in range(count):
        size, pos = _small_varint(buf, pos, end)
        if size < 0 or pos + size > end:
            raise IndexError
        key = buf[pos : pos + size]
        pos += size
        size, pos = _small_varint(buf, pos, end)
        if size >= 0:
            if pos + size > end:
                raise IndexError
            value = buf[pos : pos + size]
            pos += size
        else:
            value = None
        out.append((key, value))
    return tuple(out), pos
