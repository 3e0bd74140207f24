"""``kseg spark export --decode``: keys and values in the schema registry's framing decoded, as columns.

The same decoding as ``kseg grep --decode`` (:mod:`kseg.decode.payload`: the
offline registry rebuilt from a ``_schemas`` partition or a REST export),
applied to every exported record row by a Python UDF on the executors.  The
registry travels to them pickled; each Python worker compiles a schema once,
on first use.  Seven columns are added at the end:

* ``key_decoded`` / ``value_decoded``: the decoded payload as JSON text (null
  when the bytes are not in the registry's framing, or did not decode);
* ``key_schema_id`` / ``value_schema_id``: the schema id the framing names;
* ``key_subject`` / ``value_subject``: that schema's subject in the registry;
* ``decode_problem``: why a framed key or value did not decode (id unknown,
  schema that does not compile, bytes that do not fit), ``key: ...; value: ...``
  -- a finding on the row, never a failed export.

A payload outside the framing (plain text, JSON without a schema) is left as
it is: its columns are null and it is no problem.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

    from kseg.decode.payload import Decoded, PayloadDecoder
    from kseg.decode.registry import Registry

#: The added columns, in order, as Spark DDL types.
COLUMNS = (
    ("key_decoded", "string"), ("key_schema_id", "int"), ("key_subject", "string"),
    ("value_decoded", "string"), ("value_schema_id", "int"), ("value_subject", "string"),
    ("decode_problem", "string"),
)

Row = tuple[str | None, int | None, str | None, str | None, int | None, str | None, str | None]


class RowDecoder:
    """What the UDF calls per row: the registry, and (built on first use, never pickled) its decoders."""

    def __init__(self, registry: Registry) -> None:
        self.registry = registry
        self._decoder: PayloadDecoder | None = None

    def __getstate__(self) -> Registry:
        return self.registry

    def __setstate__(self, registry: Registry) -> None:
        self.registry = registry
        self._decoder = None

    def __call__(self, key: bytes | None, value: bytes | None) -> Row:
        """The seven columns of one record."""
        if self._decoder is None:
            from kseg.decode.payload import PayloadDecoder

            self._decoder = PayloadDecoder(self.registry)
        decoder = self._decoder
        key_part = _part(decoder.decode(None if key is None else bytes(key)))
        value_part = _part(decoder.decode(None if value is None else bytes(value)))
        problems = [f"{name}: {part[3]}" for name, part in (("key", key_part), ("value", value_part)) if part[3]]
        return (*key_part[:3], *value_part[:3], "; ".join(problems) or None)


def _part(decoded: Decoded | None) -> tuple[str | None, int | None, str | None, str | None]:
    """(JSON text, schema id, subject, problem) of one key or value."""
    if decoded is None:
        return None, None, None, None
    subject = decoded.schema.subject if decoded.schema is not None else None
    if decoded.problem is not None:
        return None, decoded.schema_id, subject, decoded.problem
    return _json(decoded.value), decoded.schema_id, subject, None


def _json(value: Any) -> str:
    """Compact JSON, non-ASCII kept as it is, fields in the schema's order (as ``kseg grep --decode`` prints)."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def with_decoded(frame: DataFrame, registry: Registry) -> DataFrame:
    """``frame`` (record-level rows) with the :data:`COLUMNS` at the end."""
    from pyspark.sql import functions as F

    schema = "struct<" + ", ".join(f"{name}: {kind}" for name, kind in COLUMNS) + ">"
    decode = F.udf(RowDecoder(registry), schema, useArrow=False)  # one Python call per row: no pandas needed
    columns = frame.columns
    return (frame.withColumn("_decoded", decode(F.col("key"), F.col("value")))
            .select(*columns, *(F.col("_decoded")[name].alias(name) for name, _ in COLUMNS)))


__all__ = ["COLUMNS", "RowDecoder", "with_decoded"]
