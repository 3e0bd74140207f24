"""Protobuf payloads: the registry's ``.proto`` text parsed without ``protoc``, into a descriptor pool.

The text is parsed by ``proto-schema-parser`` (pure Python) and turned here
into a ``FileDescriptorProto``: package, imports, messages (nested), enums,
map fields (as protoc writes them: a nested ``<Name>Entry`` with
``map_entry``), proto2 groups (as protoc writes them: a nested message of
the group's name and a field of type group named by it in lower case, whose
records the runtime reads as wire types 3 and 4), oneofs, proto3
``optional`` (a synthetic oneof) and ``[packed=...]``.  Type names are left as written; the pool resolves them
by protobuf's scoping rules, as protoc would.  Imports are the schema's
references (each its own file, added first, by the name it is imported by)
and the well-known types (``google/protobuf/*.proto``, from the protobuf
package's own descriptors).  A schema stored as a base64
``FileDescriptorProto`` (what some serializers register) is read as it is.

The message a payload holds is picked by its message indexes
(:func:`kseg.decode.wire.message_indexes`); the value is
``MessageToDict(preserving_proto_field_name=True)``: field names as in the
``.proto``, 64-bit integers as strings, enums by name, well-known types in
their JSON forms -- the JSON mapping every Protobuf library shares.
"""

from __future__ import annotations

import base64
import binascii
from typing import Any

from kseg.decode.registry import Registry, Schema
from kseg.decode.wire import message_indexes

#: Scalar type names -> FieldDescriptorProto.Type numbers.
SCALARS = {
    "double": 1, "float": 2, "int64": 3, "uint64": 4, "int32": 5, "fixed64": 6, "fixed32": 7, "bool": 8,
    "string": 9, "bytes": 12, "uint32": 13, "sfixed32": 15, "sfixed64": 16, "sint32": 17, "sint64": 18,
}
LABEL_OPTIONAL, LABEL_REQUIRED, LABEL_REPEATED = 1, 2, 3
TYPE_GROUP, TYPE_MESSAGE = 10, 11
#: The well-known types' modules, each after the files it imports.
WELL_KNOWN = ("descriptor", "any", "duration", "empty", "field_mask", "source_context", "struct", "timestamp",
              "wrappers", "type", "api")


class ProtoDecoder:
    """One schema's file (and its imports) in a private descriptor pool."""

    def __init__(self, schema: Schema, registry: Registry) -> None:
        from google.protobuf import descriptor_pool

        self.pool = descriptor_pool.DescriptorPool()
        self._added: set[str] = set()
        self._add_well_known()
        self.file = self._add(schema, registry, f"schema-{schema.id}.proto", set())

    def _add_well_known(self) -> None:
        import importlib

        for name in WELL_KNOWN:
            module = importlib.import_module(f"google.protobuf.{name}_pb2")
            self.pool.AddSerializedFile(module.DESCRIPTOR.serialized_pb)
            self._added.add(module.DESCRIPTOR.name)

    def _add(self, schema: Schema, registry: Registry, name: str, path: set[tuple[str, int]]) -> Any:
        from google.protobuf import descriptor_pb2

        proto = file_descriptor(schema.text, name)
        refs = {ref.name: ref for ref in schema.references}
        for dependency in proto.dependency:
            if dependency in self._added:
                continue
            ref = refs.get(dependency)
            target = registry.referenced(ref) if ref is not None else None
            if ref is None or target is None:
                raise LookupError(f"import {dependency!r} is neither a reference in the registry nor a well-known type")
            if (ref.subject, ref.version) in path:
                raise LookupError(f"import cycle through {dependency!r}")
            self._add(target, registry, dependency, path | {(ref.subject, ref.version)})
        self.pool.Add(proto)
        self._added.add(name)
        assert isinstance(proto, descriptor_pb2.FileDescriptorProto)
        return self.pool.FindFileByName(name)

    def message_for(self, indexes: list[int]) -> Any:
        """The message type at ``indexes`` (first into the file's messages, then into nested types)."""
        types = list(self.file.message_types_by_name.values())
        descriptor = None
        for depth, index in enumerate(indexes):
            if index >= len(types):
                raise LookupError(f"message index {index} at depth {depth}: the schema has {len(types)} there")
            descriptor = types[index]
            types = list(descriptor.nested_types)
        if descriptor is None:
            raise LookupError("no message index")
        return descriptor

    def decode(self, data: bytes, start: int) -> Any:
        from google.protobuf import json_format, message_factory

        indexes, start = message_indexes(data, start)
        cls = message_factory.GetMessageClass(self.message_for(indexes))
        message = cls()
        message.ParseFromString(data[start:])
        return json_format.MessageToDict(message, preserving_proto_field_name=True)


