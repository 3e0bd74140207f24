"""The core's ``find_bytes`` (rust/kseg-py/src/grep.rs, memchr's memmem) answers what ``bytes.find`` answers.

kseg grep skips every batch its needles are not in (kseg/ops/grep/search.py); a wrong "not found" would hide
matching records, so the core is compared with Python's ``find`` on every start and end, on bytes, bytearray
and a mapped file, and with needles longer than the range.
"""

from __future__ import annotations

import mmap
import random

from kseg.format.find import find_bytes


def _cases(data: bytes) -> list[tuple[bytes, int, int]]:
    needles = [b"abc", b"XYZ", b"cX", b"zz", b"c" * 40, data[5:37], data[-3:], b"\x00"]
    return [(n, s, e) for n in needles for s in range(0, len(data) + 3, 5) for e in range(s, len(data) + 4, 7)]


def test_find_bytes_is_bytes_find(core):
    rng = random.Random(28)
    data = b"abcabcXYZabc" * 3 + bytes(rng.randrange(256) for _ in range(200)) + b"\x00zz"
    for needle, start, end in _cases(data):
        expected = data.find(needle, start, end)
        got = core.find_bytes(data, needle, start, end)
        assert (-1 if got is None else got) == expected, (needle, start, end)
        assert find_bytes(bytearray(data), needle, start, end) == expected


def test_find_bytes_in_a_mapped_file(core, tmp_path):
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(b"x" * 70_000 + b"needle" + b"y" * 10)
    with open(path, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as mapped:
        assert core.find_bytes(mapped, b"needle", 0, len(mapped)) == 70_000
        assert core.find_bytes(mapped, b"needle", 0, 70_005) is None
        assert core.find_bytes(mapped, b"needle", 70_001, len(mapped)) is None
