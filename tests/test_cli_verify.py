"""``kseg verify`` end to end: exact output, JSON Lines, exit codes."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner
from support import FIXTURES

from kseg.cli import cli

FX = FIXTURES / "verify"
ENV = {"COLUMNS": "100", "NO_COLOR": "1"}


@pytest.fixture(autouse=True)
def in_fixtures(monkeypatch):
    """Run from fixtures/verify so the paths printed are the short relative ones."""
    monkeypatch.chdir(FX)


def run(*args: str):
    return CliRunner().invoke(cli, ["verify", *args], env=ENV)


def test_a_clean_segment():
    result = run("clean/v2-codecs.log")
    assert (result.exit_code, result.stderr) == (0, "")
    assert result.stdout == (
        "ok     clean/v2-codecs.log  log, 5 batches, 932 bytes\n"
        "0 errors, 0 warnings, 0 info in 1 file, 932 bytes, 5 batches: clean\n"
    )


def test_several_problems_in_one_file_are_all_reported_worst_first():
    result = run("corrupt/several.log", "clean/v2-codecs.log")
    assert result.exit_code == 1
    assert result.stdout == """\
ERROR  corrupt/several.log  log, 2 batches, 1,085 bytes, 651 skipped  [crc 2, partial-batch 1]
ok     clean/v2-codecs.log  log, 5 batches, 932 bytes

severity  finding: kind, file, byte position, offset; what is wrong
────────────────────────────────────────────────────────────────────────────────────────────────────
error     crc  corrupt/several.log  byte 0  offset 0
          Record is corrupt (stored crc = 1384625300, computed crc = 2938831253).
error     crc  corrupt/several.log  byte 651  offset 9
          Record is corrupt (stored crc = 2606055682, computed crc = 1268216967).
error     partial-batch  corrupt/several.log  byte 870  offset 12
          partial trailing batch of 215 bytes: its header declares 220 bytes; data that was written
          is incomplete.
3 errors, 0 warnings, 0 info in 2 files, 2,017 bytes, 7 batches, 651 bytes skipped: problems found
"""


def test_the_findings_table_is_capped():
    result = run("corrupt/partition-problems/orders-0", "--max-findings", "2")
    # the next start (unclean, recovery point 0) rebuilds the indexes and the snapshot: nothing is lost
    assert result.exit_code == 0
    lines = result.stdout.splitlines()
    assert lines[-3] == "... and 5 more (--format json lists them all)"
    assert lines[-2] == ("3 errors, 4 warnings, 0 info in 10 files, 13,933 bytes, 14 batches: nothing lost: the next "
                         "start repairs what is found")
    assert lines[-1] == "verdict: ok: the broker starts; nothing lost"
    assert [line.split()[:2] for line in lines if line.startswith(("error ", "warning "))] == [
        ["error", "txnindex"],
        ["error", "segment-overlap"],
    ]


def test_json_lines_one_finding_per_line_then_the_summary():
    result = run("--format", "json", "corrupt/crc-flip.log", "corrupt/zero-tail.log")
    assert result.exit_code == 1
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    findings = [d for d in lines if d["type"] == "finding"]
    assert [(d["type"], d["path"], d["kind"], d["severity"], d["position"], d["offset"]) for d in findings] == [
        ("finding", "corrupt/crc-flip.log", "crc", "error", 434, 6),
        ("finding", "corrupt/zero-tail.log", "zero-filled", "error", 1090, None),
    ]
    assert (findings[0]["field"], findings[0]["size"], findings[1]["size"]) == ("batch.crc", 217, 3000)
    summary = lines[-1]
    assert {k: summary[k] for k in ("type", "files", "errors", "warnings", "skipped_bytes", "exit_code")} == {
        "type": "summary", "files": 2, "errors": 2, "warnings": 0, "skipped_bytes": 217 + 3000, "exit_code": 1}
    assert summary["kinds"] == {"crc": 1, "zero-filled": 1}
    assert "per_file" not in summary  # each file has its own line, before its findings
    assert [(d["type"], d["path"], d.get("batches"), d.get("errors")) for d in lines[:-1]] == [
        ("file", "corrupt/crc-flip.log", 4, 1), ("finding", "corrupt/crc-flip.log", None, None),
        ("file", "corrupt/zero-tail.log", 5, 1), ("finding", "corrupt/zero-tail.log", None, None)]


def test_deep_finds_what_batch_level_cannot():
    assert run("corrupt/deep-max-timestamp.log").exit_code == 0
    result = run("--deep", "--format", "json", "corrupt/deep-max-timestamp.log")
    assert result.exit_code == 1
    finding = json.loads(result.stdout.splitlines()[1])  # after the file's own line
    assert (finding["kind"], finding["position"]) == ("max-timestamp", 434)
    assert finding["message"] == "maxTimestamp 1700000000999 is not the largest record timestamp 1700000000008"


def test_warnings_fail_only_with_strict(tmp_path):
    part = tmp_path / "t-0"
    part.mkdir()
    (part / "00000000000000000000.log").write_bytes((FX / "clean" / "v2-codecs.log").read_bytes())
    assert run(str(part)).exit_code == 0
    strict = run("--strict", str(part))
    assert strict.exit_code == 1
    assert strict.stdout.splitlines()[-2].endswith(": problems found")
    assert run("--strict", "clean/preallocated/orders-0").exit_code == 0  # info never fails


def test_usage_errors_and_unreadable_input_exit_2(tmp_path):
    missing = run("no/such/file.log")
    assert missing.exit_code == 2 and "does not exist" in missing.stderr
    assert run().exit_code == 2
    assert run("--jobs", "0", "clean/empty.log").exit_code == 2
    fifo = tmp_path / "00000000000000000000.log"
    os.mkfifo(fifo)
    result = run(str(fifo))  # docs/cli.md: refused before any read, one error line
    assert (result.exit_code, result.stdout) == (2, "")
    assert result.stderr == f"kseg: error: {fifo}: not a regular file\n"


def test_a_directory_without_kafka_files_is_a_usage_error(tmp_path):
    (tmp_path / "notes.txt").write_text("hello")
    result = run(str(tmp_path))
    assert result.exit_code == 2
    assert f"nothing to verify: no Kafka files in {tmp_path}" in result.stderr


def test_progress_goes_to_stderr_for_long_runs():
    """verify's progress is the shared line (kseg.render.progress): bytes, total and a rate that is never 0.0."""
    import io

    from kseg.render.progress import ProgressLine

    err = io.StringIO()
    progress = ProgressLine("verify", 0, err)
    progress.update(1, 2)  # the first second of a run stays silent
    assert err.getvalue() == ""
    progress.start -= 5
    progress.next = 0
    progress.update(512 << 20, 1 << 30)
    progress.clear()
    text = err.getvalue()
    assert text.startswith("\rverify [") and " 50%  512 MiB of 1 GiB  102 MiB/s" in text and text.endswith("\r")


