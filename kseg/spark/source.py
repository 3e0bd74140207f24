"""``spark.read.format("kseg")``: Kafka segments as a DataFrame (PySpark 4 Python Data Source API).

::

    from kseg.spark import register
    register(spark)
    df = spark.read.format("kseg").load("/var/lib/kafka")          # one row per record
    batches = spark.read.format("kseg").option("level", "batch").load(path)

Options (all optional):

``level``        ``record`` (default) or ``batch``.
``mode``         ``DROPMALFORMED`` (default), ``PERMISSIVE`` (adds a ``problem`` column and
                 one row per damaged region) or ``FAILFAST`` (see :mod:`kseg.spark.rows`).
``split_bytes``  cut segments larger than this into several tasks (default: total bytes
                 over ``parallelism``, within 4-128 MiB).
``parallelism``  cores to plan for (``kseg.spark.read`` passes Spark's default parallelism;
                 a bare ``load`` assumes the planning machine's core count).
``chunk_rows``   rows per Arrow batch (default 10,000).
``max_batch_bytes`` the read cap: the most bytes one batch may decompress to (default 128 MiB,
                 ``--max-batch-bytes``); a batch past it is a damaged region naming the cap.

Planning (``partitions``) and reading (``read``) open the files by path: the
driver and every executor must see the same paths (a local disk in local
mode; NFS, a shared mount or a copy at the same path on a cluster).  File
contents never travel through Spark: each task maps its own byte range.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass

import pyarrow as pa
from pyspark.sql.datasource import DataSource, DataSourceReader, InputPartition
from pyspark.sql.types import StructType

from kseg.format.compression import DEFAULT_MAX_DECOMPRESSED
from kseg.spark import rows

SOURCE_NAME = "kseg"
LEVELS = (rows.RECORD, rows.BATCH)


class KsegOptionError(ValueError):
    """A bad ``.option(...)`` value, said in one line."""


@dataclass(frozen=True, slots=True)
class ReadOptions:
    """The source's options, checked, with their defaults (pickled to every task with the reader)."""

    paths: list[str]
    level: str
    mode: str
    split_bytes: int | None
    parallelism: int | None
    chunk_rows: int
    max_batch_bytes: int = DEFAULT_MAX_DECOMPRESSED


def parse_options(options: dict[str, str]) -> ReadOptions:
    """Checked options with their defaults (a typo fails at planning, not deep in a task)."""
    opts = {k.lower(): v for k, v in options.items()}
    level = str(opts.get("level", rows.RECORD)).lower()
    if level not in LEVELS:
        raise KsegOptionError(f"kseg option level={level!r}: expected one of {', '.join(LEVELS)}")
    mode = str(opts.get("mode", rows.DROPMALFORMED)).upper()
    if mode not in rows.MODES:
        raise KsegOptionError(f"kseg option mode={mode!r}: expected one of {', '.join(rows.MODES)}")
    return ReadOptions(
        paths=_paths(opts),
        level=level,
        mode=mode,
        split_bytes=_positive(opts, "split_bytes"),
        parallelism=_positive(opts, "parallelism"),
        chunk_rows=_positive(opts, "chunk_rows") or rows.CHUNK_ROWS,
        max_batch_bytes=_positive(opts, "max_batch_bytes") or DEFAULT_MAX_DECOMPRESSED,
    )


def _paths(opts: dict[str, str]) -> list[str]:
    """``load(path)`` sets ``path``; ``load([a, b])`` sets ``paths`` to a JSON list."""
    if "paths" in opts:
        paths = json.loads(opts["paths"])
    elif "path" in opts:
        paths = [opts["path"]]
    else:
        raise KsegOptionError('kseg: give a path: spark.read.format("kseg").load(PATH)')
    return [str(p) for p in paths]


def _positive(opts: dict[str, str], name: str) -> int | None:
    if name not in opts:
        return None
    try:
        value = int(opts[name])
    except ValueError:
        value = 0
    if value <= 0:
        raise KsegOptionError(f"kseg option {name}={opts[name]!r}: expected a positive integer")
    return value


class KsegDataSource(DataSource):
    """Kafka log segments (.log, KRaft .checkpoint) under the given paths."""

    @classmethod
    def name(cls) -> str:
        return SOURCE_NAME

    def schema(self) -> str:
        opts = parse_options(dict(self.options))
        return rows.ddl(opts.level, opts.mode)

    def reader(self, schema: StructType) -> DataSourceReader:
        return KsegReader(parse_options(dict(self.options)))


class SplitPartition(InputPartition):
    """One split (a byte range of one segment) as Spark's input partition."""

    def __init__(self, split: rows.Split) -> None:
        super().__init__(split)
        self.split = split


class KsegReader(DataSourceReader):
    """Plans splits on the driver side; each task maps its split and yields Arrow batches."""

    def __init__(self, options: ReadOptions) -> None:
        self.options = options

    def partitions(self) -> list[InputPartition]:
        opts = self.options
        splits = rows.plan_splits(opts.paths, opts.split_bytes, opts.parallelism)
        return [SplitPartition(split) for split in splits]

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        if not isinstance(partition, SplitPartition):
            return iter(())  # no segment files: Spark still runs one task, with its default partition
        opts = self.options
        return rows.read_split(partition.split, opts.level, opts.mode, opts.chunk_rows, opts.max_batch_bytes)
