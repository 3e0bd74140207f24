"""Kafka's generated-message encoding, decoded generically from a message schema.

Kafka describes its internal records (consumer offsets, transaction state,
KRaft metadata, ...) in JSON message definitions and generates a Java class
per message.  Instead of a parser per record type, kseg keeps a transcription
of those definitions (:mod:`kseg.format.schemas`) and reads any of them with
the one decoder here, following the generated ``read`` methods
(``generator/.../MessageDataGenerator.java``) rule for rule::

    type                 non-flexible version          flexible version
    bool/int8            1 byte (bool: != 0)           same
    int16/uint16         2 bytes big-endian            same
    int32/uint32         4 bytes                       same
    int64                8 bytes                       same
    float64              8 bytes IEEE 754              same
    uuid                 16 bytes                      same
    string               int16 length, <0 = null       uvarint length+1, 0 = null
    bytes                int32 length, <0 = null       uvarint length+1, 0 = null
    array                int32 count, <0 = null        uvarint count+1, 0 = null
    nullable struct      int8 marker, <0 = null        same (a *tagged* one: uvarint, <=0 = null)
    tagged fields        (none)                        at the end of every struct: uvarint count,
                                                       then per field uvarint tag, uvarint size, data

The result is an ordered dict in the shape of Kafka's generated JSON
converters (``JsonConverterGenerator``): field names with the first letter
lower-cased, integers and bools as such, ``float64`` as a float (``"NaN"`` /
``"Infinity"`` as Jackson writes them), uuid as base64url without padding,
``bytes`` as standard base64 with padding, strings decoded as Java's
``new String(bytes, UTF_8)`` does (:mod:`kseg.format.javautf8`), tagged fields
only when they differ from their default.  Unknown tags are kept under ``"_unknownTaggedFields"``
(``[{"tag": n, "data": base64}]``); :func:`kafka_json` leaves them out, as
Kafka's converters do.

Errors raise :class:`MessageDecodeError` (an :class:`~kseg.errors.InvalidRecord`)
with ``offset`` relative to the start of the message and ``field`` the path of
the field being read; ``kafka_message`` is the text Kafka's exception would
carry (``"null"`` for a ``BufferUnderflowException``), so dump-tool messages
can be reproduced.  Every length is checked against the bytes left before
anything is allocated.  A version outside the schema's ``validVersions``
raises :class:`UnknownVersion` (Kafka's generated readers would read it with
the field rules anyway; kseg refuses to guess).
"""

from __future__ import annotations

import base64
import math
import re
import struct
from dataclasses import dataclass
from decimal import Decimal, localcontext
from typing import Any, Union

from kseg.errors import InvalidRecord, Unsupported
from kseg.format.javautf8 import java_utf8

Buffer = Union[bytes, bytearray, memoryview]

SHORT_MAX = 0x7FFF
ZERO_UUID = "AAAAAAAAAAAAAAAAAAAAAA"
UNKNOWN_TAGS = "_unknownTaggedFields"

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


# --------------------------------------------------------------------------- schema model


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


# --------------------------------------------------------------------------- errors


class MessageDecodeError(InvalidRecord):
    """The bytes do not hold the message; ``kafka_message`` is what Kafka's exception would say."""

    def __init__(self, message: str, *, kafka_message: str, offset: int, field: str | None) -> None:
        super().__init__(message, offset=offset, field=field)
        self.kafka_message = kafka_message


class UnknownVersion(Unsupported):
    """A message version outside the schema's validVersions: shown raw, never guessed at."""

    def __init__(self, schema: Message, version: int) -> None:
        super().__init__(
            f"unknown version {version} of {schema.name} (kseg's schema has versions {schema.valid})",
            offset=0,
        )
        self.schema = schema
        self.version = version


