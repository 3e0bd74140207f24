"""Compiled readers: one Python function per message and version, generated from the schema.

The generic reader (:mod:`.reader`) walks the schema for every field of every
record, builds a path string per field and checks the version ranges each time;
that is right for a dump and too slow for a replay of a million metadata records.
:func:`compiled_reader` turns one ``(message, version)`` into straight-line code:
runs of fixed-width fields are one ``unpack_from``, arrays of integers one
``unpack_from``, and the version checks are done once, when the code is built.

A compiled reader is only a fast path.  It returns exactly what
:func:`~.reader.decode_message` returns for bytes both accept, and raises
(anything) where anything is unusual: a length or count out of range, a null the
field does not allow, a varint longer than four bytes, bytes running out.  The
caller then asks the generic reader, which says what Kafka's exception would
say.  tests/metadata/test_compiled_reader.py holds the two to the same output on
every metadata record of the fixtures, the corpus and generated logs, and on
mutated bytes.
"""

from __future__ import annotations

import base64
import math
import struct
from collections.abc import Callable
from functools import cache, lru_cache
from typing import Any

from kseg.format.jvm_text import java_utf8
from kseg.format.messages.defaults import differs_from_default
from kseg.format.messages.reader import _overlap
from kseg.format.messages.schema import FIXED, SHORT_MAX, Field, Message

#: ``(buffer, position) -> (fields, next position)``.
Reader = Callable[[bytes, int], tuple[dict[str, Any], int]]

#: Struct format letters of the fixed kinds (``FIXED`` without the ``>``).
_LETTER = {kind: layout.format[1:] for kind, layout in FIXED.items()}


class NotFast(Exception):
    """The compiled reader does not take these bytes: the generic reader decides."""


