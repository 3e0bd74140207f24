"""A record with a large key, value or header value, written to the JSON line a piece at a time.

A batch under the 128 MiB read cap can hold one value of 100 MiB.  Written as
one string, its JSON text costs several times that at once: a value of control
bytes escapes to six times its size (``\\u001b`` for each byte), and joining
the record's object, the batch's line and the encoded output each copied it
again -- more than 1 GB for a 100 MiB value.  Here each payload over
:data:`LARGE_PAYLOAD` is escaped a slice of :data:`PIECE` bytes at a time and
handed to the sink as it is made, so memory holds the record's bytes and one
slice's text.  The bytes out are the ones the whole-string writers produce
(``--payload utf8``: a JSON string when the whole payload is valid UTF-8,
``{"base64": ...}`` otherwise; ``hex``; ``base64``): tests/dump/test_large_values.py
compares them.
"""

from __future__ import annotations

import base64
import codecs
from collections.abc import Callable, Iterator

from kseg.format.jvm_text import java_utf8
from kseg.format.model import Record
from kseg.ops.dump import EncodedRecords
from kseg.render.records_json import json_string

#: A key, value or header value above this many bytes is written in pieces.
LARGE_PAYLOAD = 1 << 20
#: Bytes of a payload escaped at a time (a multiple of 3: base64 pieces join without padding).
PIECE = 3 << 18

Write = Callable[[str], None]


def is_large(record: object) -> bool:
    """A plain data record with a payload worth streaming (control and decoded records never are)."""
    if type(record) is not Record:
        return False
    key, value, headers = record[2], record[3], record[4]
    return (
        (key is not None and len(key) > LARGE_PAYLOAD)
        or (value is not None and len(value) > LARGE_PAYLOAD)
        or any(v is not None and len(v) > LARGE_PAYLOAD for _, v in headers)
    )


def large_parts(encoded: EncodedRecords | None) -> bool:
    """A batch the core cut into parts one of which is over LARGE_PAYLOAD: a record there may be large."""
    parts = None if encoded is None else encoded.parts
    return parts is not None and any(end - start > LARGE_PAYLOAD for start, end, _ in parts.parts)


def java_text_pieces(data: bytes) -> Iterator[str]:
    """``java_utf8(data)`` a slice at a time (Kafka's text ``payload:``).

    Slices are cut just before an ASCII byte: Java's decoder never takes one into a
    multi-byte or malformed sequence, so the pieces join to the whole decoding.  A
    slice with no ASCII byte runs on to the next one that has.
    """
    view, start = memoryview(data), 0
    while start < len(view):
        end = start + PIECE
        while end < len(view) and view[end] >= 0x80:
            end += 1
        yield java_utf8(bytes(view[start:end]))
        start = end


def write_record(record: Record, mode: str, write: Write) -> None:
    """``{"offset":..,"timestamp":..,"key":..,"value":..,"headers":[..]}`` through ``write``, in pieces."""
    write(f'{{"offset":{record[0]},"timestamp":{record[1]},"key":')
    _payload(record[2], mode, write)
    write(',"value":')
    _payload(record[3], mode, write)
    write(',"headers":[')
    for index, (key, value) in enumerate(record[4]):
        write(f'{"," if index else ""}[{json_string(java_utf8(key))},')
        _payload(value, mode, write)
        write("]")
    write("]}")


def _payload(data: bytes | None, mode: str, write: Write) -> None:
    if data is None:
        write("null")
        return
    view = memoryview(data)
    if mode == "hex":
        _quoted((bytes(s).hex() for s in _slices(view)), write)
    elif mode == "base64" or not _valid_utf8(view):
        if mode != "base64":
            write('{"base64":')
        _quoted((base64.b64encode(s).decode("ascii") for s in _slices(view)), write)
        if mode != "base64":
            write("}")
    else:
        _quoted(_escaped_utf8(view), write)


def _quoted(pieces: Iterator[str], write: Write) -> None:
    write('"')
    for piece in pieces:
        write(piece)
    write('"')


def _slices(view: memoryview) -> Iterator[memoryview]:
    for start in range(0, len(view), PIECE):
        yield view[start : start + PIECE]


def _valid_utf8(view: memoryview) -> bool:
    """Whether the whole payload is UTF-8, checked a slice at a time (nothing kept)."""
    decoder = codecs.getincrementaldecoder("utf-8")()
    try:
        for piece in _slices(view):
            decoder.decode(piece)
        decoder.decode(b"", final=True)
    except UnicodeDecodeError:
        return False
    return True


def _escaped_utf8(view: memoryview) -> Iterator[str]:
    """The JSON string's inside, a slice at a time (the decoder keeps a character cut by a slice whole)."""
    decoder = codecs.getincrementaldecoder("utf-8")()
    for piece in _slices(view):
        text = decoder.decode(piece)
        if text:
            yield json_string(text)[1:-1]
    tail = decoder.decode(b"", final=True)
    if tail:
        yield json_string(tail)[1:-1]