def test_jobs_do_not_change_the_output():
    args = ["--format", "json", "corrupt", "clean/partition/orders-0", "corrupt/stale-index/orders-0"]
    assert run("--jobs", "1", *args).stdout == run("--jobs", "2", *args).stdout


def test_help():
    result = CliRunner().invoke(cli, ["verify", "--help"], env=ENV)
    assert result.exit_code == 0
    assert "Check segment files, partition directories or log directories" in result.stdout
    for option in ("--deep", "--strict", "--format", "--jobs", "--max-findings"):
        assert option in result.stdout
    assert "verify" in CliRunner().invoke(cli, ["--help"], env=ENV).stdout


def test_the_kinds_are_documented():
    from kseg.ops.verify import KINDS

    doc = (Path(__file__).resolve().parents[1] / "docs" / "verify.md").read_text()
    for kind, (severity, _) in KINDS.items():
        assert f"| `{kind}` | {severity} |" in doc, kind


def test_the_docs_example_is_real_output():
    doc = (Path(__file__).resolve().parents[1] / "docs" / "verify.md").read_text()
    block = doc.split("```console\n", 1)[1].split("```", 1)[0]
    command, rest = block.split("\n", 1)
    shown, exit_line = rest.rsplit("$ echo $?\n", 1)
    assert command == "$ kseg verify corrupt/several.log"
    result = CliRunner().invoke(cli, ["verify", "corrupt/several.log"], env={"COLUMNS": "78", "NO_COLOR": "1"})
    assert (result.stdout, str(result.exit_code)) == (shown, exit_line.strip())


def test_alike_findings_are_one_row_in_the_table_and_one_line_each_in_json(tmp_path, monkeypatch):
    """Five offset-below-base findings are one row (count, byte and offset ranges), so the CRC error still shows."""
    (tmp_path / "00000000000000001000.log").write_bytes((FX / "clean" / "v2-codecs.log").read_bytes())
    (tmp_path / "crc-flip.log").write_bytes((FX / "corrupt" / "crc-flip.log").read_bytes())
    monkeypatch.chdir(tmp_path)
    wrong_name = "00000000000000001000.log"
    result = run(wrong_name, "crc-flip.log", "--max-findings", "2")
    assert result.exit_code == 1
    table = result.stdout.split("─\n", 1)[1]
    assert table == """\
error     offset-below-base  00000000000000001000.log  5 alike  bytes 0 to 794  offsets 0 to 12
          first: batch offset 0 is below the segment's base offset 1000 (from the file name)
error     crc  crc-flip.log  byte 434  offset 6
          Record is corrupt (stored crc = 1560510572, computed crc = 309840341).
6 errors, 0 warnings, 0 info in 2 files, 2,022 bytes, 9 batches, 217 bytes skipped: problems found
"""
    lines = run("--format", "json", wrong_name).stdout.splitlines()
    assert [json.loads(line)["offset"] for line in lines[1:-1]] == [0, 3, 6, 9, 12]


