"""The served-damage walk (one pass, the core's frames for the clean run) finds what scan alone finds.

``served._Walk`` takes the clean run of CRC-valid magic-2 batches from the walker's frames and hands
the rest to :func:`kseg.format.scan.scan`; the reference below is the scan-only pass it replaced.
Seeded random damage (flipped bytes, cut tails, zeroed runs, legacy entries) over a segment of
mixed batches: the same unreadable ranges and the same (position, last offset) of every batch.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from kseg.format.compression import CODEC_GZIP
from kseg.format.model import RecordSpec
from kseg.format.scan import Gap, scan
from kseg.format.v0v1_encode import MessageSetEncoder
from kseg.format.v2_write import encode_batch
from kseg.recovery.verdict import served
from kseg.segment import MappedFile


def _reference(path: Path, base: int, end: int | None) -> tuple[list, list]:
    ranges: list = []
    batches: list = []
    with MappedFile(path) as mapped:
        size = len(mapped.buf)
        last_good, pending = base - 1, None
        for item in scan(mapped.buf, 0, size):
            if isinstance(item, Gap):
                if item.zero_filled and item.end >= size:
                    continue
                pending = last_good + 1
                continue
            first = served._first_offset(item)
            if pending is not None:
                ranges.append((pending, max(pending, first - 1)))
                pending = None
            last_good = item.last_offset
            batches.append((item.position, last_good))
        if pending is not None:
            ranges.append((pending, None if end is None or end <= pending else end - 1))
    return ranges, batches


def _segment(rng: random.Random) -> bytes:
    out, offset = bytearray(), 100
    for _ in range(rng.randrange(1, 30)):
        count = rng.randrange(1, 5)
        specs = [RecordSpec(offset + i, 1_700_000_000_000 + i, b"k", b"v" * rng.randrange(0, 200))
                 for i in range(count)]
        if rng.random() < 0.15:
            encoder = MessageSetEncoder(magic=1, codec=CODEC_GZIP if rng.random() < 0.5 else 0)
            encoder.add(specs)
            data, _ = encoder.finish()
            out += data or b""
        else:
            out += encode_batch(specs)
        offset += count
    return bytes(out)


def _damage(rng: random.Random, data: bytes) -> bytes:
    buf = bytearray(data)
    for _ in range(rng.randrange(0, 4)):
        kind = rng.randrange(4)
        if not buf:
            break
        at = rng.randrange(len(buf))
        if kind == 0:
            buf[at] ^= 1 << rng.randrange(8)
        elif kind == 1:
            del buf[at:]
        elif kind == 2:
            buf[at:at + rng.randrange(1, 300)] = bytes(len(buf[at:at + 300][:rng.randrange(1, 300)]))
        else:
            buf += bytes(rng.randrange(1, 5000))  # a zero-filled tail
    return bytes(buf)


@pytest.mark.parametrize("seed", range(150))
def test_the_one_pass_walk_equals_scan(tmp_path: Path, seed: int):
    rng = random.Random(seed)
    path = tmp_path / "00000000000000000100.log"
    path.write_bytes(_damage(rng, _segment(rng)))
    end = rng.choice([None, 50, 100, 120, 10_000])
    ranges, batches = _reference(path, 100, end)
    walk = served._Walk(path, 100, end, positions=True)
    assert walk.ranges == ranges
    assert list(zip(walk.positions, walk.lasts, strict=True)) == batches
