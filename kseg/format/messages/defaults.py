"""Field defaults, as Kafka's generated code and JSON converters see them.

A tagged field is written (and shown) only when its value differs from its
default (``FieldSpec.generateNonDefaultValueCheck``); :func:`default_value`
gives that default in the JSON converters' shape.
"""

from __future__ import annotations

from typing import Any

from kseg.format.messages.schema import INTEGER_TYPES, Field

ZERO_UUID = "AAAAAAAAAAAAAAAAAAAAAA"


def default_value(fld: Field, version: int) -> Any:
    """The field's default in JSON-converter shape (what a reader leaves when the field is absent)."""
    text = fld.default
    if text == "null":
        return None
    if fld.kind in INTEGER_TYPES:
        if not text:
            return 0
        return int(text.removeprefix("0x"), 16) if text.startswith("0x") else int(text)
    if fld.kind == "bool":
        return (text or "").lower() == "true"
    if fld.kind == "float64":
        return float(text) if text else 0.0
    if fld.kind == "uuid":
        return text or ZERO_UUID
    if fld.kind == "string":
        return text or ""
    if fld.kind == "bytes":
        return ""
    if fld.kind == "array":
        return []
    return default_struct(fld.fields or (), version)


def default_struct(fields: tuple[Field, ...], version: int) -> dict[str, Any]:
    """A struct with every field at its default, as its JSON would show at ``version``."""
    return {
        fld.json_name: default_value(fld, version)
        for fld in fields
        if version in fld.versions and version not in fld.tagged
    }


def differs_from_default(fld: Field, value: Any, version: int) -> bool:
    """``FieldSpec.generateNonDefaultValueCheck``: is a tagged value worth writing out?"""
    default = default_value(fld, version)
    if fld.default == "null":
        return value is not None
    if value is None:
        return True  # nullable field holding null while its default is not null
    if fld.kind in ("array", "bytes"):
        return len(value) != 0
    return value != default