def _uv(buf: bytes, pos: int) -> tuple[int, int]:
    """An unsigned varint of at most four bytes (below 2^28: never negative as a Java int)."""
    value = 0
    for shift in (0, 7, 14, 21):
        byte = buf[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value, pos
    raise NotFast


@lru_cache(maxsize=1 << 14)
def _uuid(raw: bytes) -> str:
    """A uuid as the JSON converters print it; the same few topic and directory ids come back in every record."""
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")


def _b64(raw: bytes) -> str:
    return base64.b64encode(raw).decode("ascii")


def _float(raw: float) -> Any:
    if math.isnan(raw) or math.isinf(raw):
        raise NotFast  # the generic reader spells these
    return raw


def _finish(values: dict[str, Any], order: tuple[tuple[str, Field | None], ...], version: int) -> dict[str, Any]:
    """After a tagged section: the generic reader's schema order, tagged values at their default left out."""
    out: dict[str, Any] = {}
    for name, tagged in order:
        if name in values:
            value = values[name]
            if tagged is not None and not differs_from_default(tagged, value, version):
                continue
            out[name] = value
    return out


class _Builder:
    """Generates the source of one message version: a function per struct, shared helpers by name."""

    def __init__(self, version: int, flexible: bool) -> None:
        self.version, self.flexible = version, flexible
        self.functions: list[str] = []
        self.env: dict[str, Any] = {"NotFast": NotFast, "_uv": _uv, "_uuid": _uuid, "_b64": _b64,
                                    "_float": _float, "_utf8": java_utf8, "_finish": _finish,
                                    "_unpack": struct.unpack_from, "SHORT_MAX": SHORT_MAX}
        self.count = 0

    def name(self, prefix: str, value: Any) -> str:
        self.count += 1
        key = f"{prefix}{self.count}"
        self.env[key] = value
        return key

    def struct(self, fields: tuple[Field, ...]) -> str:
        """A function reading one struct; returns its name."""
        v = self.version
        fn = self.name("_s", None)
        lines = [f"def {fn}(buf, pos):", "    d = {}", "    end = len(buf)"]
        run: list[Field] = []
        for fld in fields:
            if v not in fld.versions or v in fld.tagged:
                continue
            if fld.kind in FIXED:
                run.append(fld)
                continue
            lines += self._fixed_run(run)
            run = []
            lines += self._variable(fld, f"d[{fld.json_name!r}]")
        lines += self._fixed_run(run)
        if self.flexible:
            lines += self._tagged_section(fields)
        lines.append("    return d, pos")
        self.functions.append("\n".join(lines))
        del self.env[fn]
        return fn

    def _tagged_section(self, fields: tuple[Field, ...]) -> list[str]:
        """The tagged section: the tags this version knows read in place, as the generic reader reads them
        (its size prefix not trusted); an unknown tag is the generic reader's to keep raw."""
        v = self.version
        by_tag = {f.tag: f for f in fields if f.tag is not None and not _overlap(f).empty}  # the generic's map
        order = tuple((f.json_name, f if v in f.tagged else None) for f in fields)
        lines = ["    if buf[pos] == 0:", "        pos += 1", "    else:", "        count, pos = _uv(buf, pos)",
                 "        for _ in range(count):", "            tag, pos = _uv(buf, pos)",
                 "            _size, pos = _uv(buf, pos)"]
        branch = "if"
        for tag, fld in sorted(by_tag.items(), key=lambda item: item[0] or 0):
            if v not in _overlap(fld) or (fld.kind == "struct" and v in fld.nullable):
                continue
            lines.append(f"            {branch} tag == {tag}:")
            lines += ["            " + line for line in self._value(fld, f"d[{fld.json_name!r}]")]
            branch = "elif"
        lines += ["            else:" if branch == "elif" else "            if True:", "                raise NotFast",
                  f"        d = _finish(d, {self.name('_o', order)}, {v})"]
        return lines

    def _value(self, fld: Field, out: str) -> list[str]:
        """One field's value (function-level indentation)."""
        if fld.kind in FIXED:
            layout = FIXED[fld.kind]
            return [f"    {out}, = _unpack('>{_LETTER[fld.kind]}', buf, pos)", f"    pos += {layout.size}",
                    f"    {out} = {self._convert(fld.kind, out)}"]
        return self._variable(fld, out)

    def _fixed_run(self, run: list[Field]) -> list[str]:
        if not run:
            return []
        layout = struct.Struct(">" + "".join(_LETTER[f.kind] for f in run))
        name = self.name("_st", layout)
        temps = [f"t{i}" for i in range(len(run))]
        lines = [f"    {', '.join(temps)}, = {name}.unpack_from(buf, pos)", f"    pos += {layout.size}"]
        for temp, fld in zip(temps, run, strict=True):
            lines.append(f"    d[{fld.json_name!r}] = {self._convert(fld.kind, temp)}")
        return lines

    @staticmethod
    def _convert(kind: str, expr: str) -> str:
        return {"bool": f"{expr} != 0", "uuid": f"_uuid({expr})", "float64": f"_float({expr})"}.get(kind, expr)

    def _length(self, width: str, target: str) -> list[str]:
        """A length or count into ``target``: compact when flexible, else int16/int32."""
        if self.flexible:
            return [f"    {target} = buf[pos]", f"    if {target} < 0x80:", "        pos += 1", "    else:",
                    f"        {target}, pos = _uv(buf, pos)", f"    {target} -= 1"]
        letter = _LETTER[width]
        size = FIXED[width].size
        return [f"    {target}, = _unpack('>{letter}', buf, pos)", f"    pos += {size}"]

    def _null(self, fld: Field | None, out: str) -> list[str]:
        """A negative length: null where the field allows it at this version, else not ours to judge."""
        if fld is not None and self.version in fld.nullable:
            return [f"        {out} = None"]
        return ["        raise NotFast"]

    def _variable(self, fld: Field, out: str, element: bool = False) -> list[str]:
        """A string, bytes, array or struct field (``element``: an array element, never nullable)."""
        kind = fld.element if element else fld.kind
        owner = None if element else fld
        if kind in ("string", "bytes"):
            lines = self._length("int16" if kind == "string" else "int32", "n")
            check = "n > SHORT_MAX or pos + n > end" if kind == "string" else "pos + n > end"
            convert = "_utf8" if kind == "string" else "_b64"
            return [*lines, "    if n < 0:", *self._null(owner, out), "    else:", f"        if {check}:", "            raise NotFast", f"        {out} = {convert}(bytes(buf[pos:pos + n]))", "        pos += n"]
        if kind == "struct" and not element:
            sub = self.struct(fld.fields or ())
            if self.version in fld.nullable:
                return ["    if buf[pos] >= 0x80:", "        pos += 1", f"        {out} = None", "    else:",
                        "        pos += 1", f"        {out}, pos = {sub}(buf, pos)"]
            return [f"    {out}, pos = {sub}(buf, pos)"]
        if kind == "struct":  # an array element
            sub = self.struct(fld.fields or ())
            return [f"    {out}, pos = {sub}(buf, pos)"]
        if kind in FIXED and element:
            layout = FIXED[kind]
            return [f"    {out}, = _unpack('>{_LETTER[kind]}', buf, pos)", f"    pos += {layout.size}",
                    f"    {out} = {self._convert(kind, out)}"]
        return self._array(fld, out)

    def _array(self, fld: Field, out: str) -> list[str]:
        lines = self._length("int32", "c")
        lines += ["    if c < 0:", *self._null(fld, out), "    else:", "        if c > end - pos:",
                  "            raise NotFast"]
        kind = fld.element or ""
        if kind in ("int8", "int16", "uint16", "int32", "uint32", "int64"):
            letter, size = _LETTER[kind], FIXED[kind].size
            return [*lines, f"        {out} = list(_unpack('>%d{letter}' % c, buf, pos))", f"        pos += {size} * c"]
        item = self._variable(fld, "x", element=True)
        body = ["        items = []", "        for _ in range(c):"]
        body += ["        " + line for line in item]
        body += ["            items.append(x)", f"        {out} = items"]
        return lines + body


@cache
def compiled_reader(schema: Message, version: int) -> Reader | None:
    """The compiled reader of ``schema`` at ``version``; None for a version outside the schema."""
    if version not in schema.valid:
        return None
    builder = _Builder(version, version in schema.flexible)
    top = builder.struct(schema.fields)
    namespace = dict(builder.env)
    exec("\n\n".join(builder.functions), namespace)
    reader: Reader = namespace[top]
    return reader