@dataclass(slots=True)
class _Ctx:
    """What every read needs besides the position: the buffer, its end, the message start, flexibility."""

    buf: Buffer
    end: int
    base: int
    version: int
    flexible: bool

    def fail(self, pos: int, path: str, message: str, kafka_message: str | None = None) -> MessageDecodeError:
        return MessageDecodeError(
            message,
            kafka_message=message if kafka_message is None else kafka_message,
            offset=pos - self.base,
            field=path or None,
        )


def _to_int32(value: int) -> int:
    value &= 0xFFFFFFFF
    return value - (1 << 32) if value & 0x80000000 else value


# --------------------------------------------------------------------------- primitive reads


def _read_fixed(ctx: _Ctx, kind: str, pos: int, path: str) -> tuple[Any, int]:
    """A fixed-width value; running out is Java's BufferUnderflowException (message ``null``)."""
    layout = FIXED[kind]
    if pos + layout.size > ctx.end:
        left = max(ctx.end - pos, 0)
        raise ctx.fail(pos, path, f"{kind} needs {layout.size} bytes, only {left} left", "null")
    raw = layout.unpack_from(ctx.buf, pos)[0]
    return _fixed_json(kind, raw), pos + layout.size


def _fixed_json(kind: str, raw: Any) -> Any:
    """A fixed-width value as the JSON converters write it."""
    if kind == "bool":
        return raw != 0
    if kind == "uuid":
        return base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")
    if kind == "float64":
        if math.isnan(raw):
            return "NaN"
        if math.isinf(raw):
            return "Infinity" if raw > 0 else "-Infinity"
    return raw


def _read_uvarint(ctx: _Ctx, pos: int, path: str) -> tuple[int, int]:
    """An unsigned varint as Kafka's ``ByteUtils.readUnsignedVarint``: a Java int (wraps past 2^31)."""
    value = 0
    for i in range(5):
        if pos + i >= ctx.end:
            raise ctx.fail(pos, path, "unsigned varint runs past the end of the message", "null")
        byte = ctx.buf[pos + i]
        value |= (byte & 0x7F) << (7 * i)
        if not byte & 0x80:
            return _to_int32(value), pos + i + 1
    converted = format(_to_int32(value) & 0xFFFFFFFF, "x")
    text = "Varint is too long, the most significant bit in the 5th byte is set, converted value: "
    raise ctx.fail(pos, path, text + converted)


def read_unsigned_varint(buf: Buffer, pos: int = 0, end: int | None = None) -> tuple[int, int]:
    """``ByteUtils.readUnsignedVarint`` for callers framing messages (the KRaft record frame)."""
    ctx = _Ctx(buf, len(buf) if end is None else end, 0, 0, True)
    return _read_uvarint(ctx, pos, "")


def _read_length(ctx: _Ctx, width: str, pos: int, path: str) -> tuple[int, int]:
    """A length or count prefix: compact (uvarint - 1) when flexible, else int16/int32."""
    if ctx.flexible:
        raw, pos = _read_uvarint(ctx, pos, path)
        return _to_int32(raw - 1), pos
    length: int
    length, pos = _read_fixed(ctx, width, pos, path)
    return length, pos


def _read_array_bytes(ctx: _Ctx, size: int, pos: int, path: str) -> tuple[bytes, int]:
    """``Readable.readArray``: ``size`` bytes, checked before anything is copied."""
    remaining = ctx.end - pos
    if size < 0:  # Java: new byte[negative]
        raise ctx.fail(pos, path, f"negative byte-array size {size}", str(size))
    if size > remaining:
        text = f"Error reading byte array of {size} byte(s): only {remaining} byte(s) available"
        raise ctx.fail(pos, path, text)
    return bytes(ctx.buf[pos : pos + size]), pos + size


# --------------------------------------------------------------------------- variable-length reads


def _null_or_fail(ctx: _Ctx, fld: Field | None, name: str, pos: int, path: str) -> None:
    """A negative length: null where the field is nullable at this version, else Kafka's error."""
    if fld is not None and ctx.version in fld.nullable:
        return
    raise ctx.fail(pos, path, f"non-nullable field {name} was serialized as null")


