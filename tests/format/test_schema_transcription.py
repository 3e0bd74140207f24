"""kseg's schema transcription against Kafka 4.3.0's own message definitions, field by field.

``kseg/format/schemas/`` is kept by hand; this test proves it still says what Kafka says.  The
source of truth is ``shared/reference/kafka-4.3.0-messages/`` (Kafka 4.3.0's JSON definitions of
every on-disk record kind, at their paths in Kafka's tree): the test skips locally when that folder
is absent and fails under ``CI=true`` (``support.require_dir``).

For every transcribed message it compares name, ``apiKey``, ``validVersions``, ``flexibleVersions``
and, recursively through inline and common structs, every field's name, type, versions,
nullableVersions, taggedVersions, tag and default; then, version by version, the layout the two
definitions give (which fields are present, tagged, nullable, and with which tag).  Every definition
in the reference is either transcribed or listed in :data:`LEFT_OUT` with the reason.  The
historical variants (``metadata_history.py``) are compared with Kafka's files at their own commit,
kept in ``fixtures/kafka-schema-history/`` (see its PROVENANCE.md).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from support import FIXTURES, REPO, SHARED, require_dir

from kseg.format import control, schemas
from kseg.format.internal import OFFSETS_RECORD_TYPES, SHARE_STATE_RECORD_TYPES
from kseg.format.messages import Field, Message, Versions

REFERENCE = SHARED / "reference" / "kafka-4.3.0-messages"
HISTORY = FIXTURES / "kafka-schema-history"

#: Definitions in the reference that kseg does not transcribe, and why.
LEFT_OUT = {
    "clients/src/main/resources/common/message/ControlRecordTypeSchema.json":
        "the control-record key: two int16 read by format/control.py's CONTROL_KEY struct "
        "(checked below against this definition)",
    "clients/src/main/resources/common/message/EndTxnMarker.json":
        "the COMMIT/ABORT marker value: an int16 version and an int32 read by format/control.py's "
        "END_TXN_MARKER struct (checked below against this definition)",
    "clients/src/main/resources/common/message/DefaultPrincipalData.json":
        "a principal serialized into forwarded (Envelope) requests; never written to a log",
    "clients/src/main/resources/common/message/RequestHeader.json":
        "wire-protocol request header; never written to a log",
    "clients/src/main/resources/common/message/ResponseHeader.json":
        "wire-protocol response header; never written to a log",
    "raft/src/main/resources/common/message/QuorumStateData.json":
        "the quorum-state file is this message as JSON text (QuorumStateDataJsonConverter), read by "
        "format/checkpoints.py as JSON, not a binary message",
    "streams/src/main/resources/common/message/SubscriptionInfoData.json":
        "Kafka Streams' userData inside a consumer subscription; Kafka's dump tool does not decode it and "
        "kseg keeps it as bytes (base64)",
}
#: Fields of a field spec that do not change how the bytes are read or printed.
IGNORED_FIELD_KEYS = {"about", "entityType", "mapKey", "ignorable", "zeroCopy"}
KNOWN_FIELD_KEYS = IGNORED_FIELD_KEYS | {
    "name", "type", "versions", "nullableVersions", "taggedVersions", "tag", "default", "fields",
}
KNOWN_MESSAGE_KEYS = {
    "apiKey", "type", "name", "validVersions", "flexibleVersions", "fields", "commonStructs",
    "latestVersionUnstable", "listeners",
}


def kafka_json_text(text: str) -> dict[str, Any]:
    """Kafka's message files are JSON with ``//`` comment lines."""
    return json.loads(re.sub(r"^\s*//.*$", "", text, flags=re.MULTILINE))


def reference_dir() -> Path:
    return require_dir(REFERENCE, "Kafka 4.3.0's message definitions (shared/reference/kafka-4.3.0-messages)")


def reference_spec(source: str) -> dict[str, Any]:
    return kafka_json_text((reference_dir() / source).read_text())


def pinned_messages() -> list[Message]:
    return [msg for name in schemas.FAMILIES for msg in schemas.family(name).values()]


