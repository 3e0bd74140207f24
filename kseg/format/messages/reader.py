"""The generic reader: any generated message, read as Kafka's generated ``read`` methods do.

See :mod:`kseg.format.messages` for the encoding table.  Every read takes
the position and returns ``(value, next position)``; a :class:`_Ctx` carries
the buffer, its end, the message start and whether the version is flexible.
Errors raise :class:`MessageDecodeError` with the offset relative to the
message start, the field path, and the text Kafka's exception would carry.
"""

from __future__ import annotations

import base64
import math
from dataclasses import dataclass
from typing import Any

from kseg.errors import InvalidRecord, Unsupported
from kseg.format.jvm_text import java_utf8
from kseg.format.messages.defaults import differs_from_default
from kseg.format.messages.schema import FIXED, SHORT_MAX, UNKNOWN_TAGS, Field, Message, Versions

Buffer = bytes | bytearray | memoryview


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
        _null_or_fail(ctx, fld, name, start, path)
        return None, pos
    if length > SHORT_MAX:
        raise ctx.fail(start, path, f"string field {name} had invalid length {length}")
    raw, pos = _read_array_bytes(ctx, length, pos, path)
    return java_utf8(raw), pos  # Readable.readString: new String(bytes, UTF_8)


def _read_bytes(ctx: _Ctx, fld: Field | None, name: str, pos: int, path: str) -> tuple[str | None, int]:
    start = pos
    length, pos = _read_length(ctx, "int32", pos, path)
    if length < 0:
        _null_or_fail(ctx, fld, name, start, path)
        return None, pos
    raw, pos = _read_array_bytes(ctx, length, pos, path)
    return base64.b64encode(raw).decode("ascii"), pos


def _read_array(ctx: _Ctx, fld: Field, pos: int, path: str) -> tuple[list[Any] | None, int]:
    start = pos
    count, pos = _read_length(ctx, "int32", pos, path)
    if count < 0:
        _null_or_fail(ctx, fld, fld.json_name, start, path)
        return None, pos
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
        if ctx.version in fld.tagged and not differs_from_default(fld, value, ctx.version):
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
