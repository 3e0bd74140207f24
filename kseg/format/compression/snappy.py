"""Snappy in xerial snappy-java's framing (SnappyOutputStream / SnappyInputStream), as Kafka uses it.

Not the official Snappy framing format::

    0   magic                        82 53 4E 41 50 50 59 00
    8   version, int32 BE            1
    12  min compatible version       1
    16  repeated: int32 BE length + one raw Snappy block (of <= 32 KiB of input)

A raw Snappy block starts with the uncompressed length as a little-endian
base-128 varint.  Reading follows SnappyInputStream: input shorter than 16
bytes or not starting with the magic is ONE raw Snappy block; a chunk length
equal to 0x82534E41 (the first four magic bytes) starts a concatenated stream;
fewer than 4 bytes left end the stream.  Each block's declared length is
checked against the output cap before it is decompressed.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator

from kseg.errors import CodecError
from kseg.format.compression.core import BlockCompressor, Budget, OutputBuffer, _need, collect, refuse_level

XERIAL_HEADER = struct.Struct(
    ">8s"  # magic: 82 53 4E 41 50 50 59 00 (-126, 'S', 'N', 'A', 'P', 'P', 'Y', 0)
    "i"  # version: 1
    "i"  # minimum compatible version: 1
)
XERIAL_CHUNK_LENGTH = struct.Struct(">i")  # compressed length of the raw Snappy block that follows
XERIAL_MAGIC = b"\x82SNAPPY\x00"
XERIAL_VERSION = 1
XERIAL_MIN_COMPATIBLE_VERSION = 1
# A chunk "length" equal to the first four magic bytes starts a concatenated stream.
XERIAL_MAGIC_HEAD = XERIAL_CHUNK_LENGTH.unpack(XERIAL_MAGIC[:4])[0]
XERIAL_BLOCK_SIZE = 32 * 1024  # SnappyOutputStream.DEFAULT_BLOCK_SIZE: input bytes per chunk
XERIAL_MAX_CHUNK_SIZE = 512 * 1024 * 1024  # SnappyInputStream.MAX_CHUNK_SIZE
_SNAPPY_MAX_LENGTH_BYTES = 5  # a uint32 varint


def _snappy_declared_length(block: memoryview) -> int:
    """The uncompressed length a raw Snappy block declares (little-endian base-128 varint, uint32)."""
    value = 0
    for index in range(min(len(block), _SNAPPY_MAX_LENGTH_BYTES)):
        byte = block[index]
        value |= (byte & 0x7F) << (7 * index)
        if not byte & 0x80:
            if value > 0xFFFFFFFF:
                break
            return value
    raise CodecError("snappy: corrupt raw block (invalid uncompressed-length prefix)")


def _snappy_raw_block(block: memoryview, out: Budget) -> bytes:
    """Decompress one raw Snappy block, checking its declared length against the cap first."""
    snappy = _need("snappy", "python-snappy")
    declared = _snappy_declared_length(block)
    out.claim(declared)
    try:
        data = snappy.uncompress(bytes(block))
    except Exception as exc:  # python-snappy's UncompressError wraps cramjam's DecompressionError
        raise CodecError(f"snappy: corrupt raw block ({exc.__cause__ or exc})") from exc
    if len(data) != declared:  # pragma: no cover - cramjam already enforces the declared length
        raise CodecError(
            f"snappy: expected {declared:,} bytes, but decompressed chunk has {len(data):,} bytes"
        )
    out.take(data)
    return data


def _snappy_concatenated_header(view: memoryview, pos: int) -> bool:
    """Check the 12 header bytes after a 0x82534E41 chunk length; False means the stream ends here."""
    rest = XERIAL_HEADER.size - XERIAL_CHUNK_LENGTH.size
    if len(view) - pos < rest:
        raise CodecError("snappy: Insufficient header size in a concatenated block")
    magic, version, _compatible = XERIAL_HEADER.unpack_from(view, pos - XERIAL_CHUNK_LENGTH.size)
    if magic != XERIAL_MAGIC:
        return False  # SnappyInputStream.hasNextChunk: not a valid header -> end of stream
    if version < XERIAL_MIN_COMPATIBLE_VERSION:
        raise CodecError(
            f"snappy: Compressed with an incompatible codec version {version}. "
            f"At least version {XERIAL_MIN_COMPATIBLE_VERSION} is required"
        )
    return True


def decompress(view: memoryview, magic: int, max_size: int, mapped: bool = False) -> OutputBuffer:
    """Decode as SnappyInputStream does: xerial chunks after the magic, else one raw block."""
    return collect("snappy", chunks(view, magic, max_size), max_size, mapped)


def chunks(view: memoryview, magic: int, max_size: int) -> Iterator[bytes]:
    """:func:`decompress`'s output a block at a time, nothing kept: the same bytes and errors."""
    if not view:
        raise CodecError("snappy: Cannot decompress empty stream")
    out = Budget("snappy", max_size)
    if len(view) < XERIAL_HEADER.size or view[: len(XERIAL_MAGIC)] != XERIAL_MAGIC:
        # Not framed: snappy-java decodes the whole input as Snappy.compress(byte[]) output.
        yield _snappy_raw_block(view, out)
        return
    # The first header's version fields are not checked (SnappyInputStream.readHeader).
    pos = XERIAL_HEADER.size
    while len(view) - pos >= XERIAL_CHUNK_LENGTH.size:  # fewer than 4 bytes left ends the stream
        (length,) = XERIAL_CHUNK_LENGTH.unpack_from(view, pos)
        pos += XERIAL_CHUNK_LENGTH.size
        if length == XERIAL_MAGIC_HEAD:
            if not _snappy_concatenated_header(view, pos):
                break
            pos += XERIAL_HEADER.size - XERIAL_CHUNK_LENGTH.size
            continue
        if length < 0:
            raise CodecError(f"snappy: chunkSize is too big or negative : {length}")
        if length > XERIAL_MAX_CHUNK_SIZE:
            raise CodecError(
                f"snappy: Received chunkSize {length:,} is greater than max configured chunk size "
                f"{XERIAL_MAX_CHUNK_SIZE:,}"
            )
        if len(view) - pos < length:
            raise CodecError(f"snappy: failed to read chunk (length {length}, {len(view) - pos} bytes left)")
        yield _snappy_raw_block(view[pos : pos + length], out)
        pos += length


class SnappyCompressor(BlockCompressor):
    """SnappyOutputStream output: the 16-byte header, then one length-prefixed raw block per 32 KiB of input.

    Empty input gives the bare header, which SnappyOutputStream writes on close.
    """

    __slots__ = ("_compress_block",)

    def __init__(self, magic: int, level: int | None) -> None:
        refuse_level("snappy", level)
        self._compress_block = _need("snappy", "python-snappy").compress
        super().__init__(XERIAL_HEADER.pack(XERIAL_MAGIC, XERIAL_VERSION, XERIAL_MIN_COMPATIBLE_VERSION), XERIAL_BLOCK_SIZE)

    def block(self, chunk: bytes) -> bytes:
        packed = self._compress_block(chunk)
        return XERIAL_CHUNK_LENGTH.pack(len(packed)) + packed


def compress(view: memoryview, magic: int, level: int | None) -> bytes:
    """SnappyOutputStream output (:class:`SnappyCompressor`) of the whole input."""
    compressor = SnappyCompressor(magic, level)
    return compressor.compress(view) + compressor.flush()


