"""A V0/V1 wrapper's inner messages, walked as they are decompressed, read the same on every path.

* the core's ``legacy_inner_walk``/``legacy_inner_check`` (kseg/format/legacy_inner.py) against
  ``python_inner_walk``/``python_inner_check`` over random regions of inner entries: odd sizes,
  codec bits, keys and values running past their message, bad CRCs, mixed magics, offsets that go
  back or wrap past 2^63-1, entries cut by the region's end;
* whole wrappers (``LegacyBatch``: records, first offset, count, verify's check, every error with
  its message and position) with the core against without it, and with the decompressed stream
  handed over in pieces of 1 to 97 bytes against in one piece -- what streaming must not change.
"""

from __future__ import annotations

import os
import random
import struct
import zlib
from collections.abc import Iterator

import pytest

from kseg.errors import KsegError
from kseg.format import compression
from kseg.format import legacy_inner as inner_module
from kseg.format import v0v1_deep as v0v1_module
from kseg.format.legacy_inner import Checked, Walked, Wrapper, python_inner_check, python_inner_walk
from kseg.format.v0v1 import LegacyBatch

#: Random cases per test: KSEG_LEGACY_INNER_CASES raises it (a small fixed number in CI).
CASES = int(os.environ.get("KSEG_LEGACY_INNER_CASES", "150"))


def _entry(offset: int, magic: int, attributes: int, timestamp: int, key: bytes | None, value: bytes | None,
           *, key_size: int | None = None, bad_crc: bool = False) -> bytes:
    """One inner entry with any fields (the encoder refuses odd ones)."""
    body = struct.pack(">bB", magic, attributes)
    if magic != 0:
        body += struct.pack(">q", timestamp)
    for part, forced in ((key, key_size), (value, None)):
        size = (-1 if part is None else len(part)) if forced is None else forced
        body += struct.pack(">i", size) + (part or b"")
    crc = zlib.crc32(body) ^ (1 if bad_crc else 0)
    message = struct.pack(">I", crc) + body
    return struct.pack(">qi", offset, len(message)) + message


def _inner_entries(rnd: random.Random, count: int, *, odd: bool) -> bytes:
    """``count`` inner entries, mostly clean; with ``odd`` some of each thing the readers refuse or report."""
    out = bytearray()
    offset = rnd.choice((0, 5, (1 << 63) - 3))
    for _ in range(count):
        magic = rnd.choice((1, 1, 0, 2)) if odd else 1
        attributes = rnd.choice((0, 0, 0, 8, 1, 0x40)) if odd else 0
        key = rnd.choice((None, b"k" * rnd.randint(0, 30)))
        value = rnd.choice((None, b"v" * rnd.randint(0, 60)))
        key_size = rnd.choice((None,) * 20 + (500, -7)) if odd and key else None
        out += _entry(offset, magic, attributes, rnd.randint(-2, 1 << 40), key, value, key_size=key_size,
                      bad_crc=odd and rnd.random() < 0.1)
        offset = (offset + rnd.choice((1, 1, 1, 0, -3) if odd else (1,)) + (1 << 63)) % (1 << 64) - (1 << 63)
    return bytes(out)


def _damage(rnd: random.Random, data: bytes) -> bytes:
    """A size field set below the V0 minimum, or the stream cut inside an entry."""
    data = bytearray(data)
    if data and rnd.random() < 0.5:
        at = rnd.randrange(0, len(data) - 12) if len(data) > 12 else 0
        data[at + 8 : at + 12] = struct.pack(">i", rnd.choice((13, 0, -1)))
    else:
        del data[rnd.randrange(len(data) + 1) :]
    return bytes(data)


@pytest.mark.parametrize("seed", range(CASES))
def test_the_core_walk_and_check_of_a_region_are_the_python_ones(seed, core):
    rnd = random.Random(seed)
    data = _inner_entries(rnd, rnd.randint(0, 40), odd=seed % 2 == 0)
    if seed % 3 == 0:
        data = _damage(rnd, data)
    start = rnd.choice((0, 0, rnd.randint(0, len(data))))
    end = rnd.choice((len(data), len(data) + 9, rnd.randint(start, len(data) + 1)))
    for buf in (data, bytearray(data)):
        assert Walked(*core.legacy_inner_walk(buf, start, end)) == python_inner_walk(buf, start, min(end, len(buf)))
    wrapper = Wrapper(rnd.choice((0, 1)), rnd.choice((None, 0, 7, (1 << 63) - 2)), rnd.random() < 0.5, rnd.randint(0, 99))
    index, previous, largest = rnd.randint(0, 9), rnd.choice((None, 3, -(1 << 63))), rnd.choice((-(1 << 63), 50))
    got = core.legacy_inner_check(data, start, end, wrapper.magic, wrapper.base, wrapper.log_append,
                                  wrapper.timestamp, index, previous, largest)
    assert Checked(*got) == python_inner_check(data, start, min(end, len(data)), wrapper, index, previous, largest)


