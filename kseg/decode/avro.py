"""Avro payloads: the writer's schema (and its named references) parsed with fastavro, then read schemaless.

What Confluent's ``AvroDeserializer`` does (it is fastavro underneath): the
schema id names the writer's schema; each reference (``{"name": "com.acme.
Address", "subject": ..., "version": ...}``) is a named type parsed first, so
the schema may use it by name.  The value read is turned into JSON by
:func:`kseg.decode.jsonable.jsonable`.
"""

from __future__ import annotations

import io
import json
from typing import Any

from kseg.decode.registry import Registry, Schema


class AvroDecoder:
    """One writer schema, parsed once."""

    def __init__(self, schema: Schema, registry: Registry) -> None:
        import fastavro

        self._fastavro = fastavro
        named: dict[str, Any] = {}
        for ref in _references_first(schema, registry, set()):
            fastavro.parse_schema(json.loads(ref.text), named_schemas=named)
        self.parsed = fastavro.parse_schema(json.loads(schema.text), named_schemas=named)

    def decode(self, data: bytes, start: int) -> Any:
        stream = io.BytesIO(data)
        stream.seek(start)
        value = self._fastavro.schemaless_reader(stream, self.parsed, None)
        if stream.tell() != len(data):
            raise ValueError(f"{len(data) - stream.tell()} bytes left over after the Avro value")
        return value


def _references_first(schema: Schema, registry: Registry, seen: set[tuple[str, int]]) -> list[Schema]:
    """The referenced schemas, depth first (a reference's own references before it), each once."""
    out: list[Schema] = []
    for ref in schema.references:
        key = (ref.subject, ref.version)
        if key in seen:
            continue
        seen.add(key)
        target = registry.referenced(ref)
        if target is None:
            raise LookupError(f"reference {ref.name!r} ({ref.subject} version {ref.version}) is not in the registry")
        out += _references_first(target, registry, seen)
        out.append(target)
    return out
