"""Kafka's record compression codecs, byte for byte as the Java client writes and reads them.

The codec id is attributes bits 0-2 of a V2 batch or a V0/V1 wrapper message::

    id  name    V0  V1  V2   stream written by Kafka
    0   none    yes yes yes  -
    1   gzip    yes yes yes  java.util.zip.GZIPOutputStream (one member)
    2   snappy  yes yes yes  xerial snappy-java SnappyOutputStream framing
    3   lz4     yes yes yes  Kafka's own LZ4 frame (Lz4BlockOutputStream); magic 0 has a broken HC
    4   zstd    no  no  yes  zstd-jni ZstdOutputStreamNoFinalizer (a plain zstd frame)
    5-7 -       Kafka refuses to read them ("Unknown compression type id: N")

What is compressed: in V2 everything after byte 61 of the batch (all records as
one stream); in V0/V1 the wrapper message's value (a nested message set).

gzip (RFC 1952; GzipCompression)::

    0   ID1 ID2   1f 8b
    2   CM        08 (deflate)
    3   FLG       00 when Kafka writes; read: FHCRC 02, FEXTRA 04, FNAME 08, FCOMMENT 10
    4   MTIME     00000000
    8   XFL       00 (the JDK writes 0 whatever the level)
    9   OS        ff on JDK 16+ (JDK-8244706), 00 on JDK 8-15
    10  raw deflate data
    -8  CRC32 of the uncompressed bytes, little-endian
    -4  ISIZE: uncompressed length mod 2**32, little-endian

  Reading follows GZIPInputStream: optional header fields are skipped, the
  trailer is verified, further members are decoded, and bytes after a member
  that do not start a valid gzip header are ignored.

snappy (xerial snappy-java framing, *not* the official Snappy framing format)::

    0   magic                        82 53 4E 41 50 50 59 00
    8   version, int32 BE            1
    12  min compatible version       1
    16  repeated: int32 BE length + one raw Snappy block (of <= 32 KiB of input)

  A raw Snappy block starts with the uncompressed length as a little-endian
  base-128 varint.  Reading follows SnappyInputStream: input shorter than 16
  bytes or not starting with the magic is ONE raw Snappy block; a chunk length
  equal to 0x82534E41 (the first four magic bytes) starts a concatenated stream;
  fewer than 4 bytes left end the stream.

lz4 (LZ4 frame format v1.5.1, Kafka's own subset; Lz4BlockOutputStream / Lz4BlockInputStream)::

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
  04 22 4D 18 60 40 1A, and never checks the HC on read.

zstd (RFC 8878; ZstdCompression): one standard zstd frame, magic 2 only::

    0   magic     28 B5 2F FD (0xFD2FB528 little-endian)
    4   FHD       00: no content size, no checksum, no dictionary (streaming writer)
    5   window    e.g. 58 (2 MiB at level 3)
    6   blocks    the data in non-last blocks (flush on close), then an empty last block 01 00 00

  Empty input is the frame 28 B5 2F FD 20 00 01 00 00 (content size 0).
  Reading accepts concatenated frames, skippable frames and frames with a
  content size or checksum; empty input decodes to nothing, as in zstd-jni.

Every decoder works under a cap on output size (``max_size``): gzip and zstd
are streamed with bounded output, Snappy checks each block's declared length
before decompressing it, and LZ4 blocks are bounded by the frame's block
maximum.  Library exceptions never escape: they become :class:`CodecError`.
"""

from __future__ import annotations

import importlib
import struct
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from types import ModuleType

from kseg.errors import CodecError, EncodeError, LimitExceeded, Unsupported
from kseg.format.xxhash32 import xxh32

__all__ = [
    "CODEC_GZIP",
    "CODEC_LZ4",
    "CODEC_NAMES",
    "CODEC_NONE",
    "CODEC_SNAPPY",
    "CODEC_ZSTD",
    "DEFAULT_MAX_DECOMPRESSED",
    "codec_id",
    "compress",
    "decompress",
]

CODEC_NONE, CODEC_GZIP, CODEC_SNAPPY, CODEC_LZ4, CODEC_ZSTD = 0, 1, 2, 3, 4
#: ``CompressionType.name`` by codec id.
CODEC_NAMES: tuple[str, ...] = ("none", "gzip", "snappy", "lz4", "zstd")
#: Cap on the decompressed bytes of one batch (or one legacy wrapper).
DEFAULT_MAX_DECOMPRESSED: int = 128 * 1024 * 1024

