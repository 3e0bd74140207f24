"""``kseg dump --format json``: one JSON object per line on stdout (schemas in docs/dump.md).

A deep dump's cost is its records, so batch and record lines are written here
as text directly.  Records handed over still encoded (``DumpOptions.json_records``)
go through the one-pass JSON record writer (:func:`records_json_utf8`), which
tells the walk their offsets; where it declines, they are decoded and written
as any others.  Problems also go to stderr as text.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable, Sequence
from typing import cast

from kseg.errors import KsegError
from kseg.format import Batch, LegacyBatch
from kseg.format.jvm_text import java_utf8
from kseg.format.model import Header, Record
from kseg.format.records_render import json_style, render_records
from kseg.ops.dump import (
    AnyRecord,
    BatchEvent,
    ControlRecord,
    DecodedRecord,
    DumpOptions,
    Event,
    Problem,
    RecordsEvent,
)
from kseg.render.dump.common import Sink, problem_line, tf
from kseg.render.dump.json_objects import event_objects
from kseg.render.dump.large_records import is_large, large_parts, write_record
from kseg.render.records_json import json_string, records_json_utf8, utf8_json

PAYLOAD_MODES = ("utf8", "hex", "base64")

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
        return bytes.fromhex(_text(value))
    if mode == "base64":
        return base64.b64decode(_text(value))
    if isinstance(value, dict):
        return base64.b64decode(value["base64"])
    return _text(value).encode("utf-8")


def _text(value: object) -> str:
    if not isinstance(value, str):
        raise TypeError(f"a payload is a string here, not {type(value).__name__}")
    return value


def _legacy_base_offset(batch: LegacyBatch) -> int | None:
    try:
        return batch.base_offset
    except KsegError:
        return None


def batch_json_head(path_json: str, batch: Batch) -> str:
    """The batch object up to (not including) its closing brace."""
    legacy = isinstance(batch, LegacyBatch)
    base = _legacy_base_offset(batch) if isinstance(batch, LegacyBatch) else batch.base_offset
    return (
        f'{{"type":"batch","path":{path_json},"position":{batch.position},"size":{batch.size},'
        f'"magic":{batch.magic},"base_offset":{"null" if base is None else base},'
        f'"last_offset":{batch.last_offset},"count":{"null" if legacy else batch.count},'
        f'"codec":"{batch.codec}","timestamp_type":"{batch.timestamp_type}",'
        f'"max_timestamp":{batch.max_timestamp},"crc":{batch.crc},"valid":{tf(batch.is_valid())},'
        f'"producer_id":{batch.producer_id},"producer_epoch":{batch.producer_epoch},'
        f'"base_sequence":{batch.base_sequence},"last_sequence":{batch.last_sequence},'
        f'"partition_leader_epoch":{batch.partition_leader_epoch},'
        f'"is_transactional":{tf(batch.is_transactional)},"is_control":{tf(batch.is_control)}'
    )


def _compact_json(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


class JsonRenderer:
    """One JSON object per line on stdout; problems also go to stderr as text."""

    def __init__(self, sink: Sink, options: DumpOptions, payload: str = "utf8") -> None:
        self.sink = sink
        self.payload = PAYLOAD_ENCODERS[payload]
        self._mode = payload
        self._core_style = json_style(payload)
        self.problems = 0
        self._head: str | None = None
        self._chunked = False  # records of the open batch line written already
        self._path = ""
        self._path_json = '""'

    def handle(self, event: Event) -> None:
        match event:
            case RecordsEvent():
                self._write_records(event)
            case BatchEvent():
                self._batch(event)
            case _:
                self._flush_head()
                if isinstance(event, Problem):
                    self.problems += 1
                    self.sink.err_line(problem_line(event))
                for obj in event_objects(event):
                    self.sink.line(_compact_json(obj))

    def close(self) -> None:
        self._flush_head()
        self.sink.flush()

    def _batch(self, event: BatchEvent) -> None:
        self._flush_head()
        if event.path != self._path:
            self._path, self._path_json = event.path, json_string(event.path)
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
        """The batch line's records; a batch in several chunks is written chunk by chunk, never whole."""
        encoded = event.encoded
        if encoded is not None and large_parts(encoded) and any(map(is_large, encoded.decoded()[0])):
            event = RecordsEvent(event.path, encoded.decoded()[0], last=event.last)  # its large records streamed
            encoded = None
        if encoded is None and any(is_large(r) for r in event.records):
            self._write_large(event)
            return
        if encoded is not None and encoded.parts is not None and self._head is not None:  # the core, in parts
            self.sink.raw(f'{self._head},"records":['.encode("utf-8", "surrogateescape"))
            self._head = None
            for index, part in enumerate(encoded.parts.render(self._core_style)):
                self.sink.raw(b"," + part if index else part)
            self.sink.raw(b"]}\n")
            return
        if encoded is not None and self._head is not None and event.last:  # the compiled core may write them
            rendered = render_records(encoded.batch, self._core_style, encoded.max_batch_bytes)
            if rendered is not None:
                self.sink.raw(f'{self._head},"records":['.encode("utf-8", "surrogateescape") + rendered[0] + b"]}\n")
                self._head = None
                encoded.written(rendered[1])
                return
        body = ",".join(self._record_parts(event))
        if self._head is not None:
            text = f'{self._head},"records":[{body}'
            self._head = None
        else:  # a further chunk of the batch whose line is open
            text = f",{body}" if body and self._chunked else body
        self._chunked = bool(body) or self._chunked
        if event.last:
            self.sink.line(text + "]}")
            self._chunked = False
        else:
            self.sink.part(text)

    def _write_large(self, event: RecordsEvent) -> None:
        """Records some of which hold a payload over LARGE_PAYLOAD: those are written a piece at a time."""
        part = self.sink.part
        if self._head is not None:
            part(f'{self._head},"records":[')
            self._head, first = None, True
        else:
            first = not self._chunked
        for record in event.records:
            if not first:
                part(",")
            first = False
            if is_large(record):
                write_record(cast("Record", record), self._mode, part)  # is_large: a plain Record
            else:
                part(self._any_record_json(record))
        self._chunked = not first
        if event.last:
            self.sink.line("]}")
            self._chunked = False

    def _record_parts(self, event: RecordsEvent) -> list[str]:
        encoded = event.encoded
        if encoded is not None and self.payload is _utf8_payload:
            fast = records_json_utf8(encoded.batch, encoded.max_batch_bytes)
            if fast is not None:
                encoded.written(fast[0])
                return fast[1]
        records = event.items()
        if self.payload is _utf8_payload and all(type(r) is Record for r in records):
            return self._utf8_records(cast("Sequence[Record]", records))  # checked just above
        return [self._any_record_json(r) for r in records]

    def _utf8_records(self, records: Sequence[Record]) -> list[str]:
        """``record_json`` for --payload utf8 with the common case inlined (this is a deep dump's cost)."""
        out: list[str] = []
        append = out.append
        for r in records:
            key, value = r[2], r[3]
            try:
                key_json = "null" if key is None else json_string(key.decode("utf-8"))
                value_json = "null" if value is None else json_string(value.decode("utf-8"))
            except UnicodeDecodeError:
                key_json, value_json = _utf8_payload(key), _utf8_payload(value)
            headers = r[4]
            header_json = self._headers_json(headers) if headers else "[]"
            append(
                f'{{"offset":{r[0]},"timestamp":{r[1]},"key":{key_json},"value":{value_json},"headers":{header_json}}}'
            )
        return out

    def _headers_json(self, headers: Sequence[Header]) -> str:
        payload = self.payload
        return "[" + ",".join(f"[{json_string(java_utf8(k))},{payload(v)}]" for k, v in headers) + "]"

    def _any_record_json(self, record: AnyRecord) -> str:
        if isinstance(record, DecodedRecord):
            return self.decoded_json(record)
        if isinstance(record, ControlRecord):
            return self.control_json(record)
        return self.record_json(record)

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

