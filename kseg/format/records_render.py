"""A magic-2 batch's records rendered by the compiled core: dump text lines or JSON record objects.

``kseg dump --deep-iteration`` spends its time turning records into text.  With
the compiled core (docs/core.md) a data batch's records are written by
``kseg._core.render_records`` (rust/kseg-wire/src/render.rs) into one bytes
object per batch -- Kafka's record lines as :class:`kseg.render.dump.text.TextRenderer`
writes them, or the JSON record objects of :class:`kseg.render.dump.jsonl.JsonRenderer`,
joined by ``,``.  Those renderers stay the reference (tests/core/test_core_render.py
proves the bytes identical); this module is only the door to the core.

:func:`render_records` answers ``None`` -- the caller then renders the decoded
records in Python -- on the pure-Python path and for anything the scanner does
not accept (a damaged record, a codec error: the Python path reports Kafka's
message).  Bytes shown as text are decoded as Java decodes them in both paths
(the core's ``java_utf8`` is the twin of :func:`kseg.format.jvm_text.java_utf8`).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from itertools import pairwise
from typing import NamedTuple

from kseg.errors import KsegError
from kseg.format._core import CORE, call
from kseg.format.compression import DEFAULT_MAX_DECOMPRESSED
from kseg.format.layout import MIN_V2_BATCH_LENGTH, TIMESTAMP_TYPE_MASK
from kseg.format.records import Buffer
from kseg.format.v2 import V2Batch

#: Style codes of ``kseg._core.render_records`` (rust/kseg-py/src/render.rs).
TEXT = 0
JSON = 1
#: Text flags: ``--print-data-log``, ``--skip-record-metadata``, ``"| "`` before a keyless payload.
PRINT_DATA = 1
SKIP_METADATA = 2
KEYLESS_PIPE = 4
#: JSON payload codes, by ``--payload`` mode.
PAYLOAD_CODES = {"utf8": 0, "hex": 1, "base64": 2}


class RenderStyle(NamedTuple):
    """What the core writes: ``kind`` (:data:`TEXT` or :data:`JSON`) and its flags or payload code."""

    kind: int
    flags: int


def text_style(*, print_data: bool, skip_metadata: bool, keyless_pipe: bool) -> RenderStyle:
    """Record lines; ``keyless_pipe``: ``"| "`` (not ``" "``) before ``payload:`` of a record without key."""
    flags = (PRINT_DATA if print_data else 0) | (SKIP_METADATA if skip_metadata else 0)
    return RenderStyle(TEXT, flags | (KEYLESS_PIPE if keyless_pipe else 0))


def json_style(payload: str) -> RenderStyle:
    """JSON record objects with keys and values per ``--payload`` (utf8, hex, base64)."""
    return RenderStyle(JSON, PAYLOAD_CODES[payload])


def core_renders() -> bool:
    """Whether :func:`render_records` can answer at all (the compiled core is in use)."""
    return CORE is not None


def _records_data(batch: V2Batch, max_batch_bytes: int) -> tuple[Buffer, int, int] | None:
    """(data, start, end) of the batch's records, decompressed under the cap; None where Python must speak."""
    try:
        data, start, end, _, _ = batch._records_bytes(max_batch_bytes)  # the batch's own reader
    except (KsegError, MemoryError):
        return None
    return data, start, end


def _call(
    batch: V2Batch, data: Buffer, start: int, end: int, count: int, style: RenderStyle, whole: bool
) -> tuple[bytes, Sequence[int], int] | None:
    """One core call: (rendered, offsets, where the records end), or None."""
    assert CORE is not None
    log_append_time = batch[8] if batch[5] & TIMESTAMP_TYPE_MASK else None
    rendered = call(CORE.render_records, batch.position, data, start, end, count, style.kind,
                    style.flags, batch[0], batch[7], log_append_time, batch[11], whole)
    if rendered is None or rendered is NotImplemented:
        return None
    text, first, each, after = rendered
    return text, (range(first, first + count) if each is None else each), after


