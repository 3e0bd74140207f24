"""Compression codecs: Kafka's exact stream bytes, its read rules, bomb limits, and hostile input.

Known-answer bytes below were built by hand from the Kafka sources cited in
kafka-on-disk.md section 2 and cross-checked once against Kafka 4.3.0's own
``Compression.wrapForOutput`` / ``wrapForInput`` (JDK 17): gzip, snappy and lz4
output of ``compress`` was byte-identical for empty, 1-byte, 120 KB text and
300 KiB random payloads, and zstd identical for those sizes at level 3.
"""

from __future__ import annotations

import gzip as stdlib_gzip
import os
import random
import struct
import tracemalloc
import zlib

import lz4.block
import lz4.frame
import pytest
import snappy
import zstandard
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support import CORPUS_REAL, CORPUS_VECTORS, require_dir

from kseg.errors import CodecError, EncodeError, LimitExceeded, Unsupported
from kseg.format import compression
from kseg.format.compression import (
    CODEC_GZIP,
    CODEC_LZ4,
    CODEC_NAMES,
    CODEC_NONE,
    CODEC_SNAPPY,
    CODEC_ZSTD,
    DEFAULT_MAX_DECOMPRESSED,
    codec_id,
    compress,
    decompress,
)
from kseg.format.xxhash32 import xxh32

KIB = 1024
MIB = 1024 * KIB

# Every codec x magic Kafka allows (zstd needs magic 2).
CODEC_MAGIC = [
    (codec, magic) for codec in range(5) for magic in (0, 1, 2) if not (codec == CODEC_ZSTD and magic < 2)
]
COMPRESSED_CODEC_MAGIC = [(codec, magic) for codec, magic in CODEC_MAGIC if codec != CODEC_NONE]


def _payloads() -> dict[str, bytes]:
    rng = random.Random(20240601)
    return {
        "empty": b"",
        "one-byte": b"k",
        "100KiB-compressible": (b"offset=%08d key=user-%03d value=clicked\n" * 2600)[: 100 * KIB],
        # crosses the 32 KiB snappy chunks and the 64 KiB lz4 blocks; lz4 stores it raw
        "300KiB-random": rng.randbytes(300 * KIB),
    }


PAYLOADS = _payloads()


def codec_label(codec: int) -> str:
    return CODEC_NAMES[codec]


# ---------------------------------------------------------------------------
# Codec ids and the public table
# ---------------------------------------------------------------------------


def test_codec_names_are_kafkas_compression_type_names_by_id() -> None:
    assert CODEC_NAMES == ("none", "gzip", "snappy", "lz4", "zstd")
    assert (CODEC_NONE, CODEC_GZIP, CODEC_SNAPPY, CODEC_LZ4, CODEC_ZSTD) == (0, 1, 2, 3, 4)
    assert DEFAULT_MAX_DECOMPRESSED == 128 * MIB


@pytest.mark.parametrize(
    ("given_", "expected"),
    [("none", 0), ("gzip", 1), ("SNAPPY", 2), (" lz4", 3), ("zstd", 4), (0, 0), (4, 4)],
)
def test_codec_id_accepts_names_and_ids(given_: str | int, expected: int) -> None:
    assert codec_id(given_) == expected


@pytest.mark.parametrize("bad", [5, 6, 7])
def test_codec_ids_5_to_7_are_refused_as_kafka_does(bad: int) -> None:
    with pytest.raises(Unsupported, match=f"^Unknown compression type id: {bad}$"):
        codec_id(bad)
    with pytest.raises(Unsupported, match=f"Unknown compression type id: {bad}"):
        decompress(bad, b"\x00", magic=2)
    with pytest.raises(Unsupported, match=f"Unknown compression type id: {bad}"):
        compress(bad, b"", magic=2)


def test_codec_id_refuses_unknown_names_and_non_ints() -> None:
    with pytest.raises(Unsupported, match="Unknown compression name: brotli"):
        codec_id("brotli")
    with pytest.raises(Unsupported):
        codec_id(True)  # type: ignore[arg-type]
    with pytest.raises(Unsupported):
        codec_id(-1)


def test_unknown_magic_is_unsupported() -> None:
    with pytest.raises(Unsupported, match="magic value 3"):
        decompress(CODEC_GZIP, b"", magic=3)
    with pytest.raises(Unsupported, match="magic value -1"):
        compress(CODEC_GZIP, b"", magic=-1)


def test_none_is_the_identity_and_returns_bytes() -> None:
    view = memoryview(b"abc")
    assert decompress(CODEC_NONE, view, magic=2) == b"abc"
    assert type(decompress(CODEC_NONE, view, magic=2)) is bytes
    assert compress(CODEC_NONE, view, magic=0) == b"abc"


# ---------------------------------------------------------------------------
# Round trips
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(("codec", "magic"), CODEC_MAGIC, ids=lambda v: str(v))
@pytest.mark.parametrize("name", list(PAYLOADS))
def test_round_trip_every_codec_and_magic(codec: int, magic: int, name: str) -> None:
    data = PAYLOADS[name]
    packed = compress(codec, data, magic=magic)
    assert type(packed) is bytes
    assert decompress(codec, packed, magic=magic) == data
    assert decompress(codec, memoryview(packed), magic=magic, max_size=len(data)) == data


@pytest.mark.parametrize(("codec", "magic"), COMPRESSED_CODEC_MAGIC, ids=lambda v: str(v))
def test_compressible_payload_actually_shrinks(codec: int, magic: int) -> None:
    data = PAYLOADS["100KiB-compressible"]
    assert len(compress(codec, data, magic=magic)) < len(data) // 4


