"""``kseg dump --decode``: dump's text and JSON with each record's schema-registry decoding added.

Records reach these renderers decoded (``DumpOptions`` without ``json_records``/``encoded_records``:
the one-pass writers cannot add a field), and each data record's key and value go through
:class:`kseg.decode.payload.PayloadDecoder`: text lines end in `` decoded: <JSON>``, JSON record
objects get ``"decoded"`` -- the same object ``kseg grep --decode`` writes (docs/grep.md).
Control records and internal-topic decoders are left as dump shows them.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from kseg.decode.payload import PayloadDecoder
from kseg.decode.registry import Registry
from kseg.format.model import Record
from kseg.ops.dump import DumpOptions, RecordsEvent
from kseg.render.dump.common import Sink
from kseg.render.dump.jsonl import JsonRenderer
from kseg.render.dump.text import TextRenderer


def decoded_json(decoder: PayloadDecoder, record: Record) -> str:
    """``{"key": D, "value": D}`` for one record (``D`` null when that part is not in the framing)."""
    key, value = decoder.decode(record[2]), decoder.decode(record[3])
    return json.dumps({"key": None if key is None else key.as_json(), "value": None if value is None else value.as_json()},
                      ensure_ascii=False, separators=(",", ":"))


class DecodingJsonRenderer(JsonRenderer):
    """dump's JSON lines, each data record with ``decoded``."""

    def __init__(self, sink: Sink, options: DumpOptions, payload: str, registry: Registry) -> None:
        super().__init__(sink, options, payload)
        self.decoder = PayloadDecoder(registry)

    def _record_parts(self, event: RecordsEvent) -> list[str]:
        return [self.record_json(r, f',"decoded":{decoded_json(self.decoder, r)}') if type(r) is Record
                else self._any_record_json(r) for r in event.items()]


class DecodingTextRenderer(TextRenderer):
    """kafka-dump-log's text, each data record's line followed by `` decoded: <JSON>``."""

    def __init__(self, sink: Sink, options: DumpOptions, registry: Registry) -> None:
        super().__init__(sink, options)
        self.decoder = PayloadDecoder(registry)

    def record_line(self, record: Record) -> str:
        return f"{super().record_line(record)} decoded: {decoded_json(self.decoder, record)}"


__all__: Sequence[str] = ("DecodingJsonRenderer", "DecodingTextRenderer", "decoded_json")
