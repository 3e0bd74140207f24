"""Magic-2 data records straight to JSON text: the hot path of ``kseg dump --format json --deep-iteration``.

Decoding records into :class:`~kseg.format.model.Record` tuples and then
formatting each as JSON walks every record twice; for the deep JSON dump that
was most of the cost (bench/bench_dump.py).  :func:`records_json_utf8` reads
the record layout (see :mod:`kseg.format.v2`) once and writes each record's
JSON object directly, with payloads as in ``--payload utf8``: valid UTF-8 as a
string, anything else as ``{"base64": ...}``, null as null; header keys as
Java decodes them.

It is a fast path, not a second authority: it handles only well-formed
records and returns ``None`` at the first thing it does not expect -- a bound
overrun, a negative length, a record whose length does not match what was
read, bytes left over, offsets or timestamps near the int64 limits, a
decompression error.  Callers then decode with ``V2Batch.iter_records``, which
raises Kafka's own errors.  Where it answers, the answer is the one the full
decoder gives (tests/ops/test_dump.py checks both on clean and damaged
batches).
"""

from __future__ import annotations

import base64
from json.encoder import c_encode_basestring, py_encode_basestring  # type: ignore[attr-defined]

from kseg.errors import KsegError
from kseg.format import compression
from kseg.format.jvm_text import java_utf8
from kseg.format.model import INT64_MAX, INT64_MIN
from kseg.format.v2 import MAGIC, RECORD_BATCH_OVERHEAD, TIMESTAMP_TYPE_MASK, V2Batch
from kseg.format.varint import decode_varint, decode_varlong

json_string = c_encode_basestring or py_encode_basestring  # what json.dumps uses for str (no ASCII escaping)
_SAFE = 2**31  # offset bases this far from the int64 limits cannot wrap with an int32 delta


def utf8_json(data: bytes | None) -> str:
    """``--payload utf8``: a JSON string for valid UTF-8, ``{"base64": ...}`` otherwise."""
    if data is None:
        return "null"
    try:
        return json_string(data.decode("utf-8"))
    except UnicodeDecodeError:
        return '{"base64":"' + base64.b64encode(data).decode("ascii") + '"}'


def records_json_utf8(batch: V2Batch) -> tuple[range | list[int], list[str]] | None:
    """(offsets, one JSON object per record) for a data batch, or None to use the full decoder."""
    if batch.is_control or batch.batch_length < RECORD_BATCH_OVERHEAD - 12:
        return None
    count = batch.records_count
    if count <= 0:
        return (range(0), []) if count == 0 else None
    base_offset, base_timestamp = batch.base_offset, batch.base_timestamp
    if not (INT64_MIN + _SAFE <= base_offset <= INT64_MAX - _SAFE
            and INT64_MIN + _SAFE <= base_timestamp <= INT64_MAX - _SAFE):
        return None
    start = batch.position + RECORD_BATCH_OVERHEAD
    end = batch.position + batch.size
    buf = batch.buf
    if end > len(buf):
        return None
    if batch.codec_id != compression.CODEC_NONE:
        try:
            buf = compression.decompress(batch.codec_id, memoryview(buf)[start:end], magic=MAGIC)
        except (KsegError, MemoryError):
            return None
        start, end = 0, len(buf)
    elif isinstance(buf, memoryview):
        buf, start, end = bytes(buf[start:end]), 0, end - start
    log_append = batch.max_timestamp if batch.attributes & TIMESTAMP_TYPE_MASK else None
    try:
        return _parse(buf, start, end, count, base_offset, base_timestamp, log_append)
    except (IndexError, KsegError):
        return None


