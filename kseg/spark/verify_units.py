"""``kseg verify`` with the work spread over a Spark cluster, and its findings as a DataFrame.

The driver plans exactly as ``kseg verify`` does (``ops.verify.plan_paths``:
one unit per segment -- a .log with its indexes -- or per other file); the
units run as Spark tasks (``ops.verify.check_unit``, the same code a local run
uses); the small per-unit results come back and are merged on the driver by
``ops.verify.verify_paths``, partition checks included.  So the findings are
those of ``kseg verify --format json`` on the same files, by construction.

Units are dealt to tasks largest first (each to the lightest task so far), so
one big segment does not leave the other cores idle behind it.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Sequence
from typing import TYPE_CHECKING

from kseg.format.compression import DEFAULT_MAX_DECOMPRESSED
from kseg.ops.verify import Unit, UnitResult, VerifyResult, check_unit, unit_bytes, verify_paths

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

#: The findings DataFrame: the keys of ``Finding.as_dict()`` (one JSON line of verify), in order.
FINDINGS_DDL = (
    "type string, path string, kind string, severity string, position bigint, offset bigint, "
    "message string, field string, size bigint"
)
TASKS_PER_CORE = 3


def deal(units: Sequence[Unit], tasks: int) -> list[list[tuple[int, Unit]]]:
    """Units into at most ``tasks`` groups of similar total size (largest first, to the lightest group)."""
    tasks = max(1, min(tasks, len(units)))
    groups: list[list[tuple[int, Unit]]] = [[] for _ in range(tasks)]
    loads = [0] * tasks
    for size, i in sorted(((unit_bytes(u), i) for i, u in enumerate(units)), reverse=True):
        lightest = loads.index(min(loads))
        groups[lightest].append((i, units[i]))
        loads[lightest] += size
    return [g for g in groups if g]


def _check_group(
    cwd: str, deep: bool, max_batch_bytes: int, group: list[tuple[int, Unit]]
) -> list[tuple[int, UnitResult]]:
    """One Spark task: verify its units (runs on an executor).

    Relative paths mean what they mean on the driver: the task works from the
    driver's directory when the executor has it (always in local mode), and
    gives the worker its own back afterwards (Python workers are reused).
    """
    previous: str | None = os.getcwd()
    try:
        os.chdir(cwd)
    except OSError:
        previous = None
    try:
        return [(i, check_unit(unit, deep, None, max_batch_bytes)) for i, unit in group]
    finally:
        if previous is not None:
            os.chdir(previous)


def run_units_on_spark(
    spark: SparkSession, units: list[Unit], deep: bool, max_batch_bytes: int = DEFAULT_MAX_DECOMPRESSED
) -> list[UnitResult]:
    """``check_unit`` for every unit, as Spark tasks; results in unit order."""
    if not units:
        return []
    context = spark.sparkContext
    groups = deal(units, context.defaultParallelism * TASKS_PER_CORE)
    tasks = context.parallelize(groups, len(groups)).flatMap(functools.partial(_check_group, os.getcwd(), deep, max_batch_bytes))
    results: list[UnitResult] = [UnitResult([])] * len(units)
    for i, result in tasks.collect():
        results[i] = result
    return results


def verify(
    spark: SparkSession,
    paths: Sequence[str | os.PathLike[str]],
    *,
    deep: bool = False,
    max_batch_bytes: int = DEFAULT_MAX_DECOMPRESSED,
) -> VerifyResult:
    """What ``ops.verify.verify_paths`` returns, with the files checked on Spark's executors."""
    return verify_paths(
        paths, deep=deep, run_units=functools.partial(run_units_on_spark, spark), max_batch_bytes=max_batch_bytes
    )


def findings_frame(spark: SparkSession, result: VerifyResult) -> DataFrame:
    """The findings of a result as a DataFrame: one row per ``--format json`` finding line, in order."""
    return spark.createDataFrame([f.as_dict() for f in result.findings()], schema=FINDINGS_DDL)


def findings(spark: SparkSession, paths: Sequence[str | os.PathLike[str]], *, deep: bool = False) -> DataFrame:
    """Verify on Spark; the findings as a DataFrame (columns: ``FINDINGS_DDL``)."""
    return findings_frame(spark, verify(spark, paths, deep=deep))
