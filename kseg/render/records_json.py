"""Magic-2 records straight to JSON text: the hot path of ``kseg dump --format json --deep-iteration``.

Decoding records into :class:`~kseg.format.model.Record` tuples and then
formatting each as JSON walks every record twice; for the deep JSON dump that
was most of the cost (bench/bench_dump.py).  :func:`records_json_utf8` takes
the scanner's columns (:meth:`kseg.format.v2.V2Batch.scan`) and writes each
record's JSON object from them, with payloads as in ``--payload utf8``: valid
UTF-8 as a string, anything else as ``{"base64": ...}``, null as null; header
keys as Java decodes them.

It is a writer over the scanner, not a second decoder: where the scanner says
no (a damaged record, a codec error) it returns ``None`` and the caller
decodes with ``V2Batch.iter_records``, which raises Kafka's own errors.
Where it answers, the text is the one the JSON renderer writes for the
decoded records (tests/ops/test_dump.py checks both on clean and damaged
batches).
"""

from __future__ import annotations

import base64
from collections.abc import Iterable, Sequence
from itertools import compress, repeat
from json.encoder import c_encode_basestring, py_encode_basestring  # type: ignore[attr-defined]

from kseg.format.compression import DEFAULT_MAX_DECOMPRESSED
from kseg.format.jvm_text import java_utf8
from kseg.format.layout import TIMESTAMP_TYPE_MASK
from kseg.format.records import (
    HEADER_COUNT,
    HEADER_STRIDE,
    KEY_LENGTH,
    KEY_START,
    RECORD_STRIDE,
    VALUE_LENGTH,
    VALUE_START,
    Buffer,
    RecordScan,
)
from kseg.format.v2 import V2Batch

json_string = c_encode_basestring or py_encode_basestring  # what json.dumps uses for str (no ASCII escaping)


def utf8_json(data: bytes | None) -> str:
    """``--payload utf8``: a JSON string for valid UTF-8, ``{"base64": ...}`` otherwise."""
    if data is None:
        return "null"
    try:
        return json_string(data.decode("utf-8"))
    except UnicodeDecodeError:
        return '{"base64":"' + base64.b64encode(data).decode("ascii") + '"}'


def records_json_utf8(batch: V2Batch, max_batch_bytes: int = DEFAULT_MAX_DECOMPRESSED) -> tuple[Sequence[int], list[str]] | None:
    """(offsets, one JSON object per record) for a data batch, or None to use the full decoder.

    ``max_batch_bytes`` is the read cap; past it the full decoder reports the batch.
    """
    if batch.is_control:
        return None
    scan = batch.scan(max_batch_bytes)
    if scan is None:
        return None
    log_append_time = batch.max_timestamp if batch.attributes & TIMESTAMP_TYPE_MASK else None
    offsets = scan.offsets()
    return offsets, scan_json_utf8(scan, offsets, log_append_time)


def scan_json_utf8(scan: RecordScan, offsets: Sequence[int], log_append_time: int | None) -> list[str]:
    """One JSON object per scanned record: offset, timestamp, key, value, headers (``--payload utf8``)."""
    buf, fields = scan.buf, scan.fields
    timestamps: Iterable[int] = scan.timestamps() if log_append_time is None else repeat(log_append_time)
    keys = _payloads(buf, fields[KEY_START::RECORD_STRIDE], fields[KEY_LENGTH::RECORD_STRIDE])
    values = _payloads(buf, fields[VALUE_START::RECORD_STRIDE], fields[VALUE_LENGTH::RECORD_STRIDE])
    counts = fields[HEADER_COUNT::RECORD_STRIDE]
    headers: Iterable[str] = _headers(buf, counts, scan.header_fields) if any(counts) else repeat("[]")
    return [
        f'{{"offset":{offset},"timestamp":{timestamp},"key":{key},"value":{value},"headers":{header}}}'
        for offset, timestamp, key, value, header in zip(offsets, timestamps, keys, values, headers, strict=False)
    ]


def _payloads(buf: Buffer, starts: list[int], lengths: list[int]) -> list[str]:
    """Each key (or value) as ``--payload utf8`` writes it; the common all-UTF-8 case in one comprehension."""
    try:
        if not lengths or min(lengths) >= 0:
            return [json_string(buf[s : s + n].decode("utf-8")) for s, n in zip(starts, lengths, strict=True)]
        return [
            "null" if n < 0 else json_string(buf[s : s + n].decode("utf-8"))
            for s, n in zip(starts, lengths, strict=True)
        ]
    except UnicodeDecodeError:
        return [utf8_json(None if n < 0 else buf[s : s + n]) for s, n in zip(starts, lengths, strict=True)]


def _headers(buf: Buffer, counts: list[int], spans: list[int]) -> list[str]:
    """Each record's headers as ``[[key, value], ...]``: keys as Java decodes them, values as payloads."""
    out = ["[]"] * len(counts)
    at = 0
    for index in compress(range(len(counts)), counts):  # only the records that have headers
        pairs = []
        for _ in range(counts[index]):
            ks, kl, vs, vl = spans[at : at + HEADER_STRIDE]
            at += HEADER_STRIDE
            pairs.append(f"[{json_string(java_utf8(buf[ks : ks + kl]))},{utf8_json(None if vl < 0 else buf[vs : vs + vl])}]")
        out[index] = "[" + ",".join(pairs) + "]"
    return out


__all__ = ["json_string", "records_json_utf8", "scan_json_utf8", "utf8_json"]