_MAGICS = (0, 1, 2)
_ZSTD_MIN_MAGIC = 2
# Output is produced in steps of at most this many bytes, so that a bomb is
# stopped after at most one step past the cap.
_OUTPUT_STEP = 1 << 20
# Compressed input is fed to zlib in pieces of this size, which keeps the
# ``unconsumed_tail`` copies zlib makes between output steps small.
_INPUT_STEP = 64 * 1024


# ---------------------------------------------------------------------------
# Shared helpers
# ---------------------------------------------------------------------------


class _BoundedOutput:
    """Decompressed bytes collected under a hard cap: the decompression-bomb guard.

    Decoders call :meth:`claim` with a size they know *before* producing the
    bytes (a Snappy length prefix, a stored LZ4 block), and :meth:`append` for
    bytes produced in bounded steps.
    """

    __slots__ = ("_buf", "_codec", "_limit")

    def __init__(self, codec: str, limit: int) -> None:
        self._codec = codec
        self._limit = limit
        self._buf = bytearray()

    @property
    def room(self) -> int:
        """How many more bytes may be produced."""
        return self._limit - len(self._buf)

    def claim(self, size: int) -> None:
        """Raise LimitExceeded if ``size`` more bytes would pass the cap."""
        if size > self.room:
            raise LimitExceeded(
                f"{self._codec}: decompressed data exceeds the limit of {self._limit} bytes "
                f"(at least {len(self._buf) + size} bytes)"
            )

    def append(self, chunk: bytes | memoryview) -> None:
        """Add produced bytes, refusing them if they pass the cap."""
        self.claim(len(chunk))
        self._buf += chunk

    def result(self) -> bytes:
        """The collected bytes (one copy: callers get immutable ``bytes``)."""
        return bytes(self._buf)


#: The codec libraries, imported on first use: a walk over uncompressed or gzip data never pays for them.
_LIBRARIES = {"lz4": "lz4.block", "snappy": "snappy", "zstd": "zstandard"}


def _need(codec: str, package: str) -> ModuleType:
    """The codec library, or Unsupported naming the package to install (raised only when a batch needs it)."""
    try:
        return importlib.import_module(_LIBRARIES[codec])
    except ImportError:
        raise Unsupported(f"the {codec} codec needs the '{package}' package, which is not installed") from None


def _level(codec: str, level: int | None, *, default: int, low: int, high: int) -> int:
    """Validate a compression level with Kafka's ranges (``CompressionType``) and message."""
    if level is None:
        return default
    if isinstance(level, bool) or not isinstance(level, int) or not low <= level <= high:
        raise EncodeError(f"{codec} doesn't support given compression level: {level}")
    return level


def _no_level(codec: str, level: int | None) -> None:
    """Snappy and none have no levels in Kafka; asking for one is an error, not a silent no-op."""
    if level is not None:
        raise EncodeError(f"{codec} has no compression level (got {level})")


# ---------------------------------------------------------------------------
# gzip
# ---------------------------------------------------------------------------

GZIP_HEADER = struct.Struct(
    "<H"  # ID1 ID2: 1f 8b, read little-endian as 0x8b1f like GZIPInputStream.readUShort
    "B"  # CM: compression method, 8 = deflate
    "B"  # FLG: optional-field flags
    "I"  # MTIME: 0 when Kafka writes
    "B"  # XFL: 0 when the JDK writes
    "B"  # OS: 0xff on JDK 16+, 0 on older JDKs
)
GZIP_TRAILER = struct.Struct(
    "<I"  # CRC32 of the uncompressed member
    "I"  # ISIZE: uncompressed member length mod 2**32
)
GZIP_ID = struct.Struct("<H")  # ID1 ID2 alone: "Not in GZIP format" is decided on two bytes
GZIP_EXTRA_LENGTH = struct.Struct("<H")  # XLEN before the FEXTRA bytes
GZIP_HEADER_CRC = struct.Struct("<H")  # low 16 bits of the CRC32 of the header so far (FHCRC)
GZIP_MAGIC = 0x8B1F
GZIP_CM_DEFLATE = 8
GZIP_FHCRC = 0x02
GZIP_FEXTRA = 0x04
GZIP_FNAME = 0x08
GZIP_FCOMMENT = 0x10
# What java.util.zip.GZIPOutputStream writes on the JDK 17 Kafka runs on:
# FLG 0, MTIME 0, XFL 0 and OS 255 ("unknown", JDK-8244706, JDK 16+; JDK 8-15 wrote 0).
GZIP_OS_UNKNOWN = 0xFF
GZIP_WRITTEN_HEADER = GZIP_HEADER.pack(GZIP_MAGIC, GZIP_CM_DEFLATE, 0, 0, 0, GZIP_OS_UNKNOWN)
GZIP_DEFAULT_LEVEL = 6  # Kafka's default -1 is Deflater.DEFAULT_COMPRESSION, which zlib maps to 6


