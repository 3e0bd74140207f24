"""``kseg grep --export FILE --as console|kcat|jsonl``: matching records as a producer reads them back.

* **console** -- what ``kafka-console-producer.sh`` reads with ``parse.headers=true``, ``parse.key=true``
  and ``null.marker`` (Kafka 4.3.0's ``org.apache.kafka.tools.LineMessageReader``): per line
  ``h1:v1,h2:v2<TAB>key<TAB>value``; a null key, value or header value, and a record without headers,
  are the null marker.  The reader splits lines at ``\\n`` and ``\\r``, decodes UTF-8, takes the key up
  to the first tab and the headers up to the first tab, splits headers at ``,`` and each at its first
  ``:``; so a record whose text cannot survive that (a newline anywhere, a tab in a key or a header,
  ``,`` in a header, ``:`` in a header key, bytes that are not UTF-8, a field equal to the null marker)
  is not written but reported.  CreateTime cannot be given to that producer: it is in the origin file.
* **kcat** -- what ``kcat -P -K '\\t'`` reads: ``key<TAB>value`` per line.  kcat takes neither headers
  nor timestamps nor a null key from its input: they are in the origin file; records whose key holds a
  tab, or whose key or value holds a newline or is not UTF-8, are reported instead.
* **jsonl** -- one JSON object per record, everything kept: ``key``, ``value`` (UTF-8 text, or
  ``{"base64": ...}``), ``headers`` (``[[key, value], ...]``), ``timestamp``, ``timestamp_type`` and
  ``origin`` (file, batch position, offset).

For console and kcat, ``FILE.origin.jsonl`` holds one line per exported record, in the same order:
where it came from (file, batch position, offset) and its timestamp.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from kseg.format.model import Record
from kseg.ops.grep.search import Match
from kseg.render.records_json import utf8_json

FORMATS = ("console", "kcat", "jsonl")
#: The default null marker: U+2400 SYMBOL FOR NULL, text no producer is likely to hold.
NULL_MARKER = "\u2400"


class NotExportable(ValueError):
    """A record this format cannot carry faithfully; the message says why."""


@dataclass(frozen=True, slots=True)
class ExportFormat:
    """One export format and its separators."""

    name: str
    null_marker: str = NULL_MARKER
    key_separator: str = "\t"

    def line(self, match: Match) -> str:
        """The record's line (no newline); :class:`NotExportable` when this format cannot hold it."""
        record = match.record
        if self.name == "jsonl":
            return _jsonl(match)
        key, value = _text(record[2], "key"), _text(record[3], "value")
        if self.name == "kcat":
            if key is None:
                raise NotExportable("a null key (kcat -P writes an empty key instead)")
            if self.key_separator in key:
                raise NotExportable("the key holds the key delimiter")
            return f"{key}{self.key_separator}{'' if value is None else value}"
        return self._console(record, key, value)

    def _console(self, record: Record, key: str | None, value: str | None) -> str:
        marker = self.null_marker
        for part, text in (("key", key), ("value", value)):
            if text == marker:
                raise NotExportable(f"the {part} equals the null marker")
        if key is not None and self.key_separator in key:
            raise NotExportable("the key holds the key separator")
        headers = [_header(k, v, marker) for k, v in record[4]]
        shown = ",".join(headers) if headers else marker
        return f"{shown}\t{marker if key is None else key}{self.key_separator}{marker if value is None else value}"

    def producer_command(self, file: str) -> str:
        """How to hand the export to a producer (for the summary line)."""
        if self.name == "console":
            return (f"kafka-console-producer.sh --bootstrap-server BROKER:9092 --topic TOPIC "
                    f"--property parse.headers=true --property parse.key=true "
                    f"--property null.marker={self.null_marker} < {file}")
        if self.name == "kcat":
            return f"kcat -P -b BROKER:9092 -t TOPIC -K '\\t' -l {file}"
        return f"read {file} as JSON Lines (key, value, headers, timestamp per line)"


def _text(data: bytes | None, part: str) -> str | None:
    if data is None:
        return None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise NotExportable(f"the {part} is not UTF-8 (use --as jsonl)") from None
    if "\n" in text or "\r" in text:
        raise NotExportable(f"the {part} holds a line break (use --as jsonl)")
    return text


def _header(key: bytes, value: bytes | None, marker: str) -> str:
    text_key = _text(key, "header key") or ""
    text_value = _text(value, "header value")
    if any(c in text_key for c in "\t,:") or text_key == marker:
        raise NotExportable(f"header key {text_key!r} holds a tab, ',' or ':' or is the null marker")
    if text_value is not None and ("\t" in text_value or "," in text_value or text_value == marker):
        raise NotExportable(f"the value of header {text_key!r} holds a tab or ',' or is the null marker")
    return f"{text_key}:{marker if text_value is None else text_value}"


def _jsonl(match: Match) -> str:
    record = match.record
    headers = ",".join(f"[{utf8_json(k)},{utf8_json(v)}]" for k, v in record[4])
    return (f'{{"key":{utf8_json(record[2])},"value":{utf8_json(record[3])},"headers":[{headers}],'
            f'"timestamp":{record[1]},"timestamp_type":"{record[13]}","origin":{origin_json(match)}}}')


def origin(match: Match) -> dict[str, Any]:
    """Where a record came from, and its timestamp (the origin file's line)."""
    record = match.record
    return {"path": match.path, "position": match.position, "offset": record[0], "timestamp": record[1],
            "timestamp_type": record[13]}


def origin_json(match: Match) -> str:
    return json.dumps(origin(match), ensure_ascii=False, separators=(",", ":"))
