"""The one V2 record scanner: a batch's records as flat columns of integers (spans, not objects).

Every reader of magic-2 records starts here: ``V2Batch.iter_records`` (which
falls back to the validating reader of :mod:`kseg.format.v2_validate` when
this says no), the JSON writer of ``kseg dump`` (:mod:`kseg.render.records_json`)
and the Spark source (:mod:`kseg.spark.decode`).  :func:`scan_records` walks
the record layout (see :mod:`kseg.format.v2`) once and returns, per record,
eight integers in one flat list, :attr:`RecordScan.fields`::

    offset_delta, timestamp_delta, attributes,
    key_start, key_length, value_start, value_length, header_count

and, per header, four in a second flat list, :attr:`RecordScan.header_fields`
(in record order)::

    key_start, key_length, value_start, value_length

Starts are positions in the scanned buffer; a negative length is a null key
or value, kept as stored (the dump tool prints it).  Keys and values are not
copied: :class:`RecordScan` slices the columns a consumer asks for.  Flat
integer lists with a fixed stride are what a compiled core can hand back as
one array each (docs/core.md); in Python, one ``list.extend`` per record is the
cheapest way to fill them, and ``fields[i::8]`` takes a column at C speed.

It is a scanner, not an authority: it answers only for well-formed records
that fill their region exactly, and returns ``None`` at the first thing it
does not expect -- a length that points past its record or the region, a
record whose length does not match what was read, a negative header count or
header key length, bytes left over, a varint that is too long, a read past
the buffer.  Kafka accepts exactly these records (the validating reader
raises for everything else, with Kafka's messages).

Bounds: positions only ever grow, and a record must end exactly where its
length says, so a field whose length points past its record is caught at the
record's end, a record that runs past the region at the region's end
(``pos == end``), and a read past the buffer raises ``IndexError`` (a
``None``).  Nothing is sliced before every record has passed.

Varints of one and two bytes -- nearly every length and delta -- are decoded
inline by one tuple index (:func:`kseg.format.varint.short_varint_table`);
longer ones go to :mod:`kseg.format.varint`.  That inlining, here only, is the
loop's speed (bench/bench_format.py, bench/bench_dump.py).

With the compiled core (docs/core.md) the loop runs in ``kseg._core``, which
hands back the same two flat lists; the Python loop below stays the reference
(tests/core/ compare the two).
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import accumulate, compress
from mmap import mmap

from kseg.errors import KsegError
from kseg.format._core import CORE, call
from kseg.format.model import INT64_MAX, INT64_MIN, Header, increment_sequence, wrap_int64
from kseg.format.varint import decode_varint, decode_varlong, short_varint_table

#: What records are read from: bytes or a mapped file, whose slices -- keys, values -- are bytes
#: (a memoryview would hand out views of the file: ``V2Batch`` copies a batch out of any other buffer).
Buffer = bytes | mmap

#: Magic 2: the batch format these records belong to.
MAGIC = 2

#: Integers per record in :attr:`RecordScan.fields`, and the index of each.
RECORD_STRIDE = 8
OFFSET_DELTA, TIMESTAMP_DELTA, ATTRIBUTES, KEY_START, KEY_LENGTH, VALUE_START, VALUE_LENGTH, HEADER_COUNT = range(8)
#: Integers per header in :attr:`RecordScan.header_fields`: key start, key length, value start, value length.
HEADER_STRIDE = 4

_INT32_MAX = 0x7FFFFFFF
_SHORT = 1 << 13  # a two-byte zigzag varint lies in [-2**13, 2**13)
#: A record with more headers goes to the validating reader, which reads it alone under its cap.
SCAN_MAX_HEADERS = 1 << 12


def scan_records(
    buf: Buffer, start: int, end: int, count: int, base_offset: int = 0, base_timestamp: int = 0
) -> RecordScan | None:
    """``count`` well-formed records filling ``buf[start:end]`` exactly, as columns; ``None`` at anything else.

    ``buf`` is a file's own buffer (an uncompressed batch, read in place) or a
    batch's decompressed records.  ``base_offset`` and ``base_timestamp`` are
    the batch's, kept for :meth:`RecordScan.offsets` and :meth:`RecordScan.timestamps`.
    """
    scanned = scan_some_records(buf, start, end, count, base_offset, base_timestamp)
    if scanned is None or scanned[1] != end:
        return None
    return scanned[0]


def scan_some_records(
    buf: Buffer, start: int, end: int, count: int, base_offset: int = 0, base_timestamp: int = 0
) -> tuple[RecordScan, int] | None:
    """The next ``count`` well-formed records of ``buf[start:end]`` and where they end (bytes may follow).

    For reading a large batch a part at a time (``V2Batch.iter_records``):
    records of the same batch scanned in parts are exactly those of one scan.
    """
    if count < 0 or start < 0 or end > len(buf) or count > end - start:
        return None
    if CORE is not None:
        scanned = call(CORE.scan_records, start, buf, start, end, count)
        if scanned is not NotImplemented:
            if scanned is None:
                return None
            fields, header_fields, pos, long_timestamps = scanned
            scan = RecordScan(buf, fields, header_fields, base_offset, base_timestamp,
                              short_timestamps=not long_timestamps)
            return scan, pos
    return _python_scan_some(buf, start, count, base_offset, base_timestamp, end)


def _python_scan_some(
    buf: Buffer, start: int, count: int, base_offset: int, base_timestamp: int, end: int
) -> tuple[RecordScan, int] | None:
    """:func:`scan_some_records` in Python: the reference."""
    fields: list[int] = []
    header_fields: list[int] = []
    try:
        pos, long_timestamps = _scan(buf, start, count, fields, header_fields, short_varint_table())
    except (IndexError, KsegError):
        return None
    if pos < 0 or pos > end:  # positions only grow: a record past the region ends past it
        return None
    scan = RecordScan(buf, fields, header_fields, base_offset, base_timestamp, short_timestamps=not long_timestamps)
    return scan, pos


def _scan(buf: Buffer, pos: int, count: int, fields: list[int], header_fields: list[int],
          short: tuple[int, ...]) -> tuple[int, bool]:
    """The loop: fills ``fields``; returns where the records end (-1 at one that is not well-formed) and
    whether a timestamp delta took more than two bytes (then it may wrap: :meth:`RecordScan.timestamps`)."""
    put = fields.extend
    long_timestamps = False
    for _ in range(count):
        if (b := buf[pos]) < 0x80:  # -- length: one byte, two bytes, or the general decoder
            record_end, pos = pos + 1 + short[b], pos + 1
        elif (c := buf[pos + 1]) < 0x80:
            record_end, pos = pos + 2 + short[b + (c << 7)], pos + 2
        else:
            length, pos = decode_varint(buf, pos)
            record_end = pos + length
        attributes = buf[pos]
        if (b := buf[pos + 1]) < 0x80:  # -- timestamp delta
            timestamp_delta, pos = short[b], pos + 2
        elif (c := buf[pos + 2]) < 0x80:
            timestamp_delta, pos = short[b + (c << 7)], pos + 3
        else:
            timestamp_delta, pos = decode_varlong(buf, pos + 1, record_end)
            long_timestamps = True
        if (b := buf[pos]) < 0x80:  # -- offset delta
            offset_delta, pos = short[b], pos + 1
        elif (c := buf[pos + 1]) < 0x80:
            offset_delta, pos = short[b + (c << 7)], pos + 2
        else:
            offset_delta, pos = decode_varint(buf, pos, record_end)
        if (b := buf[pos]) < 0x80:  # -- key: its length, then its bytes (none when negative: null)
            key_length, pos = short[b], pos + 1
        elif (c := buf[pos + 1]) < 0x80:
            key_length, pos = short[b + (c << 7)], pos + 2
        else:
            key_length, pos = decode_varint(buf, pos, record_end)
        key_start = pos
        if key_length > 0:
            pos += key_length
        if (b := buf[pos]) < 0x80:  # -- value
            value_length, pos = short[b], pos + 1
        elif (c := buf[pos + 1]) < 0x80:
            value_length, pos = short[b + (c << 7)], pos + 2
        else:
            value_length, pos = decode_varint(buf, pos, record_end)
        value_start = pos
        if value_length > 0:
            pos += value_length
        if buf[pos] == 0:  # -- headers: none, nearly always
            header_count, pos = 0, pos + 1
        else:
            header_count, pos = _scan_headers(buf, pos, record_end, header_fields, short)
        if pos != record_end:
            return -1, long_timestamps
        put((offset_delta, timestamp_delta, attributes, key_start, key_length, value_start, value_length,
             header_count))
    return pos, long_timestamps


def _scan_headers(buf: Buffer, pos: int, end: int, out: list[int], short: tuple[int, ...]) -> tuple[int, int]:
    """One record's headers, appended to ``out`` four integers each; IndexError where Kafka throws."""
    if (b := buf[pos]) < 0x80:
        count, pos = short[b], pos + 1
    else:
        count, pos = decode_varint(buf, pos, end)
    if count < 0 or count > end - pos or count > SCAN_MAX_HEADERS:
        raise IndexError
    for _ in range(count):
        if (b := buf[pos]) < 0x80:
            key_length, pos = short[b], pos + 1
        else:
            key_length, pos = decode_varint(buf, pos, end)
        if key_length < 0:
            raise IndexError
        key_start = pos
        pos += key_length
        if (b := buf[pos]) < 0x80:
            value_length, pos = short[b], pos + 1
        else:
            value_length, pos = decode_varint(buf, pos, end)
        out += (key_start, key_length, pos, value_length)
        if value_length > 0:
            pos += value_length
        if pos > end:
            raise IndexError
    return count, pos


