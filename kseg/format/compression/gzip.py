"""gzip as Kafka writes it (``GzipCompression``: java.util.zip.GZIPOutputStream) and reads it (GZIPInputStream).

RFC 1952, one member when Kafka writes::

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
that do not start a valid gzip header are ignored.  Output is inflated in
bounded steps (:class:`~kseg.format.compression.core.BoundedOutput`).
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Generator, Iterator

from kseg.errors import CodecError
from kseg.format.compression.core import INPUT_STEP, OUTPUT_STEP, Budget, OutputBuffer, check_level, collect

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
    # Looked for in growing windows, never by copying the rest of the batch: a batch of many
    # members each with a name would otherwise copy it once per member (quadratic).
    step = 256
    while pos < len(view):
        window = bytes(view[pos : pos + step])
        end = window.find(b"\x00")
        if end >= 0:
            return pos + end + 1
        pos += len(window)
        step = min(step * 2, INPUT_STEP)
    raise CodecError(f"gzip: Unexpected end of input in the GZIP header ({field})")


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


def _gzip_inflate_member(view: memoryview, pos: int, out: Budget) -> Generator[bytes, None, tuple[int, int, int]]:
    """Inflate one member's deflate data with bounded output, yielding it a step at a time.

    Returns (position after the deflate data, CRC32 of the output, output length).
    """
    inflater = zlib.decompressobj(wbits=-zlib.MAX_WBITS)
    crc = 0
    produced = 0
    pending: bytes | memoryview = b""
    while not inflater.eof:
        fed = pending
        if not fed and pos < len(view):
            fed = view[pos : pos + INPUT_STEP]
            pos += len(fed)
        try:
            chunk = inflater.decompress(fed, min(out.room + 1, OUTPUT_STEP))
        except zlib.error as exc:
            raise CodecError(f"gzip: invalid deflate data ({exc})") from exc
        pending = inflater.unconsumed_tail
        out.take(chunk)
        crc = zlib.crc32(chunk, crc)
        produced += len(chunk)
        if chunk:
            yield chunk
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


def decompress(view: memoryview, magic: int, max_size: int, mapped: bool = False) -> OutputBuffer:
    """Decode one or more gzip members as GZIPInputStream does."""
    return collect("gzip", chunks(view, magic, max_size), max_size, mapped)


def chunks(view: memoryview, magic: int, max_size: int) -> Iterator[bytes]:
    """:func:`decompress`'s output a step at a time (at most ``OUTPUT_STEP`` bytes), nothing kept:
    the same bytes and the same errors, each raised when the stream reaches it."""
    out = Budget("gzip", max_size)
    pos = _gzip_header_end(view, 0)
    while True:
        pos, crc, size = yield from _gzip_inflate_member(view, pos, out)
        pos = _gzip_check_trailer(view, pos, crc, size)
        if pos >= len(view):
            break
        try:
            pos = _gzip_header_end(view, pos)
        except CodecError:
            # GZIPInputStream.readTrailer: "ignore any malformed, do nothing" --
            # bytes after a member that are not a gzip header end the stream.
            break


class GzipCompressor:
    """One gzip member written a piece at a time: the same bytes as :func:`compress` on the whole input.

    Deflate's output does not depend on how its input is cut (zlib buffers to its
    window), so a batch can be compressed while it is encoded (``kseg convert``).
    """

    __slots__ = ("_crc", "_deflater", "_length", "_started")

    def __init__(self, magic: int, level: int | None) -> None:
        if level == -1:
            level = None
        deflate_level = check_level("gzip", level, default=GZIP_DEFAULT_LEVEL, low=1, high=9)
        self._deflater = zlib.compressobj(deflate_level, zlib.DEFLATED, -zlib.MAX_WBITS)
        self._crc = 0
        self._length = 0
        self._started = False

    def _header(self) -> bytes:
        if self._started:
            return b""
        self._started = True
        return GZIP_WRITTEN_HEADER

    def compress(self, data: bytes | bytearray | memoryview) -> bytes:
        self._crc = zlib.crc32(data, self._crc)
        self._length += len(data)
        return self._header() + self._deflater.compress(data)

    def flush(self) -> bytes:
        trailer = GZIP_TRAILER.pack(self._crc, self._length & 0xFFFFFFFF)
        return self._header() + self._deflater.flush() + trailer


def compress(view: memoryview, magic: int, level: int | None) -> bytes:
    """One gzip member with the header the JDK writes, at Kafka's levels (1-9, -1 = default 6)."""
    compressor = GzipCompressor(magic, level)
    return compressor.compress(view) + compressor.flush()
