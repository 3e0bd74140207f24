"""``kseg grep --export FILE --as console|kcat|jsonl``: what producers read back is what was on disk.

The console export is parsed back with LineMessageReader's rules (tests/grep/line_message_reader.py,
written from Kafka 4.3.0's source); kcat's with its ``-K '\\t'`` rule (the key up to the first delimiter,
the rest of the line the value); JSON Lines with ``json``.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from line_message_reader import read_records

from kseg.cli import cli
from kseg.format import RecordSpec, encode_batch

T0 = 1_700_000_000_000
MARKER = "\u2400"

#: (key, value, headers, exportable as console, as kcat)
CASES = [
    (b"k1", b"plain value", (), True, True),
    (None, b"null key", ((b"h", b"v"),), True, False),
    (b"k3", None, ((b"trace-id", b"4bf92f35"), (b"flag", None)), True, True),
    (b"k4", b"tab\tin the value", ((b"url", b"http://x:8080/a"),), True, True),
    (b"", b"", (), True, True),
    (b"k\t6", b"tab in the key", (), False, False),
    (b"k7", b"line\nbreak", (), False, False),
    (b"k8", b"\xff\xfe binary", (), False, False),
    (b"k9", b"header with a comma", ((b"list", b"a,b"),), False, True),
    (b"k10", MARKER.encode(), (), False, True),
    (b"k11", "snow \u2603 and NUL \x00".encode(), ((b"", b""),), True, True),
]


@pytest.fixture(scope="module")
def partition(tmp_path_factory: pytest.TempPathFactory) -> Path:
    part = tmp_path_factory.mktemp("export") / "src-0"
    part.mkdir()
    specs = [RecordSpec(i, T0 + 7 * i, k, v, h) for i, (k, v, h, _, _) in enumerate(CASES)]
    (part / "00000000000000000000.log").write_bytes(encode_batch(specs[:5]) + encode_batch(specs[5:], codec="gzip"))
    return part


def export(partition: Path, out: Path, form: str):
    return CliRunner().invoke(cli, ["grep", "--export", str(out), "--as", form, str(partition)])


def _headers(headers: tuple) -> list[tuple[str, bytes | None]]:
    return [(k.decode(), v) for k, v in headers]


def test_console_export_reads_back_with_line_message_reader(partition: Path, tmp_path: Path) -> None:
    out = tmp_path / "records.txt"
    result = export(partition, out, "console")
    assert result.exit_code == 1  # some records could not be exported: data cut
    kept = [(k, v, _headers(h)) for k, v, h, console, _ in CASES if console]
    assert read_records(out.read_bytes(), null_marker=MARKER) == kept
    refused = [line for line in result.stderr.splitlines() if "not exported" in line]
    assert [line.split("offset ")[1].split()[0] for line in refused] == ["5", "6", "7", "8", "9"]
    assert refused[0].endswith("not exported: the key holds the key separator")
    assert refused[2].endswith("not exported: the value is not UTF-8 (use --as jsonl)")
    origins = [json.loads(line) for line in (tmp_path / "records.txt.origin.jsonl").read_text().splitlines()]
    assert [(o["offset"], o["timestamp"]) for o in origins] == [
        (i, T0 + 7 * i) for i, case in enumerate(CASES) if case[3]]
    assert result.stdout.splitlines()[0] == f"exported {len(kept)} records to {out}, 5 not exportable as console"
    assert "--property null.marker=\u2400" in result.stdout


def test_kcat_export_is_key_tab_value(partition: Path, tmp_path: Path) -> None:
    out = tmp_path / "records.kcat"
    export(partition, out, "kcat")
    lines = out.read_bytes().split(b"\n")[:-1]
    expected = [(k, v or b"") for k, v, _, _, kcat in CASES if kcat]
    assert [tuple(line.split(b"\t", 1)) for line in lines] == expected


def test_jsonl_export_keeps_everything(partition: Path, tmp_path: Path) -> None:
    out = tmp_path / "records.jsonl"
    result = export(partition, out, "jsonl")
    assert result.exit_code == 0, result.output

    def raw(value: object) -> bytes | None:
        if value is None:
            return None
        return base64.b64decode(value["base64"]) if isinstance(value, dict) else value.encode()  # type: ignore[index, union-attr]

    rows = [json.loads(line) for line in out.read_text().splitlines()]
    got = [(raw(r["key"]), raw(r["value"]), tuple((raw(k), raw(v)) for k, v in r["headers"]), r["timestamp"])
           for r in rows]
    assert got == [(k, v, h, T0 + 7 * i) for i, (k, v, h, _, _) in enumerate(CASES)]
    assert [r["origin"]["offset"] for r in rows] == list(range(len(CASES)))


def test_export_never_replaces_a_file(partition: Path, tmp_path: Path) -> None:
    out = tmp_path / "exists.jsonl"
    out.write_text("evidence\n")
    result = export(partition, out, "jsonl")
    assert result.exit_code == 2
    assert "refusing to replace it" in result.stderr
    assert out.read_text() == "evidence\n"
    assert [p.name for p in tmp_path.iterdir()] == ["exists.jsonl"]