def _gzip_skip_zero_terminated(view: memoryview, pos: int, field: str) -> int:
    """Skip an FNAME or FCOMMENT field (Latin-1 text ending in a zero byte)."""
    end = bytes(view[pos:]).find(b"\x00")
    if end < 0:
        raise CodecError(f"gzip: Unexpected end of input in the GZIP header ({field})")
    return pos + end + 1


def _gzip_header_end(view: memoryview, pos: int) -> int:
    """Check a member header at ``pos`` as GZIPInputStream.readHeader does; return where deflate starts."""
    start = pos
    if len(view) - pos < GZIP_ID.size:
        raise CodecError("gzip: Unexpected end of input in the GZIP header")
    if GZIP_ID.unpack_from(view, pos)[0] != GZIP_MAGIC:
        raise CodecError("gzip: Not in GZIP format")
    if len(view) - pos < GZIP_HEADER.size:
        raise CodecError("gzip: Unexpected end of input in the GZIP header")
    _, method, flags, _mtime, _xfl, _os = GZIP_HEADER.unpack_from(view, pos)
    if method != GZIP_CM_DEFLATE:
        raise CodecError("gzip: Unsupported compression method")
    pos += GZIP_HEADER.size
    if flags & GZIP_FEXTRA:
        if len(view) - pos < GZIP_EXTRA_LENGTH.size:
            raise CodecError("gzip: Unexpected end of input in the GZIP header (FEXTRA)")
        (extra_length,) = GZIP_EXTRA_LENGTH.unpack_from(view, pos)
        pos += GZIP_EXTRA_LENGTH.size + extra_length
        if pos > len(view):
            raise CodecError("gzip: Unexpected end of input in the GZIP header (FEXTRA)")
    if flags & GZIP_FNAME:
        pos = _gzip_skip_zero_terminated(view, pos, "FNAME")
    if flags & GZIP_FCOMMENT:
        pos = _gzip_skip_zero_terminated(view, pos, "FCOMMENT")
    if flags & GZIP_FHCRC:
        if len(view) - pos < GZIP_HEADER_CRC.size:
            raise CodecError("gzip: Unexpected end of input in the GZIP header (FHCRC)")
        (stored,) = GZIP_HEADER_CRC.unpack_from(view, pos)
        if stored != zlib.crc32(view[start:pos]) & 0xFFFF:
            raise CodecError("gzip: Corrupt GZIP header")
        pos += GZIP_HEADER_CRC.size
    # Reserved FLG bits 5-7 are ignored, as GZIPInputStream ignores them.
    return pos


def _gzip_inflate_member(view: memoryview, pos: int, out: _BoundedOutput) -> tuple[int, int, int]:
    """Inflate one member's deflate data with bounded output.

    Returns (position after the deflate data, CRC32 of the output, output length).
    """
    inflater = zlib.decompressobj(wbits=-zlib.MAX_WBITS)
    crc = 0
    produced = 0
    pending: bytes | memoryview = b""
    while not inflater.eof:
        fed = pending
        if not fed and pos < len(view):
            fed = view[pos : pos + _INPUT_STEP]
            pos += len(fed)
        try:
            chunk = inflater.decompress(fed, min(out.room + 1, _OUTPUT_STEP))
        except zlib.error as exc:
            raise CodecError(f"gzip: invalid deflate data ({exc})") from exc
        pending = inflater.unconsumed_tail
        out.append(chunk)
        crc = zlib.crc32(chunk, crc)
        produced += len(chunk)
        if chunk or inflater.eof:
            continue
        if not fed:  # input exhausted, nothing buffered, and the final block never came
            raise CodecError("gzip: Unexpected end of ZLIB input stream")
        if len(pending) == len(fed):  # pragma: no cover - zlib always consumes or produces
            raise CodecError("gzip: deflate stream made no progress")
    return pos - len(inflater.unused_data), crc, produced


