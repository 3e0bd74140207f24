"""``kseg spark export --decode``: the schema-registry decoding as columns, on fixtures/decode (local[2]).

The decoding itself is proven against confluent-kafka's own deserializers in tests/grep/test_decode.py;
here every exported row must carry what ``kseg grep --decode --format json`` says of the same record
(schema id, subject, the decoded JSON, the problem), and the fixture's hand-made payloads must come out
as stated in fixtures/decode/PROVENANCE.md: id 999 unknown, a cut payload, the deleted id 8, a plain
string outside the framing.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support import FIXTURES, IN_CI

try:
    import pyarrow  # noqa: F401
    import pyspark  # noqa: F401
except ImportError:  # pragma: no cover - the test extra installs both
    if IN_CI:
        raise
    pytest.skip("pyspark/pyarrow are not installed (pip install 'kseg[spark]')", allow_module_level=True)

from click.testing import CliRunner

from kseg.cli import cli
from kseg.spark import get_session

LOGS = FIXTURES / "decode" / "logs"
ENV = {"COLUMNS": "100", "NO_COLOR": "1"}
TEST_CONF = [
    ("spark.driver.extraJavaOptions", "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"),
    ("spark.sql.shuffle.partitions", "2"),
]
DECODED = ("key_decoded", "key_schema_id", "key_subject", "value_decoded", "value_schema_id", "value_subject",
           "decode_problem")


@pytest.fixture(scope="module")
def spark():
    session, created = get_session("local[2]", TEST_CONF)
    yield session
    if created:
        session.stop()


def kseg(*args: str):
    result = CliRunner().invoke(cli, list(args), env=ENV)
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result


def _exported(out: Path) -> list[dict]:
    rows = [json.loads(line) for part in sorted(out.glob("part-*.json")) for line in part.read_text().splitlines()]
    return sorted(rows, key=lambda r: (r["topic"], r["offset"]))


def _grep_columns(topic: str) -> dict[int, tuple]:
    """What ``kseg grep --decode`` says of each record of ``topic``, as the seven columns."""
    result = kseg("grep", "--decode", "--format", "json", str(LOGS / f"{topic}-0"))
    assert result.exit_code == 0, result.output
    out = {}
    for line in result.output.splitlines():
        record = json.loads(line)
        parts = []
        problems = []
        for name in ("key", "value"):
            part = record["decoded"][name]
            if part is None:
                parts += [None, None, None]
                continue
            text = None if "problem" in part else json.dumps(part["value"], ensure_ascii=False, separators=(",", ":"))
            parts += [text, part["schema_id"], part.get("subject")]
            if "problem" in part:
                problems.append(f"{name}: {part['problem']}")
        out[record["offset"]] = (*parts, "; ".join(problems) or None)
    return out


def test_export_decode_adds_what_grep_decode_says(spark, tmp_path):
    out = tmp_path / "out"
    result = kseg("spark", "export", "--decode", "--file-format", "json", str(LOGS / "orders-avro-0"),
                  str(LOGS / "orders-proto-0"), str(LOGS / "orders-json-0"), "-o", str(out))
    assert result.exit_code == 0, result.output
    rows = _exported(out)
    assert [(r["topic"], r["offset"]) for r in rows] == (
        [("orders-avro", o) for o in range(10)] + [("orders-json", o) for o in range(4)]
        + [("orders-proto", o) for o in range(6)])
    for topic in ("orders-avro", "orders-json", "orders-proto"):
        want = _grep_columns(topic)
        got = {r["offset"]: tuple(r.get(c) for c in DECODED) for r in rows if r["topic"] == topic}
        assert got == want, topic
    avro = {r["offset"]: r for r in rows if r["topic"] == "orders-avro"}
    assert json.loads(avro[0]["value_decoded"])["customer"] == {"id": "C-17", "tier": "SILVER"}
    assert (avro[0]["key_decoded"], avro[0]["key_schema_id"], avro[0]["key_subject"]) == ('"O-100"', 3, "orders-avro-key")
    assert (avro[0]["value_schema_id"], avro[0]["value_subject"], avro[0].get("decode_problem")) == (
        2, "orders-avro-value", None)
    assert [avro[o].get("decode_problem") for o in (6, 8)] == [
        "value: schema id 999 is not in the registry", "value: schema id 8 is not in the registry"]
    assert avro[7]["decode_problem"].startswith("value: bytes do not fit the schema: ")
    assert [avro[9].get(c) for c in DECODED] == [None] * 7  # "not framed at all": no framing, no problem
    assert {r["value_schema_id"] for r in rows if r["topic"] == "orders-proto"} == {6}
    assert {r["value_subject"] for r in rows if r["topic"] == "orders-json"} == {"orders-json-value"}


def test_export_decode_refuses_batch_level_and_schemas_alone(tmp_path):
    result = kseg("spark", "export", "--decode", "--level", "batch", str(LOGS / "orders-avro-0"), "-o", str(tmp_path / "a"))
    assert (result.exit_code, result.output.splitlines()[-1]) == (
        2, "kseg: error: --decode decodes records: it needs --level record (see 'kseg spark export --help')")
    result = kseg("spark", "export", "--schemas", str(LOGS / "_schemas-0"), str(LOGS / "orders-avro-0"),
                  "-o", str(tmp_path / "b"))
    assert (result.exit_code, result.output.splitlines()[-1]) == (
        2, "kseg: error: --schemas is the registry of --decode: give --decode too (see 'kseg spark export --help')")
    assert not (tmp_path / "a").exists() and not (tmp_path / "b").exists()
