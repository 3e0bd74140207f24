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

from collections.abc import Sequence
from typing import NamedTuple

from kseg.errors import KsegError
from kseg.format._core import CORE, NOT_FOR_CORE, core_failure, is_core_failure
from kseg.format.compression import DEFAULT_MAX_DECOMPRESSED
from kseg.format.layout import MIN_V2_BATCH_LENGTH, TIMESTAMP_TYPE_MASK
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
    try:
        data, start, end, _, _ = batch._records_bytes(max_batch_bytes)  # the batch's own reader (decompressed under the cap)
    except (KsegError, MemoryError):
        return None
    log_append_time = batch[8] if batch[5] & TIMESTAMP_TYPE_MASK else None
    try:
        rendered = CORE.render_records(data, start, end, count, style.kind, style.flags,
                                       batch[0], batch[7], log_append_time, batch[11])
    except NOT_FOR_CORE:
        return None
    except Exception as err:
        if is_core_failure(err):
            raise core_failure(err, batch.position) from None
        raise
    if rendered is None:
        return None
    text, first, each = rendered
    return text, (range(first, first + count) if each is None else each)
