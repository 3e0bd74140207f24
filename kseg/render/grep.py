"""``kseg grep``'s output: matching records as ``kseg dump`` prints them, counts, or the sources that match.

* text -- ``<file>:<batch position>:`` then the record's line exactly as
  ``kseg dump --deep-iteration --print-data-log`` prints it (Kafka's text);
* json -- one object per record: ``path`` and ``position``, then the record
  object ``kseg dump --format json --deep-iteration`` writes (``--payload utf8``);
* table -- a rich table: file, position, offset, time, key, value, headers.

Problems go to stderr as one line each (``kseg: warning: <file> byte N: ...``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING

from kseg.format.model import Record
from kseg.ops.grep.run import Event, UnitDone
from kseg.ops.grep.search import Match, Problem

# json, the JVM's text and dump's renderers are imported only where records (or JSON) are printed:
# ``-c`` and ``-l`` in text start without them (tests/test_startup_imports.py).
if TYPE_CHECKING:
    from kseg.ops.dump import ControlRecord
    from kseg.render.dump.common import Sink

FORMATS = ("text", "json", "table")


def _control(record: Record) -> ControlRecord:
    from kseg.format.internal import describe_control_record
    from kseg.ops.dump import ControlRecord

    return ControlRecord(record, describe_control_record(record[2], record[3]))


class RecordWriter:
    """Writes matches as text or JSON lines to a :class:`Sink`; counts matches and problems."""

    def __init__(self, sink: Sink, fmt: str) -> None:
        from kseg.ops.dump import DumpOptions
        from kseg.render.dump.jsonl import JsonRenderer
        from kseg.render.dump.text import TextRenderer
        from kseg.render.records_json import json_string

        options = DumpOptions(deep_iteration=True, print_data_log=True)
        self.sink = sink
        self.fmt = fmt
        self.text = TextRenderer(sink, options)
        self.json = JsonRenderer(sink, options)
        self.json_string = json_string
        self.matches = 0
        self.problems = 0

    def write(self, event: Event) -> None:
        if isinstance(event, Match):
            self.matches += 1
            self.sink.line(self.text_line(event) if self.fmt == "text" else self.json_line(event))
        elif isinstance(event, Problem):
            self.problems += 1
            self.sink.err_line(problem_line(event))

    def text_line(self, match: Match) -> str:
        record = match.record
        text = self.text
        text._legacy = record[9] < 2  # what dump's batch line sets for the records after it
        text._ts_label = record[13]
        line = text.control_line(_control(record)) if record[12] else text.record_line(record)
        if match.decoded is not None:
            line += " decoded: " + _compact(match.decoded)
        return f"{match.path}:{match.position}:{line}"

    def json_line(self, match: Match) -> str:
        record = match.record
        extra = "" if match.decoded is None else f',"decoded":{_compact(match.decoded)}'
        body = self.json.control_json(_control(record)) if record[12] else self.json.record_json(record, extra)
        return f'{{"path":{self.json_string(match.path)},"position":{match.position},{body[1:]}'


def _compact(value: object) -> str:
    import json

    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def problem_line(problem: Problem) -> str:
    where = problem.path if problem.position is None else f"{problem.path} byte {problem.position}"
    return f"kseg: warning: {where}: {problem.message}"


def count_lines(events: Iterable[Event], fmt: str, line: Callable[[str], None], err_line: Callable[[str], None],
                only_matching: bool) -> int:
    """``--count`` (every source with its count) or ``-l`` (``only_matching``: the sources with a match).

    Returns the total of matches.  Sources are reported in the order their last unit finished.
    """
    counts: dict[str, int] = {}
    total = 0
    for event in events:
        if isinstance(event, UnitDone):
            counts[event.source] = counts.get(event.source, 0) + event.matches
            total += event.matches
        elif isinstance(event, Problem):
            err_line(problem_line(event))
    for source, count in counts.items():
        if only_matching and not count:
            continue
        if fmt == "json":
            from kseg.render.records_json import json_string

            line(f'{{"path":{json_string(source)},"matches":{count}}}')
        elif only_matching:
            line(source)
        else:
            line(f"{source}:{count}")
    return total


def _utc(ms: int) -> str:
    try:
        return datetime.fromtimestamp(ms / 1000, tz=timezone.utc).strftime("%Y-%m-%d %H:%M:%S.%f")[:-3]
    except (OverflowError, ValueError, OSError):
        return str(ms)


def _short(data: bytes | None, width: int = 40) -> str:
    if data is None:
        return "null"
    from kseg.format.jvm_text import java_utf8

    text = java_utf8(data)
    return text if len(text) <= width else text[: width - 1] + "…"


def table_rows(match: Match) -> tuple[str, ...]:
    """One table row: file, position, offset, time (UTC), key, value, headers."""
    record = match.record
    from kseg.format.jvm_text import java_utf8

    headers = ", ".join(f"{java_utf8(k)}={_short(v, 20)}" for k, v in record[4])
    value = _control(record).control.text if record[12] else _short(record[3])
    decoded = (match.decoded or {}).get("value")
    if decoded is not None:
        value = _compact(decoded.get("value")) if decoded.get("problem") is None else f"({decoded['problem']})"
    return (match.path, str(match.position), str(record[0]), _utc(record[1]), _short(record[2]), value, headers)


TABLE_COLUMNS = ("file", "position", "offset", "time (UTC)", "key", "value", "headers")


def write_table(events: Iterable[Event], console: object, sink: Sink, chunk: int = 200) -> tuple[int, int]:
    """Matches as rich tables of ``chunk`` rows each (memory holds one chunk); (matches, problems)."""
    from rich.table import Table
    from rich.text import Text

    from kseg.render.terminal import shown

    rows: list[tuple[str, ...]] = []
    matches = problems = 0

    def flush() -> None:
        table = Table(*TABLE_COLUMNS)
        for row in rows:
            table.add_row(*(Text(shown(cell)) for cell in row))
        console.print(table)  # type: ignore[attr-defined]
        rows.clear()

    for event in events:
        if isinstance(event, Match):
            matches += 1
            rows.append(table_rows(event))
            if len(rows) >= chunk:
                flush()
        elif isinstance(event, Problem):
            problems += 1
            sink.err_line(problem_line(event))
    if rows:
        flush()
    return matches, problems


def write_schema_usage(events: Iterable[Event], fmt: str, sink: Sink) -> int:
    """``--schema-usage``: per topic and part (key, value), each schema id with its record count and what
    the registry says of it (subject and version, deleted, unknown, does not fit).  Returns the records seen."""
    from kseg.ops.discover import parse_partition_dir

    usage: dict[tuple[str, str, int | None], dict[str, object]] = {}
    seen = 0
    for event in events:
        if isinstance(event, Problem):
            sink.err_line(problem_line(event))
        if not isinstance(event, Match) or event.decoded is None:
            continue
        seen += 1
        name = parse_partition_dir(Path(event.partition_dir or event.path).resolve())
        topic = name.topic if name is not None else event.partition_dir or event.path
        for part in ("key", "value"):
            decoded = event.decoded.get(part)
            key = (topic, part, None if decoded is None else decoded.get("schema_id"))
            entry = usage.setdefault(key, {"records": 0, "problems": 0})
            entry["records"] = int(entry["records"]) + 1  # type: ignore[call-overload]
            if decoded is not None:
                for field in ("subject", "version", "type", "deleted"):
                    if field in decoded:
                        entry[field] = decoded[field]
                if decoded.get("problem") is not None:
                    entry["problems"] = int(entry["problems"]) + 1  # type: ignore[call-overload]
                    entry["last_problem"] = decoded["problem"]
    for (topic, part, schema_id), entry in sorted(usage.items(), key=lambda kv: (kv[0][0], kv[0][1], kv[0][2] or -1)):
        sink.line(_usage_line(topic, part, schema_id, entry, fmt))
    return seen


def _usage_line(topic: str, part: str, schema_id: int | None, entry: dict[str, object], fmt: str) -> str:
    if fmt == "json":
        return _compact({"topic": topic, "part": part, "schema_id": schema_id, **entry})
    if schema_id is None:
        return f"{topic} {part}: {entry['records']} records not in the registry's framing"
    if "subject" not in entry:
        return f"{topic} {part}: schema id {schema_id} UNKNOWN (not in the registry): {entry['records']} records"
    deleted = " DELETED (soft-deleted, still in use)" if entry.get("deleted") else ""
    text = (f"{topic} {part}: schema id {schema_id} = {entry['subject']} version {entry['version']} "
            f"({entry['type']}){deleted}: {entry['records']} records")
    if entry["problems"]:
        text += f", {entry['problems']} do not decode (last: {entry['last_problem']})"
    return text
