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
import pyarrow.compute as pc

from kseg.errors import Corrupt, KsegError
from kseg.format import Batch, read_batch
from kseg.format.arrow_columns import RecordBuffers, record_columns
from kseg.format.compression import DEFAULT_MAX_DECOMPRESSED
from kseg.format.scan import BAD_CRC, Gap, scan
from kseg.format.v0v1 import LegacyBatch
from kseg.segment import open_segment
from kseg.spark.decode import Columns, batch_columns
from kseg.spark.record_arrays import HEADERS as _HEADERS
from kseg.spark.record_arrays import chunk_arrays
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
                    yield records_damage(item, err)


def records_damage(batch: Batch, err: KsegError) -> Damage:
    """A valid batch whose records cannot be read: the reader's located error, without the path."""
    err.path = None
    return Damage(batch.position, str(err.located(batch.position)), batch)


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
    """The records of a split as Arrow batches of up to ``chunk_rows`` rows (and about ``CHUNK_BYTES``).

    Each valid batch's records go to the compiled core when it takes them
    (:mod:`kseg.format.arrow_columns`), else to the pure path (:mod:`kseg.spark.decode`).
    """
    builder = _RecordChunk(split, mode)
    for item in iter_items(split, BATCH, max_batch_bytes):
        damage = item if isinstance(item, Damage) else builder.add_batch(item[0], max_batch_bytes)
        if damage is None:
            if builder.rows >= chunk_rows or builder.payload >= CHUNK_BYTES:
                yield from builder.flush()
            continue
        if mode == FAILFAST:
            raise _failfast(split, damage)
        if mode == PERMISSIVE:
            yield from builder.flush()
            yield builder.damage_row(damage)
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
    """Record rows gathered batch by batch, then turned into one Arrow batch.

    A chunk is a list of parts in row order: runs of batches the compiled core
    took (its builder gathers them as Arrow buffers) and runs the pure path
    read (its columns appended with ``list.extend``).  The per-batch columns
    are one value per batch, run-length decoded once per chunk.  This is the
    hot loop of the data source: no per-record Python work on the core's path,
    none beyond the decode itself on the pure path.
    """

    def __init__(self, split: Split, mode: str) -> None:
        self.split = split
        self.mode = mode
        self.schema = arrow_schema(RECORD, mode)
        self.core = record_columns()  # None on the pure-Python path
        self._reset()

    def _reset(self) -> None:
        self.parts: list[RecordBuffers | tuple[list, ...]] = []
        self.python: tuple[list, ...] | None = None  # the open pure-path part, the last of ``parts``
        self.counts: list[int] = []  # rows per batch
        self.per_batch: list[tuple] = []
        self.rows = 0
        self.payload = 0  # key and value bytes gathered

    def add_batch(self, batch: Batch, max_batch_bytes: int) -> Damage | None:
        """Add a valid batch's records; the Damage when its records cannot be read."""
        added = None if self.core is None else self.core.add(batch, max_batch_bytes)
        if added is not None:
            if added[0]:
                self.python = None  # the core's rows come after the open pure-path part
                self._note(batch, *added)
            return None
        try:
            columns = batch_columns(batch, max_batch_bytes)
        except KsegError as err:
            return records_damage(batch, err)
        self.add(batch, columns)
        return None

    def add(self, batch: Batch, columns: Columns) -> None:
        """Add a batch's records read by the pure path."""
        n = len(columns[0])
        if not n:
            return
        if self.core is not None and self.core.rows:
            self.parts.append(self.core.take())
        if self.python is None:
            self.python = tuple([] for _ in range(7))
            self.parts.append(self.python)
        for mine, theirs in zip(self.python, columns, strict=True):
            mine.extend(theirs)
        self._note(batch, n, sum(map(len, filter(None, columns[2]))) + sum(map(len, filter(None, columns[3]))))

    def _note(self, batch: Batch, rows: int, payload: int) -> None:
        self.counts.append(rows)
        self.per_batch.append(
            (batch.position, batch.magic, batch.codec, batch.producer_id, batch.producer_epoch,
             batch.is_transactional, batch.is_control)
        )
        self.rows += rows
        self.payload += payload

    def flush(self) -> Iterator[pa.RecordBatch]:
        if self.rows:
            yield self._build()
            self._reset()

    def _build(self) -> pa.RecordBatch:
        n = self.rows
        if self.core is not None and self.core.rows:
            self.parts.append(self.core.take())
        offsets, timestamps, timestamp_types, keys, values, headers, sequences = chunk_arrays(self.parts)
        per_batch = list(zip(*self.per_batch, strict=True))
        # per record, the index of its batch: the batches' indexes run-length decoded (one call, in C)
        runs = pa.RunEndEncodedArray.from_arrays(
            pa.array(list(accumulate(self.counts)), pa.int32()), pa.array(range(len(self.counts)), pa.int32()))
        which = pc.call_function("run_end_decode", [runs])

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
            offsets,
            timestamps,
            timestamp_types,
            keys,
            values,
            headers,
            repeated(per_batch[1], pa.int8()),
            repeated(per_batch[2], pa.string()),
            repeated(per_batch[3], pa.int64()),
            repeated(per_batch[4], pa.int16()),
            sequences,
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
