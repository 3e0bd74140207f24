"""The record-level Arrow arrays of a chunk of rows, from either path (pure Python or the compiled core).

:class:`kseg.spark.rows._RecordChunk` gathers a chunk's records in parts: a run
of batches the compiled core took (:class:`~kseg.format.arrow_columns.RecordBuffers`,
Arrow's buffers already) or a run the pure path read (Python lists, one per
column, from :mod:`kseg.spark.decode`).  Each part becomes the same seven
arrays here -- offset, timestamp, timestamp_type, key, value, headers,
sequence, in that order -- and a chunk of several parts concatenates them.
Both give equal arrays for the same records (tests/core/test_core_columns.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import accumulate

import pyarrow as pa

from kseg.format.arrow_columns import RecordBuffers, VarBuffers
from kseg.format.jvm_text import java_utf8

HEADER = pa.struct([pa.field("key", pa.string()), pa.field("value", pa.binary())])
HEADERS = pa.list_(pa.field("element", HEADER))

#: The record-level columns built per part, in this order.
RECORD_LEVEL = ("offset", "timestamp", "timestamp_type", "key", "value", "headers", "sequence")


def headers_array(per_record: Sequence[tuple]) -> pa.Array:
    """``array<struct<key string, value binary>>``; keys decoded as Kafka does (Java's UTF-8)."""
    offsets = [0, *accumulate(map(len, per_record))]
    pairs = [pair for headers in per_record if headers for pair in headers]
    items = pa.StructArray.from_arrays(
        [pa.array([java_utf8(k) for k, _ in pairs], pa.string()), pa.array([v for _, v in pairs], pa.binary())],
        fields=list(HEADER),
    )
    return pa.ListArray.from_arrays(pa.array(offsets, pa.int32()), items, type=HEADERS)


def python_arrays(columns: Sequence[list]) -> list[pa.Array]:
    """The pure path's lists (offsets, timestamps, keys, values, headers, sequences, timestamp types)."""
    offsets, timestamps, keys, values, headers, sequences, timestamp_types = columns
    return [
        pa.array(offsets, pa.int64()),
        pa.array(timestamps, pa.int64()),
        pa.array(timestamp_types, pa.string()),
        pa.array(keys, pa.binary()),
        pa.array(values, pa.binary()),
        headers_array(headers),
        pa.array(sequences, pa.int32()),
    ]


def _var(kind: pa.DataType, rows: int, column: VarBuffers) -> pa.Array:
    validity = None if column.validity is None else pa.py_buffer(column.validity)
    buffers = [validity, pa.py_buffer(column.offsets), pa.py_buffer(column.data)]
    return pa.Array.from_buffers(kind, rows, buffers, null_count=column.nulls)


def core_arrays(buffers: RecordBuffers) -> list[pa.Array]:
    """The core's buffers wrapped without a copy (``pyarrow.Array.from_buffers``)."""
    rows = buffers.rows
    headers = len(buffers.header_keys.offsets) // 4 - 1  # int32 offsets: one more than headers
    items = pa.Array.from_buffers(HEADER, headers, [None], null_count=0, children=[
        _var(pa.string(), headers, buffers.header_keys), _var(pa.binary(), headers, buffers.header_values)])
    return [
        pa.Array.from_buffers(pa.int64(), rows, [None, pa.py_buffer(buffers.offsets)], null_count=0),
        pa.Array.from_buffers(pa.int64(), rows, [None, pa.py_buffer(buffers.timestamps)], null_count=0),
        _var(pa.string(), rows, buffers.timestamp_types),
        _var(pa.binary(), rows, buffers.keys),
        _var(pa.binary(), rows, buffers.values),
        pa.Array.from_buffers(HEADERS, rows, [None, pa.py_buffer(buffers.header_offsets)], null_count=0,
                              children=[items]),
        pa.Array.from_buffers(pa.int32(), rows, [None, pa.py_buffer(buffers.sequences)], null_count=0),
    ]


def part_arrays(part: RecordBuffers | Sequence[list]) -> list[pa.Array]:
    """One part's seven arrays, whichever path gathered it."""
    return core_arrays(part) if isinstance(part, RecordBuffers) else python_arrays(part)


def chunk_arrays(parts: Sequence[RecordBuffers | Sequence[list]]) -> list[pa.Array]:
    """A chunk's seven arrays: its one part's, or every part's concatenated in order."""
    per_part = [part_arrays(part) for part in parts]
    if len(per_part) == 1:
        return per_part[0]
    return [pa.concat_arrays(list(column)) for column in zip(*per_part, strict=True)]
