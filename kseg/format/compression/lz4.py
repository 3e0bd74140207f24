"""LZ4 in Kafka's own frame (LZ4 frame format v1.5.1 subset; Lz4BlockOutputStream / Lz4BlockInputStream).

::

    0   magic     04 22 4D 18 (0x184D2204 little-endian)
    4   FLG       60: version 01, block independence, no checksums, no content size
    5   BD        40: block maximum size id 4 = 64 KiB
    (6  content size, 8 bytes, only if FLG bit 3 -- never written by Kafka, skipped on read)
    6   HC        (XXH32(descriptor) >> 8) & 0xFF
    7   blocks: uint32 LE size (bit 31 set = stored uncompressed) + data (+ XXH32 if FLG bit 4)
    -4  EndMark   00000000 (+ content checksum if FLG bit 2, read but never verified)

KAFKA-3160: for magic 1 and 2 the HC covers FLG and BD (and the content size
if present), as the LZ4 spec says, giving 04 22 4D 18 60 40 82; for magic 0
Kafka writes an HC over bytes 0-5 (magic + FLG + BD), giving
04 22 4D 18 60 40 1A, and never checks the HC on read.  Blocks are bounded by
the frame's block maximum, stored blocks by the output cap.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator

from kseg.errors import CodecError
from kseg.format.compression.core import BlockCompressor, Budget, OutputBuffer, _need, check_level, collect
from kseg.format.xxhash32 import xxh32

LZ4_FRAME_HEADER = struct.Struct(
    "<I"  # magic: 0x184D2204, on disk 04 22 4D 18
    "B"  # FLG: version (bits 7-6) | block independence (5) | block checksum (4) |
    #        content size (3) | content checksum (2) | reserved (1-0)
    "B"  # BD: reserved (bit 7) | block maximum size id (bits 6-4) | reserved (bits 3-0)
)
LZ4_CONTENT_SIZE = struct.Struct("<Q")  # present if FLG bit 3; skipped, but covered by HC
LZ4_BLOCK_SIZE = struct.Struct("<I")  # bit 31: stored uncompressed; 0 (after masking) = EndMark
LZ4_CHECKSUM = struct.Struct("<I")  # block checksum (FLG bit 4) or content checksum (FLG bit 2)
LZ4_MAGIC = 0x184D2204
LZ4_HC_SIZE = 1
LZ4_FLG_RESERVED = 0x03
LZ4_FLG_CONTENT_CHECKSUM = 0x04
LZ4_FLG_CONTENT_SIZE = 0x08
LZ4_FLG_BLOCK_CHECKSUM = 0x10
LZ4_FLG_BLOCK_INDEPENDENCE = 0x20
LZ4_FLG_VERSION_SHIFT = 6
LZ4_SUPPORTED_VERSION = 1
LZ4_BD_RESERVED_LOW = 0x0F
LZ4_BD_RESERVED_HIGH = 0x80
LZ4_BD_SIZE_SHIFT = 4
LZ4_STORED = 0x80000000  # LZ4_FRAME_INCOMPRESSIBLE_MASK
# What Kafka writes: version 1 + block independence; 64 KiB blocks.
KAFKA_LZ4_FLG = 0x60
KAFKA_LZ4_BD = 0x40
KAFKA_LZ4_BLOCK_SIZE = 64 * 1024
LZ4_DEFAULT_LEVEL = 9  # level 9 = lz4-java's fast compressor; any other level = the HC compressor


def lz4_header_checksum(descriptor: bytes | memoryview) -> int:
    """The HC byte of an LZ4 frame: second byte of XXH32(descriptor, seed 0)."""
    return (xxh32(descriptor) >> 8) & 0xFF


def _lz4_check_flg(flg: int) -> None:
    """Lz4BlockOutputStream.FLG.validate, with its messages and order."""
    if flg & LZ4_FLG_RESERVED:
        raise CodecError("lz4: Reserved bits must be 0")
    if not flg & LZ4_FLG_BLOCK_INDEPENDENCE:
        raise CodecError("lz4: Dependent block stream is unsupported")
    version = flg >> LZ4_FLG_VERSION_SHIFT
    if version != LZ4_SUPPORTED_VERSION:
        raise CodecError(f"lz4: Version {version} is unsupported")


def _lz4_max_block_size(bd: int) -> int:
    """Lz4BlockOutputStream.BD.validate and getBlockMaximumSize: 1 << (2n + 8) for id n in 4..7."""
    if bd & LZ4_BD_RESERVED_LOW:
        raise CodecError("lz4: Reserved2 field must be 0")
    size_id = (bd >> LZ4_BD_SIZE_SHIFT) & 0x07
    if not 4 <= size_id <= 7:
        raise CodecError("lz4: Block size value must be between 4 and 7")
    if bd & LZ4_BD_RESERVED_HIGH:
        raise CodecError("lz4: Reserved3 field must be 0")
    return 1 << (2 * size_id + 8)


def _lz4_read_header(view: memoryview, magic: int) -> tuple[int, int, int]:
    """Lz4BlockInputStream.readHeader; returns (FLG, block maximum, position of the first block)."""
    if len(view) < LZ4_FRAME_HEADER.size:
        raise CodecError("lz4: Stream ended prematurely")
    frame_magic, flg, bd = LZ4_FRAME_HEADER.unpack_from(view, 0)
    if frame_magic != LZ4_MAGIC:
        raise CodecError("lz4: Stream unsupported (invalid magic bytes)")
    _lz4_check_flg(flg)
    max_block = _lz4_max_block_size(bd)
    pos = LZ4_FRAME_HEADER.size
    if flg & LZ4_FLG_CONTENT_SIZE:
        pos += LZ4_CONTENT_SIZE.size
    if len(view) - pos < LZ4_HC_SIZE:
        raise CodecError("lz4: Stream ended prematurely")
    if magic >= 1:
        # Magic 0: the HC byte is skipped unchecked (old writers got it wrong, KAFKA-3160).
        expected = lz4_header_checksum(view[4:pos])
        if view[pos] != expected:
            raise CodecError(
                "lz4: Stream frame descriptor corrupted "
                f"(HC byte 0x{view[pos]:02x}, expected 0x{expected:02x})"
            )
    return flg, max_block, pos + LZ4_HC_SIZE


def _lz4_block_data(block: memoryview, stored: bool, max_block: int) -> bytes | memoryview:
    """The uncompressed bytes of one block (at most ``max_block`` of them)."""
    if stored:
        return block
    lz4_block = _need("lz4", "lz4")
    try:
        return lz4_block.decompress(block, uncompressed_size=max_block)
    except Exception as exc:  # lz4.block.LZ4BlockError, or ValueError on odd sizes
        raise CodecError(f"lz4: corrupt block ({exc})") from exc


def decompress(view: memoryview, magic: int, max_size: int, mapped: bool = False) -> OutputBuffer:
    """Decode a Kafka LZ4 frame as Lz4BlockInputStream does (bytes after the EndMark are ignored)."""
    return collect("lz4", chunks(view, magic, max_size), max_size, mapped)


def chunks(view: memoryview, magic: int, max_size: int) -> Iterator[bytes | memoryview]:
    """:func:`decompress`'s output a block at a time, nothing kept: the same bytes and errors
    (a stored block is handed over as a view of ``view``)."""
    flg, max_block, pos = _lz4_read_header(view, magic)
    out = Budget("lz4", max_size)
    while True:
        if len(view) - pos < LZ4_BLOCK_SIZE.size:
            raise CodecError("lz4: Stream ended prematurely (no EndMark)")
        (word,) = LZ4_BLOCK_SIZE.unpack_from(view, pos)
        pos += LZ4_BLOCK_SIZE.size
        size = word & ~LZ4_STORED
        if size == 0:  # EndMark; a content checksum is read, never verified (a TODO in Kafka)
            if flg & LZ4_FLG_CONTENT_CHECKSUM and len(view) - pos < LZ4_CHECKSUM.size:
                raise CodecError("lz4: Stream ended prematurely (content checksum)")
            return
        if size > max_block:
            raise CodecError(f"lz4: Block size {size} exceeded max: {max_block}")
        if len(view) - pos < size:
            raise CodecError("lz4: Stream ended prematurely")
        stored = bool(word & LZ4_STORED)
        if stored:
            out.claim(size)
        block = view[pos : pos + size]
        data = _lz4_block_data(block, stored, max_block)
        pos += size
        if flg & LZ4_FLG_BLOCK_CHECKSUM:
            pos = _lz4_check_block(view, pos, block)
        yield out.take(data)


def _lz4_check_block(view: memoryview, pos: int, block: memoryview) -> int:
    """Verify the XXH32 after a block (FLG bit 4); return the position after it."""
    if len(view) - pos < LZ4_CHECKSUM.size:
        raise CodecError("lz4: Stream ended prematurely (block checksum)")
    (stored_hash,) = LZ4_CHECKSUM.unpack_from(view, pos)
    if stored_hash != xxh32(block):
        raise CodecError("lz4: Block checksum mismatch")
    return pos + LZ4_CHECKSUM.size


class Lz4Compressor(BlockCompressor):
    """Lz4BlockOutputStream output: Kafka's header, 64 KiB blocks, EndMark, no checksums; fed in pieces."""

    __slots__ = ("_compress_block", "_level")

    def __init__(self, magic: int, level: int | None) -> None:
        self._level = check_level("lz4", level, default=LZ4_DEFAULT_LEVEL, low=1, high=17)
        lz4_block = _need("lz4", "lz4")
        header = LZ4_FRAME_HEADER.pack(LZ4_MAGIC, KAFKA_LZ4_FLG, KAFKA_LZ4_BD)
        # Magic 0 keeps the pre-KAFKA-3160 checksum over the magic bytes too.
        hc = lz4_header_checksum(header if magic == 0 else header[4:])
        super().__init__(header + bytes([hc]), KAFKA_LZ4_BLOCK_SIZE)
        self._compress_block = lz4_block.compress

    def block(self, chunk: bytes) -> bytes:
        if self._level == LZ4_DEFAULT_LEVEL:
            packed = self._compress_block(chunk, store_size=False)
        else:
            packed = self._compress_block(chunk, store_size=False, mode="high_compression", compression=self._level)
        if len(packed) >= len(chunk):  # incompressible: store it, flagged with bit 31
            return LZ4_BLOCK_SIZE.pack(len(chunk) | LZ4_STORED) + chunk
        return LZ4_BLOCK_SIZE.pack(len(packed)) + packed

    def end(self) -> bytes:
        return LZ4_BLOCK_SIZE.pack(0)  # EndMark


def compress(view: memoryview, magic: int, level: int | None) -> bytes:
    """Lz4BlockOutputStream output: Kafka's header, 64 KiB blocks, EndMark, no checksums."""
    compressor = Lz4Compressor(magic, level)
    return compressor.compress(view) + compressor.flush()


