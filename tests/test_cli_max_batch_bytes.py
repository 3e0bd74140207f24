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
from kseg.errors import EXIT_OK, EXIT_PROBLEMS, EXIT_USAGE, LimitExceeded
from kseg.format import RecordSpec, encode_batch
from kseg.format.compression import DEFAULT_MAX_DECOMPRESSED
from kseg.format.control import COMMIT, encode_control_key, encode_end_txn_marker
from kseg.format.v0v1 import LegacyBatch
from kseg.ops.txn.coordinator import CoordinatorView, read_transaction_state
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
    for command in (["dump"], ["verify"], ["convert"], ["spark", "verify"], ["spark", "export"],
                    ["recover"], ["reindex"], ["triage"], ["txn"]):
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
    segment, report = [json.loads(line) for line in whole.stdout.splitlines()]
    assert report["target"]["max_batch_bytes"] == 1000000 and report["target"]["max_message_bytes"] == 1048588
    assert segment["records_out"] == 101


# -- recover, reindex, triage and txn: they decompress control batches (and recover legacy wrappers) ------
#
# A batch past the cap is input kseg was told not to read.  These commands predict what Kafka does
# with the whole log; Kafka has no such cap, so no prediction, index or output can be made without
# the batch: the one error line (file, byte, the cap and the option), exit 2 -- never a guess.


@pytest.fixture
def transactional(tmp_path: Path) -> Path:
    """A log directory (unclean shutdown, so every segment is recovered) with one partition:
    a transactional batch at offset 0, then its COMMIT as a gzip control batch of 300 control
    records (the first is the marker Kafka reads) whose records region decompresses past 4096 bytes."""
    directory = tmp_path / "logs" / "orders-0"
    directory.mkdir(parents=True)
    data = encode_batch([RecordSpec(0, TS, b"k", b"v")], producer_id=7, producer_epoch=0, base_sequence=0,
                        is_transactional=True)
    assert len(data) == 70  # so the control batch starts at byte 70, its records at byte 70 + 61
    markers = [RecordSpec(1 + i, TS + 1, encode_control_key(COMMIT), encode_end_txn_marker(5)) for i in range(300)]
    data += encode_batch(markers, codec=1, producer_id=7, producer_epoch=0, is_transactional=True, is_control=True)
    (directory / NAME).write_bytes(data)
    return directory


def _refused(result: click.testing.Result, log: Path, position: int, field: str) -> None:
    assert result.exit_code == EXIT_USAGE, result.output
    assert result.stdout == ""
    assert result.stderr == f"kseg: error: {log} byte {position} ({field}): {CAP_MESSAGE}\n"


def test_reindex_refuses_a_control_batch_past_the_cap_in_one_line(transactional: Path, tmp_path: Path) -> None:
    log, out = transactional / NAME, tmp_path / "out"
    _refused(run("reindex", "-o", out, "--max-batch-bytes", "4096", transactional), log, 131, "batch.records")
    assert not out.exists()  # what -o got is removed: no index built without the marker
    whole = run("reindex", "--dry-run", "--format", "json", "--max-batch-bytes", "1000000", transactional)
    assert whole.exit_code == EXIT_PROBLEMS  # the indexes are missing: --dry-run finds differences
    report = json.loads(whole.stdout)
    assert (report["batches"], report["valid_bytes"], report["stop"]) == (2, 803, "end")


def test_reindex_reads_a_legacy_wrapper_shallowly_whatever_the_cap(tmp_path: Path) -> None:
    directory = tmp_path / "old-0"
    directory.mkdir()
    specs = [RecordSpec(i, TS + i, b"k%d" % i, b"v" * 100) for i in range(100)]
    (directory / NAME).write_bytes(encode_batch(specs, magic=1, codec=1))
    # Kafka's recover takes a magic 0/1 wrapper's offset and timestamp without decompressing it
    capped = run("reindex", "--dry-run", "--format", "json", "--max-batch-bytes", "4096", directory)
    assert capped.exit_code == EXIT_PROBLEMS and capped.stderr == ""
    assert json.loads(capped.stdout)["valid_bytes"] == 1459


def test_triage_refuses_a_control_batch_past_the_cap_in_one_line(transactional: Path) -> None:
    logs = transactional.parent
    _refused(run("triage", "--format", "json", "--max-batch-bytes", "4096", logs), transactional / NAME, 131,
             "batch.records")
    whole = run("triage", "--format", "json", "--max-batch-bytes", "1000000", logs)
    # read past the cap, the load goes through; no partition.metadata: renamed -stray, not served (exit 1)
    assert whole.exit_code == EXIT_PROBLEMS, whole.output
    partition, summary = map(json.loads, whole.stdout.splitlines())
    assert (partition["outcome"], partition["log_end_offset"], partition["truncated_bytes"]) == ("rebuilt", 301, 0)
    assert [f["kind"] for f in summary["verdict"]["facts"]] == ["not-served"]
    assert summary["exit_code"] == EXIT_PROBLEMS