@pytest.mark.parametrize(
    ("codec", "levels"),
    [
        (CODEC_GZIP, [-1, 1, 6, 9]),
        (CODEC_LZ4, [1, 3, 9, 12, 17]),
        (CODEC_ZSTD, [-131072, -5, 0, 1, 3, 19, 22]),
    ],
)
def test_every_kafka_level_round_trips(codec: int, levels: list[int]) -> None:
    data = PAYLOADS["100KiB-compressible"]
    for level in levels:
        assert decompress(codec, compress(codec, data, magic=2, level=level), magic=2) == data


def test_default_levels_are_kafkas() -> None:
    data = PAYLOADS["100KiB-compressible"]
    assert compress(CODEC_GZIP, data, magic=2) == compress(CODEC_GZIP, data, magic=2, level=6)
    assert compress(CODEC_GZIP, data, magic=2, level=-1) == compress(CODEC_GZIP, data, magic=2, level=6)
    assert compress(CODEC_LZ4, data, magic=2) == compress(CODEC_LZ4, data, magic=2, level=9)
    assert compress(CODEC_ZSTD, data, magic=2) == compress(CODEC_ZSTD, data, magic=2, level=3)
    # lz4 level 9 is lz4-java's fast compressor, every other level the HC one
    fast_block = lz4.block.compress(data[: 64 * KIB], store_size=False)
    assert compress(CODEC_LZ4, data, magic=2)[11 : 11 + len(fast_block)] == fast_block


@pytest.mark.parametrize(
    ("codec", "level", "message"),
    [
        (CODEC_GZIP, 0, "gzip doesn't support given compression level: 0"),
        (CODEC_GZIP, 10, "gzip doesn't support given compression level: 10"),
        (CODEC_LZ4, 0, "lz4 doesn't support given compression level: 0"),
        (CODEC_LZ4, 18, "lz4 doesn't support given compression level: 18"),
        (CODEC_ZSTD, 23, "zstd doesn't support given compression level: 23"),
        (CODEC_ZSTD, -131073, "zstd doesn't support given compression level: -131073"),
        (CODEC_SNAPPY, 1, "snappy has no compression level"),
        (CODEC_NONE, 1, "none has no compression level"),
    ],
)
def test_levels_outside_kafkas_ranges_are_encode_errors(codec: int, level: int, message: str) -> None:
    with pytest.raises(EncodeError, match=message):
        compress(codec, b"x", magic=2, level=level)


@settings(max_examples=60, deadline=None)
@given(data=st.binary(max_size=3000), pair=st.sampled_from(CODEC_MAGIC))
def test_round_trip_property(data: bytes, pair: tuple[int, int]) -> None:
    codec, magic = pair
    assert decompress(codec, compress(codec, data, magic=magic), magic=magic) == data


# ---------------------------------------------------------------------------
# gzip
# ---------------------------------------------------------------------------

GZIP_JDK17_HEADER = bytes.fromhex(
    "1f8b"  # ID1 ID2
    "08"  # CM: deflate
    "00"  # FLG: no optional fields
    "00000000"  # MTIME: 0
    "00"  # XFL: 0 (the JDK writes 0 at every level; zlib's gzip would write 2 or 4)
    "ff"  # OS: 255 "unknown" (JDK 16+, JDK-8244706)
)


def test_gzip_empty_member_bytes_exact() -> None:
    assert compress(CODEC_GZIP, b"", magic=2) == (
        GZIP_JDK17_HEADER
        + bytes.fromhex("0300")  # deflate: one final fixed-Huffman block holding only end-of-block
        + bytes.fromhex("00000000")  # CRC32 of nothing
        + bytes.fromhex("00000000")  # ISIZE 0
    )


@pytest.mark.parametrize("level", [1, 6, 9])
def test_gzip_header_is_the_jdks_at_every_level(level: int) -> None:
    data = PAYLOADS["100KiB-compressible"]
    packed = compress(CODEC_GZIP, data, magic=1, level=level)
    assert packed[:10] == GZIP_JDK17_HEADER
    deflater = zlib.compressobj(level, zlib.DEFLATED, -15)
    assert packed[10:-8] == deflater.compress(data) + deflater.flush()
    assert packed[-8:] == struct.pack("<II", zlib.crc32(data), len(data))


def _gzip_member(data: bytes, flags: int = 0, optional: bytes = b"") -> bytes:
    """A hand-built member with optional header fields (what GZIPInputStream must skip)."""
    header = struct.pack("<HBBIBB", 0x8B1F, 8, flags, 1700000000, 2, 3) + optional
    if flags & 0x02:  # FHCRC
        header += struct.pack("<H", zlib.crc32(header) & 0xFFFF)
    deflater = zlib.compressobj(9, zlib.DEFLATED, -15)
    return (
        header + deflater.compress(data) + deflater.flush() + struct.pack("<II", zlib.crc32(data), len(data))
    )


def test_gzip_reads_optional_header_fields() -> None:
    optional = (
        struct.pack("<H", 6)
        + b"AB\x02\x00hi"  # FEXTRA: XLEN 6, one subfield
        + b"batch.bin\x00"  # FNAME
        + b"a comment\x00"  # FCOMMENT
    )
    member = _gzip_member(b"payload", 0x04 | 0x08 | 0x10 | 0x02, optional)
    assert decompress(CODEC_GZIP, member, magic=2) == b"payload"
    assert decompress(CODEC_GZIP, stdlib_gzip.compress(b"payload", mtime=0), magic=2) == b"payload"


def test_gzip_reserved_flag_bits_are_ignored_like_gzipinputstream() -> None:
    assert decompress(CODEC_GZIP, _gzip_member(b"payload", 0xE0), magic=2) == b"payload"


