"""``kseg verify --format table``: exact tables at a fixed width, partition rows, quiet, and the same exit codes.

The console width is fixed by ``COLUMNS`` (kseg.render.terminal) and colour is off (``NO_COLOR``; CliRunner's
stdout is no terminal either), so every table is compared character for character.
"""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from support import FIXTURES

from kseg.cli import cli

FX = FIXTURES / "verify"


@pytest.fixture(autouse=True)
def in_fixtures(monkeypatch):
    """Run from fixtures/verify so the paths printed are the short relative ones."""
    monkeypatch.chdir(FX)


def run(*args: str, columns: int = 100):
    return CliRunner().invoke(cli, ["verify", *args], env={"COLUMNS": str(columns), "NO_COLOR": "1"})


def test_one_row_per_finding_and_a_totals_footer_in_80_columns():
    result = run("--format", "table", "corrupt/several.log", "clean/v2-codecs.log", columns=80)
    assert (result.exit_code, result.stderr) == (1, "")
    assert result.stdout == """\
severity  kind           n  bytes  offsets  file; what is wrong
────────────────────────────────────────────────────────────────────────────────
error     crc            1      0        0  corrupt/several.log
                                            Record is corrupt (stored crc =
                                            1384625300, computed crc =
                                            2938831253).
error     crc            1    651        9  corrupt/several.log
                                            Record is corrupt (stored crc =
                                            2606055682, computed crc =
                                            1268216967).
error     partial-batch  1    870       12  corrupt/several.log
                                            partial trailing batch of 215 bytes:
                                            its header declares 220 bytes; data
                                            that was written is incomplete.

ERROR                    3  2,017           2 files: 3 errors, 0 warnings, 0
                                            info; 7 batches, 651 bytes skipped:
                                            problems found
"""


def test_a_clean_run_is_the_footer_alone():
    result = run("--format", "table", "clean/v2-codecs.log", columns=80)
    assert (result.exit_code, result.stderr) == (0, "")
    assert result.stdout == """\
severity  kind  n  bytes  offsets  file; what is wrong
────────────────────────────────────────────────────────────────────────────────

ok              0    932           1 file: 0 errors, 0 warnings, 0 info; 5
                                   batches: clean
"""


def test_a_group_of_alike_findings_is_one_row_with_its_count_and_ranges(tmp_path, monkeypatch):
    """Five offset-below-base findings: one row (n 5, bytes 0-794, offsets 0-12); the cap counts groups."""
    (tmp_path / "00000000000000001000.log").write_bytes((FX / "clean" / "v2-codecs.log").read_bytes())
    (tmp_path / "crc-flip.log").write_bytes((FX / "corrupt" / "crc-flip.log").read_bytes())
    monkeypatch.chdir(tmp_path)
    result = run("--format", "table", "--max-findings", "1", "00000000000000001000.log", "crc-flip.log")
    assert result.exit_code == 1
    assert result.stdout == """\
severity  kind               n  bytes  offsets  file; what is wrong
────────────────────────────────────────────────────────────────────────────────────────────────────
error     offset-below-base  5  0-794     0-12  00000000000000001000.log
                                                first: batch offset 0 is below the segment's base
                                                offset 1000 (from the file name)

ERROR                        6  2,022           2 files: 6 errors, 0 warnings, 0 info; 9 batches,
                                                217 bytes skipped: problems found
... and 1 more (--format json lists them all)
"""


STALE_PARTITION = """\
severity  kind             n   bytes  offsets  file; what is wrong
────────────────────────────────────────────────────────────────────────────────────────────────────
ERROR     partition        3  12,620           corrupt/stale-index/orders-0/
                                               9 files, 13 batches; 1 error, 2 warnings
error     timeindex-entry  1      12       26  00000000000000000000.timeindex
                                               entry 1: offset 26 is beyond the last offset 22 in
                                               the log: a stale index
warning   segment-gap      1       0       27  00000000000000000027.log
                                               offsets 23..26 are in no segment:
                                               00000000000000000000.log ends at 22 (normal for a
                                               compacted topic; otherwise data is missing)
warning   leader-epoch     1       8       23  leader-epoch-checkpoint
                                               the checkpoint says epoch 2 starts at offset 23, but
                                               its first batch is at offset 27

"""
FOOTER = """\
ERROR                      3  26,561           18 files: 1 error, 2 warnings, 0 info; 27 batches:
                                               nothing lost: the next start repairs what is found
verdict: ok: the broker starts; nothing lost
"""


