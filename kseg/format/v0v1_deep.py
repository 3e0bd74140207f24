"""A V0/V1 wrapper's inner messages read as ``DeepRecordsIterator`` reads them, streamed.

The first pass (:func:`_walk`) decompresses the wrapper's value a piece at a time and walks its
inner entries (:mod:`kseg.format.legacy_inner`), raising every error reading it whole raised, in
the same order, and keeping a few numbers; the second (:func:`_stream_records`, or
``LegacyBatch.check_inner``) decompresses again and hands out one record at a time, so nothing per
inner message is held (docs/core.md, "A wrapper's inner messages, streamed").
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from kseg.errors import Corrupt, InvalidRecord, KsegError
from kseg.format import compression
from kseg.format.layout import (
    CODEC_MASK,
    LEGACY_ATTRIBUTES_OFFSET,
    LOG_OVERHEAD,
    MAGIC_OFFSET,
    RECORD_OVERHEAD_V0,
    SIZE_OFFSET,
    TIMESTAMP_TYPE_MASK,
    Buffer,
)
from kseg.format.legacy_inner import Regions, Wrapper, inner_records, inner_walk
from kseg.format.model import (
    CREATE_TIME,
    LOG_APPEND_TIME,
    Record,
    wrap_int64,
)
from kseg.format.v0v1_message import LENGTH, _Message, _shallow_record


@dataclass(frozen=True, slots=True)
class _Inner:
    """The first pass over a wrapper (``DeepRecordsIterator``'s constructor): ``count`` inner messages,
    the first and last offsets as stored, ``base`` (what inner offset 0 stands for under a magic-1
    wrapper; None: offsets as stored), where the value starts in the file, whether the first inner
    message has codec bits, the first refusal its records would raise, and the decompressed bytes
    when they are few (:data:`_KEEP`: read again from them, not decompressed again)."""

    count: int
    first: int
    last: int
    base: int | None
    value_start: int
    first_compressed: bool
    problem: KsegError | None
    data: bytes | None


#: A wrapper decompressing to at most this many bytes is kept decompressed (and its records listed)
#: between the two passes; a larger one is decompressed again, so nothing of it is held.
_KEEP = 1 << 20


def _value(wrapper: _Message) -> tuple[int, bytes, int]:
    """(codec, compressed value, its file position) of a wrapper, after the checks the
    ``DeepRecordsIterator`` constructor makes before it decompresses."""
    magic = wrapper.magic
    codec = wrapper.attributes & CODEC_MASK
    where = wrapper.position
    if magic not in (0, 1):
        raise InvalidRecord(f"Invalid wrapper magic found in legacy deep record iterator {magic}", offset=where + MAGIC_OFFSET, field="message.magic")
    if codec == compression.CODEC_ZSTD:
        raise InvalidRecord(
            f"Invalid wrapper compressionType found in legacy deep record iterator {magic}",
            offset=where + LEGACY_ATTRIBUTES_OFFSET,
            field="message.attributes",
        )
    _, _, value_size, value = wrapper.key_and_value()
    if value is None:
        raise InvalidRecord(f"Found invalid compressed record set with null value (magic = {magic})", offset=where, field="message.value")
    return codec, value, wrapper.end - value_size


def _chunks(wrapper: _Message, max_decompressed: int) -> Iterator[bytes | memoryview]:
    """A wrapper's decompressed value a piece at a time, codec errors located at the value."""
    codec, value, value_start = _value(wrapper)
    try:
        yield from compression.decompress_chunks(codec, value, magic=wrapper.magic, max_size=max_decompressed)
    except KsegError as err:
        raise err.located(value_start, "message.value") from None


def _walk(wrapper: _Message, max_decompressed: int) -> _Inner:
    """Decompress a wrapper once, walking its inner entries as they come (:func:`inner_walk`).

    The errors and their order are those of reading it whole: the wrapper's own, the codec's (which
    win over a bad entry seen before them: the stream is read to its end), an entry size below the
    V0 minimum, no entries, the magic-1 wrapper offset; the first record refusal is kept, not raised.
    """
    value_start = _value(wrapper)[2]
    kept: list[bytes] | None = []
    kept_size = 0
    count = first = last = 0
    first_compressed = False
    corrupt: KsegError | None = None
    problem: KsegError | None = None
    regions = Regions(_chunks(wrapper, max_decompressed))
    for buf, at in regions:
        if kept is not None:
            kept_size = len(buf) + at
            kept = None if kept_size > _KEEP else kept
        if corrupt is not None:
            regions.consumed = len(buf)  # read on for a codec error, keeping nothing
            continue
        walked = inner_walk(buf, 0, len(buf))
        if walked.count and not count:
            first, first_compressed = walked.first, walked.first_compressed
        if problem is None and walked.record_problem is not None:
            problem = _refusal(buf, walked.record_problem, count + walked.record_index, at, value_start)
        if walked.count:
            last = walked.last
        count += walked.count
        if walked.size_problem is not None:
            corrupt = Corrupt(
                f"Record size is less than the minimum record overhead ({RECORD_OVERHEAD_V0})"
                f" (inner entry at byte {at + walked.size_problem} of the decompressed value)",
                offset=value_start,
                field=f"inner[{count}].size",
            )
            regions.consumed = len(buf)
            continue
        if kept is not None:
            kept.append(bytes(buf[: walked.stop]))
        regions.consumed = walked.stop
    if corrupt is not None:
        raise corrupt
    if not count:
        raise InvalidRecord("Found invalid compressed record set with no inner records", offset=value_start, field="message.value")
    base = _absolute_base(wrapper, last) if wrapper.magic == 1 else None
    if base is not None and base < 0:
        base = None  # Kafka: ``if (absoluteBaseOffset >= 0)``, else the inner offsets as stored
    data = b"".join(kept) if kept is not None else None
    return _Inner(count, first, last, base, value_start, first_compressed, problem, data)


def _refusal(buf: Buffer, pos: int, index: int, at: int, value_start: int) -> KsegError | None:
    """The error kseg's reader raises for inner message ``index`` at ``pos`` of ``buf`` (stream byte
    ``at + pos``): codec bits, or a key or value running past the message."""
    (size,) = LENGTH.unpack_from(buf, pos + SIZE_OFFSET)
    msg = _Message(buf, pos, pos + LOG_OVERHEAD + size)
    if msg.attributes & CODEC_MASK:
        return _compressed_inner(index, value_start)
    try:
        _shallow_record(msg)
    except KsegError as err:
        where = None if err.offset is None else err.offset + at
        err.message += f" (inner message {index}, at byte {where} of the decompressed value)"
        err.offset = value_start
        return err
    return None  # pragma: no cover - inner_walk refuses only what _shallow_record refuses


def _compressed_inner(index: int, value_start: int) -> InvalidRecord:
    return InvalidRecord("Inner messages must not be compressed", offset=value_start, field=f"inner[{index}].attributes")


def _regions(
    wrapper: _Message, inner: _Inner, max_decompressed: int
) -> Iterator[tuple[Buffer, int, Regions]]:
    """The second pass's buffers of whole entries (a small wrapper's kept bytes, or decompressed
    again), each with its stream position and the :class:`Regions` to tell where the walk stopped."""
    regions = Regions(iter(()) if inner.data is not None else _chunks(wrapper, max_decompressed))
    if inner.data is not None:
        yield inner.data, 0, regions
        return
    for buf, at in regions:
        yield buf, at, regions


def _stream_records(wrapper: _Message, inner: _Inner, max_decompressed: int) -> Iterator[Record]:
    """A wrapper's inner records with absolute offsets (``DeepRecordsIterator``), one at a time.

    The compiled core builds them a run at a time (:func:`legacy_inner.inner_records`); a message it
    leaves (an inner magic other than 0 and 1) and the pure-Python path read here, one by one.
    """
    magic = wrapper.magic
    wrapper_ts = wrapper.timestamp_field if magic != 0 else None
    wrapper_type = None
    if magic != 0:
        wrapper_type = LOG_APPEND_TIME if wrapper.attributes & TIMESTAMP_TYPE_MASK else CREATE_TIME
    base = inner.base
    runs = Wrapper(magic, base, wrapper_type == LOG_APPEND_TIME, wrapper.timestamp_field)
    for buf, _at, regions in _regions(wrapper, inner, max_decompressed):
        pos, end = 0, len(buf)
        while end - pos >= LOG_OVERHEAD:
            run = inner_records(buf, pos, end, runs)
            if run:
                pos, records = run
                regions.consumed = pos
                yield from records
                continue
            (size,) = LENGTH.unpack_from(buf, pos + SIZE_OFFSET)
            if size < RECORD_OVERHEAD_V0 or size > end - pos - LOG_OVERHEAD:
                break
            msg = _Message(buf, pos, pos + LOG_OVERHEAD + size)
            pos = msg.end
            if msg.magic == 1 and magic == 1:
                record = _shallow_record(msg, wrapper_ts, wrapper_type)
            else:
                record = _shallow_record(msg)
            if base is not None:
                record = record.replace(offset=wrap_int64(base + record.offset))
            regions.consumed = pos
            yield record
        regions.consumed = pos


def _absolute_base(wrapper: _Message, last_inner: int) -> int:
    """The offset inner offset 0 stands for under a magic-1 wrapper (wrapper offset 0 means base 0)."""
    if wrapper.offset == 0:
        return 0
    if wrapper.offset < last_inner:
        raise InvalidRecord(
            f"Found invalid wrapper offset in compressed v1 message set, wrapper offset '{wrapper.offset}' "
            f"is less than the last inner message offset '{last_inner}' and it is not zero.",
            offset=wrapper.position,
            field="message.offset",
        )
    return wrap_int64(wrapper.offset - last_inner)  # Java long arithmetic: it may wrap to a negative base
