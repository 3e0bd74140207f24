"""``kseg spark export``: segments' records (or batches) written out as Parquet, ORC or JSON by Spark.

One pass over the data: the source is read in PERMISSIVE mode, so each
damaged region is one row with a ``problem``; a Spark ``Observation`` gathers
those rows (and counts the good ones) while the write runs, and only the good
rows -- without the ``problem`` column -- are written.  Damaged batches are
therefore reported, never exported, and never silently lost.  Record rows
get ``txn_state`` (:mod:`kseg.spark.txn_state`): whether each record's
transaction committed, aborted or is still open, or ``none``; with
``--decode``, the decoded key and value (:mod:`kseg.spark.decoded`).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from kseg.format.compression import DEFAULT_MAX_DECOMPRESSED
from kseg.spark import rows

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from kseg.decode.registry import Registry

FORMATS = ("parquet", "orc", "json")


@dataclass(frozen=True, slots=True)
class Damaged:
    path: str
    position: int | None  # None: the file could not be read at all
    problem: str


@dataclass(frozen=True, slots=True)
class ExportResult:
    out: str
    level: str
    rows: int  # rows written
    files: int  # segment files read
    damaged: list[Damaged]  # in file order

    @property
    def unreadable(self) -> int:
        return sum(1 for d in self.damaged if d.position is None)


def export(
    spark: SparkSession,
    paths: Sequence[str | os.PathLike[str]],
    out: str,
    *,
    fmt: str = "parquet",
    level: str = rows.RECORD,
    overwrite: bool = False,
    split_bytes: int | None = None,
    max_batch_bytes: int = DEFAULT_MAX_DECOMPRESSED,
    registry: Registry | None = None,
) -> ExportResult:
    """Write the rows under ``paths`` to ``out``; damaged regions are counted out and listed.

    With a ``registry`` (record level), keys and values in its framing are decoded into the columns of
    :mod:`kseg.spark.decoded`.
    """
    from pyspark.sql import Observation
    from pyspark.sql import functions as F

    from kseg.spark import read

    shown = [str(p) for p in rows.segment_files(paths)]
    files = [str(p) for p in rows.segment_files([os.path.abspath(p) for p in paths])]
    # the rows carry absolute paths; messages show them as given (both lists: one expansion, same length)
    display = dict(zip(files, shown, strict=False))
    frame = read(spark, paths, level=level, mode=rows.PERMISSIVE, split_bytes=split_bytes, max_batch_bytes=max_batch_bytes)
    problem = F.col("problem")
    observation = Observation("kseg-export")
    observed = frame.observe(
        observation,
        F.count(F.when(problem.isNull(), 1)).alias("rows"),
        F.collect_list(F.when(problem.isNotNull(), F.struct("path", "batch_position", "problem"))).alias("damaged"),
    )
    good = observed.filter(problem.isNull()).drop("problem")
    if level == rows.RECORD:
        from kseg.spark.txn_state import with_txn_state

        good = with_txn_state(good)  # committed / aborted / open / none: a marker may be in another task's bytes
        if registry is not None:
            from kseg.spark.decoded import with_decoded

            good = with_decoded(good, registry)
    good.write.mode("overwrite" if overwrite else "errorifexists").format(fmt).save(out)
    metrics = observation.get
    order = {path: i for i, path in enumerate(shown)}
    damaged = sorted(
        (Damaged(display.get(row["path"], row["path"]), row["batch_position"], row["problem"])
         for row in metrics["damaged"]),
        key=lambda d: (order.get(d.path, len(order)), d.position if d.position is not None else -1),
    )
    return ExportResult(out, level, int(metrics["rows"]), len(files), damaged)
