"""The validating record reader: ``DefaultRecord.readFrom`` with Kafka's bounds and its exact messages.

``V2Batch.iter_records`` reads a batch with the scanner
(:mod:`kseg.format.records`) and comes here only when the scanner says no:
this reader is the reference for damaged records.  It yields the records
Kafka's iterator hands out before the damage, then raises what Kafka throws,
located in the file (tests/format and tests/interop pin every message).

Uncompressed records are read in place (``data`` is the file buffer, the
region is ``[start, end)``), and, as in Kafka, a record's fields are bounded by
the end of the batch, not of the record: a wrong length shows as "expected to
read N bytes ... but instead read M".  Decompressed records are read from a
stream in Kafka, one record body at a time, so there the fields are bounded by
the record's own length.

``compressed_at`` is None for in-place data (error positions are absolute file
positions, plus ``shift`` when ``data`` is a copy of the region); otherwise it
is the file position of the compressed region, which errors report, adding
where in the decompressed bytes they happened.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from kseg.errors import InvalidRecord, KsegError, LimitExceeded, Truncated
from kseg.format.layout import CONTROL_MASK, TIMESTAMP_TYPE_MASK
from kseg.format.model import (
    CREATE_TIME,
    LOG_APPEND_TIME,
    NO_SEQUENCE,
    Header,
    Record,
    increment_sequence,
    wrap_int64,
)
from kseg.format.records import MAGIC, Buffer
from kseg.format.varint import Readable, decode_varint, decode_varlong, short_varint_table

_new_tuple = tuple.__new__  # builds a Record without the keyword-friendly __new__

#: What one record body holds: attributes, timestamp delta, offset delta, key size, key,
#: value size, value, headers.
_Body = tuple[int, int, int, int, "bytes | None", int, "bytes | None", "tuple[Header, ...]"]


def _varint_at(
    data: Buffer, pos: int, limit: int, decode: Callable[[Readable, int, int | None], tuple[int, int]]
) -> tuple[int, int]:
    """A varint at ``pos``: one or two bytes read directly (even past ``limit``, as Kafka's buffer allows),
    longer ones through ``decode`` bounded by ``limit``."""
    b = data[pos]
    if b < 0x80:
        return short_varint_table()[b], pos + 1
    c = data[pos + 1]
    if c < 0x80:
        return short_varint_table()[b + (c << 7)], pos + 2
    return decode(data, pos, limit)


class RecordValidator:
    """Reads the ``count`` records of one batch from ``data[start:end]``, checking everything Kafka checks."""

    __slots__ = (
        "base_offset",
        "base_sequence",
        "base_timestamp",
        "compressed_at",
        "count",
        "data",
        "end",
        "first",
        "is_control",
        "log_append_time",
        "max_headers",
        "shift",
        "start",
        "timestamp_type",
    )

    def __init__(
        self,
        header: tuple[int, ...],
        data: Buffer,
        start: int,
        end: int,
        compressed_at: int | None,
        shift: int = 0,
        first: int = 0,
        max_headers: int = 1 << 18,
    ) -> None:
        """``header`` is the batch header as unpacked (``layout.BATCH_HEADER``): the batch's own fields.

        ``first`` is the index of the record at ``start`` when the records before it were read already;
        ``max_headers`` the most headers one record may have (:func:`header_cap`), beyond Kafka's own checks.
        """
        attributes = header[5] & 0xFF
        self.base_offset = header[0]
        self.base_timestamp = header[7]
        self.base_sequence = header[11]
        self.count = header[12]
        self.log_append_time = header[8] if attributes & TIMESTAMP_TYPE_MASK else None
        self.timestamp_type = LOG_APPEND_TIME if attributes & TIMESTAMP_TYPE_MASK else CREATE_TIME
        self.is_control = bool(attributes & CONTROL_MASK)
        self.data = data
        self.start = start
        self.end = end
        self.compressed_at = compressed_at
        self.shift = shift
        self.first = first
        self.max_headers = max_headers

    def _fail(self, err: KsegError, index: int) -> KsegError:
        err.field = f"record[{index}].{err.field}" if err.field else f"record[{index}]"
        if self.compressed_at is not None:
            if err.offset is not None:
                err.message += f" (at byte {err.offset} of the decompressed records)"
            err.offset = self.compressed_at
        elif err.offset is not None:
            err.offset += self.shift
        return err

    def records(self) -> Iterator[Record]:
        pos, end = self.start, self.end
        for index in range(self.first, self.count):
            if pos >= end:
                raise self._fail(
                    InvalidRecord("Incorrect declared batch size, premature EOF reached", offset=pos), index
                )
            record_start = pos
            length, pos = self._length(pos, index)
            body_start = pos
            body, pos = self._body(pos, end if self.compressed_at is None else pos + length, index)
            if pos - body_start != length:
                err = InvalidRecord(
                    f"Invalid record size: expected to read {length} bytes in record payload, "
                    f"but instead read {pos - body_start}",
                    offset=record_start,
                    field="length",
                )
                raise self._fail(err, index)
            yield self._record(body)
        if pos < end:
            rest = InvalidRecord(
                "Incorrect declared batch size, records still remaining in file"
                + ("" if self.compressed_at is None else f" ({end - pos} decompressed bytes left)"),
                offset=pos,
                field="batch.records",
            )
            located = self._fail(rest, self.count)
            located.field = "batch.records"
            raise located

    def _length(self, pos: int, index: int) -> tuple[int, int]:
        """The record's length varint (outside Kafka's record try-block: its errors are its own)."""
        data, end = self.data, self.end
        record_start = pos
        b = data[pos]
        if b < 0x80:
            length, pos = short_varint_table()[b], pos + 1
        elif pos + 1 < end and (c := data[pos + 1]) < 0x80:
            length, pos = short_varint_table()[b + (c << 7)], pos + 2
        else:
            try:
                length, pos = decode_varint(data, pos, end)
            except KsegError as err:
                raise self._fail(err, index)
        # A negative length passes Kafka's in-place check ("remaining < length"): the
        # record is then parsed up to the batch end and fails the final size check
        # ("expected to read -N bytes ... but instead read M") unless a field fails
        # first.  From a stream, Kafka cannot allocate the record buffer and reports
        # "premature EOF" (checked against Kafka in tests/interop).
        in_place = self.compressed_at is None
        if length > end - pos or (length < 0 and not in_place):
            if in_place:
                text = (
                    f"Invalid record size: expected {length} bytes in record payload, "
                    f"but instead the buffer has only {end - pos} remaining bytes."
                )
            elif length < 0:
                text = "Incorrect declared batch size, premature EOF reached"
            else:
                text = f"Invalid record size: expected {length} bytes in record payload, but the record payload reached EOF."
            raise self._fail(InvalidRecord(text, offset=record_start, field="length"), index)
        return length, pos

    def _body(self, pos: int, limit: int, index: int) -> tuple[_Body, int]:
        """The fields after the length, read up to ``limit``; every failure is Kafka's "invalid record structure"."""
        data = self.data
        try:
            attributes = data[pos]
            pos += 1
            timestamp_delta, pos = _varint_at(data, pos, limit, decode_varlong)
            offset_delta, pos = _varint_at(data, pos, limit, decode_varint)
            key_size, pos = _varint_at(data, pos, limit, decode_varint)
            key = None
            if key_size >= 0:
                if key_size > limit - pos:
                    raise IndexError
                key = data[pos : pos + key_size]
                pos += key_size
            value_size, pos = _varint_at(data, pos, limit, decode_varint)
            value = None
            if value_size >= 0:
                if value_size > limit - pos:
                    raise IndexError
                value = data[pos : pos + value_size]
                pos += value_size
            if data[pos] == 0:
                headers: tuple[Header, ...] = ()
                pos += 1
            else:
                headers, pos = _decode_headers(data, pos, limit, self.max_headers)
            if pos > limit:
                raise IndexError
        except (IndexError, Truncated) as exc:
            # A one- or two-byte varint read may have stepped past the batch end (into the next
            # batch) before the bounds check caught it: report the batch end, not beyond.
            where = min(getattr(exc, "offset", None) or pos, limit)
            raise self._fail(InvalidRecord("Found invalid record structure", offset=where), index) from None
        except LimitExceeded as err:
            raise self._fail(err, index) from None
        except InvalidRecord as err:
            if err.message.startswith(("Varint is too long", "Varlong is too long")):
                err = InvalidRecord(f"Found invalid record structure ({err.message})", offset=err.offset)
            raise self._fail(err, index) from None
        return (attributes, timestamp_delta, offset_delta, key_size, key, value_size, value, headers), pos

    def _record(self, body: _Body) -> Record:
        attributes, timestamp_delta, offset_delta, key_size, key, value_size, value, headers = body
        base_sequence = self.base_sequence
        sequence = increment_sequence(base_sequence, offset_delta) if base_sequence >= 0 else NO_SEQUENCE
        timestamp = self.log_append_time
        if timestamp is None:
            timestamp = wrap_int64(self.base_timestamp + timestamp_delta)  # Java long arithmetic
        return _new_tuple(
            Record,
            (wrap_int64(self.base_offset + offset_delta), timestamp, key, value, headers, sequence, attributes,
             key_size, value_size, MAGIC, None, None, self.is_control, self.timestamp_type),
        )


