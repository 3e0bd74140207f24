"""Kafka's variable-length integers (``ByteUtils`` in kafka-clients).

Unsigned varint: LEB128 -- 7 bits per byte, least significant group first,
bit 7 set on every byte but the last.  Signed varint (int32, at most 5 bytes)
and varlong (int64, at most 10 bytes) are zigzag-encoded first:
``(n << 1) ^ (n >> 31|63)``, so small negative numbers stay short.

Kafka refuses a varint whose 5th byte still has the continuation bit
("Varint is too long, the most significant bit in the 5th byte is set") and a
varlong whose 10th byte has it; so do we.  Decoders take ``(buffer, pos)`` and
return ``(value, next_pos)``; ``pos`` is absolute, so errors can say where.
"""

from __future__ import annotations

from functools import cache
from mmap import mmap

from kseg.errors import InvalidRecord, Truncated

#: What the decoders read: any buffer indexed by position, a mapped file included.
Readable = bytes | bytearray | memoryview | mmap

_MAX_VARINT_BYTES = 5
_MAX_VARLONG_BYTES = 10


def _read_unsigned(buf: Readable, pos: int, max_bytes: int, end: int | None) -> tuple[int, int]:
    """Read one LEB128 group of at most ``max_bytes`` bytes from ``buf[pos:end]``."""
    limit = len(buf) if end is None else end
    value = 0
    shift = 0
    for i in range(max_bytes):
        if pos + i >= limit:
            raise Truncated("varint runs past the end of its buffer", offset=pos)
        byte = buf[pos + i]
        value |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return value, pos + i + 1
        shift += 7
    # Kafka's two messages differ by a word: "the most significant bit" (varint), "most significant bit"
    # (varlong) -- ByteUtils.illegalVarintException / illegalVarlongException, kept as Kafka words them.
    head = ("Varint is too long, the most significant bit in the 5th byte" if max_bytes == _MAX_VARINT_BYTES
            else "Varlong is too long, most significant bit in the 10th byte")
    # Kafka accumulates in a Java int (long): the bits shifted past 32 (64) are lost.
    mask = 0xFFFFFFFF if max_bytes == _MAX_VARINT_BYTES else 0xFFFFFFFFFFFFFFFF
    raise InvalidRecord(f"{head} is set, converted value: {value & mask:x}", offset=pos)


def decode_unsigned_varint(buf: Readable, pos: int, end: int | None = None) -> tuple[int, int]:
    """Decode an unsigned 32-bit varint (the compact-length prefix of generated messages)."""
    value, nxt = _read_unsigned(buf, pos, _MAX_VARINT_BYTES, end)
    return value & 0xFFFFFFFF, nxt


def decode_varint(buf: Readable, pos: int, end: int | None = None) -> tuple[int, int]:
    """Decode a zigzag int32 varint, wrapping to 32 bits as Java's int arithmetic does."""
    raw, nxt = _read_unsigned(buf, pos, _MAX_VARINT_BYTES, end)
    raw &= 0xFFFFFFFF
    return (raw >> 1) ^ -(raw & 1), nxt


def decode_varlong(buf: Readable, pos: int, end: int | None = None) -> tuple[int, int]:
    """Decode a zigzag int64 varlong, wrapping to 64 bits."""
    raw, nxt = _read_unsigned(buf, pos, _MAX_VARLONG_BYTES, end)
    raw &= 0xFFFFFFFFFFFFFFFF
    return (raw >> 1) ^ -(raw & 1), nxt


@cache
def short_varint_table() -> tuple[int, ...]:
    """The zigzag value of every varint of one or two bytes, by its bytes: the record scanner's fast path.

    One byte ``b0`` (``< 0x80``) is looked up as ``table[b0]``; two bytes
    ``b0 b1`` (``b0 >= 0x80 > b1``) as ``table[b0 + (b1 << 7)]``, which is the
    raw 14-bit value plus 0x80, so the two ranges never meet (16,512 entries).
    Nearly every record length, delta and key/value length is this short, and
    one tuple index is the cheapest decode Python has (kseg.format.records);
    anything longer goes through :func:`decode_varint`/:func:`decode_varlong`.
    Built on first use: about 2 ms and 650 KB.
    """
    one = [(raw >> 1) ^ -(raw & 1) for raw in range(0x80)]
    two = [(raw >> 1) ^ -(raw & 1) for raw in range(0x4000)]  # index raw + 0x80
    return tuple(one + two)


def encode_unsigned_varint(value: int) -> bytes:
    """Encode a non-negative integer as LEB128."""
    if value < 0:
        raise ValueError(f"unsigned varint cannot hold {value}")
    out = bytearray()
    while value > 0x7F:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def encode_varint(value: int) -> bytes:
    """Encode an int32 with zigzag + LEB128 (at most 5 bytes)."""
    if not -(2**31) <= value < 2**31:
        raise ValueError(f"varint out of int32 range: {value}")
    return encode_unsigned_varint(((value << 1) ^ (value >> 31)) & 0xFFFFFFFF)


def encode_varlong(value: int) -> bytes:
    """Encode an int64 with zigzag + LEB128 (at most 10 bytes)."""
    if not -(2**63) <= value < 2**63:
        raise ValueError(f"varlong out of int64 range: {value}")
    return encode_unsigned_varint(((value << 1) ^ (value >> 63)) & 0xFFFFFFFFFFFFFFFF)


def size_of_unsigned_varint(value: int) -> int:
    """Bytes :func:`encode_unsigned_varint` writes for ``value``."""
    size = 1
    while value > 0x7F:
        value >>= 7
        size += 1
    return size


def size_of_varint(value: int) -> int:
    """Bytes :func:`encode_varint` writes for ``value``."""
    return size_of_unsigned_varint(((value << 1) ^ (value >> 31)) & 0xFFFFFFFF)


def size_of_varlong(value: int) -> int:
    """Bytes :func:`encode_varlong` writes for ``value``."""
    return size_of_unsigned_varint(((value << 1) ^ (value >> 63)) & 0xFFFFFFFFFFFFFFFF)
