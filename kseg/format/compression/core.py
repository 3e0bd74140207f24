"""What every codec shares: the bounded output buffer, lazy library loading, Kafka's level ranges.

The bounded output is the decompression-bomb guard: each decoder produces its
bytes through it, so output past the caller's ``max_size`` raises
:class:`~kseg.errors.LimitExceeded` before it is built.  The codec libraries
(lz4, python-snappy, zstandard) are imported on first use, so a walk over
uncompressed or gzip data never pays for them.
"""

from __future__ import annotations

import importlib
import mmap
from collections.abc import Iterator
from types import ModuleType

from kseg.errors import EncodeError, LimitExceeded, Unsupported

# Output is produced in steps of at most this many bytes, so that a bomb is
# stopped after at most one step past the cap.
OUTPUT_STEP = 1 << 20
# Compressed input is fed to zlib in pieces of this size, which keeps the
# ``unconsumed_tail`` copies zlib makes between output steps small.
INPUT_STEP = 64 * 1024


#: What a decoder hands back: bytes, or (``mapped=True``) an anonymous map whose slices are bytes.
OutputBuffer = bytes | mmap.mmap


#: Output up to this size is collected as the decoder's own chunks (a batch as Kafka writes it, a
#: few KiB to 1 MiB): one chunk is handed over as it is, several are joined once.  Past it, a
#: ``mapped`` output moves to an anonymous map (below).
SMALL_OUTPUT = 1 << 20


class Budget:
    """The cap on one payload's decompressed bytes, counted as a streaming decoder produces them.

    What :class:`BoundedOutput` checks, without keeping the bytes: the decoders that hand their
    output over a chunk at a time (``chunks`` in :mod:`.gzip`, :mod:`.snappy`, :mod:`.lz4`) call
    :meth:`claim` before producing a size they know and :meth:`take` on each chunk, so a bomb
    stops at the same byte, with the same message, whether its output is kept or streamed.
    """

    __slots__ = ("_codec", "_length", "_limit")

    def __init__(self, codec: str, limit: int) -> None:
        self._codec = codec
        self._limit = limit
        self._length = 0

    @property
    def room(self) -> int:
        """How many more bytes may be produced."""
        return self._limit - self._length

    def claim(self, size: int) -> None:
        """Raise LimitExceeded if ``size`` more bytes would pass the cap."""
        if size > self.room:
            raise LimitExceeded(
                f"{self._codec}: decompressed data exceeds the limit of {self._limit} bytes "
                f"(at least {self._length + size} bytes); --max-batch-bytes raises the limit"
            )

    def take(self, chunk: bytes | memoryview) -> bytes | memoryview:
        """Count produced bytes, refusing them if they pass the cap; the chunk, for ``yield``."""
        self.claim(len(chunk))
        self._length += len(chunk)
        return chunk


def collect(codec: str, chunks: Iterator[bytes | memoryview], limit: int, mapped: bool) -> OutputBuffer:
    """A streaming decoder's chunks kept in a :class:`BoundedOutput` (the decoder has checked the cap)."""
    out = BoundedOutput(codec, limit, mapped=mapped)
    for chunk in chunks:
        out.append(chunk)
    return out.result()


