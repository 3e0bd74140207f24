"""Renderers for ``kseg dump`` events: Kafka's text, JSON lines, and a table for people.

* :class:`TextRenderer` prints what ``kafka-dump-log.sh`` prints, line for
  line: the batch and record templates of ``DumpLogSegments`` with their
  quirks (the stray ``}`` after a legacy record's crc, ``OptionalLong.empty``,
  ``Mismatches in :<path>``), keys and payloads decoded the way Java's
  ``StringDecoder`` decodes them (or an internal-topic decoder's texts), the
  summary sections on stderr; and, in the same style, kseg's own lines for
  the side files Kafka's tool does not dump (:data:`SIDE_FILE_TEXT`).
* :class:`JsonRenderer` writes one JSON object per line (schemas in docs/dump.md).
* :class:`TableRenderer` draws rich tables that stay readable in 80 columns.

Renderers never read files: everything comes from the events of
:mod:`kseg.ops.dump`.  Output is written as UTF-8 bytes in chunks; anything
for stderr first flushes stdout, so a terminal shows both in order.
"""

from __future__ import annotations

import base64
import json
import re
import sys
import time
from collections.abc import Callable, Iterable
from datetime import datetime, timezone
from typing import BinaryIO

from kseg.errors import KsegError
from kseg.format import LegacyBatch
from kseg.format.jvm_text import java_utf8
from kseg.format.model import Record
from kseg.format.v2_json import json_string as _json_str
from kseg.format.v2_json import utf8_json
from kseg.ops.dump import (
    BatchEvent,
    BootstrapStart,
    ControlRecord,
    DecodedRecord,
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
from kseg.ops.dump_sidefiles import (
    CheckpointStart,
    CleanShutdownEvent,
    LeaderEpochEntry,
    MetaPropertiesEvent,
    OffsetCheckpointEntry,
    PartitionMetadataEvent,
    QuorumStateEvent,
)

PAYLOAD_MODES = ("utf8", "hex", "base64")


# --------------------------------------------------------------------------- output


class Sink:
    """Buffered UTF-8 line output to stdout (flushed every ``chunk`` characters), lines to stderr."""

    def __init__(self, out: BinaryIO, err: BinaryIO, chunk: int = 1 << 16) -> None:
        self.out = out
        self.err = err
        self.chunk = chunk
        self._lines: list[str] = []
        self._size = 0

    def line(self, text: str) -> None:
        self._lines.append(text)
        self._size += len(text) + 1
        if self._size >= self.chunk:
            self.flush()

    def flush(self) -> None:
        if self._lines:
            data = "\n".join(self._lines) + "\n"
            self._lines.clear()
            self._size = 0
            self.out.write(data.encode("utf-8", "surrogateescape"))
        self.out.flush()

    def err_line(self, text: str) -> None:
        self.flush()
        self.err.write((text + "\n").encode("utf-8", "surrogateescape"))
        self.err.flush()


def _tf(value: bool) -> str:
    return "true" if value else "false"


def _optional_long(value: int | None) -> str:
    """Java's ``OptionalLong.toString()``."""
    return "OptionalLong.empty" if value is None else f"OptionalLong[{value}]"


_JACKSON_ESCAPES = re.compile(r'["\\\x00-\x1f]')
_SHORT_ESCAPES = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f", "\r": "\\r"}


def _jackson_string(text: str) -> str:
    return '"' + _JACKSON_ESCAPES.sub(lambda m: _SHORT_ESCAPES.get(m[0], f"\\u{ord(m[0]):04X}"), text) + '"'


def jackson_json(value: object) -> str:
    """Compact JSON the way Jackson writes Kafka's generated converters' trees."""
    if isinstance(value, dict):
        return "{" + ",".join(f"{_jackson_string(k)}:{jackson_json(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ",".join(jackson_json(v) for v in value) + "]"
    if isinstance(value, str):
        return _jackson_string(value)
    if isinstance(value, bool):
        return _tf(value)
    if value is None:
        return "null"
    return str(value)


def problem_line(event: Problem) -> str:
    """``kseg: <path>: byte N: message`` (or Kafka's own stderr text for what Kafka itself reports)."""
    if event.kafka_text:
        return event.message
    where = f"byte {event.position}: " if event.position is not None else ""
    return f"kseg: {event.path}: {where}{event.message}"


# --------------------------------------------------------------------------- text


SUMMARY_TEXT: dict[str, tuple[Callable[[str], str], str]] = {
    "index_mismatch": (lambda p: f"Mismatches in :{p}", "  Index offset: {}, log offset: {}"),
    "time_index_mismatch": (lambda p: f"Found timestamp mismatch in :{p}", "  Index timestamp: {}, log timestamp: {}"),
    "time_index_out_of_order": (
        lambda p: f"Found out of order timestamp in :{p}",
        "  Index timestamp: {}, Previously indexed timestamp: {}",
    ),
    "time_index_offset_not_found": (
        lambda p: "The following indexed offsets are not found in the log.",
        "Indexed offset: {}, found log offset: {}",
    ),
    "non_consecutive_offsets": (lambda p: f"Non-consecutive offsets in {p}", "  {} is followed by {}"),
}


class TextRenderer:
    """Kafka's ``DumpLogSegments`` output, exactly."""

    def __init__(self, sink: Sink, options: DumpOptions) -> None:
        self.sink = sink
        self.print_data = options.print_data_log
        self.skip_metadata = options.skip_record_metadata
        self.problems = 0
        self._ts_label = "CreateTime"
        self._legacy = False
        self._handlers: dict[type, Callable] = {
            FileStart: lambda e: sink.line(f"Dumping {e.path}"),
            LogStart: lambda e: sink.line(f"Log starting offset: {e.base_offset}"),
            SnapshotStart: lambda e: sink.line(f"Snapshot end offset: {e.end_offset}, epoch: {e.epoch}"),
            BootstrapStart: lambda e: sink.line("KRaft bootstrap snapshot"),
            Notice: lambda e: sink.line(e.text),
            BatchEvent: self._batch,
            RecordsEvent: self._records,
            TrailingBytes: lambda e: sink.line(f"Found {e.count} invalid bytes at the end of {e.name}"),
            IndexStatus: self._index_status,
            IndexEntry: lambda e: sink.line(f"offset: {e.offset} position: {e.position}"),
            TimeIndexEntry: lambda e: sink.line(f"timestamp: {e.timestamp} offset: {e.offset}"),
            TxnEntry: lambda e: sink.line(
                f"version: {e.version} producerId: {e.producer_id} firstOffset: {e.first_offset} "
                f"lastOffset: {e.last_offset} lastStableOffset: {e.last_stable_offset}"
            ),
            ProducerEntryEvent: self._producer,
            Ignored: lambda e: sink.err_line(f"Ignoring unknown file {e.path}"),
            Problem: self._problem,
            Summary: self._summary,
            **{kind: (lambda e: sink.line(side_file_text(e))) for kind in SIDE_FILE_TEXT},
            MetaPropertiesEvent: self._meta_properties,
        }

    def handle(self, event: Event) -> None:
        self._handlers[type(event)](event)

    def close(self) -> None:
        self.sink.flush()

    # -- .log ---------------------------------------------------------------------------
    def _batch(self, event: BatchEvent) -> None:
        batch = event.batch
        self._ts_label = batch.timestamp_type
        self._legacy = isinstance(batch, LegacyBatch)
        if self._legacy:
            head = f"offset: {batch.last_offset}"
        else:
            head = (
                f"baseOffset: {batch.base_offset} lastOffset: {batch.last_offset} count: {batch.count} "
                f"baseSequence: {batch.base_sequence} lastSequence: {batch.last_sequence} "
                f"producerId: {batch.producer_id} producerEpoch: {batch.producer_epoch} "
                f"partitionLeaderEpoch: {batch.partition_leader_epoch} isTransactional: {_tf(batch.is_transactional)} "
                f"isControl: {_tf(batch.is_control)} deleteHorizonMs: {_optional_long(batch.delete_horizon_ms)}"
            )
        if event.codec_error:  # Kafka dies naming the codec, half-way through the line
            self.sink.line(head)
            return
        self.sink.line(
            f"{head} position: {batch.position} {batch.timestamp_type}: {batch.max_timestamp} size: {batch.size} "
            f"magic: {batch.magic} compresscodec: {batch.codec} crc: {batch.crc} isvalid: {_tf(batch.is_valid())}"
        )

    def _metadata(self, record: Record) -> str:
        text = f"| offset: {record[0]} {self._ts_label}: {record[1]} keySize: {record[7]} valueSize: {record[8]}"
        if self._legacy:
            return f"{text} isValid: {_tf(record[11])} crc: {record[10]}}}"
        headers = record[4]
        keys = ",".join(java_utf8(k) for k, _ in headers) if headers else ""
        return f"{text} sequence: {record[5]} headerKeys: [{keys}]"

    def record_line(self, record: Record) -> str:
        """One data record: metadata (unless skipped), then key and payload with --print-data-log."""
        if self.skip_metadata:
            line, prefix = "", "| "
        else:
            line, prefix = self._metadata(record), " "
        if self.print_data:
            key, value = record[2], record[3]
            if key is not None:
                line = f"{line}{prefix}key: {java_utf8(key)}"
            if value is not None:
                line = f"{line} payload: {java_utf8(value)}"
        return line

    def _records(self, event: RecordsEvent) -> None:
        line = self.sink.line
        record_line = self.record_line
        for record in event.records:
            kind = type(record)
            if kind is Record:
                line(record_line(record))
            elif kind is DecodedRecord:
                line(self.decoded_line(record))
            else:
                line(self.control_line(record))

    def decoded_line(self, item: DecodedRecord) -> str:
        """A record through an internal-topic decoder: Kafka prints the decoder's key and payload texts.

        Where Kafka's decoder throws (``kafka_aborts``) its line stops after the metadata.
        """
        if self.skip_metadata:
            line, prefix = "", "| "
        else:
            line, prefix = self._metadata(item.record), " "
        decoded = item.decoded
        if decoded.kafka_aborts:
            return line
        if decoded.key_text is not None:
            line = f"{line}{prefix}key: {decoded.key_text}"
        if decoded.payload_text is not None:
            line = f"{line} payload: {decoded.payload_text}"
        return line

    def control_line(self, event: ControlRecord) -> str:
        """A control record: metadata and the decoded control part; never key or payload."""
        if self.skip_metadata:
            return ""  # Kafka prints neither metadata nor data for a control record
        line = self._metadata(event.record)
        return line if event.failed else line + control_text(event)

    def _meta_properties(self, event: MetaPropertiesEvent) -> None:
        for comment in event.comments:
            self.sink.line(comment)
        for key, value in event.properties:
            self.sink.line(f"{key}: {value}")

    # -- side files ---------------------------------------------------------------------
    def _index_status(self, event: IndexStatus) -> None:
        text = "is empty." if event.status == "empty" else "passed sanity check."
        self.sink.line(f"{event.path} {text}")

    def _producer(self, event: ProducerEntryEvent) -> None:
        e = event.entry
        txn = _optional_long(e.current_txn_first_offset if e.current_txn_first_offset >= 0 else None)
        line = (
            f"producerId: {e.producer_id} producerEpoch: {e.epoch} coordinatorEpoch: {e.coordinator_epoch} "
            f"currentTxnFirstOffset: {txn} lastTimestamp: {e.timestamp} "
        )
        if e.last_offset >= 0:
            line += (
                f"firstSequence: {e.first_sequence} lastSequence: {e.last_sequence} lastOffset: {e.last_offset} "
                f"offsetDelta: {e.offset_delta} timestamp: {e.timestamp}"
            )
        self.sink.line(line)

    # -- stderr ---------------------------------------------------------------------------
    def _problem(self, event: Problem) -> None:
        self.problems += 1
        self.sink.err_line(problem_line(event))

    def _summary(self, event: Summary) -> None:
        header, template = SUMMARY_TEXT[event.kind]
        self.sink.err_line(header(event.path))
        for first, second in event.pairs:
            self.sink.err_line(template.format(first, second))


def control_text(event: ControlRecord) -> str:
    """The control-record part of a record line (`` endTxnMarker: COMMIT coordinatorEpoch: 5``...)."""
    return "" if event.key_unreadable else f" {event.control.text}"


# --------------------------------------------------------------------------- side files as text
#
# Kafka's tool does not dump these; the lines follow its style ("name: value" pairs, a header line
# like "Log starting offset: 0"), with Kafka's field names.

CHECKPOINT_LABELS = {
    "leader-epoch-checkpoint": "Leader epoch checkpoint",
    "recovery-point-offset-checkpoint": "Recovery point checkpoint",
    "replication-offset-checkpoint": "High watermark checkpoint",
    "log-start-offset-checkpoint": "Log start offset checkpoint",
    "cleaner-offset-checkpoint": "Cleaner offset checkpoint",
}


def _checkpoint_start_text(e: CheckpointStart) -> str:
    label = CHECKPOINT_LABELS[e.kind]
    if e.empty:
        return f"{label} is empty."
    return f"{label} version: {e.version}, entries: {'none' if e.declared is None else e.declared}"


def _json_value_text(value: object) -> str:
    """A quorum-state value: numbers as they are, anything else as compact JSON (strings quoted)."""
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _clean_shutdown_text(e: CleanShutdownEvent) -> str:
    if e.empty:
        return "Clean shutdown marker (empty)"
    epoch = "none" if e.broker_epoch is None else e.broker_epoch
    return f"Clean shutdown marker version: {e.version}, brokerEpoch: {epoch}"


SIDE_FILE_TEXT: dict[type, Callable] = {
    CheckpointStart: _checkpoint_start_text,
    LeaderEpochEntry: lambda e: f"epoch: {e.epoch} startOffset: {e.start_offset}",
    OffsetCheckpointEntry: lambda e: f"topic: {e.topic} partition: {e.partition} offset: {e.offset}",
    PartitionMetadataEvent: lambda e: f"Partition metadata version: {e.version}, topicId: {e.topic_id}",
    QuorumStateEvent: lambda e: " ".join(f"{k}: {_json_value_text(v)}" for k, v in e.data.items()),
    CleanShutdownEvent: _clean_shutdown_text,
}


def side_file_text(event: object) -> str:
    """One line of kseg's text for a side-file event (meta.properties has several: see TextRenderer)."""
    return SIDE_FILE_TEXT[type(event)](event)


# --------------------------------------------------------------------------- JSON


_utf8_payload = utf8_json  # valid UTF-8 as a JSON string, anything else as {"base64": ...}: reversible


def _hex_payload(data: bytes | None) -> str:
    return "null" if data is None else '"' + data.hex() + '"'


def _base64_payload(data: bytes | None) -> str:
    return "null" if data is None else '"' + base64.b64encode(data).decode("ascii") + '"'


PAYLOAD_ENCODERS: dict[str, Callable[[bytes | None], str]] = {
    "utf8": _utf8_payload,
    "hex": _hex_payload,
    "base64": _base64_payload,
}


def decode_payload(value: object, mode: str) -> bytes | None:
    """Inverse of the payload encoders (for consumers of kseg's JSON, and its tests)."""
    if value is None:
        return None
    if mode == "hex":
        return bytes.fromhex(value)  # type: ignore[arg-type]
    if mode == "base64":
        return base64.b64decode(value)  # type: ignore[arg-type]
    if isinstance(value, dict):
        return base64.b64decode(value["base64"])
    return value.encode("utf-8")  # type: ignore[union-attr]


def _legacy_base_offset(batch: LegacyBatch) -> int | None:
    try:
        return batch.base_offset
    except KsegError:
        return None


def batch_json_head(path_json: str, batch) -> str:
    """The batch object up to (not including) its closing brace."""
    legacy = isinstance(batch, LegacyBatch)
    base = _legacy_base_offset(batch) if legacy else batch.base_offset
    return (
        f'{{"type":"batch","path":{path_json},"position":{batch.position},"size":{batch.size},'
        f'"magic":{batch.magic},"base_offset":{"null" if base is None else base},'
        f'"last_offset":{batch.last_offset},"count":{"null" if legacy else batch.count},'
        f'"codec":"{batch.codec}","timestamp_type":"{batch.timestamp_type}",'
        f'"max_timestamp":{batch.max_timestamp},"crc":{batch.crc},"valid":{_tf(batch.is_valid())},'
        f'"producer_id":{batch.producer_id},"producer_epoch":{batch.producer_epoch},'
        f'"base_sequence":{batch.base_sequence},"last_sequence":{batch.last_sequence},'
        f'"partition_leader_epoch":{batch.partition_leader_epoch},'
        f'"is_transactional":{_tf(batch.is_transactional)},"is_control":{_tf(batch.is_control)}'
    )


class JsonRenderer:
    """One JSON object per line on stdout; problems also go to stderr as text."""

    def __init__(self, sink: Sink, options: DumpOptions, payload: str = "utf8") -> None:
        self.sink = sink
        self.payload = PAYLOAD_ENCODERS[payload]
        self.problems = 0
        self._head: str | None = None
        self._path = ""
        self._path_json = '""'

    def handle(self, event: Event) -> None:
        kind = type(event)
        if kind is RecordsEvent:
            self._write_records(event)
        elif kind is BatchEvent:
            self._batch(event)
        else:
            self._flush_head()
            if kind is Problem:
                self.problems += 1
                self.sink.err_line(problem_line(event))
            for obj in event_objects(event):
                self.sink.line(json.dumps(obj, ensure_ascii=False, separators=(",", ":")))

    def close(self) -> None:
        self._flush_head()
        self.sink.flush()

    def _batch(self, event: BatchEvent) -> None:
        self._flush_head()
        if event.path != self._path:
            self._path, self._path_json = event.path, _json_str(event.path)
        head = batch_json_head(self._path_json, event.batch)
        if event.deep and not event.codec_error:
            self._head = head  # the records follow
        else:
            self.sink.line(head + "}")

    def _flush_head(self) -> None:
        if self._head is not None:
            self.sink.line(self._head + "}")
            self._head = None

    def _write_records(self, event: RecordsEvent) -> None:
        records = event.records
        if event.json is not None:
            parts = event.json
        elif self.payload is _utf8_payload and all(type(r) is Record for r in records):
            parts = self._utf8_records(records)
        else:
            parts = [self._any_record_json(r) for r in records]
        self.sink.line(f'{self._head},"records":[{",".join(parts)}]}}')
        self._head = None

    def _utf8_records(self, records: list[Record]) -> list[str]:
        """``record_json`` for --payload utf8 with the common case inlined (this is a deep dump's cost)."""
        out: list[str] = []
        append = out.append
        for r in records:
            key, value = r[2], r[3]
            try:
                key_json = "null" if key is None else _json_str(key.decode("utf-8"))
                value_json = "null" if value is None else _json_str(value.decode("utf-8"))
            except UnicodeDecodeError:
                key_json, value_json = _utf8_payload(key), _utf8_payload(value)
            headers = r[4]
            header_json = self._headers_json(headers) if headers else "[]"
            append(
                f'{{"offset":{r[0]},"timestamp":{r[1]},"key":{key_json},"value":{value_json},"headers":{header_json}}}'
            )
        return out

    def _headers_json(self, headers: tuple) -> str:
        payload = self.payload
        return "[" + ",".join(f"[{_json_str(java_utf8(k))},{payload(v)}]" for k, v in headers) + "]"

    def _any_record_json(self, record: Record | DecodedRecord | ControlRecord) -> str:
        kind = type(record)
        if kind is Record:
            return self.record_json(record)
        if kind is DecodedRecord:
            return self.decoded_json(record)
        return self.control_json(record)

    def control_json(self, event: ControlRecord) -> str:
        name = event.type_name
        control = _compact_json({"type_id": event.type_id, "data": event.control.data,
                                 "problem": event.control.problem})
        return self.record_json(
            event.record, ',"control_type":' + ("null" if name is None else f'"{name}"') + f',"control":{control}'
        )

    def decoded_json(self, item: DecodedRecord) -> str:
        """The record with its raw key and value (per --payload) and ``decoded``: key, value[, problem]."""
        return self.record_json(item.record, f',"decoded":{_compact_json(item.decoded.as_json())}')

    def record_json(self, record: Record, extra: str = "") -> str:
        payload = self.payload
        headers = record[4]
        header_json = self._headers_json(headers) if headers else "[]"
        return (
            f'{{"offset":{record[0]},"timestamp":{record[1]},"key":{payload(record[2])},'
            f'"value":{payload(record[3])},"headers":{header_json}{extra}}}'
        )


def _compact_json(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def event_objects(event: Event) -> list[dict]:
    """The JSON objects (one per output line) of every event but batches and records."""
    t = type(event)
    if t in SIDE_FILE_JSON:
        return [SIDE_FILE_JSON[t](event)]
    if t is FileStart:
        return [{"type": "file", "path": event.path, "kind": event.kind}]
    if t is LogStart:
        return [{"type": "log_start", "path": event.path, "base_offset": event.base_offset}]
    if t is SnapshotStart:
        return [{"type": "snapshot_start", "path": event.path, "end_offset": event.end_offset, "epoch": event.epoch}]
    if t is BootstrapStart:
        return [{"type": "bootstrap_snapshot", "path": event.path}]
    if t is Notice:
        return [{"type": "notice", "text": event.text}]
    if t is TrailingBytes:
        return [{"type": "trailing_bytes", "path": event.path, "name": event.name, "position": event.position,
                 "count": event.count}]
    if t is IndexStatus:
        return [{"type": "index_status", "path": event.path, "status": event.status}]
    if t is IndexEntry:
        return [{"type": "index_entry", "path": event.path, "offset": event.offset, "position": event.position}]
    if t is TimeIndexEntry:
        return [{"type": "time_index_entry", "path": event.path, "timestamp": event.timestamp, "offset": event.offset}]
    if t is TxnEntry:
        return [{"type": "txn_entry", "path": event.path, "version": event.version, "producer_id": event.producer_id,
                 "first_offset": event.first_offset, "last_offset": event.last_offset,
                 "last_stable_offset": event.last_stable_offset}]
    if t is ProducerEntryEvent:
        return [_producer_object(event)]
    if t is Ignored:
        return [{"type": "ignored", "path": event.path}]
    if t is Problem:
        return [{"type": "problem", "path": event.path, "position": event.position, "message": event.message}]
    if t is Summary:
        first, second = SUMMARY_JSON_KEYS[event.kind]
        return [{"type": event.kind, "path": event.path, first: a, second: b} for a, b in event.pairs]
    raise TypeError(f"no JSON form for {t.__name__}")


SIDE_FILE_JSON: dict[type, Callable[..., dict]] = {
    CheckpointStart: lambda e: {"type": "checkpoint", "path": e.path, "kind": e.kind, "version": e.version,
                                "count": e.declared},
    LeaderEpochEntry: lambda e: {"type": "leader_epoch_entry", "path": e.path, "epoch": e.epoch,
                                 "start_offset": e.start_offset},
    OffsetCheckpointEntry: lambda e: {"type": "offset_checkpoint_entry", "path": e.path, "topic": e.topic,
                                      "partition": e.partition, "offset": e.offset},
    PartitionMetadataEvent: lambda e: {"type": "partition_metadata", "path": e.path, "version": e.version,
                                       "topic_id": e.topic_id},
    MetaPropertiesEvent: lambda e: {"type": "meta_properties", "path": e.path, "comments": list(e.comments),
                                    "properties": dict(e.properties)},
    QuorumStateEvent: lambda e: {"type": "quorum_state", "path": e.path, "data": e.data},
    CleanShutdownEvent: lambda e: {"type": "clean_shutdown", "path": e.path, "empty": e.empty,
                                   "version": e.version, "broker_epoch": e.broker_epoch},
}

SUMMARY_JSON_KEYS = {
    "index_mismatch": ("index_offset", "log_offset"),
    "time_index_mismatch": ("index_timestamp", "log_timestamp"),
    "time_index_out_of_order": ("index_timestamp", "previous_timestamp"),
    "time_index_offset_not_found": ("indexed_offset", "log_offset"),
    "non_consecutive_offsets": ("offset", "next_offset"),
}


def _producer_object(event: ProducerEntryEvent) -> dict:
    e = event.entry
    batch = None
    if e.last_offset >= 0:
        batch = {"first_sequence": e.first_sequence, "last_sequence": e.last_sequence, "last_offset": e.last_offset,
                 "offset_delta": e.offset_delta, "timestamp": e.timestamp}
    return {
        "type": "producer_entry",
        "path": event.path,
        "producer_id": e.producer_id,
        "producer_epoch": e.epoch,
        "coordinator_epoch": e.coordinator_epoch,
        "current_txn_first_offset": e.current_txn_first_offset if e.current_txn_first_offset >= 0 else None,
        "last_timestamp": e.timestamp,
        "batch": batch,
    }


# --------------------------------------------------------------------------- table


def _utc(ms: int) -> str:
    if ms < 0:
        return str(ms)
    try:
        return datetime.fromtimestamp(ms / 1000, tz=timezone.utc).strftime("%Y-%m-%d %H:%M:%S.%f")[:-3]
    except (OverflowError, ValueError, OSError):
        return str(ms)


def _short(data: bytes | None, width: int = 24) -> str:
    if data is None:
        return "∅"
    text = java_utf8(data)
    text = "".join(c if c.isprintable() else "·" for c in text)
    return text if len(text) <= width else text[: width - 1] + "…"


LEFT_COLUMNS = ("key", "value", "max timestamp (UTC)", "timestamp (UTC)", "codec", "topic", "property")
SHRINKING_COLUMNS = {"key": 2, "value": 3, "topic": 1, "property": 1}  # column -> its share of the free width


class TableRenderer:
    """Rich tables, flushed every ``chunk`` rows so memory stays flat."""

    BATCH_COLUMNS = ("position", "offsets", "count", "codec", "max timestamp (UTC)", "size", "crc")
    RECORD_COLUMNS = ("offset", "timestamp (UTC)", "key", "value", "hdrs")

    def __init__(self, console, options: DumpOptions, sink: Sink, chunk: int = 200) -> None:
        self.console = console
        self.sink = sink  # for stderr lines
        self.options = options
        self.chunk = chunk
        self.problems = 0
        self._kind: str | None = None
        self._columns: tuple[str, ...] = ()
        self._rows: list[tuple[str, ...]] = []

    def handle(self, event: Event) -> None:
        t = type(event)
        if t is RecordsEvent:
            for record in event.records:
                self._row("records", self.RECORD_COLUMNS, _record_row(record))
        elif t is BatchEvent:
            self._batch_row(event)
        elif t is IndexEntry:
            self._row("index", ("offset", "position"), (str(event.offset), str(event.position)))
        elif t is TimeIndexEntry:
            self._row("timeindex", ("timestamp (UTC)", "ms", "offset"),
                      (_utc(event.timestamp), str(event.timestamp), str(event.offset)))
        elif t is TxnEntry:
            self._row("txn", ("producer", "first", "last", "LSO", "v"),
                      (str(event.producer_id), str(event.first_offset), str(event.last_offset),
                       str(event.last_stable_offset), str(event.version)))
        elif t is ProducerEntryEvent:
            e = event.entry
            self._row("producers", ("producer", "epoch", "last seq", "last offset", "txn first", "time (UTC)"),
                      (str(e.producer_id), str(e.epoch), str(e.last_sequence), str(e.last_offset),
                       str(e.current_txn_first_offset), _utc(e.timestamp)))
        elif t is LeaderEpochEntry:
            self._row("epochs", ("epoch", "start offset"), (str(event.epoch), str(event.start_offset)))
        elif t is OffsetCheckpointEntry:
            self._row("offsets", ("topic", "partition", "offset"), (event.topic, str(event.partition), str(event.offset)))
        elif t is MetaPropertiesEvent:
            for key, value in event.properties:
                self._row("properties", ("property", "value"), (key, value))
        else:
            self._other(event)

    def _batch_row(self, event: BatchEvent) -> None:
        b = event.batch
        offsets = f"{b.last_offset}" if isinstance(b, LegacyBatch) else f"{b.base_offset}..{b.last_offset}"
        flags = ("T" if b.is_transactional else "") + ("C" if b.is_control else "")
        count = "-" if b.count is None else str(b.count)
        codec = f"v{b.magic} {b.codec}" + (f" {flags}" if flags else "")
        stamp = _utc(b.max_timestamp) + ("*" if b.timestamp_type == "LogAppendTime" else "")
        valid = "ok" if b.is_valid() else "BAD"
        if event.deep:
            self._flush()
        self._row("batches", self.BATCH_COLUMNS, (str(b.position), offsets, count, codec, stamp, str(b.size), valid))
        if event.deep:
            self._flush()

    def _row(self, kind: str, columns: tuple[str, ...], row: tuple[str, ...]) -> None:
        if kind != self._kind:
            self._flush()
            self._kind, self._columns = kind, columns
        self._rows.append(row)
        if len(self._rows) >= self.chunk:
            self._flush()

    def _flush(self) -> None:
        if not self._rows:
            return
        from rich import box
        from rich.cells import cell_len
        from rich.table import Table
        from rich.text import Text

        table = Table(box=box.SIMPLE_HEAD, pad_edge=False, show_edge=False, padding=(0, 1))
        # numbers and times keep their width; only the free-text columns give way to a narrow terminal
        # (rich would shrink every no-wrap column alike), sharing what is left of the width between them
        widths = [max(cell_len(name), *(cell_len(r[i]) for r in self._rows)) for i, name in enumerate(self._columns)]
        fixed = sum(w for w, name in zip(widths, self._columns) if name not in SHRINKING_COLUMNS)
        shares = _free_width_shares(self._columns, widths, self.console.width - fixed - 3 * (len(widths) - 1))
        for name, width in zip(self._columns, widths):
            justify = "left" if name in LEFT_COLUMNS else "right"
            shrinks = name in SHRINKING_COLUMNS
            table.add_column(name, justify=justify, no_wrap=True, overflow="ellipsis",
                             max_width=shares.get(name), min_width=None if shrinks else width)
        for row in self._rows:
            table.add_row(*(Text(cell) for cell in row))  # cells are data, never rich markup
        self._rows = []
        self.sink.flush()
        self.console.print(table)

    def _other(self, event: Event) -> None:
        self._flush()
        self._kind = None
        t = type(event)
        if t is FileStart:
            self.console.rule(f"[bold]{_escape(event.path)}[/]", align="left")
        elif t is Problem:
            self.problems += 1
            self.sink.err_line(problem_line(event))
        elif t is Ignored:
            self.sink.err_line(f"Ignoring unknown file {event.path}")
        elif t is Summary:
            header, template = SUMMARY_TEXT[event.kind]
            self.sink.err_line(header(event.path))
            for a, b in event.pairs:
                self.sink.err_line(template.format(a, b))
        elif t in SIDE_FILE_TEXT:
            self.console.print(_escape(side_file_text(event)), highlight=False)
        else:
            for obj in event_objects(event):
                text = ", ".join(f"{k}: {v}" for k, v in obj.items() if k not in ("type", "path"))
                self.console.print(f"{obj['type'].replace('_', ' ')}: {_escape(text)}", highlight=False)

    def close(self) -> None:
        self._flush()
        self.sink.flush()


def _free_width_shares(columns: tuple[str, ...], widths: list[int], free: int) -> dict[str, int]:
    """Split ``free`` cells between the shrinking columns by weight; one needing less than its share
    gives the rest to the others."""
    wanted = {name: width for name, width in zip(columns, widths) if name in SHRINKING_COLUMNS}
    shares: dict[str, int] = {}
    for name in sorted(wanted, key=lambda n: wanted[n] / SHRINKING_COLUMNS[n]):
        weight_left = sum(SHRINKING_COLUMNS[n] for n in wanted if n not in shares)
        shares[name] = max(8, min(wanted[name], free * SHRINKING_COLUMNS[name] // weight_left))
        free -= shares[name]
    return shares


def _record_row(record: Record | DecodedRecord | ControlRecord) -> tuple[str, ...]:
    kind = type(record)
    if kind is Record:
        return (str(record[0]), _utc(record[1]), _short(record[2]), _short(record[3]), str(len(record[4])))
    r = record.record
    if kind is DecodedRecord:
        key, value = decoded_summaries(record.decoded, r[2] is not None)
        return (str(r[0]), _utc(r[1]), key, value, str(len(r[4])))
    data = record.control.data
    if record.control.problem is not None:
        detail = f"! {record.control.problem}"
    elif data is not None and record.control.type_id in (0, 1):  # ABORT, COMMIT
        detail = f"coordinatorEpoch {data['coordinatorEpoch']}"
    else:
        detail = "" if data is None else jackson_json(data)
    return (str(r[0]), _utc(r[1]), f"[{record.type_name or '?'}]", detail, str(len(r[4])))


def _scalar_text(value: object) -> str:
    if isinstance(value, bool):
        return _tf(value)
    if isinstance(value, list):
        return f"[{len(value)}]"
    if isinstance(value, dict):
        return "{…}"
    return "null" if value is None else str(value)


def _fields_summary(data: dict | None) -> str:
    """``name=value`` for each field (lists as their length), for a table cell rich will shorten."""
    if not data:
        return ""
    return " ".join(f"{k}={_scalar_text(v)}" for k, v in data.items() if not k.startswith("_"))


def decoded_summaries(decoded, has_key: bool) -> tuple[str, str]:
    """(key, value) cells of a decoded record.

    Key: the message name and its field values (``OffsetCommit g/orders/0``), ``∅`` for a null key, ``?``
    for one that did not decode.  Value: the version (or metadata record type) and ``name=value`` fields,
    ``<DELETE>`` for a tombstone, ``! <kind>: <why>`` for what did not decode.
    """
    key, value = decoded.key, decoded.value
    if key is None:
        key_text = "?" if has_key else "∅"
    else:
        fields = "/".join(_scalar_text(v) for k, v in key["data"].items() if not k.startswith("_"))
        key_text = f"{key.get('name', '').removesuffix('Key')} {fields}"
    if decoded.problem is not None:
        value_text = f"! {decoded.problem.kind}: {decoded.problem.message}"
    elif value is None:
        value_text = "<DELETE>" if decoded.payload_text == "<DELETE>" else "∅"
    elif "type" in value:  # a KRaft or remote-log metadata record: its type, then its version
        value_text = f"{value['type']} v{value['version']} {_fields_summary(value['data'])}"
    else:  # a coordinator value; __transaction_state's also has the state name Kafka prints
        state = f" {value['state']}" if "state" in value else ""
        value_text = f"v{value['version']}{state} {_fields_summary(value['data'])}"
    return key_text.strip(), value_text.strip()


def _escape(text: str) -> str:
    from rich.markup import escape

    return escape(text)


# --------------------------------------------------------------------------- progress


class Progress:
    """A one-line progress note on stderr for long dumps, only when stderr is a terminal."""

    def __init__(self, err: BinaryIO, sizes: dict[str, int], *, min_size: int = 64 << 20, every: float = 0.5) -> None:
        self.err = err
        self.sizes = sizes
        self.min_size = min_size
        self.every = every
        self._next = 0.0
        self._shown = False

    def update(self, event: Event) -> None:
        if type(event) is not BatchEvent:
            if type(event) is FileStart:
                self.clear()
            return
        size = self.sizes.get(event.path, 0)
        if size < self.min_size:
            return
        now = time.monotonic()
        if now < self._next:
            return
        self._next = now + self.every
        percent = 100 * event.batch.position // size
        self.err.write(f"\rkseg: {event.path}: {percent}%\x1b[K".encode("utf-8", "surrogateescape"))
        self.err.flush()
        self._shown = True

    def clear(self) -> None:
        if self._shown:
            self.err.write(b"\r\x1b[K")
            self.err.flush()
            self._shown = False


def render(events: Iterable[Event], renderer, progress: Progress | None = None) -> int:
    """Feed every event to ``renderer``; returns the number of problems reported."""
    handle = renderer.handle
    try:
        if progress is None:
            for event in events:
                handle(event)
        else:
            for event in events:
                progress.update(event)
                handle(event)
            progress.clear()
    finally:
        renderer.close()
    return renderer.problems


def binary_streams() -> tuple[BinaryIO, BinaryIO]:
    """stdout and stderr as byte streams (also under click's test runner)."""
    return sys.stdout.buffer, sys.stderr.buffer