class RecordScan:
    """The scanned records of one batch: the buffer, the flat columns, and the batch's bases.

    One object per batch.  Each column method builds one list per call (with
    comprehensions and C-level slicing, no object per field it does not return).
    """

    __slots__ = ("base_offset", "base_timestamp", "buf", "count", "fields", "header_fields", "short_timestamps")

    def __init__(
        self,
        buf: Buffer,
        fields: list[int],
        header_fields: list[int],
        base_offset: int,
        base_timestamp: int,
        *,
        short_timestamps: bool = False,
    ) -> None:
        self.buf = buf
        self.fields = fields
        self.header_fields = header_fields
        self.count = len(fields) // RECORD_STRIDE
        self.base_offset = base_offset
        self.base_timestamp = base_timestamp
        #: Every timestamp delta fits two varint bytes (|delta| <= 2**13), as the scanner saw.
        self.short_timestamps = short_timestamps

    def subset(self, indexes: Sequence[int]) -> RecordScan:
        """The scan of only the records at ``indexes`` (ascending): the same columns, fewer rows.

        For a reader that tests columns first and builds objects only for the records it keeps
        (kseg grep); offsets, timestamps and sequences come out as for the whole scan.
        """
        fields: list[int] = []
        header_fields: list[int] = []
        counts = self.fields[HEADER_COUNT::RECORD_STRIDE]
        firsts = list(accumulate(counts, initial=0))
        for i in indexes:
            fields += self.fields[i * RECORD_STRIDE : (i + 1) * RECORD_STRIDE]
            if counts[i]:
                header_fields += self.header_fields[firsts[i] * HEADER_STRIDE : firsts[i + 1] * HEADER_STRIDE]
        return RecordScan(self.buf, fields, header_fields, self.base_offset, self.base_timestamp,
                          short_timestamps=self.short_timestamps)

    def column(self, index: int) -> list[int]:
        """One integer per record: ``scan.column(KEY_LENGTH)``."""
        return self.fields[index::RECORD_STRIDE]

    def offsets(self) -> list[int]:
        """``baseOffset + offsetDelta`` in Java long arithmetic (wrapping only next to the int64 limits)."""
        base = self.base_offset
        deltas = self.fields[OFFSET_DELTA::RECORD_STRIDE]
        if INT64_MIN + _INT32_MAX + 1 <= base <= INT64_MAX - _INT32_MAX - 1:  # no int32 delta can wrap
            return [base + d for d in deltas]
        return [wrap_int64(base + d) for d in deltas]

    def timestamps(self) -> list[int]:
        """``baseTimestamp + timestampDelta`` in Java long arithmetic: the CreateTime timestamps."""
        base = self.base_timestamp
        deltas = self.fields[TIMESTAMP_DELTA::RECORD_STRIDE]
        if self.short_timestamps and INT64_MIN + _SHORT <= base <= INT64_MAX - _SHORT:
            return [base + d for d in deltas]
        if not deltas or (base + min(deltas) >= INT64_MIN and base + max(deltas) <= INT64_MAX):
            return [base + d for d in deltas]
        return [wrap_int64(base + d) for d in deltas]

    def sequences(self, base_sequence: int) -> list[int]:
        """``baseSequence + offsetDelta`` wrapped as Kafka does; -1 throughout without a base sequence."""
        deltas = self.fields[OFFSET_DELTA::RECORD_STRIDE]
        if base_sequence < 0:
            return [-1] * len(deltas)
        if deltas and min(deltas) < 0:  # only in damaged batches: Kafka's int arithmetic overflows
            return [increment_sequence(base_sequence, d) for d in deltas]
        return [s - 0x80000000 if s > _INT32_MAX else s for s in [base_sequence + d for d in deltas]]

    def keys(self) -> list[bytes | None]:
        return _slices(self.buf, self.fields[KEY_START::RECORD_STRIDE], self.fields[KEY_LENGTH::RECORD_STRIDE])

    def values(self) -> list[bytes | None]:
        return _slices(self.buf, self.fields[VALUE_START::RECORD_STRIDE], self.fields[VALUE_LENGTH::RECORD_STRIDE])

    def headers(self) -> list[tuple[Header, ...]]:
        """Each record's headers as (key bytes, value bytes or None) pairs; ``()`` for none."""
        counts = self.fields[HEADER_COUNT::RECORD_STRIDE]
        out: list[tuple[Header, ...]] = [()] * len(counts)
        if not any(counts):
            return out
        buf, spans = self.buf, self.header_fields
        first = 0
        for index in compress(range(len(counts)), counts):
            pairs: list[Header] = []
            last = first + counts[index] * HEADER_STRIDE
            for at in range(first, last, HEADER_STRIDE):
                ks, kl, vs, vl = spans[at : at + HEADER_STRIDE]
                pairs.append((buf[ks : ks + kl], None if vl < 0 else buf[vs : vs + vl]))
            first = last
            out[index] = tuple(pairs)
        return out


def _slices(buf: Buffer, starts: Sequence[int], lengths: Sequence[int]) -> list[bytes | None]:
    """``buf[start:start + length]`` per record, ``None`` where the length is negative (a null)."""
    if lengths and min(lengths) < 0:
        return [None if n < 0 else buf[s : s + n] for s, n in zip(starts, lengths, strict=True)]
    return [buf[s : s + n] for s, n in zip(starts, lengths, strict=True)]