# --------------------------------------------------------------------------- normal forms


def default_text(value: Any) -> str | None:
    """A Kafka ``default`` as kseg writes it: Kafka's literal, bools lower-cased, JSON null = not given."""
    if value is None:
        return None
    return str(value).lower() if isinstance(value, bool) else str(value)


def kafka_field(spec: dict[str, Any], commons: dict[str, Any], path: str) -> dict[str, Any]:
    """A Kafka field spec reduced to what kseg transcribes (FieldSpec's rules applied)."""
    unknown = set(spec) - KNOWN_FIELD_KEYS
    assert not unknown, f"{path}: Kafka's field has attributes the test does not know: {sorted(unknown)}"
    tagged = Versions.parse(spec.get("taggedVersions"))
    base = spec["type"].removeprefix("[]")
    sub = spec.get("fields") or (commons[base]["fields"] if base in commons else None)
    return {
        "name": spec["name"], "type": spec["type"],
        "versions": Versions.parse(spec["versions"]) if "versions" in spec else tagged,
        "nullableVersions": Versions.parse(spec.get("nullableVersions")),
        "taggedVersions": tagged,
        "tag": None if spec.get("tag") is None else int(spec["tag"]),  # some files write the tag as a string
        "default": default_text(spec.get("default")),
        "fields": None if sub is None else [kafka_field(f, commons, f"{path}.{f['name']}") for f in sub],
    }


def kseg_field(fld: Field) -> dict[str, Any]:
    return {
        "name": fld.name, "type": fld.type, "versions": fld.versions, "nullableVersions": fld.nullable,
        "taggedVersions": fld.tagged, "tag": fld.tag, "default": fld.default,
        "fields": None if fld.fields is None else [kseg_field(f) for f in fld.fields],
    }


def layout(fields: list[dict[str, Any]], version: int) -> list[tuple[Any, ...]]:
    """What a definition says about the bytes of one version: the fields read, in order, and how."""
    out: list[tuple[Any, ...]] = []
    for fld in fields:
        if version not in fld["versions"]:
            continue
        tagged = version in fld["taggedVersions"]
        out.append((fld["name"], fld["type"], version in fld["nullableVersions"], tagged,
                    fld["tag"] if tagged else None,
                    None if fld["fields"] is None else tuple(layout(fld["fields"], version))))
    return out


def wire_layout(fields: list[dict[str, Any]], version: int) -> tuple[Any, ...]:
    """Only what the bytes of a version look like: untagged fields in order, tagged ones by tag (no names)."""
    return shape(tuple(layout(fields, version)))


def shape(rows: tuple[Any, ...]) -> tuple[Any, ...]:
    shaped = [(kind, nullable, tag, sub and shape(sub)) for _, kind, nullable, _, tag, sub in rows]
    untagged = tuple(r for r in shaped if r[2] is None)
    return untagged + tuple(sorted((r for r in shaped if r[2] is not None), key=lambda r: r[2]))


def assert_same(msg: Message, spec: dict[str, Any]) -> None:
    """Every attribute kseg transcribes, then every version's layout."""
    assert set(spec) <= KNOWN_MESSAGE_KEYS, f"{msg.name}: unknown message attributes {set(spec) - KNOWN_MESSAGE_KEYS}"
    commons = {c["name"]: c for c in spec.get("commonStructs", [])}
    assert msg.name == spec["name"]
    assert msg.api_key == spec.get("apiKey")
    assert msg.valid == Versions.parse(spec["validVersions"])
    assert msg.flexible == Versions.parse(spec.get("flexibleVersions"))
    kafka = [kafka_field(f, commons, f"{msg.name}.{f['name']}") for f in spec["fields"]]
    kseg = [kseg_field(f) for f in msg.fields]
    for ours, theirs in zip(kseg, kafka, strict=False):
        assert ours == theirs, f"{msg.name}.{theirs['name']}"
    assert [f["name"] for f in kseg] == [f["name"] for f in kafka], msg.name
    for version in range(msg.valid.low, msg.valid.high + 1):
        assert layout(kseg, version) == layout(kafka, version), f"{msg.name} v{version}"


