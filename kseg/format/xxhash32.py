"""XXH32, the 32-bit xxHash, in pure Python.

Kafka's LZ4 frames use XXH32 (seed 0) twice:

* the frame-descriptor checksum byte ``HC = (XXH32(descriptor) >> 8) & 0xFF``
  (see :mod:`kseg.format.compression` for which bytes count as "descriptor",
  which differs between magic 0 and magic 1/2 -- KAFKA-3160);
* the optional per-block checksum (FLG bit 4), the XXH32 of the stored block
  bytes.

The ``lz4`` package exposes no XXH32 of its own, and the ``xxhash`` package
would be one more C dependency for a few bytes per batch, so this module
implements the algorithm from its specification (Yann Collet's
``xxhash_spec.md``).  Block checksums are rare in Kafka data (Kafka never writes
them), so readability beats speed here.

Algorithm, for input of length ``n`` and a 32-bit ``seed`` (all arithmetic
modulo 2**32, lanes read little-endian):

1. If ``n >= 16``: four accumulators ``v1 = seed + P1 + P2``, ``v2 = seed + P2``,
   ``v3 = seed``, ``v4 = seed - P1`` each absorb one 4-byte lane of every
   16-byte stripe (``v = rotl(v + lane * P2, 13) * P1``) and are merged as
   ``rotl(v1, 1) + rotl(v2, 7) + rotl(v3, 12) + rotl(v4, 18)``.
   Otherwise the accumulator starts as ``seed + P5``.
2. Add ``n``.
3. Remaining whole 4-byte words: ``h = rotl(h + word * P3, 17) * P4``.
4. Remaining single bytes: ``h = rotl(h + byte * P5, 11) * P1``.
5. Avalanche: ``h ^= h >> 15; h *= P2; h ^= h >> 13; h *= P3; h ^= h >> 16``.
"""

from __future__ import annotations

import struct

__all__ = ["xxh32"]

PRIME32_1 = 0x9E3779B1
PRIME32_2 = 0x85EBCA77
PRIME32_3 = 0xC2B2AE3D
PRIME32_4 = 0x27D4EB2F
PRIME32_5 = 0x165667B1

_MASK32 = 0xFFFFFFFF
_STRIPE = 16  # bytes consumed per round of the four accumulators


def _rotl(value: int, bits: int) -> int:
    """Rotate a 32-bit value left."""
    return ((value << bits) | (value >> (32 - bits))) & _MASK32


def _round(acc: int, lane: int) -> int:
    """Absorb one 4-byte lane into one of the four stripe accumulators."""
    acc = (acc + lane * PRIME32_2) & _MASK32
    return (_rotl(acc, 13) * PRIME32_1) & _MASK32


def _stripes(data: memoryview, seed: int, stripe_count: int) -> int:
    """Run the four accumulators over ``stripe_count`` 16-byte stripes and merge them."""
    v1 = (seed + PRIME32_1 + PRIME32_2) & _MASK32
    v2 = (seed + PRIME32_2) & _MASK32
    v3 = seed
    v4 = (seed - PRIME32_1) & _MASK32
    lanes = struct.unpack_from(f"<{stripe_count * 4}I", data)
    for i in range(0, len(lanes), 4):
        v1 = _round(v1, lanes[i])
        v2 = _round(v2, lanes[i + 1])
        v3 = _round(v3, lanes[i + 2])
        v4 = _round(v4, lanes[i + 3])
    return (_rotl(v1, 1) + _rotl(v2, 7) + _rotl(v3, 12) + _rotl(v4, 18)) & _MASK32


def _avalanche(h: int) -> int:
    """Final mix so that every input bit affects every output bit."""
    h ^= h >> 15
    h = (h * PRIME32_2) & _MASK32
    h ^= h >> 13
    h = (h * PRIME32_3) & _MASK32
    h ^= h >> 16
    return h


def xxh32(data: bytes | bytearray | memoryview, seed: int = 0) -> int:
    """Return the XXH32 hash of ``data`` as an unsigned 32-bit int.

    Args:
        data: the bytes to hash (any contiguous buffer).
        seed: the 32-bit seed; Kafka and the LZ4 frame format always use 0.
    """
    view = memoryview(data).cast("B")
    seed &= _MASK32
    length = len(view)
    stripe_count = length // _STRIPE
    h = _stripes(view, seed, stripe_count) if stripe_count else (seed + PRIME32_5) & _MASK32
    h = (h + length) & _MASK32

    pos = stripe_count * _STRIPE
    while pos + 4 <= length:
        (word,) = struct.unpack_from("<I", view, pos)
        h = (_rotl((h + word * PRIME32_3) & _MASK32, 17) * PRIME32_4) & _MASK32
        pos += 4
    while pos < length:
        h = (_rotl((h + view[pos] * PRIME32_5) & _MASK32, 11) * PRIME32_1) & _MASK32
        pos += 1
    return _avalanche(h)
