"""``--max-batch-bytes N``: one read cap, the same option in every command that decompresses (docs/cli.md §7, §9).

The input is one gzip batch of 100 records whose records region decompresses to
more than 4096 bytes, then a small uncompressed batch.  Under ``--max-batch-bytes
4096`` each command names the cap where it would read the batch (a dump problem, a
verify finding, convert's one error line) and exits as the contract says; under
the default cap the same input reads cleanly.
"""

from __future__ import annotations

import json
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from kseg.cli import cli
from kseg.errors import EXIT_OK, EXIT_PROBLEMS, EXIT_USAGE
from kseg.format import RecordSpec, encode_batch
from kseg.format.compression import DEFAULT_MAX_DECOMPRESSED
from kseg.ops.verify import check_unit, verify_paths

TS = 1_700_000_000_000
NAME = "00000000000000000000.log"
CAP_MESSAGE = (
    "gzip: decompressed data exceeds the limit of 4096 bytes (at least 4097 bytes); --max-batch-bytes raises the limit"
)


def run(*args: str | Path) -> click.testing.Result:
    return CliRunner().invoke(cli, [str(a) for a in args], env={"NO_COLOR": "1", "COLUMNS": "100"})


@pytest.fixture
def partition(tmp_path: Path) -> Path:
    directory = tmp_path / "orders-0"
    directory.mkdir()
    specs = [RecordSpec(i, TS + i, b"k%d" % i, b"v" * 100) for i in range(100)]
    data = encode_batch(specs, codec=1) + encode_batch([RecordSpec(100, TS + 100, None, b"x")])
    (directory / NAME).write_bytes(data)
    return directory


def test_one_option_with_one_default_in_every_command() -> None:
    for command in (["dump"], ["verify"], ["convert"], ["spark", "verify"], ["spark", "export"]):
        shown = run(*command, "--help").output
        assert "--max-batch-bytes N" in shown, command
        assert "[default: 134217728; x>=1]" in " ".join(shown.split()), command
    assert DEFAULT_MAX_DECOMPRESSED == 128 * 1024 * 1024
    assert "--max-message-bytes" in run("convert", "--help").output


def test_dump_reports_the_batch_past_the_cap_as_a_problem_and_exits_1(partition: Path) -> None:
    log = partition / NAME
    capped = run("dump", "--deep-iteration", "--max-batch-bytes", "4096", log)
    assert capped.exit_code == EXIT_PROBLEMS
    assert capped.stderr.splitlines()[-1] == f"kseg: {log}: byte 61: {CAP_MESSAGE}"
    # the batch line, then no record: the file stops there, as Kafka's tool stops at records it cannot read
    assert capped.stdout.splitlines()[-1].startswith("baseOffset: 0 lastOffset: 99 count: 100 ")
    assert "| offset: " not in capped.stdout
    json_lines = [json.loads(line) for line in run(
        "dump", "--deep-iteration", "--format", "json", "--max-batch-bytes", "4096", log).stdout.splitlines()]
    assert {"type": "problem", "path": str(log), "position": 61, "message": CAP_MESSAGE} in json_lines
    whole = run("dump", "--deep-iteration", "--max-batch-bytes", "1000000", log)
    assert whole.exit_code == EXIT_OK, whole.output
    assert whole.stdout.count("| offset: ") == 101 and whole.stderr == ""


def test_verify_deep_finds_the_batch_past_the_cap(partition: Path) -> None:
    log = partition / NAME  # the .log alone: a partition directory would add its missing indexes
    capped = run("verify", "--deep", "--format", "json", "--max-batch-bytes", "4096", log)
    found = [f for f in map(json.loads, capped.stdout.splitlines()) if f["type"] == "finding"]
    assert [(f["kind"], f["severity"], f["position"], f["message"]) for f in found] == [
        ("decompress", "warning", 0, f"{CAP_MESSAGE} (at byte 61)")
    ]
    assert capped.exit_code == EXIT_OK  # a warning: Kafka reads the batch; kseg was told not to
    strict = run("verify", "--deep", "--strict", "--max-batch-bytes", "4096", log)
    assert strict.exit_code == EXIT_PROBLEMS
    whole = run("verify", "--deep", "--format", "json", "--max-batch-bytes", "1000000", log)
    assert whole.exit_code == EXIT_OK
    summary = json.loads(whole.stdout.splitlines()[-1])
    assert summary["records"] == 101 and not [
        f for f in map(json.loads, whole.stdout.splitlines()) if f["type"] == "finding"
    ]


def test_the_cap_reaches_every_unit_however_verify_runs_them(partition: Path) -> None:
    seen: list[int] = []

    def run_units(units: list, deep: bool, max_batch_bytes: int) -> list:  # how kseg.spark runs them
        seen.append(max_batch_bytes)
        return [check_unit(unit, deep, None, max_batch_bytes) for unit in units]

    result = verify_paths([partition / NAME], deep=True, run_units=run_units, max_batch_bytes=4096)
    assert seen == [4096]
    assert [f.message for f in result.findings()] == [f"{CAP_MESSAGE} (at byte 61)"]


def test_convert_refuses_the_batch_past_the_cap_in_one_line(partition: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    capped = run("convert", partition, "-o", out, "--to-magic", "1", "--max-batch-bytes", "4096")
    assert capped.exit_code == EXIT_USAGE
    assert capped.stdout == ""
    assert capped.stderr == (
        f"kseg: error: {partition / NAME} byte 61 (batch.records): {CAP_MESSAGE} in the batch at byte 0; "
        "--skip-corrupt skips damaged bytes and converts the rest\n"
    )
    assert not out.exists()
    whole = run("convert", partition, "-o", out, "--to-magic", "1", "--max-batch-bytes", "1000000", "--format", "json")
    assert whole.exit_code == EXIT_OK, whole.output
    report = json.loads(whole.stdout)
    assert report["target"]["max_batch_bytes"] == 1000000 and report["target"]["max_message_bytes"] == 1048588
    assert report["segments"][0]["records_out"] == 101
