"""zstd streams of many frames: walked once, empty and skippable frames never decoded, no retry of the batch.

* the empty-frame rule (``zstd._is_empty``) against libzstd: every frame header byte, with and without
  a window, content size or checksum -- each frame the rule calls empty decodes to nothing with
  libzstd, and python-zstandard's one-shot decoder agrees;
* call counts (not time): a stream of thousands of skippable and empty frames around one data frame
  costs one decoder call; a damaged frame after N good ones costs N + 2 decoder calls, not 2N + 2
  (the batch used to be decoded again from its first frame with fresh contexts);
* the same bytes and errors as before on streams of good, empty, skippable, damaged and cut frames.

Both paths: the walk runs in the compiled core unless KSEG_PURE is set (tests/core/test_core_zstd.py
compares the two walks directly).
"""

from __future__ import annotations

import itertools

import pytest
import zstandard

from kseg.errors import CodecError, LimitExceeded
from kseg.format import compression
from kseg.format.compression import zstd as zstd_codec

ZSTD = compression.CODEC_ZSTD
EMPTY_INPUT = bytes.fromhex("28b52ffd2000010000")  # what zstd-jni writes for no records
SKIPPABLE = bytes.fromhex("502a4d1800000000")  # magic 0x184D2A50, size 0


def _decode(data: bytes, cap: int = 1 << 27) -> bytes | str:
    try:
        return bytes(compression.decompress_buffer(ZSTD, data, magic=2, max_size=cap))
    except (CodecError, LimitExceeded) as err:
        return f"{type(err).__name__}: {err}"


def _libzstd(frame: bytes) -> bytes | str:
    try:
        decoder = zstandard.ZstdDecompressor().decompressobj()
        out = decoder.decompress(frame)
        return out if decoder.eof else "not ended"
    except zstandard.ZstdError as err:
        return f"error: {err}"


def _headers() -> list[bytes]:
    """Frames of one empty last raw block under every header byte, window and content-size field."""
    frames = []
    for fhd in range(256):
        single = fhd & 0x20
        fcs = (1 if single else 0, 2, 4, 8)[fhd >> 6]
        dict_id = (0, 1, 2, 4)[fhd & 3]
        for window in ([None] if single else [0x00, 0x58, 0x88, 0x98]):
            for size in {0: [None], 1: [0, 1, 200], 2: [256, 300]}.get(fcs, [0, 1, 300]):
                header = bytes([fhd]) + (bytes([window]) if window is not None else b"") + b"\x00" * dict_id
                if fcs:
                    header += (size - 256 if fcs == 2 else size).to_bytes(fcs, "little")
                checksum = bytes.fromhex("99e9d851") if fhd & 4 else b""  # XXH64("") low 32 bits
                frames.append(EMPTY_INPUT[:4] + header + b"\x01\x00\x00" + checksum)
    return frames


def test_every_frame_the_rule_calls_empty_decodes_to_nothing_in_libzstd() -> None:
    empty = 0
    for frame in _headers():
        walked = zstd_codec._zstd_walk_frame(memoryview(frame), 0)
        if walked.skippable:
            empty += 1
            assert _libzstd(frame) == b"", frame.hex()
            assert zstandard.ZstdDecompressor().decompress(frame, max_output_size=1) == b""
            assert _decode(frame) == b""
        else:  # decoded by libzstd as before: the same answer
            assert _decode(frame) == (b"" if _libzstd(frame) == b"" else _decode(frame)), frame.hex()
    # no checksum, dictionary or reserved bit; the unused bit either way; a single segment with a content
    # size of 0 in 1, 4 or 8 bytes (3), or a window of 1 KiB or 2 MiB with none, or 0 in 4 or 8 bytes (6)
    assert empty == 2 * (3 + 6)


def test_what_the_rule_leaves_to_libzstd() -> None:
    with_checksum = bytes.fromhex("28b52ffd2400010000" + "99e9d851")
    compressed_empty_block = bytes.fromhex("28b52ffd2000050000")
    huge_window = bytes.fromhex("28b52ffd00f8010000")  # 2^41: libzstd refuses the window
    for frame in (with_checksum, compressed_empty_block, huge_window):
        assert not zstd_codec._zstd_walk_frame(memoryview(frame), 0).skippable
    assert _decode(with_checksum) == b""
    assert _decode(compressed_empty_block).startswith("CodecError: zstd: Decompression error: ")
    assert _decode(huge_window).startswith("CodecError: zstd: Decompression error: Frame requires too much memory")