def _gzip_check_trailer(view: memoryview, pos: int, crc: int, size: int) -> int:
    """Verify CRC32 and ISIZE after a member (GZIPInputStream.readTrailer); return the position after them."""
    if len(view) - pos < GZIP_TRAILER.size:
        raise CodecError("gzip: Unexpected end of input in the GZIP trailer")
    stored_crc, stored_size = GZIP_TRAILER.unpack_from(view, pos)
    if stored_crc != crc or stored_size != size & 0xFFFFFFFF:
        raise CodecError(
            f"gzip: Corrupt GZIP trailer (CRC32 stored 0x{stored_crc:08x}, computed 0x{crc:08x}; "
            f"ISIZE stored {stored_size}, computed {size & 0xFFFFFFFF})"
        )
    return pos + GZIP_TRAILER.size


def _gzip_decompress(view: memoryview, magic: int, max_size: int) -> bytes:
    """Decode one or more gzip members as GZIPInputStream does."""
    out = _BoundedOutput("gzip", max_size)
    pos = _gzip_header_end(view, 0)
    while True:
        pos, crc, size = _gzip_inflate_member(view, pos, out)
        pos = _gzip_check_trailer(view, pos, crc, size)
        if pos >= len(view):
            break
        try:
            pos = _gzip_header_end(view, pos)
        except CodecError:
            # GZIPInputStream.readTrailer: "ignore any malformed, do nothing" --
            # bytes after a member that are not a gzip header end the stream.
            break
    return out.result()


def _gzip_compress(view: memoryview, magic: int, level: int | None) -> bytes:
    """One gzip member with the header the JDK writes, at Kafka's levels (1-9, -1 = default 6)."""
    if level == -1:
        level = None
    deflate_level = _level("gzip", level, default=GZIP_DEFAULT_LEVEL, low=1, high=9)
    deflater = zlib.compressobj(deflate_level, zlib.DEFLATED, -zlib.MAX_WBITS)
    body = deflater.compress(view) + deflater.flush()
    trailer = GZIP_TRAILER.pack(zlib.crc32(view), len(view) & 0xFFFFFFFF)
    return GZIP_WRITTEN_HEADER + body + trailer


# ---------------------------------------------------------------------------
# snappy (xerial framing)
# ---------------------------------------------------------------------------

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


def _snappy_raw_block(block: memoryview, out: _BoundedOutput) -> None:
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
    out.append(data)


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


def _snappy_decompress(view: memoryview, magic: int, max_size: int) -> bytes:
    """Decode as SnappyInputStream does: xerial chunks after the magic, else one raw block."""
    if not view:
        raise CodecError("snappy: Cannot decompress empty stream")
    out = _BoundedOutput("snappy", max_size)
    if len(view) < XERIAL_HEADER.size or view[: len(XERIAL_MAGIC)] != XERIAL_MAGIC:
        # Not framed: snappy-java decodes the whole input as Snappy.compress(byte[]) output.
        _snappy_raw_block(view, out)
        return out.result()
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
        _snappy_raw_block(view[pos : pos + length], out)
        pos += length
    return out.result()


def _snappy_compress(view: memoryview, magic: int, level: int | None) -> bytes:
    """SnappyOutputStream output: the 16-byte header, then one length-prefixed raw block per 32 KiB of input.

    Empty input gives the bare header, which SnappyOutputStream writes on close.
    """
    _no_level("snappy", level)
    snappy = _need("snappy", "python-snappy")
    parts = [XERIAL_HEADER.pack(XERIAL_MAGIC, XERIAL_VERSION, XERIAL_MIN_COMPATIBLE_VERSION)]
    for start in range(0, len(view), XERIAL_BLOCK_SIZE):
        block = snappy.compress(bytes(view[start : start + XERIAL_BLOCK_SIZE]))
        parts.append(XERIAL_CHUNK_LENGTH.pack(len(block)))
        parts.append(block)
    return b"".join(parts)


# ---------------------------------------------------------------------------
# lz4 (Kafka's LZ4 frame)
# ---------------------------------------------------------------------------

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