def _wrapper(rnd: random.Random, seed: int) -> bytes:
    """A magic-0 or magic-1 wrapper of random inner entries (sometimes damaged), offset and codec."""
    from kseg.format.v0v1_encode import encode_entry, encode_message

    magic = rnd.choice((0, 1))
    data = _inner_entries(rnd, rnd.randint(0, 60), odd=seed % 2 == 0)
    if seed % 5 == 0:
        data = _damage(rnd, data)
    codec = rnd.choice((compression.CODEC_GZIP, compression.CODEC_SNAPPY, compression.CODEC_LZ4))
    value = compression.compress(codec, data, magic=magic)
    attributes = codec | (8 if magic == 1 and rnd.random() < 0.3 else 0)
    wrapper_offset = rnd.choice((0, 59, 70, 1 << 62, (1 << 63) - 1))
    return encode_entry(wrapper_offset, encode_message(magic, attributes, rnd.randint(0, 1 << 40), None, value))


def _read(buf: bytes, cap: int) -> tuple:
    """Everything a command asks of a wrapper, each answer or the error's (type, message, offset, field)."""
    def answer(call):
        try:
            return call()
        except KsegError as err:
            return type(err).__name__, err.message, err.offset, err.field

    def checked():
        c = LegacyBatch(buf, 0).check_inner(cap)
        return c.count, c.first, c.last, c.largest, c.events

    return (
        answer(lambda: LegacyBatch(buf, 0).records(cap)),
        answer(lambda: list(LegacyBatch(buf, 0).iter_records(cap))),
        answer(lambda: LegacyBatch(buf, 0).first_offset(cap)),
        answer(lambda: LegacyBatch(buf, 0).record_count(cap)),
        answer(checked),
    )


def _pieces(seed: int):
    """``decompress_chunks`` handing its output over in pieces of 1 to 97 bytes."""
    real = compression.decompress_chunks

    def cut(*args, **kwargs) -> Iterator[bytes]:
        rnd = random.Random(seed)
        for chunk in real(*args, **kwargs):
            chunk = bytes(chunk)
            while chunk:
                size = rnd.randint(1, 97)
                yield chunk[:size]
                chunk = chunk[size:]

    return cut


@pytest.mark.parametrize("seed", range(CASES))
def test_a_wrapper_reads_the_same_with_and_without_the_core_and_in_pieces(seed, monkeypatch):
    rnd = random.Random(seed)
    buf = _wrapper(rnd, seed)
    cap = rnd.choice((compression.DEFAULT_MAX_DECOMPRESSED, 300))
    expected = _read(buf, cap)
    monkeypatch.setattr(inner_module, "CORE", None)
    assert _read(buf, cap) == expected
    monkeypatch.setattr(compression, "decompress_chunks", _pieces(seed))
    monkeypatch.setattr(v0v1_module, "_KEEP", 0)  # every wrapper decompressed twice, never kept
    assert _read(buf, cap) == expected
    monkeypatch.undo()
    monkeypatch.setattr(v0v1_module, "_KEEP", 0)
    assert _read(buf, cap) == expected


def test_a_codec_error_after_a_bad_entry_size_wins_as_when_the_stream_was_read_whole():
    """The stream is read to its end before an entry size below the minimum is raised: a gzip trailer
    that does not match comes first, as it did when the value was decompressed whole."""
    from kseg.format.v0v1_encode import encode_entry, encode_message

    data = bytearray(_entry(0, 1, 0, 1, None, b"a") * 3)
    data[35 + 8 : 35 + 12] = struct.pack(">i", 5)
    value = bytearray(compression.compress(compression.CODEC_GZIP, bytes(data), magic=1))
    good = encode_entry(2, encode_message(1, 1, 1, None, bytes(value)))
    with pytest.raises(KsegError, match=r"minimum record overhead \(14\) \(inner entry at byte 35 of"):
        LegacyBatch(good, 0).records()
    value[-8] ^= 0xFF  # the trailer's CRC-32
    bad = encode_entry(2, encode_message(1, 1, 1, None, bytes(value)))
    with pytest.raises(KsegError, match="Corrupt GZIP trailer"):
        LegacyBatch(bad, 0).records()
