"""Where Kafka's segment recovery stops, and why (``IndexBuild.stop``), and what the broker then does.

Names shared by the recovery core (:mod:`kseg.recovery.indexes`) and the plans built on it; the first
four are where Kafka's file reader stops framing (the ends of :class:`~kseg.format.walk.BatchWalk`).
"""

from __future__ import annotations

from kseg.format.walk import BAD_SIZE, END_OF_DATA, PARTIAL_BATCH, SHORT_TAIL

#: Why recovery stopped where it did (``IndexBuild.stop``).  The first four are
#: where Kafka's file reader stops framing (the ends of :class:`~kseg.format.walk.BatchWalk`).
STOP_END = END_OF_DATA  # every byte belongs to a valid batch
STOP_SHORT_TAIL = SHORT_TAIL  # 17 or fewer bytes left: the reader stops quietly
STOP_PARTIAL = PARTIAL_BATCH  # the last batch declares more bytes than remain: the reader stops quietly
STOP_BAD_SIZE = BAD_SIZE  # a size field below 14: CorruptRecordException from the reader
STOP_CORRUPT = "corrupt-batch"  # ensureValid(): V2 batch under 61 bytes, or CRC mismatch
STOP_INVALID_RECORD = "invalid-record"  # a transaction marker that cannot be decoded (InvalidRecordException)
STOP_FAILED = "recovery-fails"  # Kafka's recover throws an exception it does not catch

#: What the broker does when recover throws these (docs/kafka-log-loading.md R3.5, R4.3-R4.5); the
#: loading model (kseg.recovery.loading) tells which applies to a given partition.
INVALID_OFFSET_CONSEQUENCE = (
    "in recoverLog the segment is emptied and every later segment deleted; in an early recovery "
    "(its .index missing) the load throws and the broker stops"
)
OVERFLOW_CONSEQUENCE = (
    "the load splits the segment only if its last batch overflows; otherwise the split is refused "
    "(IllegalArgumentException: Split operation is only permitted for segments with overflow) and the broker stops"
)