def _read_string(ctx: _Ctx, fld: Field | None, name: str, pos: int, path: str) -> tuple[str | None, int]:
    start = pos
    length, pos = _read_length(ctx, "int16", pos, path)
    if length < 0:
        return _null_or_fail(ctx, fld, name, start, path), pos
    if length > SHORT_MAX:
        raise ctx.fail(start, path, f"string field {name} had invalid length {length}")
    raw, pos = _read_array_bytes(ctx, length, pos, path)
    return java_utf8(raw), pos  # Readable.readString: new String(bytes, UTF_8)


def _read_bytes(ctx: _Ctx, fld: Field | None, name: str, pos: int, path: str) -> tuple[str | None, int]:
    start = pos
    length, pos = _read_length(ctx, "int32", pos, path)
    if length < 0:
        return _null_or_fail(ctx, fld, name, start, path), pos
    raw, pos = _read_array_bytes(ctx, length, pos, path)
    return base64.b64encode(raw).decode("ascii"), pos


def _read_array(ctx: _Ctx, fld: Field, pos: int, path: str) -> tuple[list[Any] | None, int]:
    start = pos
    count, pos = _read_length(ctx, "int32", pos, path)
    if count < 0:
        return _null_or_fail(ctx, fld, fld.json_name, start, path), pos
    remaining = ctx.end - pos
    if count > remaining:
        text = f"Tried to allocate a collection of size {count}, but there are only {remaining} bytes"
        raise ctx.fail(start, path, text + " remaining.")
    items: list[Any] = []
    for i in range(count):
        item, pos = _read_element(ctx, fld, pos, f"{path}[{i}]")
        items.append(item)
    return items, pos


def _read_element(ctx: _Ctx, fld: Field, pos: int, path: str) -> tuple[Any, int]:
    kind = fld.element
    if kind == "string":
        return _read_string(ctx, None, f"{fld.json_name} element", pos, path)
    if kind == "bytes":
        return _read_bytes(ctx, None, f"{fld.json_name} element", pos, path)
    if kind == "struct":
        return _read_struct(ctx, fld.fields or (), pos, path)
    return _read_fixed(ctx, kind or "", pos, path)


def _read_value(ctx: _Ctx, fld: Field, pos: int, path: str, *, tagged: bool = False) -> tuple[Any, int]:
    """One field's value at ``pos`` (a tagged value is read in place; its size prefix is not trusted)."""
    if fld.kind == "string":
        return _read_string(ctx, fld, fld.json_name, pos, path)
    if fld.kind == "bytes":
        return _read_bytes(ctx, fld, fld.json_name, pos, path)
    if fld.kind == "array":
        return _read_array(ctx, fld, pos, path)
    if fld.kind == "struct":
        if ctx.version in fld.nullable:
            if tagged:
                marker, pos = _read_uvarint(ctx, pos, path)
                if marker <= 0:
                    return None, pos
            else:
                marker, pos = _read_fixed(ctx, "int8", pos, path)
                if marker < 0:
                    return None, pos
        return _read_struct(ctx, fld.fields or (), pos, path)
    return _read_fixed(ctx, fld.kind, pos, path)


# --------------------------------------------------------------------------- structs and tagged fields


def _read_struct(ctx: _Ctx, fields: tuple[Field, ...], pos: int, path: str) -> tuple[dict[str, Any], int]:
    """A struct: untagged fields in order, then (flexible) the tagged section; JSON keeps schema order."""
    values: dict[str, Any] = {}
    prefix = f"{path}." if path else ""
    for fld in fields:
        if ctx.version in fld.versions and ctx.version not in fld.tagged:
            values[fld.json_name], pos = _read_value(ctx, fld, pos, prefix + fld.json_name)
    unknown: list[dict[str, Any]] = []
    if ctx.flexible:
        pos = _read_tagged_section(ctx, fields, values, unknown, pos, path)
    out: dict[str, Any] = {}
    for fld in fields:
        if fld.json_name not in values:
            continue
        value = values[fld.json_name]
        if ctx.version in fld.tagged and not _differs_from_default(fld, value, ctx.version):
            continue
        out[fld.json_name] = value
    if unknown:
        out[UNKNOWN_TAGS] = unknown
    return out, pos


