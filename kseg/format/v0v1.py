"""Magic 0 and 1: messages and message sets (``LegacyRecord``/``AbstractLegacyRecordBatch``).

Each log entry is ``offset int64 | size int32 | message``; the message is::

    crc         uint32   CRC-32 of [magic, end of message)
    magic       int8     0 or 1
    attributes  int8     bits 0-2 codec; bit 3 LogAppendTime (magic 1 only)
    timestamp   int64    magic 1 only
    keyLength   int32    negative = null
    key
    valueLength int32    negative = null
    value

A compressed message set is one *wrapper* message whose value is the
compressed concatenation of complete inner entries.  The wrapper's offset is
the **last** inner offset.  Inner offsets are absolute under a magic-0 wrapper
and relative (0, 1, ...) under a magic-1 wrapper, where
``absolute = wrapper_offset - last_inner_offset + inner_offset`` -- except that
a wrapper offset of 0 means base 0 (some librdkafka versions wrote that).
Each inner message is read with its own magic: real clients put magic-0
messages inside magic-1 wrappers, and Kafka's reader tolerates it.

Under a magic-1 wrapper, magic-1 inner messages take the wrapper's timestamp
type, and with LogAppendTime the wrapper's timestamp too.
"""

from __future__ import annotations

from collections.abc import Iterator

from kseg.errors import Corrupt, CrcMismatch
from kseg.format import compression
from kseg.format.layout import (
    CODEC_MASK,
    LEGACY_CRC_OFFSET,
    LOG_OVERHEAD,
    RECORD_OVERHEAD_V0,
    SIZE_OFFSET,
    TIMESTAMP_TYPE_MASK,
    Buffer,
)
from kseg.format.legacy_inner import Checked, Wrapper, inner_check
from kseg.format.model import (
    CREATE_TIME,
    LOG_APPEND_TIME,
    NO_PARTITION_LEADER_EPOCH,
    NO_PRODUCER_EPOCH,
    NO_PRODUCER_ID,
    NO_SEQUENCE,
    NO_TIMESTAMP,
    NO_TIMESTAMP_TYPE,
    Record,
    codec_name,
    wrap_int64,
)
from kseg.format.v0v1_deep import _compressed_inner, _Inner, _regions, _stream_records, _walk
from kseg.format.v0v1_message import (
    _INT64_MIN,
    KEY_SIZE_OFFSET_V0,
    KEY_SIZE_OFFSET_V1,
    LENGTH,
    _key_size_offset,
    _Message,
    _shallow_record,
)

__all__ = ["KEY_SIZE_OFFSET_V0", "KEY_SIZE_OFFSET_V1", "LENGTH", "LegacyBatch"]


