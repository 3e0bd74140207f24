"""Where the length and count fields of a seed are, so mutations can attack them by name.

Every offset is derived from the structs of :mod:`kseg.format.layout` and :mod:`kseg.index`
(the field names below only label them, in the order the structs declare them), so the fuzzer
never declares a byte layout of its own.  The entry walk here is deliberately minimal and
independent of kseg's walker: it only has to find the batches of an undamaged seed, and a
fuzzer that trusted the code under test to locate its targets would miss that code's blind spots.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

from kseg.errors import KsegError
from kseg.format.layout import (
    BATCH_HEADER,
    ENTRY_PREFIX,
    LEGACY_CRC_OFFSET,
    LEGACY_HEADER,
    LEGACY_TIMESTAMP,
    LEGACY_TIMESTAMP_OFFSET,
    LOG_OVERHEAD,
    MAGIC_OFFSET,
    RECORD_BATCH_OVERHEAD,
    V2_ATTRIBUTES_OFFSET,
    V2_CRC_OFFSET,
)
from kseg.format.varint import decode_varint, decode_varlong
from kseg.index import OFFSET_ENTRY, TIME_ENTRY, TXN_ENTRY

V2_NAMES = (
    "base_offset", "batch_length", "partition_leader_epoch", "magic", "crc", "attributes",
    "last_offset_delta", "base_timestamp", "max_timestamp", "producer_id", "producer_epoch",
    "base_sequence", "records_count",
)
LEGACY_NAMES = ("offset", "message_size", "crc", "magic", "attributes")
OFFSET_ENTRY_NAMES = ("relative_offset", "position")
TIME_ENTRY_NAMES = ("timestamp", "relative_offset")
TXN_ENTRY_NAMES = ("version", "producer_id", "first_offset", "last_offset", "last_stable_offset")


@dataclass(frozen=True)
class Field:
    """One fixed-width integer: its name, absolute position and struct code (``>i``, ``>q``...)."""

    name: str
    position: int
    code: str


@dataclass(frozen=True)
class Entry:
    """One framed log entry of a seed: where it starts and ends, and its magic."""

    position: int
    end: int
    magic: int


def struct_fields(layout: struct.Struct, names: tuple[str, ...], base: int = 0) -> list[Field]:
    """The named fields of ``layout`` (padding skipped), at ``base`` + their offset in it."""
    order, codes = layout.format[0], layout.format[1:]
    fields: list[Field] = []
    offset = 0
    for code in codes:
        if code != "x":
            fields.append(Field(names[len(fields)], base + offset, order + code))
        offset += struct.calcsize(order + code)
    return fields


def entries(data: bytes | bytearray) -> list[Entry]:
    """The entries framed one after another from byte 0, up to the first that does not fit."""
    found: list[Entry] = []
    pos = 0
    while pos + ENTRY_PREFIX.size <= len(data):
        _, size, magic = ENTRY_PREFIX.unpack_from(data, pos)
        end = pos + LOG_OVERHEAD + size
        if size <= 0 or end > len(data):
            break
        found.append(Entry(pos, end, magic))
        pos = end
    return found


def header_fields(entry: Entry) -> list[Field]:
    """The fixed header fields of one entry (V2 batch header, or legacy message header)."""
    if entry.magic >= 2:
        return struct_fields(BATCH_HEADER, V2_NAMES, entry.position)
    fields = struct_fields(LEGACY_HEADER, LEGACY_NAMES, entry.position)
    key_at = entry.position + LEGACY_TIMESTAMP_OFFSET
    if entry.magic == 1:
        fields.append(Field("timestamp", key_at, ">" + LEGACY_TIMESTAMP.format[-1]))
        key_at += LEGACY_TIMESTAMP.size
    fields.append(Field("key_length", key_at, ">i"))
    return fields


def _record_varints(data: bytes | bytearray, pos: int, end: int) -> tuple[list[Field], int]:
    """The length and count varints of the record at ``pos``, and where the next record starts."""
    length, body = decode_varint(data, pos, end)
    found = [Field("record_length", pos, "varint")]
    cursor = body + 1  # attributes
    _, cursor = decode_varlong(data, cursor, end)  # timestamp_delta
    _, cursor = decode_varint(data, cursor, end)  # offset_delta
    for name in ("key_length", "value_length"):
        found.append(Field(name, cursor, "varint"))
        size, cursor = decode_varint(data, cursor, end)
        cursor += max(size, 0)
    found.append(Field("headers_count", cursor, "varint"))
    count, cursor = decode_varint(data, cursor, end)
    for _ in range(min(count, 64)):
        for name in ("header_key_length", "header_value_length"):
            found.append(Field(name, cursor, "varint"))
            size, cursor = decode_varint(data, cursor, end)
            cursor += max(size, 0)
    return found, body + length


def record_varints(data: bytes | bytearray, entry: Entry) -> list[Field]:
    """Varint length fields of an uncompressed V2 batch's records (empty for anything else)."""
    if entry.magic != 2:
        return []
    attributes = int.from_bytes(data[entry.position + V2_ATTRIBUTES_OFFSET:][:2], "big")
    if attributes & 0x07:  # compressed: the varints are inside the codec's stream
        return []
    return records_varints(data, entry.position + RECORD_BATCH_OVERHEAD, entry.end)


def records_varints(data: bytes | bytearray, pos: int, end: int) -> list[Field]:
    """Varint length fields of the V2 records in ``data[pos:end]`` (a batch's, or a decompressed payload)."""
    found: list[Field] = []
    try:
        while pos < end:
            fields, next_pos = _record_varints(data, pos, end)
            found.extend(fields)
            if next_pos <= pos:  # a hostile record length: no progress, stop mapping
                break
            pos = next_pos
    except KsegError:
        pass
    return found


def log_fields(data: bytes | bytearray) -> list[Field]:
    """Every header field and record varint of a .log seed."""
    found: list[Field] = []
    for entry in entries(data):
        found.extend(header_fields(entry))
        found.extend(record_varints(data, entry))
    return found


def index_fields(data: bytes | bytearray, suffix: str) -> list[Field]:
    """Every field of every slot of an index file (.index, .timeindex or .txnindex)."""
    layout, names = {
        ".index": (OFFSET_ENTRY, OFFSET_ENTRY_NAMES),
        ".timeindex": (TIME_ENTRY, TIME_ENTRY_NAMES),
        ".txnindex": (TXN_ENTRY, TXN_ENTRY_NAMES),
    }[suffix]
    found: list[Field] = []
    for slot in range(len(data) // layout.size):
        found.extend(struct_fields(layout, names, slot * layout.size))
    return found


def crc_ranges(data: bytes | bytearray) -> list[tuple[int, int, int, bool]]:
    """(crc position, covered start, covered end, is_v2) of every entry framed in ``data``."""
    ranges = []
    for entry in entries(data):
        if entry.magic >= 2 and entry.end >= entry.position + RECORD_BATCH_OVERHEAD:
            ranges.append((entry.position + V2_CRC_OFFSET, entry.position + V2_ATTRIBUTES_OFFSET, entry.end, True))
        elif entry.magic in (0, 1) and entry.end > entry.position + MAGIC_OFFSET:
            ranges.append((entry.position + LEGACY_CRC_OFFSET, entry.position + MAGIC_OFFSET, entry.end, False))
    return ranges