def _lz4_decompress(view: memoryview, magic: int, max_size: int) -> bytes:
    """Decode a Kafka LZ4 frame as Lz4BlockInputStream does (bytes after the EndMark are ignored)."""
    flg, max_block, pos = _lz4_read_header(view, magic)
    out = _BoundedOutput("lz4", max_size)
    while True:
        if len(view) - pos < LZ4_BLOCK_SIZE.size:
            raise CodecError("lz4: Stream ended prematurely (no EndMark)")
        (word,) = LZ4_BLOCK_SIZE.unpack_from(view, pos)
        pos += LZ4_BLOCK_SIZE.size
        size = word & ~LZ4_STORED
        if size == 0:  # EndMark
            if flg & LZ4_FLG_CONTENT_CHECKSUM:  # read, never verified (a TODO in Kafka)
                if len(view) - pos < LZ4_CHECKSUM.size:
                    raise CodecError("lz4: Stream ended prematurely (content checksum)")
            return out.result()
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
            if len(view) - pos < LZ4_CHECKSUM.size:
                raise CodecError("lz4: Stream ended prematurely (block checksum)")
            (stored_hash,) = LZ4_CHECKSUM.unpack_from(view, pos)
            pos += LZ4_CHECKSUM.size
            if stored_hash != xxh32(block):
                raise CodecError("lz4: Block checksum mismatch")
        out.append(data)


def _lz4_compress(view: memoryview, magic: int, level: int | None) -> bytes:
    """Lz4BlockOutputStream output: Kafka's header, 64 KiB blocks, EndMark, no checksums."""
    lz4_level = _level("lz4", level, default=LZ4_DEFAULT_LEVEL, low=1, high=17)
    lz4_block = _need("lz4", "lz4")
    header = LZ4_FRAME_HEADER.pack(LZ4_MAGIC, KAFKA_LZ4_FLG, KAFKA_LZ4_BD)
    # Magic 0 keeps the pre-KAFKA-3160 checksum over the magic bytes too.
    hc = lz4_header_checksum(header if magic == 0 else header[4:])
    parts = [header, bytes([hc])]
    for start in range(0, len(view), KAFKA_LZ4_BLOCK_SIZE):
        chunk = bytes(view[start : start + KAFKA_LZ4_BLOCK_SIZE])
        if lz4_level == LZ4_DEFAULT_LEVEL:
            packed = lz4_block.compress(chunk, store_size=False)
        else:
            packed = lz4_block.compress(
                chunk, store_size=False, mode="high_compression", compression=lz4_level
            )
        if len(packed) >= len(chunk):  # incompressible: store it, flagged with bit 31
            parts += [LZ4_BLOCK_SIZE.pack(len(chunk) | LZ4_STORED), chunk]
        else:
            parts += [LZ4_BLOCK_SIZE.pack(len(packed)), packed]
    parts.append(LZ4_BLOCK_SIZE.pack(0))  # EndMark
    return b"".join(parts)


# ---------------------------------------------------------------------------
# zstd
# ---------------------------------------------------------------------------

ZSTD_MAGIC = 0xFD2FB528  # on disk 28 B5 2F FD
ZSTD_SKIPPABLE_MAGIC = 0x184D2A50  # low 4 bits free: 0x184D2A50..0x184D2A5F
ZSTD_SKIPPABLE_MASK = 0xFFFFFFF0
ZSTD_FRAME_MAGIC = struct.Struct("<I")  # frame magic; for skippable frames also the frame size
ZSTD_FHD = struct.Struct(
    "B"  # Frame_Header_Descriptor: FCS flag (bits 7-6) | single segment (5) | unused (4) |
    #        reserved (3) | content checksum (2) | dictionary id flag (1-0)
)
ZSTD_BLOCK_HEADER_SIZE = 3  # 24 bits LE: last block (bit 0) | block type (bits 1-2) | block size (bits 3-23)
ZSTD_CHECKSUM_SIZE = 4
ZSTD_BLOCK_RAW, ZSTD_BLOCK_RLE, ZSTD_BLOCK_COMPRESSED, ZSTD_BLOCK_RESERVED = 0, 1, 2, 3
_ZSTD_DICT_ID_SIZES = (0, 1, 2, 4)
_ZSTD_FCS_SIZES = (0, 2, 4, 8)  # FCS flag 0 means 1 byte when single segment is set
ZSTD_DEFAULT_LEVEL = 3
ZSTD_MIN_LEVEL = -131072  # ZSTD_minCLevel(), Kafka's lower bound
ZSTD_MAX_LEVEL = 22
_ZSTD_TRUNCATED = "zstd: Truncated source"  # zstd-jni 1.5.6's message for a frame cut short
_ZSTD_UNKNOWN_FRAME = "zstd: Decompression error: Unknown frame descriptor"