def test_a_log_directory_gets_a_line_per_partition_and_quiet_lists_only_problem_files(monkeypatch):
    monkeypatch.chdir(FIXTURES / "real")
    full = run("kafka-logs").stdout.split("\n\n", 1)[0].splitlines()
    assert [line for line in full if "/  partition, " in line] == [
        "ok     kafka-logs/__cluster_metadata-0/  partition, 1 file, 3 batches, 574 bytes",
        "ERROR  kafka-logs/__consumer_offsets-12/  partition, 7 files, 148 batches, 65,169 bytes  [1 error, 1 warning]",
        "ERROR  kafka-logs/foo-0/  partition, 4 files, 204 batches, 8,730 bytes  [1 error, 2 warnings]",
        "ERROR  kafka-logs/nikhilDemo-0/  partition, 5 files, 3 batches, 323 bytes  [1 error, 1 warning]",
        "ERROR  kafka-logs/some-topic-0/  partition, 4 files, 9 batches, 1,989 bytes  [1 error, 2 warnings]",
    ]
    assert full[:2] == [
        "ok     kafka-logs/__cluster_metadata-0/00000000000000007207-0000000001.checkpoint  checkpoint, 3 batches, "
        "574 bytes",
        "ok     kafka-logs/__cluster_metadata-0/  partition, 1 file, 3 batches, 574 bytes",
    ]
    quiet = run("--quiet", "kafka-logs")
    # no partition.metadata in four partitions: a KRaft broker renames them -stray and serves none (exit 1)
    assert quiet.exit_code == 1
    assert quiet.stdout.splitlines()[-1] == "verdict: error: the broker starts; not served (renamed -stray) (4 partitions)"
    assert quiet.stdout.split("\n\n", 1)[0] == """\
WARN   kafka-logs/__consumer_offsets-12/00000000000000000862.index  missing  [missing-index 1]
WARN   kafka-logs/foo-0/00000000000000000000.index  missing  [missing-index 1]
WARN   kafka-logs/foo-0/00000000000000000000.timeindex  missing  [missing-index 1]
WARN   kafka-logs/nikhilDemo-0/00000000000000000000.index  missing  [missing-index 1]
WARN   kafka-logs/some-topic-0/00000000000000000000.index  missing  [missing-index 1]
WARN   kafka-logs/some-topic-0/00000000000000000000.timeindex  missing  [missing-index 1]
ERROR  kafka-logs/__consumer_offsets-12/partition.metadata  missing  [not-served 1]
ERROR  kafka-logs/__consumer_offsets-12/  partition, 7 files, 148 batches, 65,169 bytes  [1 error, 1 warning]
ERROR  kafka-logs/foo-0/partition.metadata  missing  [not-served 1]
ERROR  kafka-logs/foo-0/  partition, 4 files, 204 batches, 8,730 bytes  [1 error, 2 warnings]
ERROR  kafka-logs/nikhilDemo-0/partition.metadata  missing  [not-served 1]
ERROR  kafka-logs/nikhilDemo-0/  partition, 5 files, 3 batches, 323 bytes  [1 error, 1 warning]
ERROR  kafka-logs/some-topic-0/partition.metadata  missing  [not-served 1]
ERROR  kafka-logs/some-topic-0/  partition, 4 files, 9 batches, 1,989 bytes  [1 error, 2 warnings]"""
    # the summary line counts the four errors the verdict names, and closes as the verdict does
    assert quiet.stdout.splitlines()[-2] == (
        "4 errors, 6 warnings, 0 info in 21 files, 76,785 bytes, 367 batches: problems found")
    assert quiet.stdout.splitlines()[-1] == run("kafka-logs").stdout.splitlines()[-1]
    lines = [json.loads(line) for line in run("--quiet", "--format", "json", "kafka-logs").stdout.splitlines()]
    assert [d["path"] for d in lines if d["type"] == "file"] == [
        "kafka-logs/__consumer_offsets-12/00000000000000000862.index", "kafka-logs/foo-0/00000000000000000000.index",
        "kafka-logs/foo-0/00000000000000000000.timeindex", "kafka-logs/nikhilDemo-0/00000000000000000000.index",
        "kafka-logs/some-topic-0/00000000000000000000.index", "kafka-logs/some-topic-0/00000000000000000000.timeindex",
        "kafka-logs/__consumer_offsets-12/partition.metadata", "kafka-logs/foo-0/partition.metadata",
        "kafka-logs/nikhilDemo-0/partition.metadata", "kafka-logs/some-topic-0/partition.metadata"]
    assert len([d for d in lines if d["type"] == "finding"]) == 10


def test_one_partition_directory_gets_no_partition_line():
    assert "partition," not in run("corrupt/partition-problems/orders-0").stdout