def test_several_partitions_get_a_row_each_above_their_findings_and_quiet_drops_the_clean_one():
    args = ["--format", "table", "corrupt/stale-index/orders-0", "clean/partition/orders-0"]
    full = run(*args)
    # no checkpoints beside them: an unclean start from 0 rebuilds the stale index, nothing lost (exit 0)
    assert (full.exit_code, full.stderr) == (0, "")
    assert full.stdout == STALE_PARTITION + """\
ok        partition        0  13,941           clean/partition/orders-0/
                                               9 files, 14 batches

""" + FOOTER
    quiet = run("--quiet", *args)
    assert (quiet.exit_code, quiet.stdout) == (0, STALE_PARTITION + FOOTER)


def test_one_partition_gets_no_partition_row():
    result = run("--format", "table", "corrupt/stale-index/orders-0")
    assert result.exit_code == 0 and " partition " not in result.stdout
    assert "  00000000000000000000.timeindex\n" in result.stdout  # named within the one directory, as text does


def test_a_log_directory_quiet_lists_only_its_problem_partitions(monkeypatch):
    monkeypatch.chdir(FIXTURES / "real")
    rows = [line.split()[0:4] for line in run("--format", "table", "kafka-logs").stdout.splitlines()
            if " partition " in line]
    # four partitions without partition.metadata: each an error (not-served) beside its warnings
    assert rows == [["ok", "partition", "0", "574"], ["ERROR", "partition", "2", "65,169"],
                    ["ERROR", "partition", "3", "8,730"], ["ERROR", "partition", "2", "323"],
                    ["ERROR", "partition", "3", "1,989"]]
    quiet = run("--format", "table", "--quiet", "kafka-logs")
    assert quiet.exit_code == 1  # four partitions without partition.metadata: renamed -stray, not served
    assert [line.split()[0] for line in quiet.stdout.splitlines() if " partition " in line] == ["ERROR"] * 4
    assert "__cluster_metadata-0/" not in quiet.stdout and "__consumer_offsets-12/" in quiet.stdout


@pytest.mark.parametrize(
    ("paths", "strict", "code"),
    [
        (["clean/v2-codecs.log"], False, 0),
        (["corrupt/several.log"], False, 1),
        (["corrupt/stale-index/orders-0"], False, 0),  # the next start rebuilds the stale index
        (["corrupt/stale-index/orders-0"], True, 1),
        (["clean/partition/orders-0", "corrupt/partition-problems/orders-0"], False, 0),
        (["clean/partition/orders-0", "corrupt/partition-problems/orders-0"], True, 1),
    ],
)
def test_the_exit_code_is_the_same_in_every_format(paths, strict, code):
    codes = {fmt: run("--format", fmt, *(["--strict"] if strict else []), *paths).exit_code
             for fmt in ("text", "json", "table")}
    assert codes == {"text": code, "json": code, "table": code}


def test_warnings_fail_only_with_strict_in_the_table_too(tmp_path):
    part = tmp_path / "t-0"
    part.mkdir()
    (part / "00000000000000000000.log").write_bytes((FX / "clean" / "v2-codecs.log").read_bytes())
    lenient, strict = run("--format", "table", str(part)), run("--format", "table", "--strict", str(part))
    assert (lenient.exit_code, strict.exit_code) == (0, 1)
    assert lenient.stdout.splitlines()[-2].endswith("clean") and strict.stdout.splitlines()[-2].endswith(
        "problems found")
    summary = json.loads(run("--format", "json", "--strict", str(part)).stdout.splitlines()[-1])
    assert summary["exit_code"] == 1


def test_the_docs_table_example_is_real_output():
    doc = (FIXTURES.parent / "docs" / "verify.md").read_text()
    block = doc.split("### The table (`--format table`)", 1)[1].split("```text\n", 1)[1].split("```", 1)[0]
    command, shown = block.split("\n", 1)
    assert command == "$ kseg verify --format table corrupt/stale-index/orders-0 clean/partition/orders-0"
    assert run(*command.split()[3:]).stdout == shown