def header_cap(max_batch_bytes: int) -> int:
    """The most headers kseg reads in one record of a batch under ``max_batch_bytes``.

    Kafka bounds a header count only by the bytes left; each header read is an
    object of ~100 bytes in memory against 2 bytes on disk, so kseg caps them at
    one per 256 bytes of the batch cap (524288 at the 128 MiB default).
    """
    return max(1, max_batch_bytes >> 8)


def _decode_headers(data: Buffer, pos: int, end: int, cap: int) -> tuple[tuple[Header, ...], int]:
    """Headers of one record; count and key-size checks raise Kafka's own messages, then kseg's cap."""
    count, pos = decode_varint(data, pos, end)
    if count < 0:
        raise InvalidRecord(f"Found invalid number of record headers {count}", offset=pos, field="headers")
    if count > end - pos:
        raise InvalidRecord(
            f"Found invalid number of record headers. {count} is larger than the remaining size of the buffer",
            offset=pos,
            field="headers",
        )
    if count > cap:
        raise LimitExceeded(
            f"record has {count} headers, more than the {cap} kseg reads in one record "
            f"(one per 256 bytes of --max-batch-bytes); --max-batch-bytes raises the limit",
            offset=pos,
            field="headers",
        )
    headers = []
    for i in range(count):
        key_size, pos = decode_varint(data, pos, end)
        if key_size < 0:
            raise InvalidRecord(f"Invalid negative header key size {key_size}", offset=pos, field=f"headers[{i}].key")
        if key_size > end - pos:
            raise IndexError
        key = data[pos : pos + key_size]
        pos += key_size
        value_size, pos = decode_varint(data, pos, end)
        if value_size >= 0:
            if value_size > end - pos:
                raise IndexError
            value = data[pos : pos + value_size]
            pos += value_size
        else:
            value = None
        headers.append((key, value))
    return tuple(headers), pos
