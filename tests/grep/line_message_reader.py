"""Kafka 4.3.0's ``org.apache.kafka.tools.LineMessageReader`` (what kafka-console-producer.sh reads), in Python.

Written from its source (tools/src/main/java/org/apache/kafka/tools/LineMessageReader.java at
a9ce3221537b8653448750697915607dc7936cf3) for the export tests: the Kafka jars ../shared has do not
include the tools module.  Rule by rule:

* lines as ``BufferedReader.readLine`` splits them: at ``\\n``, ``\\r`` or ``\\r\\n``, decoded as UTF-8;
* ``parse.headers``: the headers are the text up to the first ``headers.delimiter`` (tab); missing -> the
  reader throws ``No headers delimiter found``;
* ``parse.key``: the key is the text from there up to the next ``key.separator`` (tab); missing -> throws;
* the value is the rest of the line;
* a key, value or headers text equal to ``null.marker`` is null (no headers);
* headers are split with ``Pattern.compile(headers.separator).split`` (Java drops trailing empty strings),
  each pair at its first ``headers.key.separator``; none -> throws; a header key equal to the null marker
  throws; a value equal to it is null.
"""

from __future__ import annotations

import re


class ReaderError(ValueError):
    """Where LineMessageReader throws a KafkaException."""


def java_lines(data: bytes) -> list[str]:
    text = data.decode("utf-8", errors="replace")
    lines = re.split(r"\r\n|\r|\n", text)
    if lines and lines[-1] == "":
        lines.pop()  # readLine returns null at the end: no empty last line after a final terminator
    return lines


def _java_split(pattern: str, text: str) -> list[str]:
    parts = re.split(pattern, text)
    while parts and parts[-1] == "":
        parts.pop()
    return parts or [""] if text == "" else parts


def read_records(data: bytes, *, parse_key: bool = True, parse_headers: bool = True, null_marker: str | None = None,
                 key_separator: str = "\t", headers_delimiter: str = "\t", headers_separator: str = ",",
                 headers_key_separator: str = ":") -> list[tuple[bytes | None, bytes | None, list[tuple[str, bytes | None]]]]:
    """(key, value, headers) per line, as the reader builds each ProducerRecord."""
    out = []
    for number, line in enumerate(java_lines(data), 1):
        headers_text = _part(parse_headers, line, 0, headers_delimiter, "headers delimiter", number)
        header_offset = 0 if headers_text is None else len(headers_text) + len(headers_delimiter)
        key = _part(parse_key, line, header_offset, key_separator, "key separator", number)
        key_offset = 0 if key is None else len(key) + len(key_separator)
        value = line[header_offset + key_offset:]
        headers: list[tuple[str, bytes | None]] = []
        if headers_text is not None and headers_text != null_marker:
            for pair in _java_split(headers_separator, headers_text):
                at = pair.find(headers_key_separator)
                if at == -1:
                    raise ReaderError(f"No header key separator found in pair '{pair}' on line number {number}")
                header_key = pair[:at]
                if header_key == null_marker:
                    raise ReaderError("Header keys should not be equal to the null marker")
                header_value = pair[at + len(headers_key_separator):]
                headers.append((header_key, None if header_value == null_marker else header_value.encode()))
        out.append((None if key is None or key == null_marker else key.encode(),
                    None if value == null_marker else value.encode(), headers))
    return out


def _part(enabled: bool, line: str, start: int, demarcation: str, name: str, number: int) -> str | None:
    if not enabled:
        return None
    index = line.find(demarcation, start)
    if index == -1:
        raise ReaderError(f"No {name} found on line number {number}: '{line}'")
    return line[start:index]