def test_gzip_header_crc_mismatch() -> None:
    member = bytearray(_gzip_member(b"payload", 0x02))
    member[10] ^= 0xFF
    with pytest.raises(CodecError, match="Corrupt GZIP header"):
        decompress(CODEC_GZIP, bytes(member), magic=2)


def test_gzip_concatenated_members_and_ignored_trailing_garbage() -> None:
    first, second = compress(CODEC_GZIP, b"first ", magic=2), compress(CODEC_GZIP, b"second", magic=2)
    assert decompress(CODEC_GZIP, first + second, magic=2) == b"first second"
    # GZIPInputStream.readTrailer: bytes after a member that are no gzip header end the stream
    assert decompress(CODEC_GZIP, first + b"garbage", magic=2) == b"first "
    assert decompress(CODEC_GZIP, first + b"\x1f\x8b", magic=2) == b"first "
    # ... but a valid next header with broken deflate data is an error
    with pytest.raises(CodecError):
        decompress(CODEC_GZIP, first + second[:14], magic=2)


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"", "Unexpected end of input in the GZIP header"),
        (b"\x1f", "Unexpected end of input in the GZIP header"),
        (b"PK\x03\x04" + b"\x00" * 20, "Not in GZIP format"),
        (bytes.fromhex("1f8b0900000000000000") + b"\x00" * 10, "Unsupported compression method"),
        (
            bytes.fromhex("1f8b0808000000000000") + b"name-without-end",
            r"Unexpected end of input in the GZIP header \(FNAME\)",
        ),
        (GZIP_JDK17_HEADER, "Unexpected end of ZLIB input stream"),
        (GZIP_JDK17_HEADER + b"\xff\xff", "invalid deflate data"),
    ],
)
def test_gzip_errors(data: bytes, message: str) -> None:
    with pytest.raises(CodecError, match=message):
        decompress(CODEC_GZIP, data, magic=2)


def test_gzip_trailer_checks() -> None:
    member = compress(CODEC_GZIP, b"hello", magic=2)
    with pytest.raises(CodecError, match="Corrupt GZIP trailer"):
        decompress(CODEC_GZIP, member[:-8] + b"\x00\x00\x00\x00" + member[-4:], magic=2)
    with pytest.raises(CodecError, match="Corrupt GZIP trailer"):
        decompress(CODEC_GZIP, member[:-4] + b"\x06\x00\x00\x00", magic=2)  # ISIZE 6, not 5
    with pytest.raises(CodecError, match="Unexpected end of input in the GZIP trailer"):
        decompress(CODEC_GZIP, member[:-3], magic=2)


# ---------------------------------------------------------------------------
# snappy (xerial framing)
# ---------------------------------------------------------------------------

XERIAL_HEADER = bytes.fromhex(
    "82534e4150505900"  # magic: -126 'S' 'N' 'A' 'P' 'P' 'Y' 0
    "00000001"  # version 1, int32 BE
    "00000001"  # minimum compatible version 1, int32 BE
)


def test_snappy_xerial_framing_bytes_exact() -> None:
    assert (
        compress(CODEC_SNAPPY, b"", magic=2) == XERIAL_HEADER
    )  # snappy-java >= 1.1.7.3 writes the header on close
    raw = snappy.compress(b"hello")
    assert raw == bytes.fromhex("051068656c6c6f")  # varint length 5, literal tag (len-1)<<2, "hello"
    assert compress(CODEC_SNAPPY, b"hello", magic=2) == XERIAL_HEADER + struct.pack(">i", len(raw)) + raw


def test_snappy_chunks_hold_32KiB_of_input_each() -> None:
    data = PAYLOADS["100KiB-compressible"]
    packed = compress(CODEC_SNAPPY, data, magic=1)
    assert packed[:16] == XERIAL_HEADER
    pos, inputs = 16, []
    while pos < len(packed):
        (length,) = struct.unpack_from(">i", packed, pos)
        block = packed[pos + 4 : pos + 4 + length]
        assert block == snappy.compress(data[len(inputs) * 32 * KIB : (len(inputs) + 1) * 32 * KIB])
        inputs.append(len(snappy.uncompress(block)))
        pos += 4 + length
    assert inputs == [32 * KIB, 32 * KIB, 32 * KIB, 4 * KIB]


def test_snappy_raw_block_is_accepted_on_read() -> None:
    data = PAYLOADS["100KiB-compressible"]
    assert decompress(CODEC_SNAPPY, snappy.compress(data), magic=2) == data
    assert decompress(CODEC_SNAPPY, snappy.compress(b"hi"), magic=2) == b"hi"  # shorter than 16 bytes
    # 16+ bytes that do not start with the magic are one raw block too
    assert decompress(
        CODEC_SNAPPY, snappy.compress(b"x" * 40 + bytes(range(40))), magic=2
    ) == b"x" * 40 + bytes(range(40))


def test_snappy_concatenated_streams() -> None:
    first, second = compress(CODEC_SNAPPY, b"first ", magic=2), compress(CODEC_SNAPPY, b"second", magic=2)
    assert decompress(CODEC_SNAPPY, first + second, magic=2) == b"first second"
    assert decompress(CODEC_SNAPPY, first + XERIAL_HEADER + second, magic=2) == b"first second"
    # a chunk length 0x82534E41 not followed by the rest of the magic ends the stream (hasNextChunk: false)
    assert decompress(CODEC_SNAPPY, first + b"\x82SNAxxxxxxxxxxxx" + second, magic=2) == b"first "
    with pytest.raises(CodecError, match="Insufficient header size in a concatenated block"):
        decompress(CODEC_SNAPPY, first + XERIAL_HEADER[:10], magic=2)
    old = XERIAL_HEADER[:8] + struct.pack(">ii", 0, 0)
    with pytest.raises(CodecError, match="incompatible codec version 0. At least version 1 is required"):
        decompress(CODEC_SNAPPY, first + old + second[16:], magic=2)