def _read_tagged_section(
    ctx: _Ctx,
    fields: tuple[Field, ...],
    values: dict[str, Any],
    unknown: list[dict[str, Any]],
    pos: int,
    path: str,
) -> int:
    """The tagged-field section: known tags decoded in place, unknown ones kept raw (as Kafka does)."""
    by_tag = {fld.tag: fld for fld in fields if fld.tag is not None and not _overlap(fld).empty}
    where = f"{path}._tagged" if path else "_tagged"
    count, pos = _read_uvarint(ctx, pos, where)
    for _ in range(count):
        tag, pos = _read_uvarint(ctx, pos, where)
        size, pos = _read_uvarint(ctx, pos, where)
        fld = by_tag.get(tag)
        if fld is None:
            data, pos = _read_array_bytes(ctx, size, pos, f"{where}[{tag}]")
            unknown.append({"tag": tag, "data": base64.b64encode(data).decode("ascii")})
            continue
        if ctx.version not in _overlap(fld):
            raise ctx.fail(pos, f"{where}[{tag}]", f"Tag {tag} is not valid for version {ctx.version}")
        prefix = f"{path}." if path else ""
        values[fld.json_name], pos = _read_value(ctx, fld, pos, prefix + fld.json_name, tagged=True)
    return pos


def _overlap(fld: Field) -> Versions:
    """Versions in which the field exists *and* is tagged."""
    return Versions(max(fld.versions.low, fld.tagged.low), min(fld.versions.high, fld.tagged.high))


# --------------------------------------------------------------------------- defaults (tagged fields)


def default_value(fld: Field, version: int) -> Any:
    """The field's default in JSON-converter shape (what a reader leaves when the field is absent)."""
    text = fld.default
    if text == "null":
        return None
    if fld.kind in INTEGER_TYPES:
        if not text:
            return 0
        return int(text[2:], 16) if text.startswith("0x") else int(text)
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


def _differs_from_default(fld: Field, value: Any, version: int) -> bool:
    """``FieldSpec.generateNonDefaultValueCheck``: is a tagged value worth writing out?"""
    default = default_value(fld, version)
    if fld.default == "null":
        return value is not None
    if value is None:
        return True  # nullable field holding null while its default is not null
    if fld.kind in ("array", "bytes"):
        return len(value) != 0
    return value != default


# --------------------------------------------------------------------------- entry points


def decode_message(
    schema: Message, version: int, buf: Buffer, pos: int = 0, end: int | None = None
) -> tuple[dict[str, Any], int]:
    """Decode ``schema`` at ``version`` from ``buf[pos:end]``; return the JSON-shaped dict and where it ended.

    Trailing bytes are the caller's business (Kafka's coordinator serdes ignore
    them, the metadata serde rejects them); see :func:`decode_exact`.
    """
    if version not in schema.valid:
        raise UnknownVersion(schema, version)
    limit = len(buf) if end is None else end
    ctx = _Ctx(buf, limit, pos, version, version in schema.flexible)
    return _read_struct(ctx, schema.fields, pos, "")


def decode_exact(
    schema: Message, version: int, buf: Buffer, pos: int = 0, end: int | None = None
) -> dict[str, Any]:
    """Like :func:`decode_message`, but bytes left over are an error."""
    limit = len(buf) if end is None else end
    value, stop = decode_message(schema, version, buf, pos, limit)
    if stop != limit:
        left = limit - stop
        raise MessageDecodeError(
            f"{left} byte(s) left after {schema.name} v{version}",
            kafka_message=f"Found {left} byte(s) of garbage",
            offset=stop - pos,
            field=None,
        )
    return value


# --------------------------------------------------------------------------- Kafka's JSON text


