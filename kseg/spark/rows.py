"""Segments as Arrow record batches: the pure half of the Spark data source (no pyspark here).

A Spark task gets a :class:`Split` -- a byte range of one segment file, cut at
batch boundaries -- and turns it into ``pyarrow.RecordBatch`` es of record rows
(:func:`record_batches`) or batch rows (:func:`batch_batches`).  Everything
here runs with pyarrow alone, so it is tested without a JVM
(tests/spark/test_rows.py); :mod:`kseg.spark.source` only wraps it in Spark's
DataSource API.

Reading goes *past* damage, as ``verify`` does: :func:`kseg.format.scan.scan`
yields every batch whose CRC checks out and the gaps between them.  What to do
with a gap, or with a valid batch whose records cannot be decoded, is the
``mode`` (Spark's names for it):

* ``DROPMALFORMED`` (default): no rows for it -- the rows are exactly the records
  Kafka's consumer could read;
* ``PERMISSIVE``: one extra row for it, with a ``problem`` column saying what
  and where (``byte 120 (batch.crc): Record is corrupt ...``) and the record
  columns null; the schema then ends with ``problem``;
* ``FAILFAST``: raise the located :class:`~kseg.errors.KsegError`.

Planning -- which task reads which bytes, cut at batch starts taken from the
``.index`` -- lives in :mod:`kseg.spark.splits` and is re-exported here.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from itertools import accumulate

import pyarrow as pa

from kseg.errors import Corrupt, KsegError
from kseg.format import Batch, read_batch
from kseg.format.compression import DEFAULT_MAX_DECOMPRESSED
from kseg.format.jvm_text import java_utf8
from kseg.format.scan import BAD_CRC, Gap, scan
from kseg.format.v0v1 import LegacyBatch
from kseg.segment import open_segment
from kseg.spark.decode import Columns, batch_columns
from kseg.spark.splits import (  # noqa: F401 - planning is part of this module's API
    MAX_SPLIT_BYTES,
    MIN_SPLIT_BYTES,
    Split,
    default_split_bytes,
    file_identity,
    plan_splits,
    segment_files,
)

RECORD, BATCH = "record", "batch"
DROPMALFORMED, PERMISSIVE, FAILFAST = "DROPMALFORMED", "PERMISSIVE", "FAILFAST"
MODES = (DROPMALFORMED, PERMISSIVE, FAILFAST)

#: Rows per Arrow batch handed to Spark (Spark's own Arrow batches hold 10,000).
CHUNK_ROWS = 10_000
#: ... and at most about this many key and value bytes, so large records cannot make a huge batch.
CHUNK_BYTES = 64 << 20

# -- schemas ----------------------------------------------------------------------------------------
# One table of (name, Spark DDL type, Arrow type): the Arrow types are exactly what Spark's
# to_arrow_schema gives for the DDL, since Spark rejects batches whose schema differs.

_HEADER = pa.struct([pa.field("key", pa.string()), pa.field("value", pa.binary())])
_HEADERS = pa.list_(pa.field("element", _HEADER))

_FILE_COLUMNS = (
    ("path", "string", pa.string()),
    ("topic", "string", pa.string()),
    ("partition", "int", pa.int32()),
    ("segment_base_offset", "bigint", pa.int64()),
    ("batch_position", "bigint", pa.int64()),
)
RECORD_COLUMNS = (
    *_FILE_COLUMNS,
    ("offset", "bigint", pa.int64()),
    ("timestamp", "bigint", pa.int64()),
    ("timestamp_type", "string", pa.string()),
    ("key", "binary", pa.binary()),
    ("value", "binary", pa.binary()),
    ("headers", "array<struct<key:string,value:binary>>", _HEADERS),
    ("magic", "tinyint", pa.int8()),
    ("codec", "string", pa.string()),
    ("producer_id", "bigint", pa.int64()),
    ("producer_epoch", "smallint", pa.int16()),
    ("sequence", "int", pa.int32()),
    ("is_transactional", "boolean", pa.bool_()),
    ("is_control", "boolean", pa.bool_()),
)
BATCH_COLUMNS = (
    *_FILE_COLUMNS,
    ("size", "bigint", pa.int64()),
    ("magic", "tinyint", pa.int8()),
    ("base_offset", "bigint", pa.int64()),
    ("last_offset", "bigint", pa.int64()),
    ("count", "int", pa.int32()),
    ("codec", "string", pa.string()),
    ("timestamp_type", "string", pa.string()),
    ("max_timestamp", "bigint", pa.int64()),
    ("crc", "bigint", pa.int64()),
    ("producer_id", "bigint", pa.int64()),
    ("producer_epoch", "smallint", pa.int16()),
    ("base_sequence", "int", pa.int32()),
    ("last_sequence", "int", pa.int32()),
    ("partition_leader_epoch", "int", pa.int32()),
    ("is_transactional", "boolean", pa.bool_()),
    ("is_control", "boolean", pa.bool_()),
    ("delete_horizon_ms", "bigint", pa.int64()),
)
PROBLEM_COLUMN = ("problem", "string", pa.string())


def columns(level: str, mode: str = DROPMALFORMED) -> tuple[tuple[str, str, pa.DataType], ...]:
    """The columns of a level; PERMISSIVE adds ``problem`` at the end."""
    base = RECORD_COLUMNS if level == RECORD else BATCH_COLUMNS
    return (*base, PROBLEM_COLUMN) if mode == PERMISSIVE else base


def ddl(level: str, mode: str = DROPMALFORMED) -> str:
    """The Spark schema as a DDL string (``path string, topic string, ...``)."""
    return ", ".join(f"`{name}` {kind}" for name, kind, _ in columns(level, mode))


def arrow_schema(level: str, mode: str = DROPMALFORMED) -> pa.Schema:
    return pa.schema([pa.field(name, kind) for name, _, kind in columns(level, mode)])


# -- reading ----------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Damage:
    """A gap, or a valid batch whose records cannot be read, or an unreadable file: one PERMISSIVE row."""

    position: int | None  # None: the whole file (it could not be opened)
    problem: str
    batch: Batch | None = None  # the batch header, when one is readable at ``position``


def iter_items(
    split: Split, level: str, max_batch_bytes: int = DEFAULT_MAX_DECOMPRESSED
) -> Iterator[tuple[Batch, Columns | None] | Damage]:
    """(batch, its records as columns -- None at batch level) per valid batch, and Damage, in file order.

    ``max_batch_bytes`` is the read cap: a batch decompressing past it is Damage naming it.
    """
    try:
        segment = open_segment(split.path)
    except OSError as err:
        yield Damage(None, f"cannot read the file: {err.strerror or err}")
        return
    with segment:
        buf = segment.buf
        for item in scan(buf, split.start, min(split.end, len(buf))):
            if isinstance(item, Gap):
                yield gap_damage(buf, item)
            elif level == BATCH:
                yield item, None
            else:
                try:
                    yield item, batch_columns(item, max_batch_bytes)
                except KsegError as err:
                    err.path = None
                    yield Damage(item.position, str(err.located(item.position)), item)


def gap_damage(buf, gap: Gap) -> Damage:
    """What a gap is, in one line: the CRC failure of the batch that starts it, or its framing."""
    batch = None
    if gap.reason == BAD_CRC:
        batch = read_batch(buf, gap.start)
        try:
            batch.ensure_valid()
            text = f"byte {gap.start}: not a valid batch"
        except KsegError as err:
            text = str(err)
        rest = gap.size - batch.size
        if rest > 0:
            text += f"; then {rest} bytes up to the next valid batch"
        return Damage(gap.start, text, batch)
    zeros = ", all zero" if gap.zero_filled else ""
    size = f", size field {gap.declared_size}" if gap.declared_size is not None else ""
    return Damage(gap.start, f"byte {gap.start}: {gap.size} bytes in no valid batch ({gap.reason}{size}{zeros})")


def _failfast(split: Split, damage: Damage) -> KsegError:
    return Corrupt(damage.problem, path=split.path)


def record_batches(
    split: Split, mode: str = DROPMALFORMED, chunk_rows: int = CHUNK_ROWS, max_batch_bytes: int = DEFAULT_MAX_DECOMPRESSED
) -> Iterator[pa.RecordBatch]:
    """The records of a split as Arrow batches of up to ``chunk_rows`` rows (and about ``CHUNK_BYTES``)."""
    builder = _RecordChunk(split, mode)
    for item in iter_items(split, RECORD, max_batch_bytes):
        if isinstance(item, Damage):
            if mode == FAILFAST:
                raise _failfast(split, item)
            if mode == PERMISSIVE:
                yield from builder.flush()
                yield builder.damage_row(item)
            continue
        batch, records = item
        if records is not None:  # always, at the record level
            builder.add(batch, records)
        if builder.rows >= chunk_rows or builder.payload >= CHUNK_BYTES:
            yield from builder.flush()
    yield from builder.flush()


def batch_batches(split: Split, mode: str = DROPMALFORMED, chunk_rows: int = CHUNK_ROWS) -> Iterator[pa.RecordBatch]:
    """One row per valid batch of a split, as Arrow batches."""
    schema = arrow_schema(BATCH, mode)
    rows: list[dict] = []
    for item in iter_items(split, BATCH):
        if isinstance(item, Damage):
            if mode == FAILFAST:
                raise _failfast(split, item)
            if mode != PERMISSIVE:
                continue
            row = batch_row(split, item.batch, item.position) if item.batch is not None else _file_row(split, item.position)
            row["problem"] = item.problem
        else:
            row = batch_row(split, item[0], item[0].position)
            if mode == PERMISSIVE:
                row["problem"] = None
        rows.append(row)
        if len(rows) >= chunk_rows:
            yield pa.RecordBatch.from_pylist(rows, schema=schema)
            rows = []
    if rows:
        yield pa.RecordBatch.from_pylist(rows, schema=schema)


def _file_row(split: Split, position: int | None) -> dict:
    return {
        "path": split.path,
        "topic": split.topic,
        "partition": split.partition,
        "segment_base_offset": split.segment_base_offset,
        "batch_position": position,
    }


def _legacy_base_offset(batch: Batch) -> int | None:
    try:
        return batch.base_offset
    except KsegError:
        return None


def batch_row(split: Split, batch: Batch, position: int | None) -> dict:
    """A batch's header as a row (Kafka's RecordBatch accessors, snake_cased)."""
    row = _file_row(split, position)
    row.update(
        size=batch.size,
        magic=batch.magic,
        base_offset=_legacy_base_offset(batch) if isinstance(batch, LegacyBatch) else batch.base_offset,
        last_offset=batch.last_offset,
        count=batch.count,
        codec=batch.codec,
        timestamp_type=batch.timestamp_type,
        max_timestamp=batch.max_timestamp,
        crc=batch.crc,
        producer_id=batch.producer_id,
        producer_epoch=batch.producer_epoch,
        base_sequence=batch.base_sequence,
        last_sequence=batch.last_sequence,
        partition_leader_epoch=batch.partition_leader_epoch,
        is_transactional=batch.is_transactional,
        is_control=batch.is_control,
        delete_horizon_ms=batch.delete_horizon_ms,
    )
    return row


class _RecordChunk:
    """Record rows gathered column by column, then turned into one Arrow batch.

    Each batch's records arrive as columns (:mod:`kseg.spark.decode`) and are
    appended with ``list.extend``; the per-batch columns are built once per
    batch and repeated with one ``take``.  This is the hot loop of the data
    source: no per-record Python work beyond the decode itself.
    """

    def __init__(self, split: Split, mode: str) -> None:
        self.split = split
        self.mode = mode
        self.schema = arrow_schema(RECORD, mode)
        self._reset()

    def _reset(self) -> None:
        self.columns: tuple[list, ...] = tuple([] for _ in range(7))
        self.which: list[int] = []  # per record: index of its batch in ``per_batch``
        self.per_batch: list[tuple] = []
        self.rows = 0
        self.payload = 0  # key and value bytes gathered

    def add(self, batch: Batch, columns: Columns) -> None:
        n = len(columns[0])
        if not n:
            return
        for mine, theirs in zip(self.columns, columns, strict=True):
            mine.extend(theirs)
        self.which.extend([len(self.per_batch)] * n)
        self.per_batch.append(
            (batch.position, batch.magic, batch.codec, batch.producer_id, batch.producer_epoch,
             batch.is_transactional, batch.is_control)
        )
        self.rows += n
        self.payload += sum(map(len, filter(None, columns[2]))) + sum(map(len, filter(None, columns[3])))

    def flush(self) -> Iterator[pa.RecordBatch]:
        if self.rows:
            yield self._build()
            self._reset()

    def _build(self) -> pa.RecordBatch:
        n = self.rows
        offsets, timestamps, keys, values, headers, sequences, timestamp_types = self.columns
        per_batch = list(zip(*self.per_batch, strict=True))
        which = pa.array(self.which, pa.int32())

        def repeated(values: tuple, kind: pa.DataType) -> pa.Array:
            return pa.array(values, kind).take(which)

        def constant(value: object, kind: pa.DataType) -> pa.Array:
            return pa.repeat(pa.scalar(value, kind), n)

        split = self.split
        arrays = [
            constant(split.path, pa.string()),
            constant(split.topic, pa.string()),
            constant(split.partition, pa.int32()),
            constant(split.segment_base_offset, pa.int64()),
            repeated(per_batch[0], pa.int64()),
            pa.array(offsets, pa.int64()),
            pa.array(timestamps, pa.int64()),
            pa.array(timestamp_types, pa.string()),
            pa.array(keys, pa.binary()),
            pa.array(values, pa.binary()),
            headers_array(headers),
            repeated(per_batch[1], pa.int8()),
            repeated(per_batch[2], pa.string()),
            repeated(per_batch[3], pa.int64()),
            repeated(per_batch[4], pa.int16()),
            pa.array(sequences, pa.int32()),
            repeated(per_batch[5], pa.bool_()),
            repeated(per_batch[6], pa.bool_()),
        ]
        if self.mode == PERMISSIVE:
            arrays.append(pa.nulls(n, pa.string()))
        return pa.RecordBatch.from_arrays(arrays, schema=self.schema)

    def damage_row(self, damage: Damage) -> pa.RecordBatch:
        row = _file_row(self.split, damage.position)
        batch = damage.batch
        if batch is not None:
            row.update(
                magic=batch.magic, codec=batch.codec, producer_id=batch.producer_id,
                producer_epoch=batch.producer_epoch, is_transactional=batch.is_transactional,
                is_control=batch.is_control,
            )
        row["problem"] = damage.problem
        return pa.RecordBatch.from_pylist([row], schema=self.schema)


def headers_array(per_record: Sequence[tuple]) -> pa.Array:
    """``array<struct<key string, value binary>>``; keys decoded as Kafka does (Java's UTF-8)."""
    offsets = [0, *accumulate(map(len, per_record))]
    pairs = [pair for headers in per_record if headers for pair in headers]
    items = pa.StructArray.from_arrays(
        [pa.array([java_utf8(k) for k, _ in pairs], pa.string()), pa.array([v for _, v in pairs], pa.binary())],
        fields=list(_HEADER),
    )
    return pa.ListArray.from_arrays(pa.array(offsets, pa.int32()), items, type=_HEADERS)


def read_split(split: Split, level: str = RECORD, mode: str = DROPMALFORMED,
               chunk_rows: int = CHUNK_ROWS, max_batch_bytes: int = DEFAULT_MAX_DECOMPRESSED) -> Iterator[pa.RecordBatch]:
    """Arrow batches of a split at either level: what one Spark task yields (``max_batch_bytes``: the read cap)."""
    if level == RECORD:
        return record_batches(split, mode, chunk_rows, max_batch_bytes)
    return batch_batches(split, mode, chunk_rows)


def read_paths(paths: Sequence[str | os.PathLike[str]], level: str = RECORD, mode: str = DROPMALFORMED,
               split_bytes: int | None = None) -> pa.Table:
    """Everything under ``paths`` as one Arrow table, without Spark (tests, small inputs)."""
    batches = [b for split in plan_splits(paths, split_bytes) for b in read_split(split, level, mode)]
    return pa.Table.from_batches(batches, schema=arrow_schema(level, mode))
