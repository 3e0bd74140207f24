"""proto2 groups in ``--decode``: kseg's ``.proto`` parse equals protoc's, and group payloads decode.

fixtures/decode/proto/groups.proto has groups everywhere they may stand (repeated and nested, in a
oneof, optional) next to a nested message, a map and a top-level message named like a group;
groups.desc.b64 is protoc's own ``FileDescriptorProto`` of it (fixtures/decode/PROVENANCE.md).  The
reference messages are built and serialized by protobuf's runtime from protoc's descriptor -- groups on
the wire as start/end-group records (wire types 3 and 4) -- and must decode through kseg's registry path,
message indexes included (a group's message is a nested type where protoc puts it), to what
``MessageToDict`` makes of the reference message itself.
"""

from __future__ import annotations

import base64
from typing import Any

import pytest
from support import FIXTURES

pytest.importorskip("google.protobuf")
pytest.importorskip("proto_schema_parser")

from google.protobuf import descriptor_pb2, descriptor_pool, json_format, message_factory  # noqa: E402

from kseg.decode.payload import PayloadDecoder  # noqa: E402
from kseg.decode.proto import file_descriptor  # noqa: E402
from kseg.decode.registry import Registry, Schema  # noqa: E402

PROTO = FIXTURES / "decode" / "proto"
TEXT = (PROTO / "groups.proto").read_text()
SCHEMA_ID = 77


def _protoc_pool() -> Any:
    proto = descriptor_pb2.FileDescriptorProto.FromString(base64.b64decode((PROTO / "groups.desc.b64").read_text()))
    pool = descriptor_pool.DescriptorPool()
    pool.Add(proto)
    return pool


def _resolved(pool: Any) -> Any:
    """The file as the pool resolved it (type names fully qualified), without the ``json_name`` protoc writes
    out and the pool derives (the same default: the JSON output below compares the names in use)."""
    proto = descriptor_pb2.FileDescriptorProto()
    pool.FindFileByName("groups.proto").CopyToProto(proto)
    pending = list(proto.message_type)
    while pending:
        message = pending.pop()
        for field in message.field:
            field.ClearField("json_name")
        pending.extend(message.nested_type)
    return proto


def test_groups_parse_to_what_protoc_compiles():
    ours = descriptor_pool.DescriptorPool()
    ours.Add(file_descriptor(TEXT, "groups.proto"))
    assert _resolved(ours) == _resolved(_protoc_pool())  # every message, field, label, type, oneof and order
    response = ours.FindMessageTypeByName("acme.search.SearchResponse")
    assert [t.name for t in response.nested_types] == ["Result", "Page", "Chosen", "CountsEntry"]
    assert response.fields_by_name["result"].type == 10  # TYPE_GROUP
    assert response.fields_by_name["outer"].message_type.full_name == "acme.search.Result"


def _framed(indexes: list[int], body: bytes) -> bytes:
    """The registry's framing: magic 0, the schema id, the message indexes (zigzag varints, count first)."""
    head = b"\x00" + SCHEMA_ID.to_bytes(4, "big")
    if indexes == [0]:
        return head + b"\x00" + body
    return head + bytes([len(indexes) * 2, *(i * 2 for i in indexes)]) + body


def _messages() -> list[tuple[list[int], Any]]:
    pool = _protoc_pool()
    response = message_factory.GetMessageClass(pool.FindMessageTypeByName("acme.search.SearchResponse"))()
    first = response.result.add(url="https://a", title="A")
    first.snippet.add(start=3, text="x")
    first.snippet.add(start=-7)
    response.result.add(url="https://b")
    response.total = 2
    response.chosen.why = "best"
    response.page.number = 4
    response.outer.top_level = "t"
    response.counts["k"] = 9
    other = message_factory.GetMessageClass(pool.FindMessageTypeByName("acme.search.SearchResponse"))()
    other.other = "no group set"
    ping = message_factory.GetMessageClass(pool.FindMessageTypeByName("acme.search.Ping"))()
    ping.payload.data = b"\x00\xff"
    chosen = message_factory.GetMessageClass(pool.FindMessageTypeByName("acme.search.SearchResponse.Chosen"))()
    chosen.why = "alone"
    return [([1], response), ([1], other), ([2], ping), ([1, 2], chosen)]


def test_group_payloads_decode_as_protobuf_serializes_them():
    registry = Registry()
    registry.add(Schema(SCHEMA_ID, "search-value", 1, "PROTOBUF", TEXT))
    decoder = PayloadDecoder(registry)
    messages = _messages()
    wire = messages[0][1].SerializeToString()
    assert wire.startswith(b"\x0b\x12\x09https://a")  # field 1, wire type 3 (start group), then the url
    assert b"\x0c" in wire and b"\x23" in wire and b"\x24" in wire  # end group 1, start and end group 4
    for indexes, message in messages:
        decoded = decoder.decode(_framed(indexes, message.SerializeToString()))
        assert decoded is not None and decoded.problem is None, decoded
        assert decoded.value == json_format.MessageToDict(message, preserving_proto_field_name=True)
    assert decoder.decode(_framed([1], wire)).value["result"][0]["snippet"][1] == {"start": -7}


def test_a_cut_group_is_a_finding_not_a_crash():
    registry = Registry()
    registry.add(Schema(SCHEMA_ID, "search-value", 1, "PROTOBUF", TEXT))
    wire = _messages()[2][1].SerializeToString()  # Ping: start group 1, data, end group 1
    found = PayloadDecoder(registry).decode(_framed([2], wire[:-1]))  # the end-group record cut off
    assert found is not None and found.value is None
    assert found.problem.startswith("bytes do not fit the schema: DecodeError")
