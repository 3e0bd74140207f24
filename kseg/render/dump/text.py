"""Kafka's ``DumpLogSegments`` output, line for line, in the dialect of the release asked for.

The batch and record templates with their quirks (``OptionalLong.empty``,
``Mismatches in :<path>``; up to 4.2 the stray ``}`` after a legacy record's
crc -- every difference between releases is a flag of
:class:`kseg.ops.dump.dialect.Dialect`, decided there), keys
and payloads decoded the way Java's ``StringDecoder`` decodes them (or an
internal-topic decoder's texts), the summary sections on stderr; and, in the
same style, kseg's own lines for the side files (:mod:`kseg.render.dump.side_text`).
"""

from __future__ import annotations

from kseg.format import LegacyBatch
from kseg.format.internal import KRAFT_CONTROL, control_json_text
from kseg.format.jvm_text import java_utf8
from kseg.format.model import Record
from kseg.format.records_render import render_records, text_style
from kseg.ops.dump import (
    DEFAULT_DIALECT,
    BatchEvent,
    BootstrapStart,
    ControlRecord,
    DecodedRecord,
    Dialect,
    DumpOptions,
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
from kseg.ops.dump.side_events import (
    CheckpointStart,
    CleanShutdownEvent,
    LeaderEpochEntry,
    MetaPropertiesEvent,
    OffsetCheckpointEntry,
    PartitionMetadataEvent,
    QuorumStateEvent,
)
from kseg.render.dump.common import Sink, optional_long, problem_line, summary_lines, tf
from kseg.render.dump.large_records import LARGE_PAYLOAD, java_text_pieces, large_parts
from kseg.render.dump.side_text import side_file_lines

LEADER_CHANGE = 2  # ControlRecordType.LEADER_CHANGE


class TextRenderer:
    """Kafka's ``DumpLogSegments`` output, exactly."""

    def __init__(self, sink: Sink, options: DumpOptions) -> None:
        self.sink = sink
        self.print_data = options.print_data_log
        self.skip_metadata = options.skip_record_metadata
        self.dialect = options.dialect
        # what comes before "payload:" when there is no key: Scala (<= 4.2) always " "; 4.3's
        # printRecordContents hands on its prefix, "| " under --skip-record-metadata
        self._keyless_payload = "| " if options.skip_record_metadata and options.dialect.java_port else " "
        self.problems = 0
        self._core_style = text_style(print_data=self.print_data, skip_metadata=self.skip_metadata,
                                      keyless_pipe=self._keyless_payload == "| ")
        self._ts_label = "CreateTime"
        self._legacy = False

    def handle(self, event: Event) -> None:
        line = self.sink.line
        match event:
            case RecordsEvent():
                self._records(event)
            case BatchEvent():
                self._batch(event)
            case FileStart(path=path):
                line(f"Dumping {path}")
            case LogStart(base_offset=base_offset):  # "Starting offset" before 3.3 (Scala dumpLog)
                line(f"{'Log starting' if self.dialect.log_starting_offset else 'Starting'} offset: {base_offset}")
            case SnapshotStart(end_offset=end_offset, epoch=epoch):
                line(f"Snapshot end offset: {end_offset}, epoch: {epoch}")
            case BootstrapStart():
                line("KRaft bootstrap snapshot")
            case Notice(text=text):
                line(text)
            case TrailingBytes(count=count, name=name):
                line(f"Found {count} invalid bytes at the end of {name}")
            case IndexStatus(path=path, status=status):
                line(f"{path} {'is empty.' if status == 'empty' else 'passed sanity check.'}")
            case IndexEntry(offset=offset, position=position):
                line(f"offset: {offset} position: {position}")
            case TimeIndexEntry(timestamp=timestamp, offset=offset):
                line(f"timestamp: {timestamp} offset: {offset}")
            case TxnEntry():
                line(txn_text(event))
                if event.repeat > 1:
                    line(f"... and {event.repeat - 1} more entries like it (all-zero slots: kseg summarises them)")
            case ProducerEntryEvent():
                line(producer_text(event, self.dialect))
            case _:
                self._other(event)

    def _other(self, event: Event) -> None:
        match event:
            case Ignored(path=path):
                self.sink.err_line(f"Ignoring unknown file {path}")
            case Problem():
                self.problems += 1
                self.sink.err_line(problem_line(event))
            case Summary():
                for text in summary_lines(event, self.dialect):
                    self.sink.err_line(text)
            case (
                CheckpointStart() | LeaderEpochEntry() | OffsetCheckpointEntry() | PartitionMetadataEvent()
                | MetaPropertiesEvent() | QuorumStateEvent() | CleanShutdownEvent()
            ):
                for text in side_file_lines(event):
                    self.sink.line(text)
            case _:
                raise TypeError(f"no text for {type(event).__name__}")

    def close(self) -> None:
        self.sink.flush()

    # -- .log ---------------------------------------------------------------------------
    def _batch(self, event: BatchEvent) -> None:
        batch = event.batch
        self._ts_label = batch.timestamp_type
        self._legacy = isinstance(batch, LegacyBatch)
        if isinstance(batch, LegacyBatch):
            head = f"offset: {batch.last_offset}"
        else:
            head = (
                f"baseOffset: {batch.base_offset} lastOffset: {batch.last_offset} count: {batch.count} "
                f"baseSequence: {batch.base_sequence} lastSequence: {batch.last_sequence} "
                f"producerId: {batch.producer_id} producerEpoch: {batch.producer_epoch} "
                f"partitionLeaderEpoch: {batch.partition_leader_epoch} isTransactional: {tf(batch.is_transactional)} "
                f"isControl: {tf(batch.is_control)}"
            )
            if self.dialect.delete_horizon:  # printBatchLevel from 3.2
                head = f"{head} deleteHorizonMs: {optional_long(batch.delete_horizon_ms)}"
        if event.codec_error:  # Kafka dies naming the codec, half-way through the line
            self.sink.line(head)
            return
        self.sink.line(
            f"{head} position: {batch.position} {batch.timestamp_type}: {batch.max_timestamp} size: {batch.size} "
            f"magic: {batch.magic} compresscodec: {batch.codec} crc: {batch.crc} isvalid: {tf(batch.is_valid())}"
        )

    def _metadata(self, record: Record) -> str:
        if self._legacy:  # LegacyRecord.keySize()/valueSize() read the stored ints: any negative one as it is
            text = f"| offset: {record[0]} {self._ts_label}: {record[1]} keySize: {record[7]} valueSize: {record[8]}"
        else:  # DefaultRecord.keySize(): key == null ? -1 : key.remaining(), whatever negative length was stored
            text = (f"| offset: {record[0]} {self._ts_label}: {record[1]} keySize: {max(record[7], -1)} "
                    f"valueSize: {max(record[8], -1)}")
        if self._legacy:  # 4.3 printRecordMetadata: no "}" after the crc (Scala's typo up to 4.2)
            brace = "}" if self.dialect.legacy_crc_brace else ""
            return f"{text} isValid: {tf(record[11])} crc: {record[10]}{brace}"
        headers = record[4]
        keys = ",".join(java_utf8(k) for k, _ in headers) if headers else ""
        return f"{text} sequence: {record[5]} headerKeys: [{keys}]"

    def _head(self, record: Record) -> tuple[str, str]:
        """The metadata part of a record line (none with --skip-record-metadata) and what follows it."""
        if self.skip_metadata:
            return "", "| "
        return self._metadata(record), " "

    def record_line(self, record: Record) -> str:
        """One data record: metadata (unless skipped), then key and payload with --print-data-log."""
        line, prefix = self._head(record)
        if not self.print_data:
            return line
        key, value = record[2], record[3]
        return self._contents(line, prefix, None if key is None else java_utf8(key),
                              None if value is None else java_utf8(value))

    def _contents(self, line: str, prefix: str, key: str | None, payload: str | None) -> str:
        """Key and payload after the metadata, as ``printRecordContents`` joins them."""
        if key is not None:
            line = f"{line}{prefix}key: {key}"
            if payload is not None:
                line = f"{line} payload: {payload}"
        elif payload is not None:
            line = f"{line}{self._keyless_payload}payload: {payload}"
        return line

    def _records(self, event: RecordsEvent) -> None:
        encoded = None if self.sink.escaping else event.encoded  # a terminal: record by record, each escaped
        if self.print_data and encoded is not None and large_parts(encoded) and any(
                _large_value(r) for r in encoded.decoded()[0]):  # its large values are written in pieces
            encoded = None
        if encoded is not None and encoded.parts is not None:  # a large batch the core has read: in parts
            for part in encoded.parts.render(self._core_style):
                self.sink.raw(part)
            return
        if encoded is not None:  # a data batch the compiled core may write whole
            rendered = render_records(encoded.batch, self._core_style, encoded.max_batch_bytes)
            if rendered is not None:
                self.sink.raw(rendered[0])
                encoded.written(rendered[1])
                return
        line = self.sink.line
        record_line = self.record_line
        for record in event.items():
            if type(record) is Record:
                if self.print_data and _large_value(record):
                    self._large_line(record)
                else:
                    line(record_line(record))
            elif isinstance(record, DecodedRecord):
                line(self.decoded_line(record))
            elif isinstance(record, ControlRecord):
                line(self.control_line(record))

    def _large_line(self, record: Record) -> None:
        """``record_line`` with its payload over LARGE_PAYLOAD bytes written a slice at a time."""
        line, prefix = self._head(record)
        key = record[2]
        self.sink.part(self._contents(line, prefix, None if key is None else java_utf8(key), ""))
        for piece in java_text_pieces(record[3]):
            self.sink.part(piece)
        self.sink.line("")

    def decoded_line(self, item: DecodedRecord) -> str:
        """A record through an internal-topic decoder: Kafka prints the decoder's key and payload texts.

        Where Kafka's decoder throws (``kafka_aborts``) its line stops after the metadata.
        """
        line, prefix = self._head(item.record)
        decoded = item.decoded
        if decoded.kafka_aborts:
            return line
        return self._contents(line, prefix, decoded.key_text, decoded.payload_text)

    def control_line(self, event: ControlRecord) -> str:
        """A control record: metadata and the decoded control part; never key or payload."""
        if self.skip_metadata:
            return ""  # Kafka prints neither metadata nor data for a control record
        line = self._metadata(event.record)
        return line if event.failed else line + control_text(event, self.dialect)


def _large_value(record: Record) -> bool:
    return record[3] is not None and len(record[3]) > LARGE_PAYLOAD


def control_text(event: ControlRecord, dialect: Dialect = DEFAULT_DIALECT) -> str:
    """The control-record part of a record line (`` endTxnMarker: COMMIT coordinatorEpoch: 5``...).

    From 4.1 ``printControlRecord`` reads a LEADER_CHANGE value and prints it with
    ``LeaderChangeMessageJsonConverter`` (`` LeaderChange: {...}``); before, it only named the type.
    """
    if event.key_unreadable:
        return ""
    control = event.control
    if control.type_id in KRAFT_CONTROL:
        label = dialect.control_label(control.type_id, control.name)
        if label is not None:  # a release whose tool names this type without reading its value
            return f" {label}"
    if control.type_id == LEADER_CHANGE and control.data is not None:
        return f" LeaderChange: {control_json_text(LEADER_CHANGE, control.data)}"
    return f" {control.text}"


def txn_text(event: TxnEntry) -> str:
    return (
        f"version: {event.version} producerId: {event.producer_id} firstOffset: {event.first_offset} "
        f"lastOffset: {event.last_offset} lastStableOffset: {event.last_stable_offset}"
    )


def producer_text(event: ProducerEntryEvent, dialect: Dialect = DEFAULT_DIALECT) -> str:
    """``dumpProducerIdSnapshot``: Scala (<= 4.2) ends ``lastTimestamp: <ms> `` with a space; 4.3 does not."""
    e = event.entry
    first = e.current_txn_first_offset if e.current_txn_first_offset >= 0 else None
    if dialect.producer_optional_long:
        txn = optional_long(first)
    else:  # Scala's Option[Long] before 3.5
        txn = "None" if first is None else f"Some({first})"
    line = (
        f"producerId: {e.producer_id} producerEpoch: {e.epoch} coordinatorEpoch: {e.coordinator_epoch} "
        f"currentTxnFirstOffset: {txn}"
    )
    if dialect.producer_last_timestamp:  # from 3.1
        line += f" lastTimestamp: {e.timestamp}"
    if not dialect.java_port:
        line += " "
    if e.last_offset >= 0:
        line += (
            f"{'' if not dialect.java_port else ' '}firstSequence: {e.first_sequence} lastSequence: {e.last_sequence} lastOffset: {e.last_offset} "
            f"offsetDelta: {e.offset_delta} timestamp: {e.timestamp}"
        )
    return line