def render_records(
    batch: V2Batch, style: RenderStyle, max_batch_bytes: int = DEFAULT_MAX_DECOMPRESSED
) -> tuple[bytes, Sequence[int]] | None:
    """(the rendered records, their offsets) for a magic-2 data batch, or None: render them in Python.

    Text comes as lines each ended by ``\\n``; JSON as the record objects joined
    by ``,``.  Offsets are a ``range`` when they run consecutively (nearly always).
    """
    if CORE is None or batch[1] < MIN_V2_BATCH_LENGTH or batch[12] < 0:
        return None
    count = batch[12]
    if count == 0:
        return b"", range(0)
    region = _records_data(batch, max_batch_bytes)
    if region is None:
        return None
    rendered = _call(batch, *region, count, style, whole=True)
    return None if rendered is None else rendered[:2]


#: Most records, and about the most record bytes, in one part of a large batch (as ``V2Batch._record_parts``).
PART_RECORDS = 4096
PART_BYTES = 1 << 20
#: The cheapest style: one newline per record (for checking a large batch before rendering it).
_CHECK = RenderStyle(TEXT, SKIP_METADATA)


class BatchParts:
    """A large batch's records, read whole by the core once, then rendered a part at a time.

    A batch above ``PART_RECORDS`` records or ``PART_BYTES`` is rendered in parts so that memory
    holds one part of output, never the whole batch.  :func:`check_parts` has read every record
    first (nothing is written for a batch Python must explain), so rendering cannot stop half-way.
    """

    __slots__ = ("batch", "data", "offsets", "parts")

    def __init__(self, batch: V2Batch, data: Buffer, parts: list[tuple[int, int, int]], offsets: Sequence[int]) -> None:
        self.batch = batch
        self.data = data
        self.parts = parts  # (start, end, count) of each part
        self.offsets = offsets

    def render(self, style: RenderStyle) -> Iterator[bytes]:
        """Each part's text: lines, or JSON objects joined by ``,`` (the caller joins the parts)."""
        for start, end, count in self.parts:
            rendered = _call(self.batch, self.data, start, end, count, style, whole=True)
            if rendered is None:  # the same records read cleanly a moment ago: a bug, not bad input
                raise KsegError("internal error in kseg's compiled core (a part of a batch it read would not render)",
                                offset=self.batch.position)
            yield rendered[0]


def check_parts(batch: V2Batch, max_batch_bytes: int = DEFAULT_MAX_DECOMPRESSED) -> BatchParts | None:
    """A large data batch whose every record the core reads, cut into parts; None: Python reads it."""
    if CORE is None or batch[1] < MIN_V2_BATCH_LENGTH or batch[12] <= 0:
        return None
    region = _records_data(batch, max_batch_bytes)
    if region is None:
        return None
    data, pos, end = region
    count, done, size = batch[12], 0, min(64, PART_RECORDS)
    parts: list[tuple[int, int, int]] = []
    offsets: list[Sequence[int]] = []
    while done < count:
        n = min(size, count - done)
        checked = _call(batch, data, pos, end, n, _CHECK, whole=False)
        if checked is None:
            return None
        parts.append((pos, checked[2], n))
        offsets.append(checked[1])
        size = max(1, min(PART_RECORDS, PART_BYTES * n // max(1, checked[2] - pos)))
        done, pos = done + n, checked[2]
    if pos != end:
        return None
    return BatchParts(batch, data, parts, _joined(offsets))


def _joined(offsets: list[Sequence[int]]) -> Sequence[int]:
    """The parts' offsets as one sequence: one ``range`` when they run on from part to part."""
    if all(type(o) is range for o in offsets) and all(a[-1] + 1 == b[0] for a, b in pairwise(offsets)):
        return range(offsets[0][0], offsets[-1][-1] + 1)
    return [offset for part in offsets for offset in part]
