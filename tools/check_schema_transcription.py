"""DEVELOPER CHECK: kseg's schema transcription against Kafka's own message definitions.

Not part of the test suite (it needs Kafka's sources, which kseg does not carry): run it by
hand with ``pytest tools/check_schema_transcription.py`` where the apache/kafka sources are
extracted at /tmp/kafka-src (commit 1eb7644349cb07139d6a3c1ad1986979647cac99).
The historical variants are checked against the git mirror at /work/.mirror/apache+kafka/repo
when that exists.  Nothing in kseg reads these files at run time; this test only proves
that the hand-kept transcription in kseg/format/schemas/ still says what Kafka says.
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest

from kseg.format import schemas
from kseg.format.messages import Field, Message, Versions

KAFKA_SRC = Path("/tmp/kafka-src")
KAFKA_MIRROR = Path("/work/.mirror/apache+kafka/repo")
PINNED = "1eb7644349cb07139d6a3c1ad1986979647cac99"
WHOLE_DIRECTORIES = (
    "group_coordinator", "transaction_coordinator", "share_coordinator", "metadata", "storage",
)


def kafka_json_text(text: str) -> dict[str, Any]:
    """Kafka's message files are JSON with ``//`` comment lines."""
    return json.loads(re.sub(r"^\s*//.*$", "", text, flags=re.MULTILINE))


def normal_kafka_field(spec: dict[str, Any], commons: dict[str, Any]) -> tuple:
    """A Kafka field spec reduced to what kseg transcribes (FieldSpec's defaults applied)."""
    tagged = Versions.parse(spec.get("taggedVersions"))
    versions = Versions.parse(spec["versions"]) if "versions" in spec else tagged
    base = spec["type"].removeprefix("[]")
    sub = spec.get("fields") or (commons[base]["fields"] if base in commons else None)
    default = spec.get("default")
    if isinstance(default, bool):
        default = str(default).lower()
    elif default is not None:
        default = str(default)
    return (
        spec["name"], spec["type"], versions, Versions.parse(spec.get("nullableVersions")), tagged,
        None if spec.get("tag") is None else int(spec["tag"]),  # some files write the tag as a string
        default,
        None if sub is None else tuple(normal_kafka_field(f, commons) for f in sub),
    )


def normal_kseg_field(fld: Field) -> tuple:
    return (
        fld.name, fld.type, fld.versions, fld.nullable, fld.tagged, fld.tag, fld.default,
        None if fld.fields is None else tuple(normal_kseg_field(f) for f in fld.fields),
    )


def assert_same(msg: Message, spec: dict[str, Any]) -> None:
    commons = {c["name"]: c for c in spec.get("commonStructs", [])}
    assert msg.name == spec["name"]
    assert msg.valid == Versions.parse(spec["validVersions"])
    assert msg.flexible == Versions.parse(spec["flexibleVersions"])
    assert msg.api_key == spec.get("apiKey")
    expected = [normal_kafka_field(f, commons) for f in spec["fields"]]
    assert [normal_kseg_field(f) for f in msg.fields] == expected


def pinned_messages() -> list[tuple[str, Message]]:
    return [(name, msg) for name in schemas.FAMILIES for msg in schemas.family(name).values()]


@pytest.fixture(scope="module")
def kafka_src() -> Path:
    if not KAFKA_SRC.is_dir():
        pytest.skip("developer check: Kafka sources not extracted at /tmp/kafka-src")
    return KAFKA_SRC


@pytest.mark.parametrize(("family", "msg"), pinned_messages(), ids=lambda v: getattr(v, "name", v))
def test_transcription_matches_kafka(kafka_src: Path, family: str, msg: Message) -> None:
    assert msg.revision is None
    assert_same(msg, kafka_json_text((kafka_src / msg.source).read_text()))


@pytest.mark.parametrize("family", WHOLE_DIRECTORIES)
def test_every_definition_of_the_directory_is_transcribed(kafka_src: Path, family: str) -> None:
    messages = schemas.family(family).values()
    directory = kafka_src / Path(next(iter(messages)).source).parent
    on_disk = {kafka_json_text(p.read_text())["name"] for p in directory.glob("*.json")}
    assert on_disk == {msg.name for msg in messages}


@pytest.mark.parametrize("msg", list(schemas.family("metadata_history").values()), ids=lambda m: m.name)
def test_historical_variants_match_kafkas_history(msg: Message) -> None:
    if not KAFKA_MIRROR.is_dir():
        pytest.skip("developer check: apache/kafka git mirror not present")
    text = subprocess.run(
        ["git", "-C", str(KAFKA_MIRROR), "show", f"{msg.revision}:{msg.source}"],
        check=True, capture_output=True, text=True,
    ).stdout
    assert_same(msg, kafka_json_text(text))
    assert msg.revision != PINNED and msg.note