def test_snappy_first_header_versions_are_not_checked() -> None:
    packed = compress(CODEC_SNAPPY, b"hello", magic=2)
    assert decompress(CODEC_SNAPPY, packed[:8] + struct.pack(">ii", 0, 99) + packed[16:], magic=2) == b"hello"


def test_snappy_fewer_than_4_trailing_bytes_end_the_stream() -> None:
    packed = compress(CODEC_SNAPPY, b"hello", magic=2)
    assert decompress(CODEC_SNAPPY, packed + b"\x00\x00\x01", magic=2) == b"hello"


@pytest.mark.parametrize(
    ("tail", "message"),
    [
        (struct.pack(">i", -5), "chunkSize is too big or negative : -5"),
        (
            struct.pack(">i", 512 * MIB + 1),
            "Received chunkSize 536,870,913 is greater than max configured chunk size 536,870,912",
        ),
        (struct.pack(">i", 10) + b"abc", "failed to read chunk"),
        (struct.pack(">i", 0), "invalid uncompressed-length prefix"),
        (struct.pack(">i", 3) + b"\x05\xff\xff", "corrupt raw block"),
    ],
)
def test_snappy_chunk_errors(tail: bytes, message: str) -> None:
    with pytest.raises(CodecError, match=message):
        decompress(CODEC_SNAPPY, XERIAL_HEADER + tail, magic=2)


def test_snappy_empty_input_is_an_error() -> None:
    with pytest.raises(CodecError, match="Cannot decompress empty stream"):
        decompress(CODEC_SNAPPY, b"", magic=2)


def test_snappy_declared_length_is_checked_before_decompressing() -> None:
    # a 6-byte raw block claiming 4 GiB - 1: refused by the cap, nothing is allocated
    with pytest.raises(LimitExceeded, match="limit of 1048576 bytes"):
        decompress(CODEC_SNAPPY, b"\xff\xff\xff\xff\x0f\x00", magic=2, max_size=MIB)
    with pytest.raises(CodecError, match="invalid uncompressed-length prefix"):
        decompress(CODEC_SNAPPY, b"\xff\xff\xff\xff\xff\xff", magic=2)


# ---------------------------------------------------------------------------
# lz4 (Kafka's frame, KAFKA-3160)
# ---------------------------------------------------------------------------

LZ4_HEADER_MAGIC_1_2 = bytes.fromhex(
    "04224d18"  # magic 0x184D2204 little-endian
    "60"  # FLG: version 01, block independence
    "40"  # BD: 64 KiB blocks
    "82"  # HC = (XXH32(60 40) >> 8) & 0xFF
)
LZ4_HEADER_MAGIC_0 = bytes.fromhex(
    "04224d18"  # magic
    "60"  # FLG
    "40"  # BD
    "1a"  # HC = (XXH32(04 22 4D 18 60 40) >> 8) & 0xFF: the pre-KAFKA-3160 rule
)
LZ4_END_MARK = bytes.fromhex("00000000")


def _lz4_frame(flg: int, bd: int, body: bytes, extra: bytes = b"") -> bytes:
    """A frame with a correct (LZ4-spec) HC over FLG, BD and ``extra`` (content size)."""
    descriptor = bytes([flg, bd]) + extra
    return bytes.fromhex("04224d18") + descriptor + bytes([(xxh32(descriptor) >> 8) & 0xFF]) + body


def _lz4_block(data: bytes) -> bytes:
    packed = lz4.block.compress(data, store_size=False)
    return struct.pack("<I", len(packed)) + packed


@pytest.mark.parametrize(
    ("magic", "header"), [(0, LZ4_HEADER_MAGIC_0), (1, LZ4_HEADER_MAGIC_1_2), (2, LZ4_HEADER_MAGIC_1_2)]
)
def test_lz4_header_bytes_exact(magic: int, header: bytes) -> None:
    assert compress(CODEC_LZ4, b"", magic=magic) == header + LZ4_END_MARK
    packed = compress(CODEC_LZ4, b"hello hello hello hello", magic=magic)
    assert packed[:7] == header
    assert packed[-4:] == LZ4_END_MARK


def test_lz4_incompressible_blocks_are_stored_with_bit_31() -> None:
    data = PAYLOADS["300KiB-random"]
    packed = compress(CODEC_LZ4, data, magic=2)
    pos, blocks = 7, []
    while True:
        (word,) = struct.unpack_from("<I", packed, pos)
        if word == 0:
            break
        size = word & 0x7FFFFFFF
        assert word & 0x80000000  # stored
        blocks.append(packed[pos + 4 : pos + 4 + size])
        pos += 4 + size
    assert [len(b) for b in blocks] == [64 * KIB] * 4 + [44 * KIB]
    assert b"".join(blocks) == data
    assert pos + 4 == len(packed)


def test_lz4_magic_0_skips_the_hc_so_a_correct_hc_is_accepted() -> None:
    new_rule = compress(CODEC_LZ4, b"hello", magic=1)
    assert decompress(CODEC_LZ4, new_rule, magic=0) == b"hello"
    assert decompress(CODEC_LZ4, new_rule[:6] + b"\x00" + new_rule[7:], magic=0) == b"hello"


def test_lz4_magic_1_and_2_reject_the_broken_hc() -> None:
    broken = compress(CODEC_LZ4, b"hello", magic=0)
    for magic in (1, 2):
        with pytest.raises(
            CodecError, match=r"Stream frame descriptor corrupted \(HC byte 0x1a, expected 0x82\)"
        ):
            decompress(CODEC_LZ4, broken, magic=magic)


