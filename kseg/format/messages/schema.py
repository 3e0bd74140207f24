"""The schema model of Kafka's generated messages, built from Kafka's own spellings.

Kafka describes its internal records in JSON message definitions; the
transcriptions in :mod:`kseg.format.schemas` build :class:`Message` and
:class:`Field` values with :func:`message` and :func:`field`, keeping Kafka's
version-range strings (``"3"``, ``"0-4"``, ``"1+"``, ``"none"``).  Every field
carries what changes how it is read: its kind, its versions, nullable and
tagged versions, and its JSON name.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

SHORT_MAX = 0x7FFF
UNKNOWN_TAGS = "_unknownTaggedFields"  # where a decoded struct keeps tags its schema does not know

#: Fixed-width types: struct format and size.
FIXED = {
    "bool": struct.Struct(">b"),
    "int8": struct.Struct(">b"),
    "int16": struct.Struct(">h"),
    "uint16": struct.Struct(">H"),
    "int32": struct.Struct(">i"),
    "uint32": struct.Struct(">I"),
    "int64": struct.Struct(">q"),
    "float64": struct.Struct(">d"),
    "uuid": struct.Struct(">16s"),
}
INTEGER_TYPES = ("int8", "int16", "uint16", "int32", "uint32", "int64")


@dataclass(frozen=True, slots=True)
class Versions:
    """A version range as Kafka writes it: ``"3"``, ``"0-4"``, ``"1+"`` or ``"none"``."""

    low: int
    high: int  # SHORT_MAX for an open range; high < low means empty

    @classmethod
    def parse(cls, text: str | None) -> Versions:
        """Parse Kafka's spelling; ``None``/``""``/``"none"`` is the empty range."""
        if text is None or text in ("", "none"):
            return cls(0, -1)
        if text.endswith("+"):
            return cls(int(text[:-1]), SHORT_MAX)
        if "-" in text:
            low, high = text.split("-")
            return cls(int(low), int(high))
        return cls(int(text), int(text))

    def __contains__(self, version: object) -> bool:
        return isinstance(version, int) and self.low <= version <= self.high

    @property
    def empty(self) -> bool:
        return self.high < self.low

    def __str__(self) -> str:
        if self.empty:
            return "none"
        if self.high == SHORT_MAX:
            return f"{self.low}+"
        return str(self.low) if self.low == self.high else f"{self.low}-{self.high}"


@dataclass(frozen=True, slots=True)
class Field:
    """One field of a message or struct, with the attributes that change how it is read."""

    name: str  # Kafka's name, e.g. "LeaderEpoch"
    type: str  # Kafka's type, e.g. "int32", "[]int32", "string", "[]TopicPartitions", "ClassicMemberMetadata"
    versions: Versions
    nullable: Versions
    tagged: Versions
    tag: int | None
    default: str | None  # Kafka's literal default ("-1", "null", "true", ...); None when not given
    fields: tuple[Field, ...] | None  # struct fields (struct and array-of-struct types)
    json_name: str  # first letter lower-cased, as the JSON converters name it
    kind: str  # a FIXED key, "string", "bytes", "struct" or "array"
    element: str | None  # for arrays: the element kind


@dataclass(frozen=True, slots=True)
class Message:
    """A top-level message definition, with where it was transcribed from."""

    name: str
    valid: Versions
    flexible: Versions
    fields: tuple[Field, ...]
    api_key: int | None
    source: str  # path in apache/kafka
    revision: str | None = None  # apache/kafka commit, when not the family's pinned one (historical variants)
    note: str | None = None  # why a historical variant exists


def _kind_of(type_name: str, has_fields: bool) -> str:
    if type_name in FIXED or type_name in ("string", "bytes"):
        return type_name
    if type_name[:1].isupper() and has_fields:
        return "struct"
    raise ValueError(f"unsupported field type {type_name!r}")


def field(
    name: str,
    type: str,
    versions: str,
    *,
    nullable: str | None = None,
    tagged: str | None = None,
    tag: int | None = None,
    default: str | None = None,
    fields: list[Field] | tuple[Field, ...] | None = None,
) -> Field:
    """Build a :class:`Field` from Kafka's spellings (used by the schema transcriptions)."""
    sub = tuple(fields) if fields is not None else None
    if type.startswith("[]"):
        kind, element = "array", _kind_of(type[2:], sub is not None)
    else:
        kind, element = _kind_of(type, sub is not None), None
    if (tagged is None) != (tag is None):
        raise ValueError(f"{name}: taggedVersions and tag go together")
    return Field(
        name=name,
        type=type,
        versions=Versions.parse(versions),
        nullable=Versions.parse(nullable),
        tagged=Versions.parse(tagged),
        tag=tag,
        default=default,
        fields=sub,
        json_name=name[:1].lower() + name[1:],
        kind=kind,
        element=element,
    )


def message(
    name: str,
    *,
    valid: str,
    flexible: str,
    source: str,
    fields: list[Field],
    api_key: int | None = None,
    revision: str | None = None,
    note: str | None = None,
) -> Message:
    """Build a :class:`Message` from Kafka's spellings."""
    return Message(name, Versions.parse(valid), Versions.parse(flexible), tuple(fields), api_key, source,
                   revision, note)
