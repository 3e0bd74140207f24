"""A source batch's records for ``kseg convert``, read and re-encoded by the compiled core.

``kseg convert`` reads each batch's records once to sum them up and again to
re-encode them (:mod:`kseg.ops.convert.batches`).  In Python that is a
:class:`~kseg.format.model.Record` and a :class:`~kseg.format.model.RecordSpec`
per record, twice; with the compiled core (docs/core.md, ``rust/kseg-wire``
``encode.rs`` and ``legacy.rs``) the records stay bytes: :func:`open_records`
decompresses a batch once (the codecs stay in Python) and the core sums its
records up, cuts it by estimated size and writes its records in the target's
layout, a run of records per call.

The pure-Python readers and writers stay the reference: :func:`open_records`
answers ``None`` -- and the caller runs Python -- for anything the core does
not take (no core, ``KSEG_PURE``, a batch Python would refuse or read some
other way: a codec error, a record the scanners do not accept, an inner
message that is compressed or of another magic); the core's encoder answers
``None`` where Python's would raise (offsets that do not increase, a negative
timestamp, an offset delta past ``Integer.MAX_VALUE``) and Python then raises
Kafka's message.  tests/core/test_core_encode.py prove the bytes identical.
"""

from __future__ import annotations

from typing import Any

from kseg.errors import KsegError
from kseg.format import compression
from kseg.format._core import CORE, call
from kseg.format.layout import MIN_V2_BATCH_LENGTH, TIMESTAMP_TYPE_MASK
from kseg.format.v0v1 import LegacyBatch
from kseg.format.v2 import V2Batch

#: The source kind of V2 records (V0/V1 sets are kind 0 or 1: their wrapper's magic).
_V2 = 2

#: Summary fields, in the core's order (``encode::Summary``).
SUMMARY_FIELDS = (
    "count", "first_offset", "first_timestamp", "key_start", "key_length", "max_timestamp", "any_attributes",
    "timestamps_set", "key_value_bytes", "header_records", "headers", "header_bytes", "first_with_headers_offset",
    "first_with_headers_count", "end",
)


class CoreRecords:
    """One batch's records as the core reads them: the (decompressed) bytes, where they are, their source rules.

    ``source`` is the core's five integers (rust/kseg-py/src/encode.rs); ``summary``
    the 15 of :data:`SUMMARY_FIELDS`; ``position`` the batch's file position, for errors.
    """

    __slots__ = ("buf", "count", "end", "position", "source", "start", "summary")

    def __init__(self, buf: Any, start: int, end: int, count: int, source: tuple[int, int, int, bool, int],
                 position: int) -> None:
        self.buf, self.start, self.end, self.count, self.source = buf, start, end, count, source
        self.position = position
        self.summary: tuple[int, ...] = ()

    def first_key(self) -> bytes | None:
        start, length = self.summary[3], self.summary[4]
        return None if length < 0 else bytes(self.buf[start : start + length])

    def region(self) -> memoryview:
        """The uncompressed records region (what a V2 batch's codec compresses)."""
        return memoryview(self.buf)[self.start : self.end]

    def cuts(self, budget: int, magic: int) -> list[int] | None:
        """The first index of every part after the first, cut greedily by estimated size (``Converter._split``)."""
        return _call("convert_cuts", self.position, self.buf, self.end, self.source, self.start, self.count, budget, magic)

    def seek(self, position: int, records: int) -> int | None:
        """Where the record ``records`` records after the one at ``position`` starts."""
        return _call("convert_seek", self.position, self.buf, self.end, self.source, position, records)

    def encode(self, position: int, records: int, target: tuple[Any, ...]) -> tuple[bytes, int, int, int, int, int] | None:
        """``records`` records from ``position`` in the target's layout; see ``convert_encode``."""
        return _call("convert_encode", self.position, self.buf, self.end, self.source, position, records, target)


def _call(name: str, position: int, *args: Any) -> Any:
    """A core function, or None when it cannot take the arguments; a panic becomes kseg's one-line error."""
    assert CORE is not None
    result = call(getattr(CORE, name), position, *args)
    return None if result is NotImplemented else result


def open_records(batch: Any, max_decompressed: int) -> CoreRecords | None:
    """The batch's records summed up by the core, or None (no core, or Python must read this batch)."""
    if CORE is None:
        return None
    try:
        if isinstance(batch, V2Batch):
            return _v2(batch, max_decompressed)
        if isinstance(batch, LegacyBatch):
            return _legacy(batch, max_decompressed)
    except KsegError:
        pass  # Python reads it again and says what is wrong, where
    return None


def _v2(batch: V2Batch, max_decompressed: int) -> CoreRecords | None:
    """A V2 batch's records in place (uncompressed) or decompressed under the cap."""
    count, position = batch.records_count, batch.position
    if batch.batch_length < MIN_V2_BATCH_LENGTH or count <= 0:
        return None
    buf, start, end, _, _ = batch._records_bytes(max_decompressed)  # the batch's own reader; errors: Python's turn
    log_append = bool(batch.attributes & TIMESTAMP_TYPE_MASK)
    records = CoreRecords(buf, start, end, count, (_V2, batch.base_offset, batch.base_timestamp, log_append,
                                                    batch.max_timestamp), position)
    summary = _call("convert_summary", position, buf, end, records.source, start, count)
    if summary is None or summary[-1] != end:  # records must fill the region exactly
        return None
    records.summary = summary
    return records


def _legacy(batch: LegacyBatch, max_decompressed: int) -> CoreRecords | None:
    """A V0/V1 wrapper's inner messages, decompressed under the cap (``_deep_messages``)."""
    magic, codec, position = batch.magic, batch.codec_id, batch.position
    if magic not in (0, 1) or codec in (compression.CODEC_NONE, compression.CODEC_ZSTD):
        return None
    if position + batch.size > len(batch.buf):
        return None
    value = batch.stored_value()  # InvalidRecord: Python's turn
    if value is None:
        return None
    data = compression.decompress(codec, value, magic=magic, max_size=max_decompressed)
    log_append = magic == 1 and bool(batch.attributes & TIMESTAMP_TYPE_MASK)
    opened = _call("legacy_summary", position, data, magic, batch.last_offset, batch.max_timestamp, log_append)
    if opened is None:
        return None
    source, count, summary = opened
    records = CoreRecords(data, 0, len(data), count, source, position)
    records.summary = summary
    return records


__all__ = ["SUMMARY_FIELDS", "CoreRecords", "open_records"]