def file_descriptor(text: str, name: str) -> Any:
    """A ``FileDescriptorProto`` for ``.proto`` text (or a base64 serialized descriptor), named ``name``."""
    from google.protobuf import descriptor_pb2

    serialized = _base64_descriptor(text)
    if serialized is not None:
        proto = descriptor_pb2.FileDescriptorProto.FromString(serialized)
        proto.name = name
        return proto
    from proto_schema_parser import ast
    from proto_schema_parser.parser import Parser

    parsed = Parser().parse(text)
    proto = descriptor_pb2.FileDescriptorProto(name=name, syntax=parsed.syntax or "proto2")
    for element in parsed.file_elements:
        if isinstance(element, ast.Package):
            proto.package = element.name
        elif isinstance(element, ast.Import):
            proto.dependency.append(element.name)
        elif isinstance(element, ast.Message):
            _message(element, proto.message_type.add(), proto.syntax == "proto3")
        elif isinstance(element, ast.Enum):
            _enum(element, proto.enum_type.add())
    return proto


def _base64_descriptor(text: str) -> bytes | None:
    stripped = text.strip()
    if not stripped or any(c.isspace() for c in stripped) or "{" in stripped or ";" in stripped:
        return None
    try:
        return base64.b64decode(stripped, validate=True)
    except (binascii.Error, ValueError):
        return None


def _message(node: Any, out: Any, proto3: bool) -> None:
    from proto_schema_parser import ast

    out.name = node.name
    for element in node.elements:
        if isinstance(element, ast.Field):
            _field(element, out, proto3, None)
        elif isinstance(element, ast.MapField):
            _map_field(element, out)
        elif isinstance(element, ast.OneOf):
            index = len(out.oneof_decl)
            out.oneof_decl.add(name=element.name)
            for member in element.elements:
                if isinstance(member, ast.Field):
                    _field(member, out, proto3, index)
                elif isinstance(member, ast.Group):
                    _group(member, out, proto3, index)
        elif isinstance(element, ast.Message):
            _message(element, out.nested_type.add(), proto3)
        elif isinstance(element, ast.Enum):
            _enum(element, out.enum_type.add())
        elif isinstance(element, ast.Group):
            _group(element, out, proto3, None)
    _synthetic_oneofs_last(out)


def _group(node: Any, out: Any, proto3: bool, oneof: int | None) -> None:
    """A proto2 group, as protoc writes it: the nested message ``node.name`` (added where the group stands,
    so message indexes count it as protoc's descriptor does) and a field of type group named ``node.name``
    in lower case.  proto3 has no groups: the pool refuses the file, a problem on the schema."""
    _message(node, out.nested_type.add(), proto3)
    field = out.field.add(name=node.name.lower(), number=node.number, type=TYPE_GROUP, type_name=node.name)
    field.label = _label(node.cardinality)
    if oneof is not None:
        field.oneof_index = oneof


def _field(node: Any, out: Any, proto3: bool, oneof: int | None) -> None:
    from proto_schema_parser import ast

    field = out.field.add(name=node.name, number=node.number)
    cardinality = node.cardinality
    field.label = _label(cardinality)
    _type(field, node.type)
    if oneof is not None:
        field.oneof_index = oneof
    elif proto3 and cardinality == ast.FieldCardinality.OPTIONAL:
        field.proto3_optional = True  # its synthetic oneof is added after the real ones
    for option in node.options:
        if option.name == "packed":
            field.options.packed = bool(option.value)


def _label(cardinality: Any) -> int:
    from proto_schema_parser import ast

    return {ast.FieldCardinality.REPEATED: LABEL_REPEATED,
            ast.FieldCardinality.REQUIRED: LABEL_REQUIRED}.get(cardinality, LABEL_OPTIONAL)


def _synthetic_oneofs_last(out: Any) -> None:
    """proto3 ``optional``: each such field gets a oneof ``_<name>`` of its own, after every real oneof."""
    for field in out.field:
        if field.proto3_optional:
            field.oneof_index = len(out.oneof_decl)
            out.oneof_decl.add(name="_" + field.name)


def _type(field: Any, name: str) -> None:
    if name in SCALARS:
        field.type = SCALARS[name]
    else:
        field.type_name = name  # message or enum: the pool resolves it and sets the type


def _map_field(node: Any, out: Any) -> None:
    entry_name = "".join(part[:1].upper() + part[1:] for part in node.name.split("_")) + "Entry"
    entry = out.nested_type.add(name=entry_name)
    entry.options.map_entry = True
    key = entry.field.add(name="key", number=1, label=LABEL_OPTIONAL)
    _type(key, node.key_type)
    value = entry.field.add(name="value", number=2, label=LABEL_OPTIONAL)
    _type(value, node.value_type)
    field = out.field.add(name=node.name, number=node.number, label=LABEL_REPEATED, type=TYPE_MESSAGE)
    field.type_name = entry_name


def _enum(node: Any, out: Any) -> None:
    from proto_schema_parser import ast

    out.name = node.name
    for element in node.elements:
        if isinstance(element, ast.EnumValue):
            out.value.add(name=element.name, number=element.number)
