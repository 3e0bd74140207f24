"""Which records belong to committed, aborted or still open transactions: the ``txn_state`` column.

A record row alone cannot say it: a transaction ends at its producer's next
COMMIT or ABORT marker, which may lie in a later batch, segment or Spark task.
Kafka's rule (ProducerStateManager / ProducerAppendInfo, Kafka 4.3.0): a
transactional data batch opens a transaction for its producer, and that
producer's next control batch -- whose one record's key is a
``ControlRecordType`` (version int16, type int16: 0 ABORT, 1 COMMIT) -- ends it.

So, per partition directory and producer id, rows are ordered by offset and
each transactional row takes the type of the first marker at or after its
offset: ``committed`` or ``aborted``; none yet: ``open``.  A control row takes
its own type.  Rows of non-transactional batches are ``none``.  This is one
window over the transactional rows only (offset descending, a growing frame:
linear, not the quadratic frame an "unbounded following" window would be).

What it does not see: a marker the files do not hold (cut by a crash, or in a
segment not given) leaves the transaction ``open``; ``kseg txn`` says why.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

COMMITTED, ABORTED, OPEN, NONE = "committed", "aborted", "open", "none"
TXN_STATES = (COMMITTED, ABORTED, OPEN, NONE)
COLUMN = ("txn_state", "string")


def with_txn_state(frame: DataFrame) -> DataFrame:
    """``frame`` (record-level rows of :mod:`kseg.spark.rows`) with a ``txn_state`` column at the end."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    columns = frame.columns
    kind = F.substring(F.hex(F.col("key")), 5, 4)  # the control key's type, as 4 hex digits
    marker = (F.when(F.col("is_control") & (kind == "0001"), F.lit(COMMITTED))
              .when(F.col("is_control") & (kind == "0000"), F.lit(ABORTED)))
    directory = F.regexp_extract(F.col("path"), r"^(.*)/[^/]*$", 1)
    later_first = (Window.partitionBy(directory, F.col("producer_id")).orderBy(F.col("offset").desc())
                   .rowsBetween(Window.unboundedPreceding, Window.currentRow))
    transactional = F.coalesce(F.col("is_transactional"), F.lit(False))
    txn = (frame.where(transactional).withColumn("_marker", marker)
           .withColumn("txn_state", F.coalesce(F.last("_marker", ignorenulls=True).over(later_first), F.lit(OPEN)))
           .select(*columns, "txn_state"))
    plain = frame.where(~transactional).withColumn("txn_state", F.lit(NONE))
    return txn.unionByName(plain)


__all__ = ["TXN_STATES", "with_txn_state"]
