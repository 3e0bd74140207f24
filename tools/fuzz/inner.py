"""Attacks inside a compressed batch: decompress, damage a field, recompress, reframe.

Bytes flipped in a gzip or zstd stream almost never decompress, so blind mutation cannot reach
what a reader does with the records inside a compressed batch or legacy wrapper: inner offsets
(V1 wrappers carry relative inner offsets that readers add to the wrapper's), record varints,
header counts.  This operator decompresses the payload with kseg's codecs, sets one field of the
inner records (a V2 record varint, or an inner legacy message's header field) to a hostile value,
compresses it again with the same codec, writes it back with the lengths around it updated, and
leaves the CRC to be recomputed, so the damage is all a reader sees.
"""

from __future__ import annotations

import random
import struct
from dataclasses import dataclass

from kseg.errors import KsegError
from kseg.format.compression import compress, decompress
from kseg.format.layout import (
    CODEC_MASK,
    LEGACY_ATTRIBUTES_OFFSET,
    LEGACY_TIMESTAMP,
    LEGACY_TIMESTAMP_OFFSET,
    RECORD_BATCH_OVERHEAD,
    SIZE_OFFSET,
    V2_ATTRIBUTES_OFFSET,
)
from tools.fuzz import fields as F
from tools.fuzz.attack import set_field

INT32 = struct.Struct(">i")
MAX_INNER_BYTES = 4 << 20


@dataclass(frozen=True)
class Payload:
    """A compressed payload: its entry, codec, and where the compressed bytes lie."""

    entry: F.Entry
    codec: int
    start: int
    end: int
    length_at: int | None  # the legacy value-length field before the payload (V2: none)


def _legacy_payload(buf: bytes | bytearray, entry: F.Entry) -> Payload | None:
    key_at = entry.position + LEGACY_TIMESTAMP_OFFSET + (LEGACY_TIMESTAMP.size if entry.magic == 1 else 0)
    if key_at + 4 > entry.end:
        return None
    value_at = key_at + 4 + max(INT32.unpack_from(buf, key_at)[0], 0)
    if value_at + 4 > entry.end:
        return None
    size = INT32.unpack_from(buf, value_at)[0]
    if size < 0 or value_at + 4 + size > entry.end:
        return None
    codec = buf[entry.position + LEGACY_ATTRIBUTES_OFFSET] & CODEC_MASK
    return Payload(entry, codec, value_at + 4, value_at + 4 + size, value_at)


def payloads(buf: bytes | bytearray) -> list[Payload]:
    """Every compressed payload framed in ``buf`` (codecs 1-4)."""
    found: list[Payload | None] = []
    for entry in F.entries(buf):
        if entry.magic == 2 and entry.end >= entry.position + RECORD_BATCH_OVERHEAD:
            codec = buf[entry.position + V2_ATTRIBUTES_OFFSET + 1] & CODEC_MASK
            found.append(Payload(entry, codec, entry.position + RECORD_BATCH_OVERHEAD, entry.end, None))
        elif entry.magic in (0, 1):
            found.append(_legacy_payload(buf, entry))
    return [p for p in found if p is not None and 1 <= p.codec <= 4]


def _inner_targets(plain: bytearray, magic: int) -> list[F.Field]:
    if magic == 2:
        return F.records_varints(plain, 0, len(plain))
    return [f for e in F.entries(plain) for f in F.header_fields(e) if f.name != "crc"]


def inner_attack(rng: random.Random, buf: bytearray) -> str | None:
    """Damage one field inside a compressed payload of ``buf``; None when there is none to damage."""
    candidates = payloads(buf)
    if not candidates:
        return None
    payload = rng.choice(candidates)
    magic = payload.entry.magic
    try:
        plain = bytearray(decompress(payload.codec, bytes(buf[payload.start:payload.end]), magic=magic,
                                     max_size=MAX_INNER_BYTES))
        targets = _inner_targets(plain, magic)
        if not targets:
            return None
        step = set_field(rng, plain, rng.choice(targets))
        packed = compress(payload.codec, bytes(plain), magic=magic)
    except KsegError:
        return None
    growth = len(packed) - (payload.end - payload.start)
    buf[payload.start:payload.end] = packed
    if payload.length_at is not None:
        buf[payload.length_at:payload.length_at + 4] = INT32.pack(len(packed))
    at = payload.entry.position + SIZE_OFFSET
    size = INT32.unpack_from(buf, at)[0] + growth
    buf[at:at + 4] = INT32.pack(size)
    return f"inner@{payload.entry.position}:{step}"

