"""zstd as Kafka writes it (``ZstdCompression``: zstd-jni ZstdOutputStreamNoFinalizer), magic 2 only.

RFC 8878; one standard zstd frame::

    0   magic     28 B5 2F FD (0xFD2FB528 little-endian)
    4   FHD       00: no content size, no checksum, no dictionary (streaming writer)
    5   window    e.g. 58 (2 MiB at level 3)
    6   blocks    the data in non-last blocks (flush on close), then an empty last block 01 00 00

Empty input is the frame 28 B5 2F FD 20 00 01 00 00 (content size 0).
Reading accepts concatenated frames, skippable frames and frames with a
content size or checksum; empty input decodes to nothing, as in zstd-jni.
Frames are walked header by header before decoding (so truncation is found
exactly) and decoded block by block under the output cap.
"""

from __future__ import annotations

import struct
import threading
from dataclasses import dataclass
from typing import Any

from kseg.errors import CodecError, EncodeError, LimitExceeded
from kseg.format._core import CORE, call
from kseg.format.compression.core import BoundedOutput, OutputBuffer, _need, check_level

ZSTD_MIN_MAGIC = 2  # CompressionType.ZSTD needs RecordBatch.MAGIC_VALUE_V2
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
_EMPTY_LAST_RAW_BLOCK = b"\x01\x00\x00"  # last block, raw, size 0
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
    small_window: bool = False  # Window_Size (or a single segment's content size) at most SMALL_WINDOW


def _zstd_need(view: memoryview, pos: int, size: int) -> None:
    if len(view) - pos < size:
        raise CodecError(_ZSTD_TRUNCATED)


def _zstd_frame_header_end(view: memoryview, pos: int) -> tuple[int, int | None, bool, int | None]:
    """Skip a frame header; return (position of the first block, content size or None, checksum flag, window size).

    The window size is a single segment's content size (None: neither is given).
    """
    _zstd_need(view, pos, ZSTD_FHD.size)
    (fhd,) = ZSTD_FHD.unpack_from(view, pos)
    pos += ZSTD_FHD.size
    fcs_flag = fhd >> 6
    single_segment = bool(fhd & 0x20)
    fcs_size = 1 if (fcs_flag == 0 and single_segment) else _ZSTD_FCS_SIZES[fcs_flag]
    window_size = 0 if single_segment else 1
    dict_size = _ZSTD_DICT_ID_SIZES[fhd & 0x03]
    _zstd_need(view, pos, window_size + dict_size + fcs_size)
    window = _window_size(view[pos]) if window_size else None
    pos += window_size + dict_size
    content_size = None
    if fcs_size:
        content_size = int.from_bytes(view[pos : pos + fcs_size], "little") + (256 if fcs_size == 2 else 0)
    if window is None:
        window = content_size
    return pos + fcs_size, content_size, bool(fhd & 0x04), window


def _window_size(descriptor: int) -> int:
    """Window_Size from a Window_Descriptor byte (RFC 8878 3.1.1.1.2): exponent (bits 7-3), mantissa (2-0)."""
    window_base = 1 << (10 + (descriptor >> 3))
    return window_base + (window_base >> 3) * (descriptor & 0x07)


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
    """Find the blocks of the frame at ``start`` without decoding them, so truncation is detected exactly.

    ``skippable`` is also set for an *empty* frame (:func:`_is_empty`): one that decodes to nothing.
    """
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
    fhd = view[pos] if pos < len(view) else 0
    pos, content_size, has_checksum, window = _zstd_frame_header_end(view, pos)
    first_block = pos
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
            empty = pos - first_block == len(_EMPTY_LAST_RAW_BLOCK) and _is_empty(
                fhd, content_size, window, bytes(view[first_block:pos])
            )
            return _ZstdFrame(start, tuple(pieces), content_size, skippable=empty, small_window=_small(window))
        pieces.append(pos)


def _small(window: int | None) -> bool:
    """Whether a frame with this window is decoded with the kept context (:data:`SMALL_WINDOW`)."""
    return window is not None and window <= SMALL_WINDOW


#: The largest window of a frame taken as empty without decoding (:func:`_is_empty`): libzstd refuses
#: windows above 128 MiB even for an empty frame.
EMPTY_WINDOW_MAX = 8 << 20