@pytest.mark.parametrize("size", [0, 1, 15, 16, 17, 1000, 64 * KIB, 200 * KIB])
@pytest.mark.parametrize("block_checksum", [False, True])
def test_lz4_frames_from_the_lz4_library_decode(size: int, block_checksum: bool) -> None:
    data = os.urandom(size // 2) + b"z" * (size - size // 2)
    frame = lz4.frame.compress(
        data,
        block_linked=False,
        content_checksum=True,
        block_checksum=block_checksum,
        store_size=True,  # content size field: skipped, but covered by the HC
    )
    for magic in (0, 1, 2):
        assert decompress(CODEC_LZ4, frame, magic=magic) == data


def test_lz4_content_size_is_part_of_the_hc() -> None:
    frame = bytearray(lz4.frame.compress(b"hello", block_linked=False, store_size=True))
    assert frame[4] & 0x08
    frame[6] ^= 0x01  # a content-size byte
    with pytest.raises(CodecError, match="Stream frame descriptor corrupted"):
        decompress(CODEC_LZ4, bytes(frame), magic=1)
    assert decompress(CODEC_LZ4, bytes(frame), magic=0) == b"hello"


def test_lz4_content_checksum_is_read_but_not_verified() -> None:
    body = _lz4_block(b"abc" * 100) + LZ4_END_MARK
    assert decompress(CODEC_LZ4, _lz4_frame(0x64, 0x40, body + b"junk"), magic=2) == b"abc" * 100
    with pytest.raises(CodecError, match=r"Stream ended prematurely \(content checksum\)"):
        decompress(CODEC_LZ4, _lz4_frame(0x64, 0x40, body + b"ju"), magic=2)


def test_lz4_block_checksum_is_verified() -> None:
    packed = lz4.block.compress(b"abc" * 100, store_size=False)
    block = struct.pack("<I", len(packed)) + packed
    good = _lz4_frame(0x70, 0x40, block + struct.pack("<I", xxh32(packed)) + LZ4_END_MARK)
    bad = _lz4_frame(0x70, 0x40, block + struct.pack("<I", xxh32(packed) ^ 1) + LZ4_END_MARK)
    assert decompress(CODEC_LZ4, good, magic=2) == b"abc" * 100
    with pytest.raises(CodecError, match="^lz4: Block checksum mismatch$"):
        decompress(CODEC_LZ4, bad, magic=2)


def test_lz4_stored_block_and_masked_end_mark() -> None:
    stored = struct.pack("<I", 0x80000000 | 3) + b"abc"
    assert decompress(CODEC_LZ4, _lz4_frame(0x60, 0x40, stored + LZ4_END_MARK), magic=2) == b"abc"
    # Kafka masks bit 31 before testing for the EndMark: 00 00 00 80 ends the frame too
    assert (
        decompress(CODEC_LZ4, _lz4_frame(0x60, 0x40, stored + bytes.fromhex("00000080")), magic=2) == b"abc"
    )


def test_lz4_bytes_after_the_end_mark_are_ignored() -> None:
    assert decompress(CODEC_LZ4, compress(CODEC_LZ4, b"hello", magic=2) + b"trailing", magic=2) == b"hello"


@pytest.mark.parametrize(
    ("bd", "maximum"), [(0x40, 64 * KIB), (0x50, 256 * KIB), (0x60, MIB), (0x70, 4 * MIB)]
)
def test_lz4_block_maximum_comes_from_bd(bd: int, maximum: int) -> None:
    fits = struct.pack("<I", 0x80000000 | maximum) + b"\x00" * maximum
    assert decompress(CODEC_LZ4, _lz4_frame(0x60, bd, fits + LZ4_END_MARK), magic=2) == b"\x00" * maximum
    too_big = struct.pack("<I", 0x80000000 | (maximum + 1)) + b"\x00" * (maximum + 1)
    with pytest.raises(CodecError, match=f"^lz4: Block size {maximum + 1} exceeded max: {maximum}$"):
        decompress(CODEC_LZ4, _lz4_frame(0x60, bd, too_big + LZ4_END_MARK), magic=2)


@pytest.mark.parametrize(
    ("frame", "message"),
    [
        (b"", "Stream ended prematurely"),
        (bytes.fromhex("04224d1860"), "Stream ended prematurely"),
        (bytes.fromhex("04224d186040"), "Stream ended prematurely"),  # no HC byte
        (bytes.fromhex("04224d1c604082") + LZ4_END_MARK, r"Stream unsupported \(invalid magic bytes\)"),
        (_lz4_frame(0x61, 0x40, LZ4_END_MARK), "Reserved bits must be 0"),
        (_lz4_frame(0x62, 0x40, LZ4_END_MARK), "Reserved bits must be 0"),  # the newer DictID bit
        (_lz4_frame(0x40, 0x40, LZ4_END_MARK), "Dependent block stream is unsupported"),
        (_lz4_frame(0xA0, 0x40, LZ4_END_MARK), "Version 2 is unsupported"),
        (_lz4_frame(0x60, 0x41, LZ4_END_MARK), "Reserved2 field must be 0"),
        (_lz4_frame(0x60, 0x30, LZ4_END_MARK), "Block size value must be between 4 and 7"),
        (_lz4_frame(0x60, 0xC0, LZ4_END_MARK), "Reserved3 field must be 0"),
        (_lz4_frame(0x68, 0x40, b"\x00" * 4), "Stream ended prematurely"),  # content size cut short
        (_lz4_frame(0x60, 0x40, _lz4_block(b"abc" * 50)), r"Stream ended prematurely \(no EndMark\)"),
        (_lz4_frame(0x60, 0x40, _lz4_block(b"abc" * 50)[:-2]), "Stream ended prematurely"),
        (_lz4_frame(0x60, 0x40, struct.pack("<I", 5) + b"\xff" * 5 + LZ4_END_MARK), "corrupt block"),
        (
            _lz4_frame(0x70, 0x40, _lz4_block(b"abc") + b"\x00\x00"),
            r"Stream ended prematurely \(block checksum\)",
        ),
    ],
)
def test_lz4_errors_carry_kafkas_messages(frame: bytes, message: str) -> None:
    with pytest.raises(CodecError, match=message):
        decompress(CODEC_LZ4, frame, magic=2)


def test_lz4_linked_blocks_from_the_lz4_library_are_refused() -> None:
    frame = lz4.frame.compress(PAYLOADS["100KiB-compressible"], block_linked=True)
    assert not frame[4] & 0x20
    with pytest.raises(CodecError, match="Dependent block stream is unsupported"):
        decompress(CODEC_LZ4, frame, magic=2)


# ---------------------------------------------------------------------------
# zstd
# ---------------------------------------------------------------------------

ZSTD_EMPTY_FRAME = bytes.fromhex(
    "28b52ffd"  # magic 0xFD2FB528 little-endian
    "20"  # FHD: single segment, FCS field 1 byte, no checksum, no dictionary
    "00"  # Frame_Content_Size: 0
    "010000"  # block header: last block, raw, size 0
)


def test_zstd_empty_input_is_the_frame_zstd_jni_writes() -> None:
    assert compress(CODEC_ZSTD, b"", magic=2) == ZSTD_EMPTY_FRAME
    assert decompress(CODEC_ZSTD, ZSTD_EMPTY_FRAME, magic=2) == b""


def test_zstd_one_byte_frame_bytes_exact() -> None:
    assert compress(CODEC_ZSTD, b"x", magic=2) == bytes.fromhex(
        "28b52ffd"  # magic
        "00"  # FHD: no content size, not single segment, no checksum, no dictionary
        "58"  # Window_Descriptor: 2 MiB window (level 3, unknown size)
        "080000"
        "78"  # block: not last, raw, size 1: "x" (ZSTD_e_flush on close)
        "010000"  # block: last, raw, size 0 (ZSTD_e_end)
    )


@pytest.mark.parametrize("name", ["one-byte", "100KiB-compressible", "300KiB-random"])
def test_zstd_frames_we_write_have_no_content_size(name: str) -> None:
    packed = compress(CODEC_ZSTD, PAYLOADS[name], magic=2)
    assert packed[:4] == bytes.fromhex("28b52ffd")
    fhd = packed[4]
    assert fhd & 0xC0 == 0  # Frame_Content_Size_flag 0 ...
    assert not fhd & 0x20  # ... and no single segment, so no FCS field at all
    assert not fhd & 0x04  # no content checksum (zstd-jni's default)
    assert zstandard.get_frame_parameters(packed).content_size == zstandard.CONTENTSIZE_UNKNOWN
    assert packed[-3:] == bytes.fromhex("010000")  # the empty last block ZSTD_e_end adds after the flush


def test_zstd_needs_magic_2() -> None:
    with pytest.raises(EncodeError, match="^ZStandard compression is not supported for magic 1$"):
        compress(CODEC_ZSTD, b"x", magic=1)
    frame = compress(CODEC_ZSTD, b"x", magic=2)
    for magic in (0, 1):
        with pytest.raises(CodecError, match=f"^ZStandard compression is not supported for magic {magic}$"):
            decompress(CODEC_ZSTD, frame, magic=magic)


def test_zstd_accepts_frames_with_content_size_checksums_and_concatenation() -> None:
    data = PAYLOADS["100KiB-compressible"]
    with_size = zstandard.ZstdCompressor(write_content_size=True, write_checksum=True).compress(data)
    assert zstandard.get_frame_parameters(with_size).content_size == len(data)
    assert decompress(CODEC_ZSTD, with_size, magic=2) == data
    ours = compress(CODEC_ZSTD, b"tail", magic=2)
    assert decompress(CODEC_ZSTD, with_size + ours + ours, magic=2) == data + b"tailtail"


def test_zstd_skippable_frames_are_skipped() -> None:
    skippable = struct.pack("<II", 0x184D2A53, 3) + b"abc"
    ours = compress(CODEC_ZSTD, b"hello", magic=2)
    assert decompress(CODEC_ZSTD, skippable + ours + skippable, magic=2) == b"hello"


def test_zstd_empty_input_decodes_to_nothing_as_zstd_jni_does() -> None:
    assert decompress(CODEC_ZSTD, b"", magic=2) == b""


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"garbage!", "^zstd: Decompression error: Unknown frame descriptor$"),
        (b"\x00", "Unknown frame descriptor"),
        (bytes.fromhex("28b5"), "^zstd: Truncated source$"),
        (bytes.fromhex("28b52ffd00"), "Truncated source"),
        (bytes.fromhex("28b52ffd0058") + b"\x07\x00\x00", "reserved block type"),
        (struct.pack("<II", 0x184D2A50, 10) + b"abc", "Truncated source"),
    ],
)
def test_zstd_errors(data: bytes, message: str) -> None:
    with pytest.raises(CodecError, match=message):
        decompress(CODEC_ZSTD, data, magic=2)