class LegacyBatch:
    """A magic-0/1 top-level message: one record when uncompressed, a wrapper when compressed.

    Exposes the same attributes as :class:`kseg.format.v2.V2Batch`, with the
    values Kafka's ``AbstractLegacyRecordBatch`` reports (no producer, no
    leader epoch, ``count`` None).
    """

    __slots__ = ("_cap", "_msg", "_records", "_walked", "_walked_cap")

    def __init__(self, buf: Buffer, position: int) -> None:
        self._msg = _Message(buf, position)
        self._records: list[Record] | None = None
        self._cap = 0  # the read cap ``_records`` were decompressed under: another cap reads again
        self._walked: _Inner | None = None
        self._walked_cap = 0

    # -- header values ------------------------------------------------------------
    @property
    def buf(self) -> Buffer:
        return self._msg.buf

    @property
    def position(self) -> int:
        return self._msg.position

    @property
    def size(self) -> int:
        return self._msg.size

    @property
    def magic(self) -> int:
        return self._msg.magic

    @property
    def crc(self) -> int:
        return self._msg.crc

    @property
    def attributes(self) -> int:
        return self._msg.attributes

    @property
    def codec_id(self) -> int:
        return self._msg.attributes & CODEC_MASK

    @property
    def codec(self) -> str:
        return codec_name(self.codec_id)

    @property
    def timestamp_type(self) -> str:
        if self._msg.magic == 0:
            return NO_TIMESTAMP_TYPE
        return LOG_APPEND_TIME if self._msg.attributes & TIMESTAMP_TYPE_MASK else CREATE_TIME

    @property
    def max_timestamp(self) -> int:
        return NO_TIMESTAMP if self._msg.magic == 0 else self._msg.timestamp_field

    @property
    def last_offset(self) -> int:
        return self._msg.offset

    def stored_value(self) -> bytes | None:
        """The message's value as stored (a wrapper's compressed inner messages); None when null.

        Raises InvalidRecord where a length runs past the message (``key_and_value``).
        """
        return self._msg.key_and_value()[3]

    @property
    def base_offset(self) -> int:
        """``baseOffset()`` under the default read cap; :meth:`first_offset` takes the cap."""
        return self.first_offset()

    def first_offset(self, max_decompressed: int = compression.DEFAULT_MAX_DECOMPRESSED) -> int:
        """``baseOffset()``: the first inner offset, which for a wrapper means decompressing under the cap.

        A wrapper past ``max_decompressed`` raises :class:`~kseg.errors.LimitExceeded`.
        """
        if self.codec_id == compression.CODEC_NONE:
            return self._msg.offset
        # Kafka decodes inner keys and values lazily: a bad inner key or value length does not
        # stop it from reporting the base offset (the first pass's refusal is not raised here).
        inner = self._inner(max_decompressed)
        if inner.first_compressed:
            raise _compressed_inner(0, inner.value_start)
        return inner.first if inner.base is None else wrap_int64(inner.base + inner.first)

    count = None
    producer_id = NO_PRODUCER_ID
    producer_epoch = NO_PRODUCER_EPOCH
    base_sequence = NO_SEQUENCE
    last_sequence = NO_SEQUENCE
    partition_leader_epoch = NO_PARTITION_LEADER_EPOCH
    is_transactional = False
    is_control = False
    delete_horizon_ms = None
    has_producer_id = False

    def lazy_sizes(self) -> tuple[int | None, int | None]:
        """(keySize, valueSize) as Kafka's lazy ``LegacyRecord`` reads this message: the stored ints, the
        value's at ``keyOffset + max(0, keySize)``; None where ``getInt`` would throw (past the message).

        Unlike :meth:`records` it does not check that the key and value fit: Kafka's dump tool prints these
        two before it slices either (:mod:`kseg.ops.dump.legacy`).
        """
        key_offset = _key_size_offset(self._msg.magic)
        key_size = self._int_in_message(key_offset)
        if key_size is None:
            return None, None
        return key_size, self._int_in_message(key_offset + LENGTH.size + max(0, key_size))

    def _int_in_message(self, offset: int) -> int | None:
        """``buffer.getInt(offset)`` on the message's bytes (from its crc); None past them."""
        start = self._msg.position + LOG_OVERHEAD
        length = min(self._msg.message_size, len(self._msg.buf) - start)
        if offset + LENGTH.size > length:
            return None
        return int(LENGTH.unpack_from(self._msg.buf, start + offset)[0])

    # -- checks -------------------------------------------------------------------
    def compute_crc(self) -> int:
        return self._msg.compute_crc()

    def is_valid(self) -> bool:
        return self._msg.is_valid()

    def ensure_valid(self) -> None:
        """Raise what ``LegacyRecord.ensureValid()`` throws, located at this message."""
        msg = self._msg
        if msg.message_size < RECORD_OVERHEAD_V0:
            raise Corrupt(
                "Record is corrupt (crc could not be retrieved as the record is too small, "
                f"size = {msg.message_size})",
                offset=msg.position + SIZE_OFFSET,
                field="message.size",
            )
        computed = msg.compute_crc()
        if computed != msg.crc:
            raise CrcMismatch(
                f"Record is corrupt (stored crc = {msg.crc}, computed crc = {computed})",
                stored=msg.crc,
                computed=computed,
                offset=msg.position + LEGACY_CRC_OFFSET,
                field="message.crc",
            )

    # -- records --------------------------------------------------------------------
    def iter_records(self, max_decompressed: int = compression.DEFAULT_MAX_DECOMPRESSED) -> Iterator[Record]:
        """The records, as Kafka's deep iterator gives them; a wrapper's are streamed.

        Everything the records could raise is raised here, before the first is handed out (the
        first pass, :mod:`kseg.format.legacy_inner`); the second pass decompresses again and
        builds one record at a time, so a wrapper of millions of messages is never held.
        """
        if self.codec_id == compression.CODEC_NONE:
            return iter(self.records(max_decompressed))
        inner = self._inner(max_decompressed)
        if inner.problem is not None:
            raise inner.problem.with_traceback(None)
        if inner.data is not None:
            return iter(self.records(max_decompressed))
        return _stream_records(self._msg, inner, max_decompressed)

    def records(self, max_decompressed: int = compression.DEFAULT_MAX_DECOMPRESSED) -> list[Record]:
        """All records in a list (a small wrapper's are kept; :meth:`iter_records` streams a large one)."""
        if self._records is None or (self._cap != max_decompressed and self.codec_id != compression.CODEC_NONE):
            if self.codec_id == compression.CODEC_NONE:
                self._records = [_shallow_record(self._msg)]
                self._cap = max_decompressed
                return self._records
            inner = self._inner(max_decompressed)
            if inner.problem is not None:
                raise inner.problem.with_traceback(None)
            records = list(_stream_records(self._msg, inner, max_decompressed))
            if inner.data is None:
                return records  # a large wrapper: not kept
            self._records, self._cap = records, max_decompressed
        return self._records

    def record_count(self, max_decompressed: int = compression.DEFAULT_MAX_DECOMPRESSED) -> int:
        """``len(records())`` without building them: the same errors, the first pass only."""
        if self.codec_id == compression.CODEC_NONE:
            return len(self.records(max_decompressed))
        inner = self._inner(max_decompressed)
        if inner.problem is not None:
            raise inner.problem.with_traceback(None)
        return inner.count

    def check_inner(self, max_decompressed: int = compression.DEFAULT_MAX_DECOMPRESSED) -> Checked:
        """``verify --deep``'s look at every inner message of a wrapper (:func:`legacy_inner.inner_check`),
        streamed; raises what :meth:`records` raises."""
        inner = self._inner(max_decompressed)
        if inner.problem is not None:
            raise inner.problem.with_traceback(None)
        msg = self._msg
        wrapper = Wrapper(msg.magic, inner.base, bool(msg.attributes & TIMESTAMP_TYPE_MASK), msg.timestamp_field)
        total = Checked(0, 0, 0, 0, _INT64_MIN)
        previous: int | None = None
        for buf, _at, regions in _regions(msg, inner, max_decompressed):
            got = inner_check(buf, 0, len(buf), wrapper, total.count, previous, total.largest)
            regions.consumed = got.stop
            if got.count:
                if total.count == 0:
                    total.first = got.first
                total.last = previous = got.last
                total.count += got.count
                total.largest = got.largest
                total.events += got.events
        return total

    def _inner(self, max_decompressed: int) -> _Inner:
        """The first pass over a wrapper under the cap (kept: it is a few numbers)."""
        if self._walked is None or self._walked_cap != max_decompressed:
            self._walked = None
            self._walked = _walk(self._msg, max_decompressed)
            self._walked_cap = max_decompressed
        return self._walked

    def __repr__(self) -> str:
        return f"LegacyBatch(position={self.position}, magic={self.magic}, offset={self.last_offset}, size={self.size})"