def _is_empty(fhd: int, content_size: int | None, window: int | None, blocks: bytes) -> bool:
    """Whether a frame decodes to nothing whatever reads it, so that it needs no decoding (as a skippable frame).

    zstd's frame for empty input (``28 B5 2F FD 20 00 01 00 00``) and the streaming writer's with no
    content size: the reserved bit clear, no dictionary id, no checksum, a content size absent or 0,
    a window of at most :data:`EMPTY_WINDOW_MAX` (or a single segment), and its blocks exactly one
    last raw block of size 0 (``blocks`` is ``01 00 00``).  libzstd decodes each such frame to
    nothing without an error (tests/format/test_zstd_frames.py); a batch of 500,000 of them was
    500,000 decoder calls.  The compiled core's walk (``zstd_frames``) applies the same rule.
    """
    return (
        fhd & 0x0F == 0  # reserved bit, checksum flag, dictionary id flag
        and window is not None
        and window <= EMPTY_WINDOW_MAX
        and not content_size
        and blocks == _EMPTY_LAST_RAW_BLOCK
    )


#: Frames whose window is at most this are decoded with a decompression context kept per thread.
#: Creating a context costs more than decoding a typical batch; a context keeps the buffers of the
#: largest window it decoded, so frames with larger windows (up to libzstd's 128 MiB) get a fresh
#: one that goes with them.  Kafka's producers (zstd-jni, level 3) write 2-8 MiB windows.
SMALL_WINDOW = 8 << 20
_CONTEXTS = threading.local()


def _decompressor(zstd: Any, keep: bool) -> Any:
    """A ``zstandard.ZstdDecompressor``: this thread's kept one (``keep``: a small window), else a fresh one."""
    if not keep:
        return zstd.ZstdDecompressor()
    kept = getattr(_CONTEXTS, "decompressor", None)
    if kept is None:
        kept = _CONTEXTS.decompressor = zstd.ZstdDecompressor()
    return kept


def _zstd_decode_frame(view: memoryview, frame: _ZstdFrame, out: BoundedOutput, keep_context: bool = False) -> None:
    """Decode one frame block by block: each call yields at most one block (<= 128 KiB) of output."""
    zstd = _need("zstd", "zstandard")
    if frame.content_size is not None:
        out.claim(frame.content_size)
    decoder = _decompressor(zstd, keep_context).decompressobj()
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


def decompress(view: memoryview, magic: int, max_size: int, mapped: bool = False) -> OutputBuffer:
    """Decode concatenated zstd frames (skippable frames are skipped) with bounded output.

    Empty input decodes to ``b""``: zstd-jni's ZstdInputStream returns end of
    stream at once when there is nothing to read (checked against Kafka 4.3.0).
    A frame cut short is an error.  (zstd-jni can miss such a cut when the
    partial last frame arrives in the same 128 KiB input read that ended the
    frame before it -- an artifact of its buffering that is not copied here.)
    Memory: libzstd allocates the frame's window, at most 128 MiB (its default
    limit, as in zstd-jni); larger windows are a CodecError.
    """
    if magic < ZSTD_MIN_MAGIC:
        raise CodecError(f"ZStandard compression is not supported for magic {magic}")
    frames, walk_error = _walk_frames(view)
    out = BoundedOutput("zstd", max_size, mapped=mapped)
    for frame in frames:
        keep = frame.small_window
        mark = out.mark()
        try:
            _zstd_decode_frame(view, frame, out, keep_context=keep)
        except (CodecError, LimitExceeded):
            if not keep:
                raise
            # A kept context can stop on damaged data at another block, or with another of libzstd's
            # messages, than a fresh one: this frame again with a fresh context, from the output as it
            # was before it, gives the error (or the bytes) fresh contexts give -- the frames before it
            # decoded alike.  Only the failing frame is decoded twice, never the whole batch.
            out.rewind(mark)
            _zstd_decode_frame(view, frame, out, keep_context=False)
    if walk_error is not None:
        raise walk_error
    return out.result()


#: The walk's errors by the compiled core's code (kseg-wire ``zstd::FrameError``).
_WALK_ERRORS = {
    1: _ZSTD_TRUNCATED,
    2: _ZSTD_UNKNOWN_FRAME,
    3: "zstd: Decompression error: Data corruption detected (reserved block type)",
}


