"""Byte material for the differential tests: real batches of every magic, and damage."""

from __future__ import annotations

import random
from pathlib import Path

from support import CORPUS_REAL, require_dir

from kseg.format import RecordSpec, encode_batch


def records(base: int, count: int, size: int) -> list[RecordSpec]:
    return [RecordSpec(base + i, 1_700_000_000_000 + i, b"k%d" % i, bytes([i % 251]) * size) for i in range(count)]


def log_of(seed: int, batches: int = 12) -> bytes:
    """A log of V2 batches (plain, compressed, producer fields) with V0/V1 messages between."""
    rnd = random.Random(seed)
    out = bytearray()
    offset = 0
    for _ in range(batches):
        count = rnd.randint(1, 5)
        magic = rnd.choice((2, 2, 2, 1, 0))
        codec = rnd.choice(("none", "none", "gzip"))
        out += encode_batch(records(offset, count, rnd.randint(0, 80)), magic=magic, codec=codec, base_offset=offset)
        offset += count
    return bytes(out)


def damaged(data: bytes, seed: int) -> bytes:
    """One kind of damage at a random place: a bit flip, a truncation, zeros, or garbage."""
    rnd = random.Random(seed)
    buf = bytearray(data)
    if not buf:
        return bytes(buf)
    at = rnd.randrange(len(buf))
    kind = rnd.randrange(5)
    if kind == 0:
        buf[at] ^= 1 << rnd.randrange(8)
    elif kind == 1:
        del buf[at:]
    elif kind == 2:
        buf[at : at + rnd.randint(1, 200)] = bytes(min(len(buf) - at, 200))
    elif kind == 3:
        buf[at:at] = rnd.randbytes(rnd.randint(1, 100))
    else:
        for _ in range(rnd.randint(2, 8)):
            buf[rnd.randrange(len(buf))] = rnd.randrange(256)
    return bytes(buf)


def corpus_logs(max_size: int = 8 << 20, min_size: int = 1) -> list[Path]:
    """The real corpus's ``.log`` files of ``min_size`` to ``max_size`` bytes (skips locally without it; fails in CI)."""
    root = require_dir(CORPUS_REAL, "the real corpus")
    return sorted(p for p in root.rglob("*.log") if min_size <= p.stat().st_size <= max_size)