def test_zstd_trailing_bytes_and_truncation() -> None:
    frame = compress(CODEC_ZSTD, PAYLOADS["100KiB-compressible"], magic=2)
    with pytest.raises(CodecError, match="Unknown frame descriptor"):
        decompress(CODEC_ZSTD, frame + b"\x00", magic=2)
    with pytest.raises(CodecError, match="Truncated source"):
        decompress(CODEC_ZSTD, frame[:-1], magic=2)
    with pytest.raises(CodecError, match="Truncated source"):
        decompress(CODEC_ZSTD, frame + frame[:7], magic=2)


def test_zstd_checksum_mismatch() -> None:
    frame = bytearray(zstandard.ZstdCompressor(write_checksum=True).compress(b"hello" * 100))
    frame[-1] ^= 0x01
    with pytest.raises(CodecError, match="Restored data doesn't match checksum"):
        decompress(CODEC_ZSTD, bytes(frame), magic=2)


# ---------------------------------------------------------------------------
# Decompression bombs
# ---------------------------------------------------------------------------


def _bomb(codec: int) -> bytes:
    zeros = bytes(10 * MIB)
    if codec == CODEC_GZIP:
        return compress(CODEC_GZIP, zeros, magic=2, level=9)
    return compress(codec, zeros, magic=2)


