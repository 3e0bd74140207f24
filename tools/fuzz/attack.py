"""Setting one located field to a value a parser should not trust.

Fixed-width fields get boundary values (0, +-1, the smallest sizes a batch or message can have,
INT_MAX, INT_MIN, 2^63-1, ...) or their current value nudged by a small delta; varints are
replaced by the zigzag encoding of a hostile length or count, which may change their width and
so shift every byte after them (one more way for a length to disagree with the bytes).
"""

from __future__ import annotations

import random
import struct

from kseg.format.varint import encode_varint
from tools.fuzz.fields import Field

INT_ATTACKS = {
    ">b": (0, 1, 2, 3, -1, 127, -128),
    ">h": (0, 1, -1, 0x7F, 0x7FFF, -0x8000, 0x0007, 0x0030, 0x00FF),
    ">i": (0, 1, -1, 13, 14, 22, 48, 49, 61, 0x7FFFFFFF, -0x80000000, 0x7FFFFFF0, 1 << 20, 1 << 24),
    ">I": (0, 1, 0xFFFFFFFF, 0x80000000),
    ">q": (0, 1, -1, 2**63 - 1, -(2**63), 2**31, 2**32, 2**63 - 2, 1 << 40),
}
VARINT_ATTACKS = (-1, -2, 0, 1, 64, 1 << 20, 20_000_000, 0x7FFFFFFF, -0x80000000)


def _pack(field: Field, value: int) -> bytes:
    code = field.code
    bits = struct.calcsize(code) * 8
    value &= (1 << bits) - 1
    if code[-1].islower() and value >= 1 << (bits - 1):
        value -= 1 << bits
    return struct.pack(code, value)


def _field_value(rng: random.Random, buf: bytearray, field: Field) -> int:
    """An interesting value, or the current value nudged by a small delta (off-by-one attacks)."""
    current = struct.unpack_from(field.code, buf, field.position)[0]
    if rng.random() < 0.3:
        return current + rng.choice((-1, 1, -8, 8, len(buf), -len(buf)))
    return rng.choice(INT_ATTACKS.get(field.code, INT_ATTACKS[">i"]))


def set_field(rng: random.Random, buf: bytearray, field: Field) -> str:
    """Overwrite one fixed-width field, or replace one varint (which may change the length)."""
    if field.code == "varint":
        old_end = field.position + 1
        while old_end < len(buf) and buf[old_end - 1] & 0x80 and old_end - field.position < 5:
            old_end += 1
        value = rng.choice(VARINT_ATTACKS)
        buf[field.position:old_end] = encode_varint(value)
        return f"varint:{field.name}@{field.position}={value}"
    value = _field_value(rng, buf, field)
    buf[field.position:field.position + struct.calcsize(field.code)] = _pack(field, value)
    return f"field:{field.name}@{field.position}={value}"
