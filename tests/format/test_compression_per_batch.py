"""The codecs' per-batch cost: a kept zstd context and small outputs without a map.

Both are speed paths that must give exactly what the slow paths give: the zstd block decoder with
a fresh context per frame, and the bounded output reserved as an anonymous map.
"""

from __future__ import annotations

import mmap
import os

import pytest
import zstandard
from hypothesis import assume, example, given, settings
from hypothesis import strategies as st

from kseg.errors import CodecError, LimitExceeded
from kseg.format import compression
from kseg.format.compression import core as compression_core
from kseg.format.compression import zstd as zstd_codec

ZSTD = 4
_REAL_DECOMPRESSOR = zstandard.ZstdDecompressor


def _decode(data: bytes, max_size: int = 1 << 27, mapped: bool = True) -> bytes | str:
    """Decoded bytes, or the error's class and message."""
    try:
        return bytes(compression.decompress_buffer(ZSTD, data, magic=2, max_size=max_size, mapped=mapped))
    except (CodecError, LimitExceeded) as err:
        return f"{type(err).__name__}: {err}"


def _warm_frame() -> bytes:
    """A 600 kB frame with a 2 MiB window: decoded first, it leaves a kept context's buffers grown."""
    params = zstandard.ZstdCompressionParameters.from_level(3, window_log=21, write_content_size=False)
    return zstandard.ZstdCompressor(compression_params=params).compress(b"ab" * 300_000)


WARM = _warm_frame()


class _Counting:
    """zstandard.ZstdDecompressor, counting the contexts made."""

    made = 0

    def __init__(self) -> None:
        type(self).made += 1
        self._inner = _REAL_DECOMPRESSOR()

    def decompressobj(self):
        return self._inner.decompressobj()


@pytest.fixture
def counting(monkeypatch):
    _Counting.made = 0
    monkeypatch.setattr(zstd_codec, "_CONTEXTS", type(zstd_codec._CONTEXTS)())
    monkeypatch.setattr(zstandard, "ZstdDecompressor", _Counting)
    return _Counting


def test_frames_as_kafka_writes_them_share_one_context(counting) -> None:
    """Not vacuous: 50 batches of zstd-jni-like frames (2 MiB window, no content size) make one context."""
    frame = compression.compress(ZSTD, b'{"id": 1, "v": "xxxxxxxx"}' * 400, magic=2)
    for _ in range(50):
        assert _decode(frame) == b'{"id": 1, "v": "xxxxxxxx"}' * 400
    assert counting.made == 1


def test_a_frame_with_a_large_window_gets_a_fresh_context(counting) -> None:
    params = zstandard.ZstdCompressionParameters.from_level(3, window_log=24, write_content_size=False)
    stream = zstandard.ZstdCompressor(compression_params=params).compressobj()  # size unknown: the window stays
    frame = stream.compress(b"abc" * 1000) + stream.flush()
    assert zstd_codec._window_size(frame[5]) == 16 << 20
    assert _decode(frame) == b"abc" * 1000
    assert _decode(frame) == b"abc" * 1000
    assert counting.made == 2