@pytest.mark.parametrize("codec", [CODEC_GZIP, CODEC_SNAPPY, CODEC_LZ4, CODEC_ZSTD], ids=codec_label)
def test_bomb_stops_at_the_cap_with_small_peak_memory(codec: int) -> None:
    bomb = _bomb(codec)
    assert len(bomb) < MIB
    tracemalloc.start()
    try:
        with pytest.raises(LimitExceeded, match="exceeds the limit of 1048576 bytes"):
            decompress(codec, bomb, magic=2, max_size=MIB)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 4 * MIB


def test_raw_snappy_bomb_is_refused_from_its_length_prefix() -> None:
    bomb = snappy.compress(bytes(10 * MIB))
    tracemalloc.start()
    try:
        with pytest.raises(LimitExceeded):
            decompress(CODEC_SNAPPY, bomb, magic=2, max_size=MIB)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < MIB


def test_zstd_content_size_above_the_cap_is_refused_before_decoding() -> None:
    frame = zstandard.ZstdCompressor(write_content_size=True).compress(bytes(2 * MIB))
    with pytest.raises(LimitExceeded, match="at least 2097152 bytes"):
        decompress(CODEC_ZSTD, frame, magic=2, max_size=MIB)


@pytest.mark.parametrize(("codec", "magic"), COMPRESSED_CODEC_MAGIC, ids=lambda v: str(v))
def test_output_exactly_at_the_cap_is_allowed_one_more_byte_is_not(codec: int, magic: int) -> None:
    data = PAYLOADS["100KiB-compressible"]
    packed = compress(codec, data, magic=magic)
    assert decompress(codec, packed, magic=magic, max_size=len(data)) == data
    with pytest.raises(LimitExceeded):
        decompress(codec, packed, magic=magic, max_size=len(data) - 1)


# ---------------------------------------------------------------------------
# Hostile input: nothing but CodecError / LimitExceeded may escape
# ---------------------------------------------------------------------------

ALLOWED = (CodecError, LimitExceeded)
FUZZ = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
SEED_PAYLOAD = (b"key-%d:value-%d;" * 3) % tuple(range(6)) + bytes(range(64)) * 4


def _valid_frames() -> list[tuple[int, int, bytes]]:
    frames = [
        (codec, magic, compress(codec, SEED_PAYLOAD, magic=magic)) for codec, magic in COMPRESSED_CODEC_MAGIC
    ]
    frames.append((CODEC_SNAPPY, 2, snappy.compress(SEED_PAYLOAD)))
    frames.append((CODEC_LZ4, 2, lz4.frame.compress(SEED_PAYLOAD, block_linked=False, block_checksum=True)))
    frames.append((CODEC_GZIP, 2, _gzip_member(SEED_PAYLOAD, 0x02 | 0x08, b"name\x00")))
    frames.append((CODEC_ZSTD, 2, zstandard.ZstdCompressor(write_checksum=True).compress(SEED_PAYLOAD)))
    return frames


VALID_FRAMES = _valid_frames()


def _decode_or_allowed_error(codec: int, data: bytes, magic: int, max_size: int = MIB) -> bytes | None:
    try:
        out = decompress(codec, data, magic=magic, max_size=max_size)
    except ALLOWED as err:
        assert err.offset is None  # the caller locates it
        assert str(err)
        return None
    assert type(out) is bytes
    assert len(out) <= max_size
    return out


@FUZZ
@given(data=st.binary(max_size=400), pair=st.sampled_from(COMPRESSED_CODEC_MAGIC))
def test_random_bytes_only_raise_codec_errors(data: bytes, pair: tuple[int, int]) -> None:
    codec, magic = pair
    _decode_or_allowed_error(codec, data, magic)


@FUZZ
@given(tail=st.binary(max_size=200), pair=st.sampled_from(COMPRESSED_CODEC_MAGIC))
def test_random_bytes_behind_a_valid_codec_header_only_raise_codec_errors(
    tail: bytes, pair: tuple[int, int]
) -> None:
    codec, magic = pair
    prefix = {
        CODEC_GZIP: GZIP_JDK17_HEADER,
        CODEC_SNAPPY: XERIAL_HEADER,
        CODEC_LZ4: LZ4_HEADER_MAGIC_0 if magic == 0 else LZ4_HEADER_MAGIC_1_2,
        CODEC_ZSTD: bytes.fromhex("28b52ffd0058"),
    }[codec]
    _decode_or_allowed_error(codec, prefix + tail, magic)


@FUZZ
@given(frame=st.sampled_from(VALID_FRAMES), cut=st.integers(min_value=0))
def test_truncated_frames_only_raise_codec_errors(frame: tuple[int, int, bytes], cut: int) -> None:
    codec, magic, data = frame
    truncated = data[: cut % len(data)]
    out = _decode_or_allowed_error(codec, truncated, magic)
    # whatever survives a cut is a prefix of the real payload, never invented bytes
    assert out is None or SEED_PAYLOAD.startswith(out)