def test_txn_refuses_a_control_batch_past_the_cap_in_one_line(transactional: Path) -> None:
    for path in (transactional.parent, transactional):  # a log directory, a partition directory
        _refused(run("txn", "--max-batch-bytes", "4096", path), transactional / NAME, 131, "batch.records")
    whole = run("txn", "--format", "json", "--max-batch-bytes", "1000000", transactional.parent)
    # read past the cap it answers; no partition.metadata: the next start renames it -stray (the verdict, exit 1)
    assert whole.exit_code == EXIT_PROBLEMS, whole.output
    lines = [json.loads(line) for line in whole.stdout.splitlines()]
    assert [(t["state"], t["first_offset"], t["end_offset"]) for t in lines if t["type"] == "transaction"] == [
        ("committed", 0, 1)
    ]
    assert lines[0]["last_stable_offset"] == 301


def test_recover_refuses_a_control_batch_past_the_cap_in_one_line(transactional: Path) -> None:
    _refused(run("recover", "--dry-run", "--max-batch-bytes", "4096", transactional), transactional / NAME, 131,
             "batch.records")
    whole = run("recover", "--dry-run", "--format", "json", "--max-batch-bytes", "1000000", transactional)
    assert whole.exit_code == EXIT_OK, whole.output
    segment = json.loads(whole.stdout.splitlines()[0])["segments"][0]  # JSON Lines: the partition, a summary
    assert (segment["kept_records"], segment["lost_bytes"], segment["output_bytes"]) == (301, 0, 803)


def test_recover_refuses_a_legacy_wrapper_past_the_cap_in_one_line(tmp_path: Path) -> None:
    directory, out = tmp_path / "old-0", tmp_path / "out"
    directory.mkdir()
    specs = [RecordSpec(i, TS + i, b"k%d" % i, b"v" * 100) for i in range(100)]
    (directory / NAME).write_bytes(encode_batch(specs, magic=1, codec=1))
    # recover decompresses a wrapper for its first offset and record count; byte 34 is its value
    _refused(run("recover", "-o", out, "--max-batch-bytes", "4096", directory), directory / NAME, 34,
             "message.value")
    assert not out.exists()
    whole = run("recover", "-o", out, "--format", "json", "--max-batch-bytes", "1000000", directory)
    assert whole.exit_code == EXIT_OK, whole.output
    segment = json.loads(whole.stdout.splitlines()[0])["segments"][0]  # JSON Lines: the partition, a summary
    assert (segment["first_offset"], segment["kept_records"], segment["output_bytes"]) == (0, 100, 1459)
    assert (out / NAME).read_bytes() == (directory / NAME).read_bytes()


def test_a_legacy_wrapper_base_offset_is_read_under_the_cap_given() -> None:
    specs = [RecordSpec(i, TS + i, b"k%d" % i, b"v" * 100) for i in range(5, 105)]
    batch = LegacyBatch(encode_batch(specs, magic=1, codec=1), 0)
    assert (batch.base_offset, batch.first_offset(1_000_000), batch.last_offset) == (5, 5, 104)
    with pytest.raises(LimitExceeded) as raised:
        batch.first_offset(4096)  # records already read under a larger cap are read again under this one
    assert (raised.value.offset, raised.value.field, raised.value.message) == (34, "message.value", CAP_MESSAGE)
    with pytest.raises(LimitExceeded):
        batch.records(4096)
    assert len(batch.records(1_000_000)) == 100


def test_txn_reads_the_internal_topics_under_the_cap(partition: Path, tmp_path: Path) -> None:
    log = tmp_path / "__transaction_state-0" / NAME
    log.parent.mkdir()
    log.write_bytes((partition / NAME).read_bytes())  # a gzip batch of 100 records that are no transaction records
    with pytest.raises(LimitExceeded) as raised:
        read_transaction_state(CoordinatorView(), [log], 4096)
    assert str(raised.value) == f"{log} byte 61 (batch.records): {CAP_MESSAGE}"
    view = CoordinatorView()
    read_transaction_state(view, [log], 1_000_000)
    assert (view.undecodable, view.transactions) == (101, {})
