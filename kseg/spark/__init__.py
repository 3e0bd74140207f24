"""kseg on Spark (``pip install 'kseg[spark]'``): a DataFrame source for segments, and verify at scale.

::

    from kseg.spark import get_session, read, findings
    spark, _ = get_session()                      # local[*], quiet, loopback only
    records = read(spark, ["/var/lib/kafka"])     # = spark.read.format("kseg").load(...)
    problems = findings(spark, ["/var/lib/kafka"])

This package is the only place kseg imports pyspark, and it does so lazily:
``kseg.spark.rows`` (segments to Arrow batches) needs pyarrow alone, and
nothing outside ``kseg.spark``/``kseg.commands.spark`` imports this package.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import TYPE_CHECKING

from kseg.format.compression import DEFAULT_MAX_DECOMPRESSED

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

    from kseg.ops.verify import VerifyResult

__all__ = ["findings", "get_session", "read", "register", "verify", "with_txn_state"]


def get_session(
    master: str | None = None, conf: Sequence[tuple[str, str]] = (), *, progress: bool | None = None
) -> tuple[SparkSession, bool]:
    """The active SparkSession, or a new local[*] one set up for kseg; see :mod:`kseg.spark.session`.

    ``progress=True`` shows the start-up line on stderr even when it is not a terminal.
    """
    from kseg.spark.session import get_session as _get_session

    return _get_session(master, conf, progress=progress)


def register(spark: SparkSession) -> None:
    """Make ``spark.read.format("kseg")`` available in ``spark``."""
    from kseg.spark.session import register as _register

    _register(spark)


def read(
    spark: SparkSession,
    paths: Sequence[str | os.PathLike[str]],
    *,
    level: str = "record",
    mode: str = "DROPMALFORMED",
    split_bytes: int | None = None,
    max_batch_bytes: int = DEFAULT_MAX_DECOMPRESSED,
) -> DataFrame:
    """Segments under ``paths`` as a DataFrame, split for this session's parallelism.

    Paths are made absolute here, on the driver: Spark plans and reads in
    worker processes whose working directory is not the caller's.
    """
    register(spark)
    reader = (
        spark.read.format("kseg")
        .option("level", level)
        .option("mode", mode)
        .option("parallelism", spark.sparkContext.defaultParallelism)
        .option("max_batch_bytes", max_batch_bytes)
    )
    if split_bytes is not None:
        reader = reader.option("split_bytes", split_bytes)
    return reader.load([os.path.abspath(p) for p in paths])


def with_txn_state(frame: DataFrame) -> DataFrame:
    """Record rows of :func:`read` with ``txn_state``: committed, aborted, open or none (:mod:`kseg.spark.txn_state`)."""
    from kseg.spark.txn_state import with_txn_state as _with_txn_state

    return _with_txn_state(frame)


def verify(
    spark: SparkSession, paths: Sequence[str | os.PathLike[str]], *, deep: bool = False,
    max_batch_bytes: int = DEFAULT_MAX_DECOMPRESSED,
) -> VerifyResult:
    """``kseg verify`` run on Spark: a :class:`kseg.ops.verify.VerifyResult` (``max_batch_bytes``: the read cap)."""
    from kseg.spark.verify_units import verify as _verify

    return _verify(spark, paths, deep=deep, max_batch_bytes=max_batch_bytes)


def findings(spark: SparkSession, paths: Sequence[str | os.PathLike[str]], *, deep: bool = False) -> DataFrame:
    """The findings of ``kseg verify --format json`` on ``paths``, as a DataFrame."""
    from kseg.spark.verify_units import findings as _findings

    return _findings(spark, paths, deep=deep)
