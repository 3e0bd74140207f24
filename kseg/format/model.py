"""Objects shared by every magic: records, and the names Kafka prints.

A *batch* is a V2 RecordBatch or a V0/V1 top-level message (the wrapper, when
compressed); a *record* is what is inside.  Batch classes live beside their
format (``v2.V2Batch``, ``v0v1.LegacyBatch``) and share the attribute names
below, so nothing above ``kseg.format`` branches on the magic.
"""

from __future__ import annotations

from dataclasses import dataclass, field

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


def increment_sequence(sequence: int, increment: int) -> int:
    """Add to a producer sequence, wrapping past Integer.MAX_VALUE to 0 as Kafka does."""
    if sequence > 0x7FFFFFFF - increment:
        return increment - (0x7FFFFFFF - sequence) - 1
    return sequence + increment


@dataclass(slots=True)
class Record:
    """One record as Kafka's ``Record`` API reports it.

    ``key_size``/``value_size`` are the raw stored lengths (-1, or any negative
    number, for null), as the dump tool prints them.  ``crc`` and ``valid`` are
    set for V0/V1 messages only (a V2 record has no checksum of its own).
    ``is_control`` marks records of a control batch; :mod:`kseg.format.control`
    decodes their key and value.
    """

    offset: int
    timestamp: int
    key: bytes | None
    value: bytes | None
    headers: tuple[Header, ...] = ()
    sequence: int = NO_SEQUENCE
    attributes: int = 0
    key_size: int = -1
    value_size: int = -1
    magic: int = 2
    crc: int | None = None
    valid: bool | None = None
    is_control: bool = False
    timestamp_type: str = CREATE_TIME


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
