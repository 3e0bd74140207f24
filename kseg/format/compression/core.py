"""What every codec shares: the bounded output buffer, lazy library loading, Kafka's level ranges.

The bounded output is the decompression-bomb guard: each decoder produces its
bytes through it, so output past the caller's ``max_size`` raises
:class:`~kseg.errors.LimitExceeded` before it is built.  The codec libraries
(lz4, python-snappy, zstandard) are imported on first use, so a walk over
uncompressed or gzip data never pays for them.
"""

from __future__ import annotations

import importlib
from types import ModuleType

from kseg.errors import EncodeError, LimitExceeded, Unsupported

# Output is produced in steps of at most this many bytes, so that a bomb is
# stopped after at most one step past the cap.
OUTPUT_STEP = 1 << 20
# Compressed input is fed to zlib in pieces of this size, which keeps the
# ``unconsumed_tail`` copies zlib makes between output steps small.
INPUT_STEP = 64 * 1024


class BoundedOutput:
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