def test_a_corrupt_frame_leaves_the_kept_context_usable() -> None:
    good = zstandard.ZstdCompressor(write_checksum=True).compress(b"record " * 2000)
    bad = bytearray(good)
    bad[len(bad) // 2] ^= 0xFF
    first = _decode(bytes(bad))
    assert first == "CodecError: zstd: Decompression error: Restored data doesn't match checksum"
    assert _decode(good) == b"record " * 2000
    assert _decode(bytes(bad)) == first


@settings(max_examples=int(os.environ.get("KSEG_ZSTD_EXAMPLES", "150")), deadline=None)
@given(
    payload=st.binary(max_size=300_000) | st.builds(lambda b, n: b * n, st.binary(min_size=1, max_size=40), st.integers(1, 20_000)),
    level=st.integers(1, 9),
    window_log=st.sampled_from([10, 17, 21, 23, 24]),
    content_size=st.booleans(),
    checksum=st.booleans(),
    frames=st.integers(1, 3),
    cut=st.integers(0, 40),
    flip=st.integers(0, 1_000_000),
    cap=st.sampled_from([1 << 27, 100_000, 5]),
)
# A kept context stops this flipped frame with "Destination buffer is too small", a fresh one with
# "Data corruption detected": errors are retried with fresh contexts.
@example(payload=b"\x00" * 1031, level=1, window_log=10, content_size=False, checksum=True, frames=1, cut=0,
         flip=7040, cap=1 << 27)
def test_kept_context_and_chunk_output_equal_the_slow_paths(
    payload, level, window_log, content_size, checksum, frames, cut, flip, cap
) -> None:
    """Any frames, whole or cut or flipped, under any cap: the same bytes or the same error."""
    params = zstandard.ZstdCompressionParameters.from_level(
        level, window_log=window_log, write_content_size=content_size, write_checksum=checksum
    )
    one = zstandard.ZstdCompressor(compression_params=params).compress(payload)
    data = one * frames
    variants = [data, data[: max(0, len(data) - cut)]]
    if data:
        flipped = bytearray(data)
        flipped[flip % len(data)] ^= 0x41
        variants.append(bytes(flipped))
    assert _decode(WARM) == b"ab" * 300_000  # the kept context has decoded a larger frame before
    fast = [_decode(v, cap) for v in variants]
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(zstd_codec, "SMALL_WINDOW", -1)  # every frame a fresh context
        patch.setattr(compression_core, "SMALL_OUTPUT", -1)  # every mapped output a map
        slow = [_decode(v, cap) for v in variants]
    assert fast == slow
    assert fast[0] == (payload * frames if len(payload) * frames <= cap else fast[0])


@pytest.mark.parametrize("mapped", [True, False])
def test_small_outputs_are_bytes_and_large_mapped_ones_a_map(mapped: bool) -> None:
    small = compression.decompress_buffer(ZSTD, compression.compress(ZSTD, b"a" * 1000, magic=2), magic=2, mapped=mapped)
    assert type(small) is bytes and small == b"a" * 1000
    size = compression_core.SMALL_OUTPUT + 1
    large = compression.decompress_buffer(ZSTD, compression.compress(ZSTD, b"b" * size, magic=2), magic=2, mapped=mapped)
    assert isinstance(large, mmap.mmap if mapped else bytes)
    assert len(large) == size and large[:] == b"b" * size


def test_the_cap_holds_across_the_move_to_a_map() -> None:
    """The cap counts the collected chunks too: output one byte past it is refused, at it accepted."""
    size = compression_core.SMALL_OUTPUT + 300_000
    frame = compression.compress(ZSTD, b"c" * size, magic=2)
    assert _decode(frame, size) == b"c" * size
    refused = _decode(frame, size - 1)
    assert isinstance(refused, str) and refused.startswith(
        f"LimitExceeded: zstd: decompressed data exceeds the limit of {size - 1} bytes"
    )


@settings(max_examples=60, deadline=None)
@given(
    pieces=st.lists(st.binary(max_size=70_000) | st.builds(lambda b, n: b * n, st.binary(min_size=1, max_size=30), st.integers(1, 9000)), min_size=1, max_size=4),
    level=st.integers(-5, 12),
    before=st.binary(min_size=1, max_size=200_000),
)
def test_a_kept_compressor_writes_the_bytes_of_a_fresh_one(pieces, level, before) -> None:
    """After the kept context compressed something else, a frame is byte for byte a fresh context's."""
    assume(any(pieces))  # empty input is zstd-jni's special frame (test_compression.py)
    compression.compress(ZSTD, before, magic=2, level=level)
    kept = zstd_codec.ZstdCompressor(2, level)
    written = b"".join(kept.compress(p) for p in pieces) + kept.flush()
    fresh = zstandard.ZstdCompressor(level=level, write_content_size=False).compressobj()
    expected = b"".join(fresh.compress(p) for p in pieces)
    expected += fresh.flush(zstandard.COMPRESSOBJ_FLUSH_BLOCK) + fresh.flush(zstandard.COMPRESSOBJ_FLUSH_FINISH)
    assert written == expected
    assert _decode(written) == b"".join(pieces)


def test_compressors_are_kept_per_level_up_to_nine() -> None:
    import zstandard as module

    assert zstd_codec._compressor(module, 3) is zstd_codec._compressor(module, 3)
    assert zstd_codec._compressor(module, 3) is not zstd_codec._compressor(module, 4)
    assert zstd_codec._compressor(module, 10) is not zstd_codec._compressor(module, 10)
