"""The core's zstd frame walk (``zstd_frames``, rust/kseg-wire/src/zstd.rs) against zstd.py's walk.

``_walk_frames`` (core) and ``_python_walk_frames`` (the reference) must give the same frames to decode
(start, block ends, content size, which context) and the same error, on streams of every kind of frame
-- data frames of any window, content size and checksum, empty frames under every header byte,
skippable frames of any size -- cut at every length, with bytes flipped, and on random bytes.

Size: ``KSEG_CORE_ZSTD_EXAMPLES`` (default 300; fixed seed under CI).
"""

from __future__ import annotations

import os
import random

import pytest
import zstandard
from hypothesis import given, settings
from hypothesis import strategies as st

from kseg.format.compression import zstd as zstd_codec

EXAMPLES = int(os.environ.get("KSEG_CORE_ZSTD_EXAMPLES", "300"))


def _core_walk(core, data: bytes):
    listed, code = core.zstd_frames(data)
    frames = [zstd_codec._ZstdFrame(s, tuple(p), c, skippable=False, small_window=zstd_codec._small(w))
              for s, p, c, w in listed]
    return frames, (None if code is None else str(zstd_codec.CodecError(zstd_codec._WALK_ERRORS[code])))


def _python_walk(data: bytes):
    frames, err = zstd_codec._python_walk_frames(memoryview(data))
    return frames, (None if err is None else str(err))


def _data_frame(draw) -> bytes:
    params = zstandard.ZstdCompressionParameters.from_level(
        draw(st.integers(1, 5)), window_log=draw(st.sampled_from([10, 17, 21, 24])),
        write_content_size=draw(st.booleans()), write_checksum=draw(st.booleans()),
    )
    payload = draw(st.binary(max_size=3000)) * draw(st.integers(1, 100))
    return zstandard.ZstdCompressor(compression_params=params).compress(payload)


def _empty_frame(draw) -> bytes:
    fhd = draw(st.integers(0, 255)) & ~0x03  # dictionary ids are drawn below as bytes
    single = fhd & 0x20
    fcs = (1 if single else 0, 2, 4, 8)[fhd >> 6]
    window = b"" if single else bytes([draw(st.sampled_from([0x00, 0x58, 0x88, 0x98, 0xF8]))])
    size = draw(st.integers(0, 2)).to_bytes(fcs, "little") if fcs else b""
    checksum = bytes.fromhex("99e9d851") if fhd & 4 else b""
    block = draw(st.sampled_from(["010000", "010000", "090000", "030000", "050000", "000000"]))
    return bytes.fromhex("28b52ffd") + bytes([fhd]) + window + size + bytes.fromhex(block) + checksum


def _skippable(draw) -> bytes:
    size = draw(st.integers(0, 20))
    return (0x184D2A50 | draw(st.integers(0, 15))).to_bytes(4, "little") + size.to_bytes(4, "little") + bytes(size)


@st.composite
def streams(draw) -> bytes:
    kinds = draw(st.lists(st.sampled_from(["data", "empty", "empty", "skip"]), max_size=8))
    parts = [{"data": _data_frame, "empty": _empty_frame, "skip": _skippable}[k](draw) for k in kinds]
    data = bytearray(b"".join(parts))
    if data and draw(st.booleans()):
        data[draw(st.integers(0, len(data) - 1))] ^= 1 << draw(st.integers(0, 7))
    if draw(st.booleans()):
        data = data[: draw(st.integers(0, len(data)))]
    if draw(st.booleans()):
        data += draw(st.binary(max_size=6))
    return bytes(data)


@settings(max_examples=EXAMPLES, deadline=None)
@given(data=streams())
def test_the_core_walks_frames_as_python_does(core, data: bytes) -> None:
    assert _core_walk(core, data) == _python_walk(data)


def test_every_cut_of_a_stream(core) -> None:
    data = (
        zstandard.ZstdCompressor(write_checksum=True, write_content_size=True).compress(b"abc" * 99)
        + bytes.fromhex("28b52ffd2000010000 5a2a4d1802000000aabb 28b52ffd005801000099")
        + zstandard.ZstdCompressor().compress(b"x" * 300_000)
    )
    for end in range(len(data) + 1):
        assert _core_walk(core, data[:end]) == _python_walk(data[:end]), end


def test_random_bytes(core) -> None:
    rng = random.Random(25)
    for _ in range(2000):
        data = bytes.fromhex(rng.choice(["", "28b52ffd", "502a4d18"])) + rng.randbytes(rng.randrange(12))
        assert _core_walk(core, data) == _python_walk(data), data.hex()


def test_a_batch_of_a_million_frames_is_walked_in_one_core_call(core, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(zstd_codec, "CORE", core)  # the core's path, also in the KSEG_PURE run
    calls = []
    monkeypatch.setattr(zstd_codec, "_zstd_walk_frame", lambda *a: calls.append(a))
    data = bytes.fromhex("502a4d1800000000") * 500_000 + bytes.fromhex("28b52ffd2000010000") * 500_000
    frames, error = zstd_codec._walk_frames(memoryview(data))
    assert (frames, error, calls) == ([], None, [])