@FUZZ
@given(frame=st.sampled_from(VALID_FRAMES), position=st.integers(min_value=0), bit=st.integers(0, 7))
def test_bit_flipped_frames_only_raise_codec_errors(
    frame: tuple[int, int, bytes], position: int, bit: int
) -> None:
    codec, magic, data = frame
    flipped = bytearray(data)
    flipped[position % len(data)] ^= 1 << bit
    _decode_or_allowed_error(codec, bytes(flipped), magic)


@FUZZ
@given(
    frame=st.sampled_from(VALID_FRAMES), max_size=st.integers(min_value=0, max_value=len(SEED_PAYLOAD) + 10)
)
def test_any_cap_gives_the_payload_or_limit_exceeded(frame: tuple[int, int, bytes], max_size: int) -> None:
    codec, magic, data = frame
    if max_size >= len(SEED_PAYLOAD):
        assert decompress(codec, data, magic=magic, max_size=max_size) == SEED_PAYLOAD
    else:
        with pytest.raises(LimitExceeded):
            decompress(codec, data, magic=magic, max_size=max_size)


def test_negative_cap_is_a_programming_error() -> None:
    with pytest.raises(ValueError):
        decompress(CODEC_GZIP, b"", magic=2, max_size=-1)


# ---------------------------------------------------------------------------
# XXH32
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "seed", "expected"),
    [
        (b"", 0, 0x02CC5D05),
        (b"a", 0, 0x550D7456),
        (b"abc", 0, 0x32D153FF),
        (b"Nobody inspects the spammish repetition", 0, 0xE2293B2F),
    ],
)
def test_xxh32_published_vectors(data: bytes, seed: int, expected: int) -> None:
    assert xxh32(data, seed) == expected


def test_xxh32_seed_changes_the_hash() -> None:
    assert xxh32(b"abc", 1) != xxh32(b"abc", 0)
    assert xxh32(b"abc", 2**32 + 1) == xxh32(b"abc", 1)


def test_xxh32_matches_the_lz4_library_for_every_tail_length() -> None:
    # lz4.frame writes XXH32(content) as the content checksum and (XXH32(FLG BD) >> 8) & 0xFF as HC
    rng = random.Random(7)
    for length in list(range(70)) + [1000, 4099]:
        data = rng.randbytes(length)
        frame = lz4.frame.compress(data, content_checksum=True, store_size=False, block_linked=False)
        assert struct.unpack("<I", frame[-4:])[0] == xxh32(data), length
        assert frame[6] == (xxh32(frame[4:6]) >> 8) & 0xFF
        assert xxh32(memoryview(data)) == xxh32(bytearray(data))


def test_lz4_header_checksum_helper() -> None:
    assert compression.lz4_header_checksum(b"\x60\x40") == 0x82
    assert compression.lz4_header_checksum(bytes.fromhex("04224d186040")) == 0x1A


# ---------------------------------------------------------------------------
# Real data
# ---------------------------------------------------------------------------


@pytest.mark.corpus
def test_real_snappy_segment_written_by_kafka_decodes() -> None:
    base = require_dir(CORPUS_REAL, "the real-data corpus")
    segment = base / "seanorth_kafka-server/cf46324/kafka-logs/some-topic-0/00000000000000000000.log"
    if not segment.is_file():
        pytest.skip(f"{segment} not in this corpus")
    buf = segment.read_bytes()
    pos = batches = 0
    while pos + 61 <= len(buf):
        (length,) = struct.unpack_from(">i", buf, pos + 8)
        (attributes,) = struct.unpack_from(">h", buf, pos + 21)
        region = buf[pos + 61 : pos + 12 + length]
        assert attributes & 0x07 == CODEC_SNAPPY
        assert region[:16] == XERIAL_HEADER
        records = decompress(CODEC_SNAPPY, region, magic=2)
        assert len(records) == 136
        assert b'{"customerId":' in records
        pos += 12 + length
        batches += 1
    assert batches == 9


@pytest.mark.corpus
def test_sarama_gzip_lz4_and_snappy_batches_hold_the_same_records() -> None:
    base = require_dir(CORPUS_VECTORS, "the test-vector corpus") / "sarama"
    decoded = {}
    for name, codec in (("gzip", CODEC_GZIP), ("lz4", CODEC_LZ4), ("snappy_xerial", CODEC_SNAPPY)):
        batch = (base / f"record_batch_{name}.bin").read_bytes()
        assert struct.unpack_from(">h", batch, 21)[0] & 0x07 == codec
        decoded[name] = decompress(codec, batch[61:], magic=2)
    assert decoded["gzip"] == decoded["lz4"] == decoded["snappy_xerial"]
    assert decoded["gzip"][:1] == b"\x28"  # record length varint: zigzag 20


@pytest.mark.parametrize("name_length", [0, 1, 255, 256, 257, 70_000, 300_000])
def test_gzip_names_of_every_length_across_the_search_windows(name_length: int) -> None:
    """FNAME/FCOMMENT are found in growing windows; a terminator on either side of a window edge."""
    name = b"n" * name_length + b"\x00"
    members = [_gzip_member(b"part%d " % i, 0x08 | 0x10, name + b"c\x00") for i in range(3)]
    assert decompress(CODEC_GZIP, b"".join(members), magic=2) == b"part0 part1 part2 "
    with pytest.raises(CodecError, match=r"GZIP header \(FNAME\)"):
        decompress(CODEC_GZIP, bytes.fromhex("1f8b0808000000000000") + b"n" * name_length, magic=2)
