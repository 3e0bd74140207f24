"""What ``kseg dump`` was asked to do: Kafka's options (snake_cased) plus kseg's windows and decoders.

Its own module so that every part of the dump (the .log walk, the index
checks, the side files) and its callers share one definition without
importing each other.
"""

from __future__ import annotations

from dataclasses import dataclass

from kseg.format.compression import DEFAULT_MAX_DECOMPRESSED
from kseg.ops.dump.dialect import DEFAULT_DIALECT, Dialect

INT_MAX = 2**31 - 1  # Kafka's default --max-bytes (Integer.MAX_VALUE)
DEFAULT_MAX_MESSAGE_SIZE = 5 * 1024 * 1024
#: kafka-dump-log's internal-topic decoders (option names without ``--`` and ``-decoder``), in the order
#: ``DumpLogSegmentsOptions.messageParser`` tests them: the first one given wins.
DECODER_PRECEDENCE = ("offsets", "transaction-log", "cluster-metadata", "remote-log-metadata", "share-group-state")


@dataclass(frozen=True, slots=True)
class DumpOptions:
    """Kafka's options (snake_cased) plus kseg's windows.

    ``max_bytes`` None means Kafka's default (Integer.MAX_VALUE).  Windows
    select whole batches: the first batch shown is the first whose last offset
    reaches ``from_offset`` (found through the .index) and whose max timestamp
    reaches ``from_time`` (through the .timeindex); the last one shown is the
    first whose last offset reaches ``to_offset`` or whose max timestamp
    reaches ``to_time``; ``max_batches`` caps the batches shown per file.

    ``json_records`` tells the walk that whoever renders the events writes
    records as JSON (any ``--payload``): magic-2 data records are then handed
    over still encoded (:class:`~kseg.ops.dump.events.EncodedRecords`), for a
    writer that reads them once.  ``encoded_records`` does the same for a
    text renderer (the compiled core writes their lines:
    :mod:`kseg.format.records_render`).  ``decoder`` is one of
    :data:`DECODER_PRECEDENCE`: records are decoded as that internal topic's.
    ``dialect`` is the release whose tool's text is reproduced (``--kafka-version``).
    ``max_batch_bytes`` is the read cap (``--max-batch-bytes``): the most bytes
    one batch may decompress to, past which its records are a problem naming it.
    ``kafka_text`` says the output is kafka-dump-log's text (``--format text``): an uncompressed V0/V1
    message whose key or value length runs past it then comes as the record Kafka's lazy reader prints
    (:mod:`kseg.ops.dump.legacy`); kseg's own formats never show a record it cannot read.
    """

    deep_iteration: bool = False
    print_data_log: bool = False
    skip_record_metadata: bool = False
    max_bytes: int | None = None
    max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE
    index_sanity_check: bool = False
    verify_index_only: bool = False
    decoder_notices: tuple[str, ...] = ()
    from_offset: int | None = None
    to_offset: int | None = None
    from_time: int | None = None
    to_time: int | None = None
    max_batches: int | None = None
    json_records: bool = False
    encoded_records: bool = False
    decoder: str | None = None
    dialect: Dialect = DEFAULT_DIALECT
    max_batch_bytes: int = DEFAULT_MAX_DECOMPRESSED
    kafka_text: bool = False

    @property
    def deep(self) -> bool:
        """``isDeepIteration``: asked for, or implied by printing data."""
        return self.deep_iteration or self.print_data_log

    def before_window(self, offset: int, timestamp: int | None = None) -> bool:
        """An index entry for ``offset`` (and ``timestamp``) lies before the window: not shown, not checked."""
        return (self.from_offset is not None and offset < self.from_offset) or (
            timestamp is not None and self.from_time is not None and timestamp < self.from_time)

    def closes_window(self, offset: int, timestamp: int | None = None) -> bool:
        """The entry for ``offset`` is the last one shown: it reaches ``to_offset`` (or ``to_time``)."""
        return (self.to_offset is not None and offset >= self.to_offset) or (
            timestamp is not None and self.to_time is not None and timestamp >= self.to_time)

    def outside_range(self, first: int, last: int) -> bool:
        """Offsets ``first``..``last`` (an aborted range) miss the offset window entirely."""
        return (self.from_offset is not None and last < self.from_offset) or (
            self.to_offset is not None and first > self.to_offset)

    @property
    def windowed(self) -> bool:
        return any(
            v is not None for v in (self.from_offset, self.to_offset, self.from_time, self.to_time, self.max_batches)
        )
