"""Objects shared by every magic: records, and the names Kafka prints.

A *batch* is a V2 RecordBatch or a V0/V1 top-level message (the wrapper, when
compressed); a *record* is what is inside.  Batch classes live beside their
format (``v2.V2Batch``, ``v0v1.LegacyBatch``) and share the attribute names
below, so nothing above ``kseg.format`` branches on the magic.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from operator import itemgetter

NO_TIMESTAMP = -1
NO_PRODUCER_ID = -1
NO_PRODUCER_EPOCH = -1
NO_SEQUENCE = -1
NO_PARTITION_LEADER_EPOCH = -1

#: ``TimestampType.toString()`` in kafka-clients, by attribute bit (magic >= 1).
CREATE_TIME = "CreateTime"
LOG_APPEND_TIME = "LogAppendTime"
NO_TIMESTAMP_TYPE = "NoTimestampType"
TIMESTAMP_TYPES = (CREATE_TIME, LOG_APPEND_TIME)

#: ``CompressionType.name`` by codec id (attribute bits 0-2).
CODEC_NAMES = ("none", "gzip", "snappy", "lz4", "zstd")


def codec_name(codec_id: int) -> str:
    """Kafka's codec name; ids 5-7 (which Kafka refuses to read) print as ``unknown(N)``."""
    return CODEC_NAMES[codec_id] if 0 <= codec_id < len(CODEC_NAMES) else f"unknown({codec_id})"


#: Header = (key, value).  Kafka's header key is a Java String written as UTF-8;
#: we keep the raw bytes so that nothing is lost when they are not valid UTF-8.
Header = tuple[bytes, "bytes | None"]


INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1


def wrap_int32(value: int) -> int:
    """``value`` as a Java int: wrapped to 32-bit two's complement."""
    return ((value + 0x80000000) & 0xFFFFFFFF) - 0x80000000


def wrap_int64(value: int) -> int:
    """``value`` as a Java long: wrapped to 64-bit two's complement (Kafka's offset/timestamp sums)."""
    return ((value + 0x8000000000000000) & 0xFFFFFFFFFFFFFFFF) - 0x8000000000000000


def increment_sequence(sequence: int, increment: int) -> int:
    """Add to a producer sequence, wrapping past Integer.MAX_VALUE to 0 as Kafka does.

    ``DefaultRecordBatch.incrementSequence`` in Java int arithmetic, overflow included:
    with a negative increment or sequence (only in damaged batches) the results are
    Kafka's, not the mathematical ones (checked against Kafka in tests/interop).
    """
    if sequence > wrap_int32(0x7FFFFFFF - increment):
        return wrap_int32(increment - (0x7FFFFFFF - sequence) - 1)
    return wrap_int32(sequence + increment)


_RECORD_FIELDS = (
    "offset",
    "timestamp",
    "key",
    "value",
    "headers",
    "sequence",
    "attributes",
    "key_size",
    "value_size",
    "magic",
    "crc",
    "valid",
    "is_control",
    "timestamp_type",
)


class Record(tuple):
    """One record as Kafka's ``Record`` API reports it; immutable.

    ``key_size``/``value_size`` are the raw stored lengths (-1, or any negative
    number, for null); the dump tool prints them as stored for V0/V1 messages
    (``LegacyRecord``) and as -1 for a null V2 key or value (``DefaultRecord``).  ``crc`` and ``valid`` are
    set for V0/V1 messages only (a V2 record has no checksum of its own).
    ``is_control`` marks records of a control batch; :mod:`kseg.format.control`
    decodes their key and value.

    A tuple subclass rather than a dataclass: a full decode builds one per
    record, and a tuple is built in a third of the time (bench/bench_format.py).
    """

    __slots__ = ()
    _fields = _RECORD_FIELDS

    def __new__(
        cls,
        offset: int,
        timestamp: int,
        key: bytes | None,
        value: bytes | None,
        headers: tuple[Header, ...] = (),
        sequence: int = NO_SEQUENCE,
        attributes: int = 0,
        key_size: int = -1,
        value_size: int = -1,
        magic: int = 2,
        crc: int | None = None,
        valid: bool | None = None,
        is_control: bool = False,
        timestamp_type: str = CREATE_TIME,
    ) -> Record:
        return tuple.__new__(
            cls,
            (offset, timestamp, key, value, headers, sequence, attributes, key_size, value_size,
             magic, crc, valid, is_control, timestamp_type),
        )

    offset: int = property(itemgetter(0))  # type: ignore[assignment]
    timestamp: int = property(itemgetter(1))  # type: ignore[assignment]
    key: bytes | None = property(itemgetter(2))  # type: ignore[assignment]
    value: bytes | None = property(itemgetter(3))  # type: ignore[assignment]
    headers: tuple[Header, ...] = property(itemgetter(4))  # type: ignore[assignment]
    sequence: int = property(itemgetter(5))  # type: ignore[assignment]
    attributes: int = property(itemgetter(6))  # type: ignore[assignment]
    key_size: int = property(itemgetter(7))  # type: ignore[assignment]
    value_size: int = property(itemgetter(8))  # type: ignore[assignment]
    magic: int = property(itemgetter(9))  # type: ignore[assignment]
    crc: int | None = property(itemgetter(10))  # type: ignore[assignment]
    valid: bool | None = property(itemgetter(11))  # type: ignore[assignment]
    is_control: bool = property(itemgetter(12))  # type: ignore[assignment]
    timestamp_type: str = property(itemgetter(13))  # type: ignore[assignment]

    def replace(self, **changes: object) -> Record:
        """A copy with some fields changed (records themselves never change)."""
        values = dict(zip(_RECORD_FIELDS, self, strict=True))
        values.update(changes)
        return Record(**values)

    def as_dict(self) -> dict[str, object]:
        return dict(zip(_RECORD_FIELDS, self, strict=True))

    def __repr__(self) -> str:
        inner = ", ".join(f"{name}={value!r}" for name, value in zip(_RECORD_FIELDS, self, strict=True))
        return f"Record({inner})"


@dataclass(slots=True)
class RecordSpec:
    """What a writer appends: Kafka's ``appendWithOffset(offset, timestamp, key, value, headers)``.

    Header keys may be ``str`` (written as UTF-8, as Kafka does) or raw ``bytes``.
    """

    offset: int
    timestamp: int
    key: bytes | None
    value: bytes | None
    headers: tuple[tuple[str | bytes, bytes | None], ...] = field(default_factory=tuple)