@dataclass(frozen=True, slots=True)
class _ZstdFrame:
    """Where one zstd frame lies, found by walking its headers (RFC 8878 section 3.1)."""

    start: int
    pieces: tuple[int, ...]  # end of each block (the last one includes the checksum): feed points
    content_size: int | None  # Frame_Content_Size, when the header carries one
    skippable: bool


def _zstd_need(view: memoryview, pos: int, size: int) -> None:
    if len(view) - pos < size:
        raise CodecError(_ZSTD_TRUNCATED)


def _zstd_frame_header_end(view: memoryview, pos: int) -> tuple[int, int | None, bool]:
    """Skip a frame header; return (position of the first block, content size or None, checksum flag)."""
    _zstd_need(view, pos, ZSTD_FHD.size)
    (fhd,) = ZSTD_FHD.unpack_from(view, pos)
    pos += ZSTD_FHD.size
    fcs_flag = fhd >> 6
    single_segment = bool(fhd & 0x20)
    fcs_size = 1 if (fcs_flag == 0 and single_segment) else _ZSTD_FCS_SIZES[fcs_flag]
    window_size = 0 if single_segment else 1
    dict_size = _ZSTD_DICT_ID_SIZES[fhd & 0x03]
    _zstd_need(view, pos, window_size + dict_size + fcs_size)
    pos += window_size + dict_size
    content_size = None
    if fcs_size:
        content_size = int.from_bytes(view[pos : pos + fcs_size], "little") + (256 if fcs_size == 2 else 0)
    return pos + fcs_size, content_size, bool(fhd & 0x04)


def _zstd_could_start_frame(tail: memoryview) -> bool:
    """Whether fewer than 4 bytes are the start of a frame magic (truncated) rather than garbage.

    libzstd makes the same distinction: ``00`` at the end of a stream is an
    unknown frame descriptor, ``28 B5`` a truncated frame.
    """
    frame_magic = ZSTD_FRAME_MAGIC.pack(ZSTD_MAGIC)
    skippable = ZSTD_FRAME_MAGIC.pack(ZSTD_SKIPPABLE_MAGIC)
    data = bytes(tail)
    return frame_magic.startswith(data) or (
        data[:1] != b"" and data[0] & 0xF0 == skippable[0] and skippable[1:].startswith(data[1:])
    )


def _zstd_walk_frame(view: memoryview, start: int) -> _ZstdFrame:
    """Find the blocks of the frame at ``start`` without decoding them, so truncation is detected exactly."""
    if len(view) - start < ZSTD_FRAME_MAGIC.size and not _zstd_could_start_frame(view[start:]):
        raise CodecError(_ZSTD_UNKNOWN_FRAME)
    _zstd_need(view, start, ZSTD_FRAME_MAGIC.size)
    (frame_magic,) = ZSTD_FRAME_MAGIC.unpack_from(view, start)
    pos = start + ZSTD_FRAME_MAGIC.size
    if frame_magic & ZSTD_SKIPPABLE_MASK == ZSTD_SKIPPABLE_MAGIC:
        _zstd_need(view, pos, ZSTD_FRAME_MAGIC.size)
        (size,) = ZSTD_FRAME_MAGIC.unpack_from(view, pos)
        pos += ZSTD_FRAME_MAGIC.size
        _zstd_need(view, pos, size)
        return _ZstdFrame(start, (pos + size,), None, skippable=True)
    if frame_magic != ZSTD_MAGIC:
        raise CodecError(_ZSTD_UNKNOWN_FRAME)
    pos, content_size, has_checksum = _zstd_frame_header_end(view, pos)
    pieces = []
    while True:
        _zstd_need(view, pos, ZSTD_BLOCK_HEADER_SIZE)
        header = int.from_bytes(view[pos : pos + ZSTD_BLOCK_HEADER_SIZE], "little")
        pos += ZSTD_BLOCK_HEADER_SIZE
        last, block_type, block_size = header & 1, (header >> 1) & 0x03, header >> 3
        if block_type == ZSTD_BLOCK_RESERVED:
            raise CodecError("zstd: Decompression error: Data corruption detected (reserved block type)")
        payload = 1 if block_type == ZSTD_BLOCK_RLE else block_size
        _zstd_need(view, pos, payload)
        pos += payload
        if last:
            if has_checksum:
                _zstd_need(view, pos, ZSTD_CHECKSUM_SIZE)
                pos += ZSTD_CHECKSUM_SIZE
            pieces.append(pos)
            return _ZstdFrame(start, tuple(pieces), content_size, skippable=False)
        pieces.append(pos)


