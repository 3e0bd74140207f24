"""Schema programs for the compiled core's metadata decoder (``kseg._core.MetadataDecoder``).

The core interprets, per message version, a tree built here from the same schema
the generic reader walks -- the compiled reader (:mod:`.compiled`) as data
instead of Python source.  A struct is ``(flexible, fields, tagged, order)``:
the fields read in order as ``(slot, kind, nullable)``, the tags its tagged
section may hold as ``(tag, slot, kind, nullable)``, and per output slot
``(json name, keep rule, default)``; the keep rule is
:func:`~.defaults.differs_from_default` for tagged fields (0: always, 1: not
null, 2: null or not empty, 3: null or not the default).  A kind is a fixed
kind's name, ``"string"``, ``"bytes"``, ``("struct", struct)`` or
``("array", element kind)``.  The decisions are the compiled reader's, made
here once: which fields this version reads, which tags it knows, where null
is allowed.
"""

from __future__ import annotations

from typing import Any

from kseg.format.messages.defaults import default_value
from kseg.format.messages.reader import _overlap
from kseg.format.messages.schema import FIXED, Field, Message

ALWAYS, NOT_NULL, NOT_EMPTY, NOT_DEFAULT = 0, 1, 2, 3


def message_program(schema: Message, version: int) -> Any:
    """The program of ``schema`` at ``version`` (the caller checks the version is valid)."""
    return _struct(schema.fields, version, version in schema.flexible)


def _struct(fields: tuple[Field, ...], version: int, flexible: bool) -> tuple[Any, ...]:
    slot = {f.json_name: i for i, f in enumerate(fields)}
    read = [(slot[f.json_name], _kind(f, version, flexible), version in f.nullable)
            for f in fields if version in f.versions and version not in f.tagged]
    tagged: list[tuple[int, int, Any, bool]] = []
    if flexible:
        by_tag = {f.tag: f for f in fields if f.tag is not None and not _overlap(f).empty}
        for tag, fld in sorted(by_tag.items(), key=lambda item: item[0] or 0):
            if version not in _overlap(fld) or (fld.kind == "struct" and version in fld.nullable):
                continue
            tagged.append((tag or 0, slot[fld.json_name], _kind(fld, version, flexible), version in fld.nullable))
    order = [(f.json_name, *_keep(f, version)) for f in fields]
    return (flexible, read, tagged, order)


def _keep(fld: Field, version: int) -> tuple[int, Any]:
    """How a value of a tagged field read from the tagged section is kept (``differs_from_default``)."""
    if version not in fld.tagged:
        return ALWAYS, None
    if fld.default == "null":
        return NOT_NULL, None
    if fld.kind in ("array", "bytes"):
        return NOT_EMPTY, None
    return NOT_DEFAULT, default_value(fld, version)


def _kind(fld: Field, version: int, flexible: bool, element: bool = False) -> Any:
    kind = fld.element if element else fld.kind
    if kind in FIXED or kind in ("string", "bytes"):
        return kind
    if kind == "struct":
        return ("struct", _struct(fld.fields or (), version, flexible))
    if kind == "array" and not element:
        return ("array", _kind(fld, version, flexible, element=True))
    raise ValueError(f"no core program for a field of kind {kind}")
