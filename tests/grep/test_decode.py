"""Offline schema registry and decoding against confluent-kafka's own serializers (fixtures/decode).

fixtures/decode/expected.json holds what confluent-kafka 2.16.1's deserializers returned for every
payload its serializers wrote (see fixtures/decode/PROVENANCE.md); kseg must decode the same bytes,
read from the segments, to the same objects.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from support import FIXTURES

from kseg.cli import cli
from kseg.decode import payload as payload_module
from kseg.decode.payload import MissingExtra, PayloadDecoder, require_extra
from kseg.decode.registry import Registry, Schema, from_export, from_schemas_partition, load_registry
from kseg.decode.where import WhereError, compile_where
from kseg.segment import Segment

HERE = FIXTURES / "decode"
LOGS = HERE / "logs"
EXPECTED = json.loads((HERE / "expected.json").read_text())


def records(topic: str) -> list:
    with Segment(LOGS / f"{topic}-0" / "00000000000000000000.log") as seg:
        return [r for batch in seg.iter_batches() for r in batch.iter_records()]


@pytest.fixture(scope="module")
def registry() -> Registry:
    return from_schemas_partition(LOGS / "_schemas-0", 1 << 20)


def _map(reg: Registry) -> dict[int, tuple]:
    return {i: (s.subject, s.version, s.schema_type, s.text, s.references) for i, s in reg.by_id.items()}


def test_the_schemas_log_replays_to_the_rest_export(registry):
    exported = from_export(HERE / "schemas.json")
    assert _map(registry) == _map(exported)
    assert sorted(registry.by_id) == [1, 2, 3, 4, 5, 6, 7]  # 8 (legacy-value) was deleted for good
    assert [i for i, s in registry.by_id.items() if s.deleted] == [2]  # orders-avro-value v1, soft-deleted
    assert not any(s.deleted for s in exported.by_id.values())
    assert registry.configs == {None: {"compatibilityLevel": "BACKWARD"}}
    assert registry.other_keys == {"NOOP": 1}
    assert load_registry(LOGS, 1 << 20).by_id.keys() == registry.by_id.keys()  # a log dir holding _schemas-0


@pytest.mark.parametrize("topic", ["orders-avro", "orders-proto", "orders-json"])
def test_values_decode_as_confluents_deserializers_decode_them(registry, topic):
    decoder = PayloadDecoder(registry)
    rows = EXPECTED["topics"][topic]
    got = records(topic)[: len(rows)]
    assert [r.value.hex() for r in got] == [row["value"] for row in rows]  # the serializer's bytes, as stored
    for record, row in zip(got, rows, strict=True):
        decoded = decoder.decode(record.value)
        assert decoded is not None and decoded.problem is None, decoded
        assert decoded.value == row["expected_value"]


def test_avro_keys_decode_too(registry):
    decoder = PayloadDecoder(registry)
    rows = EXPECTED["topics"]["orders-avro"]
    keys = [decoder.decode(r.key) for r in records("orders-avro")[: len(rows)]]
    assert [k.value for k in keys] == [row["expected_key"] for row in rows]
    assert {k.schema.subject for k in keys} == {"orders-avro-key"}


def test_protobuf_from_the_serialized_descriptor_the_serializer_registered(registry):
    """confluent-kafka registers a base64 FileDescriptorProto; decoding from that form gives the same objects."""
    reg = Registry()
    for row in EXPECTED["registry"]:
        text = row.get("serialized_descriptor", row["schema"])
        reg.add(Schema(row["id"], row["subject"], row["version"], row["schemaType"], text,
                       tuple(registry.by_id[row["id"]].references) if row["id"] in registry.by_id else ()))
    decoder = PayloadDecoder(reg)
    rows = EXPECTED["topics"]["orders-proto"]
    for record, row in zip(records("orders-proto"), rows, strict=True):
        assert decoder.decode(record.value).value == row["expected_value"]


def test_what_does_not_decode_is_a_finding_on_the_record(registry):
    decoder = PayloadDecoder(registry)
    tail = records("orders-avro")[6:]
    assert [r.key for r in tail] == [b"unknown-id", b"cut-short", b"legacy", b"plain"]
    found = [decoder.decode(r.value) for r in tail]
    assert found[0].problem == "schema id 999 is not in the registry"
    assert found[1].problem == "bytes do not fit the schema: EOFError: Expected 4 bytes, read 0"
    assert found[1].schema.subject == "orders-avro-value" and found[1].schema.deleted
    assert found[2].problem == "schema id 8 is not in the registry"
    assert found[3] is None  # not in the framing: left alone


def run(*args: str):
    return CliRunner().invoke(cli, ["grep", *args])


def test_where_on_decoded_values_across_formats():
    result = run("--format", "json", "--where", 'value.customer.id == "C-17"', str(LOGS))
    assert result.exit_code == 0, result.output
    got = [(Path(m["path"]).parent.name, m["offset"]) for m in map(json.loads, result.stdout.splitlines())]
    expected = [(f"{topic}-0", offset) for topic in ("orders-avro", "orders-json", "orders-proto")
                for offset, row in enumerate(EXPECTED["topics"][topic])
                if row["expected_value"].get("customer", {}).get("id") == "C-17"]
    assert got == expected
    assert len(expected) == 6


def test_decoded_object_in_json_output():
    result = run("--format", "json", "--decode", "--key", "cut-short", str(LOGS / "orders-avro-0"))
    assert result.exit_code == 0, result.output
    obj = json.loads(result.stdout)
    assert obj["decoded"] == {
        "key": None,
        "value": {"value": None, "schema_id": 2, "subject": "orders-avro-value", "version": 1, "type": "AVRO",
                  "deleted": True, "problem": "bytes do not fit the schema: EOFError: Expected 4 bytes, read 0"},
    }
    assert (obj["offset"], obj["key"]) == (7, "cut-short")


def test_schema_usage_per_topic():
    result = run("--schema-usage", str(LOGS / "orders-avro-0"), str(LOGS / "orders-proto-0"))
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines() == [
        "orders-avro key: 4 records not in the registry's framing",
        "orders-avro key: schema id 3 = orders-avro-key version 1 (AVRO): 6 records",
        "orders-avro value: 1 records not in the registry's framing",
        "orders-avro value: schema id 2 = orders-avro-value version 1 (AVRO) DELETED (soft-deleted, still in use): "
        "5 records, 1 do not decode (last: bytes do not fit the schema: EOFError: Expected 4 bytes, read 0)",
        "orders-avro value: schema id 4 = orders-avro-value version 2 (AVRO): 2 records",
        "orders-avro value: schema id 8 UNKNOWN (not in the registry): 1 records",
        "orders-avro value: schema id 999 UNKNOWN (not in the registry): 1 records",
        "orders-proto key: 6 records not in the registry's framing",
        "orders-proto value: schema id 6 = orders-proto-value version 1 (PROTOBUF): 6 records",
    ]


def test_decode_with_an_export_file_and_without_a_registry(tmp_path):
    copied = tmp_path / "orders-json-0"
    copied.mkdir()
    (copied / "00000000000000000000.log").write_bytes((LOGS / "orders-json-0" / "00000000000000000000.log").read_bytes())
    none = run("--decode", str(copied))
    assert none.exit_code == 2
    assert none.stderr == "kseg: error: no _schemas-0 beside the PATHS: give the registry with --schemas " \
                          "(see 'kseg grep --help')\n"
    given = run("--where", "value.total >= 25", "--schemas", str(HERE / "schemas.json"), "--format", "json", str(copied))
    assert [json.loads(line)["offset"] for line in given.stdout.splitlines()] == [2, 3]


def test_without_the_extra_decode_names_it(monkeypatch):
    monkeypatch.setattr(payload_module, "_importable", lambda module, util: module != "fastavro")
    with pytest.raises(MissingExtra, match=r"--decode needs fastavro: pip install 'kseg\[decode\]'"):
        require_extra()
    result = run("--decode", str(LOGS))
    assert result.exit_code == 2
    assert "pip install 'kseg[decode]'" in result.stderr


@pytest.mark.parametrize(("expr", "holds"), [
    ('value.customer.id == "C-17"', True), ('value.customer.id != "C-17"', False),
    ("value.big > 9223372036854775807", True),  # Protobuf's JSON: a uint64 as a string, compared as a number
    ("value.lines[0].sku == \"a\" and value.n < 3", True), ("value.lines[5].sku", False),
    ('value.tags contains "x"', True), ('value.customer.id =~ "^C-1[0-9]$"', True), ("value.missing != 1", False),
    ('key == "k" or value.n == 99', True), ("value.n == 2.0", True), ('value["customer"]["id"] == "C-17"', True),
])
def test_where_expressions(expr, holds):
    doc = {"key": "k", "value": {"customer": {"id": "C-17"}, "big": "9223372036854775808", "lines": [{"sku": "a"}],
                                 "n": 2, "tags": ["x", "y"]}}
    assert compile_where(expr)(doc) is holds


@pytest.mark.parametrize("expr", ["customer.id == 1", "value.id ==", "value.id == bare", "value.id = 1", "value.["])
def test_bad_where_expressions(expr):
    with pytest.raises(WhereError):
        compile_where(expr)


def test_the_fixtures_are_the_files_their_provenance_lists():
    import hashlib
    import re

    rows = re.findall(r"^\| `([^`]+)` \| `([0-9a-f]{64})` \|", (HERE / "PROVENANCE.md").read_text(), re.MULTILINE)
    on_disk = {p.relative_to(HERE).as_posix() for p in HERE.rglob("*") if p.is_file()} - {
        "PROVENANCE.md", "make_fixtures.py"}
    assert {name for name, _ in rows} == on_disk
    for name, digest in rows:
        assert hashlib.sha256((HERE / name).read_bytes()).hexdigest() == digest, name


def test_dump_decode_adds_the_same_decoded_objects_as_grep():
    part = str(LOGS / "orders-avro-0")
    dumped = CliRunner().invoke(cli, ["dump", "--decode", "--format", "json", "--deep-iteration", part])
    plain = CliRunner().invoke(cli, ["dump", "--format", "json", "--deep-iteration", part])
    assert dumped.exit_code == plain.exit_code == 0
    with_decoded = [r for line in dumped.stdout.splitlines() for r in json.loads(line).get("records", [])]
    without = [r for line in plain.stdout.splitlines() for r in json.loads(line).get("records", [])]
    assert [{k: v for k, v in r.items() if k != "decoded"} for r in with_decoded] == without
    grepped = [json.loads(line) for line in run("--decode", "--format", "json", part).stdout.splitlines()]
    assert [r["decoded"] for r in with_decoded] == [g["decoded"] for g in grepped]
    text = CliRunner().invoke(cli, ["dump", "--decode", "--print-data-log", part]).stdout
    assert text.count(" decoded: ") == len(with_decoded) == 10
    table = CliRunner().invoke(cli, ["dump", "--decode", "--format", "table", part])
    assert table.exit_code == 2 and "--decode shows in --format text and json" in table.stderr


def test_decode_and_where_in_worker_processes():
    one = run("--format", "json", "--decode", "--where", "value.customer.id =~ \"^C-1[78]$\"", str(LOGS))
    two = run("--jobs", "2", "--format", "json", "--decode", "--where", "value.customer.id =~ \"^C-1[78]$\"", str(LOGS))
    assert one.exit_code == two.exit_code == 0
    assert one.stdout == two.stdout
    assert len(one.stdout.splitlines()) == 10  # C-17 or C-18: avro 0,1,3,4; json 0,1,3; proto 0,1,3


def test_a_schema_that_does_not_compile_is_a_finding_on_each_payload():
    reg = Registry()
    reg.add(Schema(40, "bad-proto", 1, "PROTOBUF", 'syntax = "proto3"; import "missing.proto"; message M { int32 a = 1; }'))
    reg.add(Schema(41, "bad-avro", 1, "AVRO", '{"type": "record", "name": "R", "fields": [{"name": "a", "type": "nope"}]}'))
    reg.add(Schema(42, "odd", 1, "XML", "<x/>"))
    decoder = PayloadDecoder(reg)
    problems = [decoder.decode(b"\x00" + i.to_bytes(4, "big") + b"\x00\x08\x01").problem for i in (40, 41, 42)]
    assert problems[0] == ("schema 40 (bad-proto version 1) does not compile: LookupError: import 'missing.proto' "
                           "is neither a reference in the registry nor a well-known type")
    assert problems[1].startswith("schema 41 (bad-avro version 1) does not compile: UnknownType")
    assert problems[2] == "schema 42 (odd version 1) does not compile: ValueError: unknown schema type 'XML'"


def test_protobuf_message_index_out_of_range_is_a_finding(registry):
    decoder = PayloadDecoder(registry)
    found = decoder.decode(b"\x00\x00\x00\x00\x06" + b"\x02\x0a" + b"\x08\x01")  # indexes [5]: the file has 2
    assert found.problem == ("bytes do not fit the schema: LookupError: message index 5 at depth 0: "
                             "the schema has 2 there")
