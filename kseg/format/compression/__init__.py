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

One module per codec holds its stream layout and its read and write rules
(:mod:`.gzip`, :mod:`.snappy`, :mod:`.lz4`, :mod:`.zstd`); :mod:`.core` holds
what they share.  This module is the table and the public API.

Every decoder works under a cap on output size (``max_size``): gzip and zstd
are streamed with bounded output, Snappy checks each block's declared length
before decompressing it, and LZ4 blocks are bounded by the frame's block
maximum.  Library exceptions never escape: they become :class:`CodecError`.
The codec libraries are imported the first time a batch needs them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Protocol, cast

from kseg.errors import KsegError, Unsupported
from kseg.format.compression import gzip, lz4, snappy, zstd
from kseg.format.compression.core import OutputBuffer, refuse_level
from kseg.format.compression.lz4 import lz4_header_checksum

__all__ = [
    "CODEC_GZIP",
    "CODEC_LZ4",
    "CODEC_NAMES",
    "CODEC_NONE",
    "CODEC_SNAPPY",
    "CODEC_ZSTD",
    "DEFAULT_MAX_DECOMPRESSED",
    "Compressor",
    "codec_id",
    "compress",
    "compressor",
    "decompress",
    "decompress_buffer",
    "decompress_chunks",
    "lz4_header_checksum",
]

CODEC_NONE, CODEC_GZIP, CODEC_SNAPPY, CODEC_LZ4, CODEC_ZSTD = 0, 1, 2, 3, 4
#: ``CompressionType.name`` by codec id.
CODEC_NAMES: tuple[str, ...] = ("none", "gzip", "snappy", "lz4", "zstd")
#: Cap on the decompressed bytes of one batch (or one legacy wrapper): ``--max-batch-bytes``.
#: A batch's records are decompressed into an anonymous map (:func:`decompress_buffer`) and held
#: once while it is read, so a command stays under 200 MB at this cap (bench/bench_memory.py).
DEFAULT_MAX_DECOMPRESSED: int = 128 * 1024 * 1024

_MAGICS = (0, 1, 2)


def _none_decompress(view: memoryview, magic: int, max_size: int, mapped: bool = False) -> bytes:
    return bytes(view)


def _none_compress(view: memoryview, magic: int, level: int | None) -> bytes:
    refuse_level("none", level)
    return bytes(view)


class Compressor(Protocol):
    """A codec's stream written a piece at a time: the pieces of ``compress`` then ``flush`` are, joined,
    the bytes :func:`compress` gives for the whole input (however it was cut)."""

    def compress(self, data: bytes | bytearray | memoryview) -> bytes: ...

    def flush(self) -> bytes: ...


class _NoneCompressor:
    """Codec none: the input as it is."""

    def __init__(self, magic: int, level: int | None) -> None:
        refuse_level("none", level)

    def compress(self, data: bytes | bytearray | memoryview) -> bytes:
        return bytes(data)

    def flush(self) -> bytes:
        return b""


@dataclass(frozen=True, slots=True)
class _Codec:
    """One row of the codec table."""

    name: str
    decompress: Callable[[memoryview, int, int, bool], OutputBuffer]  # (data, magic, max_size, mapped)
    compress: Callable[[memoryview, int, int | None], bytes]  # (data, magic, level)
    compressor: Callable[[int, int | None], Compressor]  # (magic, level)


_CODECS: tuple[_Codec, ...] = (
    _Codec("none", _none_decompress, _none_compress, _NoneCompressor),
    _Codec("gzip", gzip.decompress, gzip.compress, gzip.GzipCompressor),
    _Codec("snappy", snappy.decompress, snappy.compress, snappy.SnappyCompressor),
    _Codec("lz4", lz4.decompress, lz4.compress, lz4.Lz4Compressor),
    _Codec("zstd", zstd.decompress, zstd.compress, zstd.ZstdCompressor),
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
    return cast("bytes", decompress_buffer(codec, data, magic=magic, max_size=max_size, mapped=False))


def decompress_buffer(
    codec: int, data: bytes | memoryview, *, magic: int, max_size: int = DEFAULT_MAX_DECOMPRESSED, mapped: bool = True
) -> OutputBuffer:
    """:func:`decompress` into an anonymous map (``mapped``): the output is held once, never copied.

    What a batch's records are read from (``V2Batch``); its slices are bytes like those of ``bytes``.
    """
    _check_magic(magic)
    if max_size < 0:
        raise ValueError(f"max_size must be >= 0, not {max_size}")
    try:
        return _codec(codec).decompress(_as_view(data), magic, max_size, mapped)
    except KsegError as err:
        # Dropped here, the decoder's frames -- and the partial output they hold -- are freed
        # now, not when whoever keeps the error (a finding, a report) lets it go.
        raise err.with_traceback(None) from None


#: The codecs that hand their output over a step at a time (those a V0/V1 wrapper may use).
_CHUNKED: dict[int, Callable[[memoryview, int, int], Iterator[bytes | memoryview]]] = {
    CODEC_GZIP: gzip.chunks, CODEC_SNAPPY: snappy.chunks, CODEC_LZ4: lz4.chunks,
}


def decompress_chunks(
    codec: int, data: bytes | memoryview, *, magic: int, max_size: int = DEFAULT_MAX_DECOMPRESSED
) -> Iterator[bytes | memoryview]:
    """:func:`decompress`'s output in pieces (at most about 1 MiB each), nothing of it kept here.

    The same bytes, the same cap and the same errors as :func:`decompress`, each raised when the
    stream reaches it (a gzip trailer's CRC after all the output).  What a V0/V1 wrapper's inner
    messages are walked from, so that a wrapper of millions of messages is never held whole
    (:mod:`kseg.format.v0v1`).  zstd and none, which no wrapper streams, come as one piece.
    """
    _check_magic(magic)
    if max_size < 0:
        raise ValueError(f"max_size must be >= 0, not {max_size}")
    chunked = _CHUNKED.get(codec)
    try:
        if chunked is None:
            yield cast("bytes", _codec(codec).decompress(_as_view(data), magic, max_size, False))  # not mapped: bytes
            return
        yield from chunked(_as_view(data), magic, max_size)
    except KsegError as err:
        raise err.with_traceback(None) from None


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


def compressor(codec: int, *, magic: int, level: int | None = None) -> Compressor:
    """A :class:`Compressor` for a payload fed a piece at a time (``kseg convert`` encodes large batches so).

    Same arguments, checks and bytes as :func:`compress`; the stream's memory is
    the codec's window, not the payload.
    """
    _check_magic(magic)
    return _codec(codec).compressor(magic, level)
