"""``kseg dump``: what ``kafka-dump-log.sh`` (``kafka.tools.DumpLogSegments``) reports, as data.

:func:`iter_dump` walks the files in order and yields plain events -- a file
header, a batch, a record, an index entry, a problem, the closing summaries
-- one at a time; nothing here prints.  ``kseg.render.dump`` turns the events
into Kafka's exact text, JSON lines or a table.

Kafka's rules are followed to the letter (reference §6): which suffix gets
which handler, when a record is decoded, what is compared with what, and in
which order the summary sections list their findings.  Where Kafka's tool
crashes -- a size field below 14, a record it cannot decode, a missing
sibling file, a name it cannot parse -- kseg yields what Kafka would have
printed up to that point, then a :class:`Problem` with the byte position, and
goes on with the next file.  Everything streams: one batch (and, with deep
iteration, its records) at a time, whatever the segment size.

With one of kafka-dump-log's internal-topic decoders (``DumpOptions.decoder``),
data records come as :class:`DecodedRecord` (kseg.format.internal does the
decoding, only then); where Kafka's decoder throws, kseg reports the record and
goes on with the next one.  Control records are always described by
:func:`kseg.format.internal.describe_control_record`.  The small files beside
the segments, which Kafka's tool ignores or crashes on (checkpoints,
partition.metadata, meta.properties, quorum-state, .kafka_cleanshutdown), are
dumped by :mod:`kseg.ops.dump.sidefiles`.

The package, by responsibility (each module imports only the ones above it):

* :mod:`~kseg.ops.dump.dialect` -- which release's text (``--kafka-version``), one flag per change;
* :mod:`~kseg.ops.dump.options` -- :class:`DumpOptions`, the decoders' precedence;
* :mod:`~kseg.ops.dump.side_events`, :mod:`~kseg.ops.dump.decode`,
  :mod:`~kseg.ops.dump.events` -- the typed events (data, never text);
* :mod:`~kseg.ops.dump.targets` -- which files, shown how, handled by what;
* :mod:`~kseg.ops.dump.summaries` -- the closing sections in Kafka's order;
* :mod:`~kseg.ops.dump.records`, :mod:`~kseg.ops.dump.log` -- the .log walk;
* :mod:`~kseg.ops.dump.indexes`, :mod:`~kseg.ops.dump.producers`,
  :mod:`~kseg.ops.dump.sidefiles` -- the other kinds of file;
* :mod:`~kseg.ops.dump.run` -- :func:`iter_dump`, the walk over files.
"""

from __future__ import annotations

from kseg.ops.dump.decode import decode_records
from kseg.ops.dump.dialect import CHANGES, DEFAULT_DIALECT, DEFAULT_RELEASE, RELEASES, Dialect, dialect_for
from kseg.ops.dump.events import (
    AnyRecord,
    BatchEvent,
    BootstrapStart,
    ControlRecord,
    DecodedRecord,
    EncodedRecords,
    Event,
    FileStart,
    Ignored,
    IndexEntry,
    IndexStatus,
    LogStart,
    Notice,
    Problem,
    ProducerEntryEvent,
    RecordsEvent,
    SnapshotStart,
    Summary,
    TimeIndexEntry,
    TrailingBytes,
    TxnEntry,
)
from kseg.ops.dump.indexes import kafka_offset_lookup
from kseg.ops.dump.options import DECODER_PRECEDENCE, DEFAULT_MAX_MESSAGE_SIZE, INT_MAX, DumpOptions
from kseg.ops.dump.run import iter_dump
from kseg.ops.dump.summaries import ScalaHashMapOrder, Summaries
from kseg.ops.dump.targets import (
    CLEAN_SHUTDOWN_FILE,
    SIDE_FILE_NAMES,
    DumpTarget,
    handler_kind,
    java_path,
    parse_java_long,
    targets_for,
)

__all__ = [
    "CHANGES",
    "CLEAN_SHUTDOWN_FILE",
    "DECODER_PRECEDENCE",
    "DEFAULT_DIALECT",
    "DEFAULT_MAX_MESSAGE_SIZE",
    "DEFAULT_RELEASE",
    "INT_MAX",
    "RELEASES",
    "SIDE_FILE_NAMES",
    "AnyRecord",
    "BatchEvent",
    "BootstrapStart",
    "ControlRecord",
    "DecodedRecord",
    "Dialect",
    "DumpOptions",
    "DumpTarget",
    "EncodedRecords",
    "Event",
    "FileStart",
    "Ignored",
    "IndexEntry",
    "IndexStatus",
    "LogStart",
    "Notice",
    "Problem",
    "ProducerEntryEvent",
    "RecordsEvent",
    "ScalaHashMapOrder",
    "SnapshotStart",
    "Summaries",
    "Summary",
    "TimeIndexEntry",
    "TrailingBytes",
    "TxnEntry",
    "decode_records",
    "dialect_for",
    "handler_kind",
    "iter_dump",
    "java_path",
    "kafka_offset_lookup",
    "parse_java_long",
    "targets_for",
]