def _walk_frames(view: memoryview) -> tuple[list[_ZstdFrame], CodecError | None]:
    """Every frame of the stream to decode, in order (skippable and empty frames dropped), and the error
    that stopped the walk, raised once the frames before it are decoded (their errors come first).

    One call of the compiled core when it is in use (``zstd_frames``: a batch of a million skippable
    frames took 30-77 s walked here frame by frame); this loop is the reference (tests/core/test_core_zstd.py).
    """
    found = call(CORE.zstd_frames, 0, view) if CORE is not None else NotImplemented
    if found is not NotImplemented:
        listed, code = found
        frames = [_ZstdFrame(start, tuple(pieces), size, skippable=False, small_window=_small(window))
                  for start, pieces, size, window in listed]
        return frames, (CodecError(_WALK_ERRORS[code]) if code is not None else None)
    return _python_walk_frames(view)


def _python_walk_frames(view: memoryview) -> tuple[list[_ZstdFrame], CodecError | None]:
    """:func:`_walk_frames` in Python, frame by frame."""
    frames = []
    pos = 0
    try:
        while pos < len(view):
            frame = _zstd_walk_frame(view, pos)
            if not frame.skippable:
                frames.append(frame)
            pos = frame.pieces[-1]
    except CodecError as err:
        return frames, err
    return frames, None


#: Levels up to this compress with a ``zstandard.ZstdCompressor`` kept per thread and level: making
#: a context costs ~15 us a batch, and a frame does not depend on what the context compressed
#: before (``compressobj`` starts a new session), so the bytes are those of a fresh one
#: (tests/format/test_compression_per_batch.py).  Higher levels' contexts are large; they are not kept.
KEPT_LEVEL_MAX = 9
_COMPRESSORS = threading.local()


def _compressor(zstd: Any, level: int) -> Any:
    """A ``zstandard.ZstdCompressor`` writing no content size: this thread's kept one for ``level``, or a fresh one."""
    if level > KEPT_LEVEL_MAX:
        return zstd.ZstdCompressor(level=level, write_content_size=False)
    kept: dict[int, Any] | None = getattr(_COMPRESSORS, "by_level", None)
    if kept is None:
        kept = _COMPRESSORS.by_level = {}
    compressor = kept.get(level)
    if compressor is None:
        compressor = kept[level] = zstd.ZstdCompressor(level=level, write_content_size=False)
    return compressor


class ZstdCompressor:
    """The frame zstd-jni's ZstdOutputStream writes behind Kafka's BufferedOutputStream.

    Written a piece at a time, with the same bytes as :func:`compress` on the whole
    input: zstd buffers its input to whole blocks, so how it is cut does not matter.

    On close the buffered stream first flushes (ZSTD_e_flush: the data ends in
    a non-last block) and then ends the frame (ZSTD_e_end: an empty last
    block).  Nothing is pledged, so the header has no content size -- except for
    empty input, where ZSTD_e_end on a fresh stream pledges size 0 and the frame
    is ``28 B5 2F FD 20 00 01 00 00`` (single segment, content size 0).  Byte
    for byte equal to Kafka 4.3.0 / zstd-jni 1.5.6 for small inputs; larger
    inputs may differ by libzstd version, never in format.
    """

    __slots__ = ("_compressor", "_level", "_module")

    def __init__(self, magic: int, level: int | None) -> None:
        if magic < ZSTD_MIN_MAGIC:
            raise EncodeError(f"ZStandard compression is not supported for magic {magic}")
        self._level = check_level("zstd", level, default=ZSTD_DEFAULT_LEVEL, low=ZSTD_MIN_LEVEL, high=ZSTD_MAX_LEVEL)
        self._module = _need("zstd", "zstandard")
        self._compressor: Any = None  # made at the first byte: empty input has a frame of its own

    def compress(self, data: bytes | bytearray | memoryview) -> bytes:
        if not len(data):
            return b""
        if self._compressor is None:
            self._compressor = _compressor(self._module, self._level).compressobj()
        return bytes(self._compressor.compress(data))

    def flush(self) -> bytes:
        zstd = self._module
        if self._compressor is None:
            return bytes(zstd.ZstdCompressor(level=self._level, write_content_size=True).compressobj(size=0).flush())
        return bytes(
            self._compressor.flush(zstd.COMPRESSOBJ_FLUSH_BLOCK) + self._compressor.flush(zstd.COMPRESSOBJ_FLUSH_FINISH)
        )


def compress(view: memoryview, magic: int, level: int | None) -> bytes:
    """The frame zstd-jni's ZstdOutputStream writes behind Kafka's BufferedOutputStream (:class:`ZstdCompressor`)."""
    compressor = ZstdCompressor(magic, level)
    return compressor.compress(view) + compressor.flush()