def _zstd_decode_frame(view: memoryview, frame: _ZstdFrame, out: _BoundedOutput) -> None:
    """Decode one frame block by block: each call yields at most one block (<= 128 KiB) of output."""
    zstd = _need("zstd", "zstandard")
    if frame.content_size is not None:
        out.claim(frame.content_size)
    decoder = zstd.ZstdDecompressor().decompressobj()
    fed_to = frame.start
    for piece_end in frame.pieces:
        try:
            chunk = decoder.decompress(view[fed_to:piece_end])
        except Exception as exc:  # zstandard.ZstdError, or MemoryError for a huge window
            raise CodecError(f"zstd: Decompression error: {_zstd_error_text(exc)}") from exc
        out.append(chunk)
        fed_to = piece_end
    if not decoder.eof:  # pragma: no cover - the walk found a last block, so libzstd ends the frame
        raise CodecError(_ZSTD_TRUNCATED)


def _zstd_error_text(exc: Exception) -> str:
    """Return libzstd's error name without python-zstandard's "zstd decompressor error: " prefix."""
    text = str(exc)
    return text.split(": ", 1)[1] if ": " in text else text


def _zstd_decompress(view: memoryview, magic: int, max_size: int) -> bytes:
    """Decode concatenated zstd frames (skippable frames are skipped) with bounded output.

    Empty input decodes to ``b""``: zstd-jni's ZstdInputStream returns end of
    stream at once when there is nothing to read (checked against Kafka 4.3.0).
    A frame cut short is an error.  (zstd-jni can miss such a cut when the
    partial last frame arrives in the same 128 KiB input read that ended the
    frame before it -- an artifact of its buffering that is not copied here.)
    Memory: libzstd allocates the frame's window, at most 128 MiB (its default
    limit, as in zstd-jni); larger windows are a CodecError.
    """
    if magic < _ZSTD_MIN_MAGIC:
        raise CodecError(f"ZStandard compression is not supported for magic {magic}")
    out = _BoundedOutput("zstd", max_size)
    pos = 0
    while pos < len(view):
        frame = _zstd_walk_frame(view, pos)
        if not frame.skippable:
            _zstd_decode_frame(view, frame, out)
        pos = frame.pieces[-1]
    return out.result()


def _zstd_compress(view: memoryview, magic: int, level: int | None) -> bytes:
    """The frame zstd-jni's ZstdOutputStream writes behind Kafka's BufferedOutputStream.

    On close the buffered stream first flushes (ZSTD_e_flush: the data ends in
    a non-last block) and then ends the frame (ZSTD_e_end: an empty last
    block).  Nothing is pledged, so the header has no content size -- except for
    empty input, where ZSTD_e_end on a fresh stream pledges size 0 and the frame
    is ``28 B5 2F FD 20 00 01 00 00`` (single segment, content size 0).  Byte
    for byte equal to Kafka 4.3.0 / zstd-jni 1.5.6 for small inputs; larger
    inputs may differ by libzstd version, never in format.
    """
    if magic < _ZSTD_MIN_MAGIC:
        raise EncodeError(f"ZStandard compression is not supported for magic {magic}")
    zstd_level = _level("zstd", level, default=ZSTD_DEFAULT_LEVEL, low=ZSTD_MIN_LEVEL, high=ZSTD_MAX_LEVEL)
    zstd = _need("zstd", "zstandard")
    if not view:
        return zstd.ZstdCompressor(level=zstd_level, write_content_size=True).compressobj(size=0).flush()
    compressor = zstd.ZstdCompressor(level=zstd_level, write_content_size=False).compressobj()
    return (
        compressor.compress(view)
        + compressor.flush(zstd.COMPRESSOBJ_FLUSH_BLOCK)
        + compressor.flush(zstd.COMPRESSOBJ_FLUSH_FINISH)
    )