def kafka_json(value: Any) -> str:
    """Serialise a decoded value exactly as Jackson's ``JsonNode.toString()`` does in Kafka's tools.

    Compact separators, strings escaped as Jackson escapes them (``\\uXXXX`` in
    upper-case hex for control characters, nothing else), doubles in Java's
    ``Double.toString`` notation, and ``_unknownTaggedFields`` left out.
    """
    parts: list[str] = []
    _write_json(value, parts)
    return "".join(parts)


def _write_json(value: Any, out: list[str]) -> None:
    if value is None:
        out.append("null")
    elif value is True or value is False:
        out.append("true" if value else "false")
    elif isinstance(value, int):
        out.append(str(value))
    elif isinstance(value, float):
        out.append(java_double(value))
    elif isinstance(value, str):
        out.append(json_string(value))
    elif isinstance(value, dict):
        items = [(k, v) for k, v in value.items() if k != UNKNOWN_TAGS]
        out.append("{")
        for i, (key, item) in enumerate(items):
            if i:
                out.append(",")
            out.append(json_string(key))
            out.append(":")
            _write_json(item, out)
        out.append("}")
    elif isinstance(value, (list, tuple)):
        out.append("[")
        for i, item in enumerate(value):
            if i:
                out.append(",")
            _write_json(item, out)
        out.append("]")
    else:
        raise TypeError(f"cannot write {type(value).__name__} as JSON")


_JSON_ESCAPES = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t"}
_NEEDS_ESCAPE = re.compile(r'[\x00-\x1f"\\]')


def _escape(match: re.Match[str]) -> str:
    ch = match.group()
    return _JSON_ESCAPES.get(ch) or f"\\u{ord(ch):04X}"


def json_string(text: str) -> str:
    """A JSON string literal with Jackson's escaping: the short escapes, else ``\\uXXXX`` below U+0020."""
    return '"' + _NEEDS_ESCAPE.sub(_escape, text) + '"'


def java_double(value: float) -> str:
    """``Double.toString`` (JDK 19+ rules): shortest round-trip digits, at least two where one would do.

    Plain notation for 1e-3 <= |value| < 1e7 (``100.0``, ``0.001``), else
    ``d.dddE±n`` (``1.0E7``, ``4.9E-324``).
    """
    if value == 0:
        return "-0.0" if math.copysign(1.0, value) < 0 else "0.0"
    digits, power = _java_digits(abs(value))
    sign = "-" if value < 0 else ""
    if -3 <= power < 7:
        if power >= 0:
            whole = digits[: power + 1].ljust(power + 1, "0")
            return f"{sign}{whole}.{digits[power + 1:] or '0'}"
        return f"{sign}0.{'0' * (-power - 1)}{digits}"
    return f"{sign}{digits[0]}.{digits[1:] or '0'}E{power}"


def _java_digits(value: float) -> tuple[str, int]:
    """Significant digits and decimal exponent (value = d.ddd x 10^power) as Java chooses them.

    Python's ``repr`` gives the shortest digits that round-trip; where that is a
    single digit, Java also considers two-digit decimals and takes the one
    closest to the exact binary value (so ``Double.MIN_VALUE`` is ``4.9E-324``).
    """
    _, shortest, exponent = Decimal(repr(value)).as_tuple()
    text = "".join(map(str, shortest)).rstrip("0") or "0"
    power = int(exponent) + len(shortest) - 1
    if len(text) == 1:
        with localcontext() as context:
            context.prec = 1100  # enough for any double's exact decimal expansion
            exact = Decimal(value)
            two = exact.scaleb(-power).quantize(Decimal("0.1")).scaleb(power)  # half-even to 2 digits
            closer = abs(two - exact) < abs(Decimal(text).scaleb(power) - exact)
        if closer:
            _, two_digits, two_exponent = two.as_tuple()
            text = "".join(map(str, two_digits)).rstrip("0")
            power = int(two_exponent) + len(two_digits) - 1
    return text, power