class BoundedOutput:
    """Decompressed bytes collected under a hard cap: the decompression-bomb guard.

    Decoders call :meth:`claim` with a size they know *before* producing the
    bytes (a Snappy length prefix, a stored LZ4 block), and :meth:`append` for
    bytes produced in bounded steps.

    ``mapped``: once the output passes ``SMALL_OUTPUT``, the bytes go into an
    anonymous map reserved at the cap (only the pages written cost memory) and
    :meth:`result` hands over the map itself, shrunk to the output: a large
    batch's records are then held once, not twice (joining chunks into ``bytes``
    copies them).  A map is unmapped when its last reference goes, so nothing of
    a batch outlives its reading.  Smaller output never pays for a map (creating,
    faulting and shrinking one cost more than the decoding of a typical batch).
    """

    __slots__ = ("_chunks", "_codec", "_length", "_limit", "_map", "_mapped")

    def __init__(self, codec: str, limit: int, *, mapped: bool = False) -> None:
        self._codec = codec
        self._limit = limit
        self._chunks: list[bytes] = []
        self._length = 0
        self._mapped = mapped and limit > 0
        self._map: mmap.mmap | None = None

    @property
    def room(self) -> int:
        """How many more bytes may be produced."""
        return self._limit - self._length

    def claim(self, size: int) -> None:
        """Raise LimitExceeded if ``size`` more bytes would pass the cap."""
        if size > self.room:
            raise LimitExceeded(
                f"{self._codec}: decompressed data exceeds the limit of {self._limit} bytes "
                f"(at least {self._limit - self.room + size} bytes); --max-batch-bytes raises the limit"
            )

    def append(self, chunk: bytes | memoryview) -> None:
        """Add produced bytes, refusing them if they pass the cap."""
        self.claim(len(chunk))
        end = self._length + len(chunk)
        if self._map is None and self._mapped and end > SMALL_OUTPUT:
            self._map = self._reserve()
        if self._map is not None:
            self._map[self._length : end] = chunk
        elif chunk:
            self._chunks.append(chunk if isinstance(chunk, bytes) else bytes(chunk))
        self._length = end

    def mark(self) -> tuple[int, int]:
        """Where the output is now, for :meth:`rewind` (the bytes and the chunks collected)."""
        return self._length, len(self._chunks)

    def rewind(self, mark: tuple[int, int]) -> None:
        """Drop what was produced since ``mark``: a decoder that failed part-way starts again from there."""
        length, chunks = mark
        if self._map is None:
            del self._chunks[chunks:]
        self._length = length  # in the map, the bytes past it are written over

    def _reserve(self) -> mmap.mmap | None:
        """The anonymous map reserved at the cap, holding what was collected so far (None: no address space)."""
        try:
            # anonymous memory (fd -1), never a file: no evidence is read here
            reserved = mmap.mmap(-1, self._limit, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
        except (OSError, OverflowError, ValueError):  # no address space for the cap: collect as bytes
            self._mapped = False
            return None
        at = 0
        for chunk in self._chunks:
            reserved[at : at + len(chunk)] = chunk
            at += len(chunk)
        self._chunks = []
        return reserved

    def result(self) -> OutputBuffer:
        """The collected bytes: ``bytes`` (the one chunk as it is, or several joined), or the map when it holds them."""
        if self._map is None:
            return self._chunks[0] if len(self._chunks) == 1 else b"".join(self._chunks)
        if self._length == 0:  # a map cannot shrink to nothing
            self._map.close()
            return b""
        self._map.resize(self._length)
        return self._map


#: The codec libraries, imported on first use: a walk over uncompressed or gzip data never pays for them.
_LIBRARIES = {"lz4": "lz4.block", "snappy": "snappy", "zstd": "zstandard"}


_LOADED: dict[str, ModuleType] = {}


def _need(codec: str, package: str) -> ModuleType:
    """The codec library, or Unsupported naming the package to install (raised only when a batch needs it).

    Kept once loaded: a compressor is made per batch, and ``import_module`` costs a few microseconds each time.
    """
    module = _LOADED.get(codec)
    if module is not None:
        return module
    try:
        module = _LOADED[codec] = importlib.import_module(_LIBRARIES[codec])
    except ImportError:
        raise Unsupported(f"the {codec} codec needs the '{package}' package, which is not installed") from None
    return module


def check_level(codec: str, value: int | None, *, default: int, low: int, high: int) -> int:
    """Validate a compression level with Kafka's ranges (``CompressionType``) and message."""
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise EncodeError(f"{codec} doesn't support given compression level: {value}")
    return value


def refuse_level(codec: str, value: int | None) -> None:
    """Snappy and none have no levels in Kafka; asking for one is an error, not a silent no-op."""
    if value is not None:
        raise EncodeError(f"{codec} has no compression level (got {value})")


class BlockCompressor:
    """A stream of fixed-size input blocks each compressed alone (Kafka's LZ4 and Snappy framings).

    Input arrives in pieces of any size and is cut at the same block boundaries
    as the whole input would be, so the bytes equal those of compressing it in
    one call.  Subclasses give the stream's header, one block's bytes and the end.
    """

    __slots__ = ("_block_size", "_header", "_pending")

    def __init__(self, header: bytes, block_size: int) -> None:
        self._header = header
        self._block_size = block_size
        self._pending = bytearray()

    def _started(self) -> bytes:
        header, self._header = self._header, b""
        return header

    def compress(self, data: bytes | bytearray | memoryview) -> bytes:
        pending = self._pending
        pending += data
        size = self._block_size
        whole = len(pending) - len(pending) % size
        if not whole:
            return self._started() if data else b""
        view = memoryview(pending)
        try:
            parts = [self._started(), *(self.block(bytes(view[i : i + size])) for i in range(0, whole, size))]
        finally:
            view.release()
        del pending[:whole]
        return b"".join(parts)

    def flush(self) -> bytes:
        last = self.block(bytes(self._pending)) if self._pending else b""
        self._pending.clear()
        return self._started() + last + self.end()

    def block(self, chunk: bytes) -> bytes:
        raise NotImplementedError

    def end(self) -> bytes:
        return b""