# ---------------------------------------------------------------------------
# none, the codec table, and the public API
# ---------------------------------------------------------------------------


def _none_decompress(view: memoryview, magic: int, max_size: int) -> bytes:
    return bytes(view)


def _none_compress(view: memoryview, magic: int, level: int | None) -> bytes:
    _no_level("none", level)
    return bytes(view)


@dataclass(frozen=True, slots=True)
class _Codec:
    """One row of the codec table."""

    name: str
    decompress: Callable[[memoryview, int, int], bytes]  # (data, magic, max_size)
    compress: Callable[[memoryview, int, int | None], bytes]  # (data, magic, level)


_CODECS: tuple[_Codec, ...] = (
    _Codec("none", _none_decompress, _none_compress),
    _Codec("gzip", _gzip_decompress, _gzip_compress),
    _Codec("snappy", _snappy_decompress, _snappy_compress),
    _Codec("lz4", _lz4_decompress, _lz4_compress),
    _Codec("zstd", _zstd_decompress, _zstd_compress),
)
assert tuple(codec.name for codec in _CODECS) == CODEC_NAMES


def codec_id(name_or_id: str | int) -> int:
    """The Kafka codec id for a name (``"gzip"``, any case) or an id (``1``).

    Raises:
        Unsupported: the name or id is not one of Kafka's five codecs.
    """
    if isinstance(name_or_id, str):
        name = name_or_id.strip().lower()
        if name in CODEC_NAMES:
            return CODEC_NAMES.index(name)
        raise Unsupported(f"Unknown compression name: {name_or_id}")
    if isinstance(name_or_id, int) and not isinstance(name_or_id, bool):
        if 0 <= name_or_id < len(CODEC_NAMES):
            return name_or_id
        raise Unsupported(f"Unknown compression type id: {name_or_id}")
    raise Unsupported(f"Unknown compression type: {name_or_id!r}")


def _codec(codec: int) -> _Codec:
    return _CODECS[codec_id(codec)]


def _check_magic(magic: int) -> None:
    if magic not in _MAGICS:
        raise Unsupported(f"Unknown magic value {magic}: compression is defined for magic 0, 1 and 2")


def _as_view(data: bytes | bytearray | memoryview) -> memoryview:
    return memoryview(data).cast("B")


def decompress(
    codec: int,
    data: bytes | memoryview,
    *,
    magic: int,
    max_size: int = DEFAULT_MAX_DECOMPRESSED,
) -> bytes:
    """Decompress one batch's (or legacy wrapper's) payload the way Kafka's reader does.

    Args:
        codec: the codec id from the attributes (0-7).
        data: the compressed bytes.
        magic: the batch magic; it decides the LZ4 HC rule and whether zstd is allowed.
        max_size: the cap on decompressed bytes; larger output raises before it is built.

    Raises:
        Unsupported: codec id 5-7, an unknown magic, or a missing codec library.
        LimitExceeded: the output would be larger than ``max_size``.
        CodecError: anything else wrong with the stream (no offset: the caller adds it
            with ``err.located(pos, field)``).
    """
    _check_magic(magic)
    if max_size < 0:
        raise ValueError(f"max_size must be >= 0, not {max_size}")
    return _codec(codec).decompress(_as_view(data), magic, max_size)


def compress(codec: int, data: bytes | memoryview, *, magic: int, level: int | None = None) -> bytes:
    """Compress a payload into the stream Kafka's writer produces for this codec and magic.

    Args:
        codec: the codec id (0-4).
        data: the uncompressed bytes (V2: all records; V0/V1: the inner message set).
        magic: the batch magic (LZ4 header checksum rule; zstd needs magic 2).
        level: Kafka's ``compression.<codec>.level``; None for the default
            (gzip 6, lz4 9, zstd 3).  Snappy and none take no level.

    Raises:
        Unsupported: unknown codec id or magic, or a missing codec library.
        EncodeError: zstd with magic < 2, or a level outside Kafka's range for the codec.
    """
    _check_magic(magic)
    return _codec(codec).compress(_as_view(data), magic, level)