def _parse(
    buf, pos: int, end: int, count: int, base_offset: int, base_timestamp: int, log_append: int | None
) -> tuple[range | list[int], list[str]] | None:
    """Offsets come back as a ``range`` when they are base, base + 1, ... (the usual case)."""
    deltas: list[int] = []
    parts: list[str] = []
    append = parts.append
    for index in range(count):
        if pos >= end:
            return None
        b = buf[pos]  # -- length (1 or 2 bytes inline; longer ones through decode_varint)
        if b < 0x80:
            length = (b >> 1) ^ -(b & 1)
            pos += 1
        elif buf[pos + 1] < 0x80:
            b = (b & 0x7F) | (buf[pos + 1] << 7)
            length = (b >> 1) ^ -(b & 1)
            pos += 2
        else:
            length, pos = decode_varint(buf, pos, end)
        if length < 0 or length > end - pos:
            return None
        record_end = pos + length
        pos += 1  # attributes
        b = buf[pos]  # -- timestamp delta
        if b < 0x80:
            timestamp_delta = (b >> 1) ^ -(b & 1)
            pos += 1
        elif buf[pos + 1] < 0x80:
            b = (b & 0x7F) | (buf[pos + 1] << 7)
            timestamp_delta = (b >> 1) ^ -(b & 1)
            pos += 2
        else:
            timestamp_delta, pos = decode_varlong(buf, pos, record_end)
            if not INT64_MIN <= base_timestamp + timestamp_delta <= INT64_MAX:
                return None  # Java wraps it; the full decoder knows how
        b = buf[pos]  # -- offset delta
        if b < 0x80:
            offset_delta = (b >> 1) ^ -(b & 1)
            pos += 1
        elif buf[pos + 1] < 0x80:
            b = (b & 0x7F) | (buf[pos + 1] << 7)
            offset_delta = (b >> 1) ^ -(b & 1)
            pos += 2
        else:
            offset_delta, pos = decode_varint(buf, pos, record_end)
        b = buf[pos]  # -- key
        if b < 0x80:
            size = (b >> 1) ^ -(b & 1)
            pos += 1
        elif buf[pos + 1] < 0x80:
            b = (b & 0x7F) | (buf[pos + 1] << 7)
            size = (b >> 1) ^ -(b & 1)
            pos += 2
        else:
            size, pos = decode_varint(buf, pos, record_end)
        if size >= 0:
            if pos + size > record_end:
                return None
            key = buf[pos : pos + size]
            pos += size
        else:
            key = None
        b = buf[pos]  # -- value
        if b < 0x80:
            size = (b >> 1) ^ -(b & 1)
            pos += 1
        elif buf[pos + 1] < 0x80:
            b = (b & 0x7F) | (buf[pos + 1] << 7)
            size = (b >> 1) ^ -(b & 1)
            pos += 2
        else:
            size, pos = decode_varint(buf, pos, record_end)
        if size >= 0:
            if pos + size > record_end:
                return None
            value = buf[pos : pos + size]
            pos += size
        else:
            value = None
        try:
            key_json = "null" if key is None else json_string(key.decode("utf-8"))
            value_json = "null" if value is None else json_string(value.decode("utf-8"))
        except UnicodeDecodeError:
            key_json, value_json = utf8_json(key), utf8_json(value)
        if buf[pos] == 0:  # -- headers
            headers = "[]"
            pos += 1
        else:
            headers, pos = _headers(buf, pos, record_end)
        if pos != record_end:
            return None
        if offset_delta != index or deltas:
            if not deltas:
                deltas.extend(range(index))
            deltas.append(offset_delta)
        append(
            f'{{"offset":{base_offset + offset_delta},'
            f'"timestamp":{base_timestamp + timestamp_delta if log_append is None else log_append},'
            f'"key":{key_json},"value":{value_json},"headers":{headers}}}'
        )
    if pos != end:
        return None
    if deltas:
        return [base_offset + d for d in deltas], parts
    return range(base_offset, base_offset + count), parts


def _small_varint(buf, pos: int, end: int) -> tuple[int, int]:
    b = buf[pos]
    if b < 0x80:
        return (b >> 1) ^ -(b & 1), pos + 1
    return decode_varint(buf, pos, end)


def _headers(buf, pos: int, end: int) -> tuple[str, int]:
    count, pos = _small_varint(buf, pos, end)
    if count < 0 or count > end - pos:
        raise IndexError
    out = []
    for _ in range(count):
        size, pos = _small_varint(buf, pos, end)
        if size < 0 or pos + size > end:
            raise IndexError
        key = java_utf8(buf[pos : pos + size])
        pos += size
        size, pos = _small_varint(buf, pos, end)
        if size >= 0:
            if pos + size > end:
                raise IndexError
            value = utf8_json(buf[pos : pos + size])
            pos += size
        else:
            value = "null"
        out.append(f"[{json_string(key)},{value}]")
    return "[" + ",".join(out) + "]", pos


__all__ = ["json_string", "records_json_utf8", "utf8_json"]