@pytest.fixture
def decodes(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """Each call of the frame decoder, with whether it used the kept context."""
    calls: list[bool] = []
    real = zstd_codec._zstd_decode_frame

    def counted(view, frame, out, keep_context=False):  # type: ignore[no-untyped-def]
        calls.append(keep_context)
        return real(view, frame, out, keep_context)

    monkeypatch.setattr(zstd_codec, "_zstd_decode_frame", counted)
    return calls


def test_skippable_and_empty_frames_cost_no_decoder_call(decodes: list[bool]) -> None:
    records = zstandard.ZstdCompressor().compress(b"records " * 1000)
    data = (SKIPPABLE + EMPTY_INPUT) * 5000 + records + EMPTY_INPUT * 5000 + SKIPPABLE * 5000
    assert _decode(data) == b"records " * 1000
    assert decodes == [True]


def test_a_damaged_frame_is_decoded_again_alone(decodes: list[bool]) -> None:
    good = zstandard.ZstdCompressor(write_checksum=True).compress(b"good " * 100)
    bad = bytearray(good)
    bad[-1] ^= 0xFF  # the checksum
    data = good * 1000 + bytes(bad) + good
    assert _decode(data) == "CodecError: zstd: Decompression error: Restored data doesn't match checksum"
    assert decodes == [True] * 1001 + [False]  # before: 1001 kept, then 1001 fresh


def test_a_walk_error_after_the_frames_costs_no_second_pass(decodes: list[bool]) -> None:
    good = zstandard.ZstdCompressor().compress(b"good " * 100)
    assert _decode(good * 100 + SKIPPABLE * 1000 + good[:-1]) == "CodecError: zstd: Truncated source"
    assert _decode(good * 100 + b"\x00") == "CodecError: zstd: Decompression error: Unknown frame descriptor"
    assert decodes == [True] * 200


def test_the_error_comes_from_the_first_bad_frame_and_the_cap_counts_every_frame() -> None:
    good = zstandard.ZstdCompressor().compress(b"x" * 1000)
    reserved = bytes.fromhex("28b52ffd2000070000")
    assert _decode(good + EMPTY_INPUT + reserved + good) == (
        "CodecError: zstd: Decompression error: Data corruption detected (reserved block type)"
    )
    # a frame's bad checksum (decoding) comes before a later frame's cut (the walk)
    checked = bytearray(zstandard.ZstdCompressor(write_checksum=True).compress(b"y" * 10))
    checked[-1] ^= 1
    assert _decode(bytes(checked) + good[:5]).endswith("Restored data doesn't match checksum")
    assert _decode(good * 3 + EMPTY_INPUT * 100, cap=2500).startswith("LimitExceeded: zstd: decompressed data exceeds")
    assert _decode(good * 3 + EMPTY_INPUT * 100, cap=3000) == b"x" * 3000


@pytest.mark.parametrize("pieces", list(itertools.product(["good", "empty", "skip", "sized", "cut", "junk"], repeat=3)))
def test_streams_of_frames_give_the_bytes_or_the_error_fresh_contexts_give(pieces: tuple[str, ...]) -> None:
    frames = {
        "good": zstandard.ZstdCompressor().compress(b"ab" * 500),
        "empty": EMPTY_INPUT,
        "skip": bytes.fromhex("5f2a4d1803000000") + b"abc",
        "sized": zstandard.ZstdCompressor(write_content_size=True, write_checksum=True).compress(b"c" * 70),
        "cut": zstandard.ZstdCompressor().compress(b"d" * 100)[:-2],
        "junk": b"\x01\x02",
    }
    data = b"".join(frames[p] for p in pieces)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(zstd_codec, "SMALL_WINDOW", -1)  # every frame a fresh context
        fresh = _decode(data)
    assert _decode(data) == fresh
    expected = b""
    for p in pieces:
        if p in ("cut", "junk"):
            expected = None
            break
        expected += {"good": b"ab" * 500, "sized": b"c" * 70}.get(p, b"")
    if expected is not None:
        assert fresh == expected
    else:
        assert isinstance(fresh, str) and fresh.startswith("CodecError: zstd: ")


@pytest.mark.parametrize("mapped", [True, False])
def test_rewind_drops_what_a_failed_frame_produced(mapped: bool) -> None:
    """``BoundedOutput.mark`` / ``rewind``: as chunks, and across the move to a map in the failed frame."""
    from kseg.format.compression.core import SMALL_OUTPUT, BoundedOutput

    out = BoundedOutput("zstd", 4 * SMALL_OUTPUT, mapped=mapped)
    out.append(b"a" * 1000)
    mark = out.mark()
    out.append(b"b" * SMALL_OUTPUT)  # past SMALL_OUTPUT: a mapped output moves to its map here
    out.rewind(mark)
    assert out.room == 4 * SMALL_OUTPUT - 1000
    out.append(b"c" * 10)
    assert bytes(out.result()) == b"a" * 1000 + b"c" * 10
