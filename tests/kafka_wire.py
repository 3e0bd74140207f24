"""Tiny byte builders for hand-written Kafka message vectors (generated-message encoding, reference §9).

Each returns the bytes of one field, so a vector reads as a list with one comment per field.
"""

from __future__ import annotations

import base64
import struct


def i8(v: int) -> bytes:
    return struct.pack(">b", v)


def i16(v: int) -> bytes:
    return struct.pack(">h", v)


def u16(v: int) -> bytes:
    return struct.pack(">H", v)


def i32(v: int) -> bytes:
    return struct.pack(">i", v)


def i64(v: int) -> bytes:
    return struct.pack(">q", v)


def uv(n: int) -> bytes:
    """Unsigned varint (LEB128)."""
    out = bytearray()
    while n > 0x7F:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def s16(text: str | None) -> bytes:
    """Non-flexible string: int16 length (-1 = null) + UTF-8."""
    if text is None:
        return i16(-1)
    raw = text.encode()
    return i16(len(raw)) + raw


def cs(text: str | None) -> bytes:
    """Compact (flexible) string: uvarint length+1 (0 = null) + UTF-8."""
    if text is None:
        return uv(0)
    raw = text.encode()
    return uv(len(raw) + 1) + raw


def b32(data: bytes | None) -> bytes:
    """Non-flexible bytes: int32 length (-1 = null)."""
    return i32(-1) if data is None else i32(len(data)) + data


def cb(data: bytes | None) -> bytes:
    """Compact bytes: uvarint length+1 (0 = null)."""
    return uv(0) if data is None else uv(len(data) + 1) + data


def a32(*items: bytes) -> bytes:
    """Non-flexible array: int32 count + elements."""
    return i32(len(items)) + b"".join(items)


def ca(*items: bytes) -> bytes:
    """Compact array: uvarint count+1 + elements."""
    return uv(len(items) + 1) + b"".join(items)


def uuid(text: str) -> bytes:
    """The 16 bytes of a Kafka Uuid given as its base64url text."""
    return base64.urlsafe_b64decode(text + "==")


NO_TAGS = uv(0)  # an empty tagged-field section
