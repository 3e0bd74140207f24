"""``kseg dump --format table``: rich tables for people, readable in 80 columns.

Rows are flushed every ``chunk`` rows so memory stays flat; only the free-text
columns (keys, values, topics) give way to a narrow terminal.
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any, Literal

from kseg.format import LegacyBatch
from kseg.format.jvm_text import java_utf8
from kseg.ops.dump import (
    AnyRecord,
    BatchEvent,
    ControlRecord,
    DecodedRecord,
    DumpOptions,
    Event,
    FileStart,
    Ignored,
    IndexEntry,
    Problem,
    ProducerEntryEvent,
    RecordsEvent,
    Summary,
    TimeIndexEntry,
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
from kseg.render.dump.common import Sink, jackson_json, problem_line, summary_lines, tf
from kseg.render.dump.json_objects import event_objects
from kseg.render.dump.side_text import side_file_text
from kseg.render.terminal import shown

if TYPE_CHECKING:
    from rich.console import Console
    from rich.table import Table

    from kseg.format.internal import Decoded


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

    def __init__(self, console: Console, options: DumpOptions, sink: Sink, chunk: int = 200) -> None:
        self.console = console
        self.sink = sink  # for stderr lines
        self.options = options
        self.chunk = chunk
        self.problems = 0
        self._kind: str | None = None
        self._columns: tuple[str, ...] = ()
        self._rows: list[tuple[str, ...]] = []

    def handle(self, event: Event) -> None:
        match event:
            case RecordsEvent():
                for record in event.items():
                    self._row("records", self.RECORD_COLUMNS, _record_row(record))
            case BatchEvent():
                self._batch_row(event)
            case IndexEntry(offset=offset, position=position):
                self._row("index", ("offset", "position"), (str(offset), str(position)))
            case TimeIndexEntry(timestamp=timestamp, offset=offset):
                self._row("timeindex", ("timestamp (UTC)", "ms", "offset"), (_utc(timestamp), str(timestamp), str(offset)))
            case TxnEntry():
                self._row("txn", ("producer", "first", "last", "LSO", "v"),
                          (str(event.producer_id), str(event.first_offset), str(event.last_offset),
                           str(event.last_stable_offset), str(event.version)))
                if event.repeat > 1:
                    self._row("txn", ("producer", "first", "last", "LSO", "v"),
                              (f"x{event.repeat - 1} more all-zero", "", "", "", ""))
            case ProducerEntryEvent(entry=e):
                self._row("producers", ("producer", "epoch", "last seq", "last offset", "txn first", "time (UTC)"),
                          (str(e.producer_id), str(e.epoch), str(e.last_sequence), str(e.last_offset),
                           str(e.current_txn_first_offset), _utc(e.timestamp)))
            case LeaderEpochEntry(epoch=epoch, start_offset=start_offset):
                self._row("epochs", ("epoch", "start offset"), (str(epoch), str(start_offset)))
            case OffsetCheckpointEntry(topic=topic, partition=partition, offset=offset):
                self._row("offsets", ("topic", "partition", "offset"), (topic, str(partition), str(offset)))
            case MetaPropertiesEvent(properties=properties):
                for key, value in properties:
                    self._row("properties", ("property", "value"), (key, value))
            case _:
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
        from rich.cells import cell_len

        from kseg.render.dump.plain_table import plain_table  # rich is imported only for a table

        rows = [tuple(shown(cell) for cell in row) for row in self._rows]
        self._rows = []
        # numbers and times keep their width; only the free-text columns give way to a narrow terminal
        # (rich would shrink every no-wrap column alike), sharing what is left of the width between them
        widths = [max(cell_len(name), *(cell_len(r[i]) for r in rows)) for i, name in enumerate(self._columns)]
        fixed = sum(w for w, name in zip(widths, self._columns, strict=True) if name not in SHRINKING_COLUMNS)
        shares = _free_width_shares(self._columns, widths, self.console.width - fixed - 3 * (len(widths) - 1))
        justify: list[Literal["left", "right"]] = ["left" if name in LEFT_COLUMNS else "right" for name in self._columns]
        caps = [shares.get(name) for name in self._columns]
        floors = [None if name in SHRINKING_COLUMNS else width for name, width in zip(self._columns, widths, strict=True)]
        self.sink.flush()
        # rich writes styles only with a colour system, and then only the header's bold: drawn here too
        # (rich's own table costs about half a millisecond a row, on a terminal as into a pipe)
        bold = self.console.color_system is not None
        text = plain_table(self._columns, rows, justify, caps, floors, self.console.width, bold_header=bold)
        if text is not None and not self.console.legacy_windows:
            self.console.file.write(text)
            return
        self.console.print(rich_table(self._columns, rows, justify, caps, floors))

    def _other(self, event: Event) -> None:
        self._flush()
        self._kind = None
        match event:
            case FileStart(path=path):
                self.console.rule(f"[bold]{_escape(path)}[/]", align="left")
            case Problem():
                self.problems += 1
                self.sink.err_line(problem_line(event))
            case Ignored(path=path):
                self.sink.err_line(f"Ignoring unknown file {path}")
            case Summary():
                for text in summary_lines(event, self.options.dialect):
                    self.sink.err_line(text)
            case CheckpointStart() | PartitionMetadataEvent() | QuorumStateEvent() | CleanShutdownEvent():
                self.console.print(_escape(side_file_text(event)), highlight=False)
            case _:
                for obj in event_objects(event):
                    text = ", ".join(f"{k}: {v}" for k, v in obj.items() if k not in ("type", "path"))
                    self.console.print(f"{obj['type'].replace('_', ' ')}: {_escape(text)}", highlight=False)

    def close(self) -> None:
        self._flush()
        self.sink.flush()


def rich_table(
    columns: tuple[str, ...],
    rows: list[tuple[str, ...]],
    justify: list[Literal["left", "right"]],
    caps: list[int | None],
    floors: list[int | None],
) -> Table:
    """The rich table of one chunk (for a terminal, or a table wider than the console)."""
    from rich import box
    from rich.table import Table
    from rich.text import Text

    table = Table(box=box.SIMPLE_HEAD, pad_edge=False, show_edge=False, padding=(0, 1))
    for name, how, cap, floor in zip(columns, justify, caps, floors, strict=True):
        table.add_column(name, justify=how, no_wrap=True, overflow="ellipsis", max_width=cap, min_width=floor)
    for row in rows:
        table.add_row(*(Text(cell) for cell in row))  # cells are data, never rich markup
    return table


def _free_width_shares(columns: tuple[str, ...], widths: list[int], free: int) -> dict[str, int]:
    """Split ``free`` cells between the shrinking columns by weight; one needing less than its share
    gives the rest to the others."""
    wanted = {name: width for name, width in zip(columns, widths, strict=True) if name in SHRINKING_COLUMNS}
    shares: dict[str, int] = {}
    for name in sorted(wanted, key=lambda n: wanted[n] / SHRINKING_COLUMNS[n]):
        weight_left = sum(SHRINKING_COLUMNS[n] for n in wanted if n not in shares)
        shares[name] = max(8, min(wanted[name], free * SHRINKING_COLUMNS[name] // weight_left))
        free -= shares[name]
    return shares


def _record_row(record: AnyRecord) -> tuple[str, ...]:
    if isinstance(record, DecodedRecord):
        r = record.record
        key, value = decoded_summaries(record.decoded, r[2] is not None)
        return (str(r[0]), _utc(r[1]), key, value, str(len(r[4])))
    if isinstance(record, ControlRecord):
        r = record.record
        return (str(r[0]), _utc(r[1]), f"[{record.type_name or '?'}]", _control_detail(record), str(len(r[4])))
    return (str(record[0]), _utc(record[1]), _short(record[2]), _short(record[3]), str(len(record[4])))


def _control_detail(record: ControlRecord) -> str:
    data = record.control.data
    if record.control.problem is not None:
        return f"! {record.control.problem}"
    if data is not None and record.control.type_id in (0, 1):  # ABORT, COMMIT
        return f"coordinatorEpoch {data['coordinatorEpoch']}"
    return "" if data is None else jackson_json(data)


def _scalar_text(value: object) -> str:
    if isinstance(value, bool):
        return tf(value)
    if isinstance(value, list):
        return f"[{len(value)}]"
    if isinstance(value, dict):
        return "{…}"
    return "null" if value is None else str(value)


def _fields_summary(data: dict[str, Any] | None) -> str:
    """``name=value`` for each field (lists as their length), for a table cell rich will shorten."""
    if not data:
        return ""
    return " ".join(f"{k}={_scalar_text(v)}" for k, v in data.items() if not k.startswith("_"))


def decoded_summaries(decoded: Decoded, has_key: bool) -> tuple[str, str]:
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
    """Data in a line rich prints: never markup, and never a control character on a terminal."""
    from rich.markup import escape

    return escape(shown(text))
