"""Renderers for ``kseg dump`` events: Kafka's text, JSON lines, and a table for people.

* :class:`TextRenderer` (:mod:`~kseg.render.dump.text`) prints what
  ``kafka-dump-log.sh`` prints, line for line, and kseg's own lines for the
  side files Kafka's tool does not dump (:mod:`~kseg.render.dump.side_text`).
* :class:`JsonRenderer` (:mod:`~kseg.render.dump.jsonl`) writes one JSON object
  per line (schemas in docs/dump.md; the other events' objects come from
  :mod:`~kseg.render.dump.json_objects`).
* :class:`TableRenderer` (:mod:`~kseg.render.dump.table`) draws rich tables
  that stay readable in 80 columns.

Renderers never read files: everything comes from the typed events of
:mod:`kseg.ops.dump`, dispatched with ``match``.  :mod:`~kseg.render.dump.common`
holds the output sink and Java's spellings, :mod:`~kseg.render.dump.progress`
the loop that feeds a renderer.
"""

from __future__ import annotations

from kseg.render.dump.common import Sink, binary_streams, jackson_json, problem_line
from kseg.render.dump.json_objects import event_objects
from kseg.render.dump.jsonl import (
    PAYLOAD_ENCODERS,
    PAYLOAD_MODES,
    JsonRenderer,
    batch_json_head,
    decode_payload,
)
from kseg.render.dump.progress import DumpRenderer, Progress, render
from kseg.render.dump.side_text import side_file_text
from kseg.render.dump.table import TableRenderer, decoded_summaries
from kseg.render.dump.text import TextRenderer, control_text

__all__ = [
    "PAYLOAD_ENCODERS",
    "PAYLOAD_MODES",
    "DumpRenderer",
    "JsonRenderer",
    "Progress",
    "Sink",
    "TableRenderer",
    "TextRenderer",
    "batch_json_head",
    "binary_streams",
    "control_text",
    "decode_payload",
    "decoded_summaries",
    "event_objects",
    "jackson_json",
    "problem_line",
    "render",
    "side_file_text",
]