# --------------------------------------------------------------------------- the tests


@pytest.mark.parametrize("msg", pinned_messages(), ids=lambda m: m.name)
def test_transcription_matches_kafka_4_3_0(msg: Message) -> None:
    assert msg.revision is None and msg.note is None
    assert_same(msg, reference_spec(msg.source))


def test_every_reference_definition_is_transcribed_or_left_out_with_a_reason() -> None:
    root = reference_dir()
    in_reference = {str(p.relative_to(root)) for p in root.rglob("*.json")}
    transcribed = {msg.source for msg in pinned_messages()}
    assert len(transcribed) == len(pinned_messages())  # one message per file
    assert transcribed.isdisjoint(LEFT_OUT)
    assert transcribed | set(LEFT_OUT) == in_reference
    assert all(reason for reason in LEFT_OUT.values())


def test_each_coordinator_record_type_names_kafkas_key_and_value() -> None:
    """The decoders' dispatch tables are Kafka 4.3.0's ``CoordinatorRecordType``s (apiKey of each pair)."""
    for family, table, folder in (
        ("group_coordinator", OFFSETS_RECORD_TYPES, "group-coordinator"),
        ("share_coordinator", SHARE_STATE_RECORD_TYPES, "share-coordinator"),
    ):
        pairs: dict[int, dict[str, str]] = {}
        for path in (reference_dir() / folder).rglob("*.json"):
            spec = kafka_json_text(path.read_text())
            role = {"coordinator-key": "key", "coordinator-value": "value"}[spec["type"]]
            pairs.setdefault(spec["apiKey"], {})[role] = spec["name"]
        assert table == {t: (p["key"], p["value"]) for t, p in pairs.items()}, family
        for key_name, value_name in table.values():
            assert schemas.get(family, key_name).valid == Versions(0, 0)  # keys are read as version 0


def test_the_fixed_control_record_structs_match_their_definitions() -> None:
    """The two left-out clients definitions kseg reads with fixed structs: an int16 version, then the fields."""
    key = reference_spec("clients/src/main/resources/common/message/ControlRecordTypeSchema.json")
    marker = reference_spec("clients/src/main/resources/common/message/EndTxnMarker.json")
    assert [(f["name"], f["type"]) for f in key["fields"]] == [("Type", "int16")]
    assert [(f["name"], f["type"]) for f in marker["fields"]] == [("CoordinatorEpoch", "int32")]
    assert (key["validVersions"], key["flexibleVersions"]) == ("0", "none")
    assert (marker["validVersions"], marker["flexibleVersions"]) == ("0", "none")
    assert control.CONTROL_KEY.format == ">hh"  # version, Type
    assert control.END_TXN_MARKER.format == ">hi"  # version, CoordinatorEpoch


# --------------------------------------------------------------------------- historical variants


@pytest.mark.parametrize("msg", list(schemas.family("metadata_history").values()), ids=lambda m: m.name)
def test_historical_variants_match_kafkas_files_at_their_commit(msg: Message) -> None:
    assert msg.revision is not None and msg.note
    path = HISTORY / msg.revision / msg.source
    assert_same(msg, kafka_json_text(path.read_text()))


@pytest.mark.parametrize("msg", list(schemas.family("metadata_history").values()), ids=lambda m: m.name)
def test_historical_variants_differ_from_4_3_0_only_where_they_must(msg: Message) -> None:
    """A variant is kept because 4.3.0's layout of the same version reads its bytes differently."""
    pinned = schemas.get("metadata", msg.name)
    ours, theirs = [kseg_field(f) for f in msg.fields], [kseg_field(f) for f in pinned.fields]
    differ = [v for v in range(msg.valid.low, msg.valid.high + 1) if wire_layout(ours, v) != wire_layout(theirs, v)]
    assert differ == [1]
    doc = (REPO / "docs" / "internal-topics.md").read_text()
    assert f"{msg.name} v1" in doc and msg.revision[:11] in doc
