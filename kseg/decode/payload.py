"""A record's key or value through the offline registry: framing, schema, decoder -- or why not.

:class:`PayloadDecoder` keeps one compiled decoder per schema id.  A payload
in the registry's framing (:mod:`kseg.decode.wire`) is decoded with the
schema its id names: Avro (:mod:`kseg.decode.avro`), Protobuf
(:mod:`kseg.decode.proto`) or JSON Schema (the payload is JSON text; it is
parsed, not validated).  Whatever goes wrong -- an id the registry does not
know, a schema that does not compile, bytes that do not fit -- is the
``problem`` of that one payload, never an error of the run.  A payload not in
the framing is left alone (``schema`` None): keys are often plain strings.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Protocol

from kseg.decode.jsonable import jsonable
from kseg.decode.registry import AVRO, JSON, PROTOBUF, Registry, Schema
from kseg.decode.wire import WireError, framed

EXTRA_HINT = "pip install 'kseg[decode]'"


class MissingExtra(ImportError):
    """``--decode`` without the optional packages: the message says which extra to install."""


def require_extra() -> None:
    """Raise :class:`MissingExtra` unless fastavro, protobuf and proto-schema-parser import."""
    import importlib.util

    missing = [m for m in ("fastavro", "google.protobuf", "proto_schema_parser") if not _importable(m, importlib.util)]
    if missing:
        raise MissingExtra(f"--decode needs {', '.join(missing)}: {EXTRA_HINT}")


def _importable(module: str, util: Any) -> bool:
    try:
        return util.find_spec(module) is not None
    except ImportError:  # its parent package is missing
        return False


class _Decoder(Protocol):
    def decode(self, data: bytes, start: int) -> Any: ...


class _JsonDecoder:
    def __init__(self, schema: Schema, registry: Registry) -> None:
        json.loads(schema.text)  # a schema that is not JSON is a problem of its own

    def decode(self, data: bytes, start: int) -> Any:
        return json.loads(data[start:].decode("utf-8"))


@dataclass(frozen=True, slots=True)
class Decoded:
    """One payload's decoding: the value as JSON, the schema used, or the problem."""

    value: Any = None
    schema: Schema | None = None
    schema_id: int | None = None
    problem: str | None = None

    def as_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"value": self.value, "schema_id": self.schema_id}
        if self.schema is not None:
            out["subject"] = self.schema.subject
            out["version"] = self.schema.version
            out["type"] = self.schema.schema_type
            if self.schema.deleted:
                out["deleted"] = True
        if self.problem is not None:
            out["problem"] = self.problem
        return out


class PayloadDecoder:
    """Decodes payloads against one registry; one compiled decoder per schema id, built on first use."""

    def __init__(self, registry: Registry) -> None:
        self.registry = registry
        self._decoders: dict[int, _Decoder | str] = {}

    def decode(self, data: bytes | None) -> Decoded | None:
        """None when ``data`` is not in the registry's framing; else the value or the problem."""
        frame = framed(data)
        if frame is None or data is None:
            return None
        schema = self.registry.by_id.get(frame.schema_id)
        if schema is None:
            return Decoded(schema_id=frame.schema_id, problem=f"schema id {frame.schema_id} is not in the registry")
        decoder = self._decoder(schema)
        if isinstance(decoder, str):
            return Decoded(schema=schema, schema_id=schema.id, problem=decoder)
        try:
            value = decoder.decode(data, frame.start)
        except (WireError, LookupError, ValueError, TypeError, EOFError, IndexError, UnicodeDecodeError) as err:
            return Decoded(schema=schema, schema_id=schema.id, problem=f"bytes do not fit the schema: {_why(err)}")
        except Exception as err:  # a decoding library's own exception type (protobuf's DecodeError...)
            return Decoded(schema=schema, schema_id=schema.id, problem=f"bytes do not fit the schema: {_why(err)}")
        return Decoded(jsonable(value), schema, schema.id)

    def _decoder(self, schema: Schema) -> _Decoder | str:
        """The compiled decoder for ``schema``, or why it cannot be had (kept: asked once per id)."""
        known = self._decoders.get(schema.id)
        if known is not None:
            return known
        made: _Decoder | str
        try:
            made = _compile(schema, self.registry)
        except Exception as err:  # a schema that does not parse is a finding on every payload using it
            made = f"schema {schema.id} ({schema.subject} version {schema.version}) does not compile: {_why(err)}"
        self._decoders[schema.id] = made
        return made


def _compile(schema: Schema, registry: Registry) -> _Decoder:
    if schema.schema_type == AVRO:
        from kseg.decode.avro import AvroDecoder

        return AvroDecoder(schema, registry)
    if schema.schema_type == PROTOBUF:
        from kseg.decode.proto import ProtoDecoder

        return ProtoDecoder(schema, registry)
    if schema.schema_type == JSON:
        return _JsonDecoder(schema, registry)
    raise ValueError(f"unknown schema type {schema.schema_type!r}")


def _why(err: BaseException) -> str:
    text = str(err).splitlines()[0] if str(err) else ""
    return f"{type(err).__name__}: {text}" if text else type(err).__name__
