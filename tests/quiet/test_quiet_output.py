"""Quiet by default on healthy data, ``-q`` everywhere, rule ids only in JSON, ``rebuilt`` explained.

The log directory is a **healthy crashed broker** (``tests/logdirs.py``): partitions ``t-N`` with segments at
0 (offsets 0-2) and 3 (offsets 3-4), no ``.kafka_cleanshutdown``, and the active segment's ``.index`` and
``.timeindex`` preallocated to Kafka's 10 MiB maximum with zeros, as a broker killed while appending leaves
them (``AbstractIndex`` resizes the active index to ``segment.index.bytes`` and trims it at a clean close).
Nothing is lost: the next start recovers the active segment (unclean, at the recovery point) and rewrites
its indexes (``rebuilt``).  ``torn`` adds one partition ``pay-0`` whose last batch (offsets 3-4, 97 bytes)
has only 40 bytes on disk: the start cuts it (``LogSegment.recover``, R4.3).
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from logdirs import LogDir, batch
from support import FIXTURES, IN_CI

from kseg.cli import cli

ENV = {"NO_COLOR": "1", "COLUMNS": "100"}
INDEX_MAX = 10 * 1024 * 1024  # segment.index.bytes, Kafka's default


def crashed_broker(root: Path, partitions: int, torn: bool = False) -> Path:
    """``root/ld``: ``partitions`` healthy partitions of a killed broker (and a torn ``pay-0``)."""
    ld = LogDir(root / "ld")
    for n in range(partitions):
        part = ld.partition("t", n, {0: [batch(0, 3)], 3: [batch(3, 2)]}, base_snapshots=True)
        for suffix, entry in ((".index", 8), (".timeindex", 12)):
            index = part.file(suffix, 3)
            index.write_bytes(index.read_bytes().ljust(INDEX_MAX - INDEX_MAX % entry, b"\0"))
    if torn:
        pay = ld.partition("pay", 0, {0: [batch(0, 3), batch(3, 2)]})
        pay.file(".log").write_bytes(pay.file(".log").read_bytes()[: len(batch(0, 3)) + 40])
    return ld.finish(clean=False)


def run(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args), env=ENV)


@pytest.fixture(autouse=True)
def in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)


def test_verify_quiet_leaves_the_preallocated_index_rows_out(tmp_path):
    crashed_broker(tmp_path, 3)
    loud = run("verify", "ld")
    assert loud.exit_code == 0 and loud.stdout.count("index-preallocated  ") == 6  # the table's rows
    quiet = run("verify", "-q", "ld")
    assert (quiet.exit_code, quiet.stdout) == (0, (
        "6 info findings not shown (-q; --format json lists them)\n"
        "0 errors, 0 warnings, 6 info in 33 files, 62,915,481 bytes, 6 batches: clean\n"
        "verdict: ok: the broker starts; nothing lost\n"))
    table = run("verify", "-q", "--format", "table", "ld")
    assert table.exit_code == 0 and "index-preallocated" not in table.stdout
    assert table.stdout.splitlines()[-2:] == ["6 info findings not shown (-q; --format json lists them)",
                                              "verdict: ok: the broker starts; nothing lost"]
    as_json = [json.loads(line) for line in run("verify", "-q", "--format", "json", "ld").stdout.splitlines()]
    assert sum(o["type"] == "finding" and o["kind"] == "index-preallocated" for o in as_json) == 6


def test_recover_dry_run_counts_healthy_partitions_in_one_line(tmp_path):
    crashed_broker(tmp_path, 20, torn=True)
    result = run("recover", "--dry-run", "ld")
    assert result.exit_code == 1
    assert result.stdout == (
        "recover log directory ld (Kafka's rules, dry run, nothing written)\n"
        "== pay-0\n"
        "Kafka at startup: no .kafka_cleanshutdown in ld (unclean shutdown); recovery point 5 from "
        "recovery-point-offset-checkpoint: it recovers the segments from base offset 0 on\n"
        "ld/pay-0/00000000000000000000.log: base offset 0, 155 bytes, 1 intact batch\n"
        "  map  0 ██████████████████████████████████████████████████████████████████░░░░░░░░░░░░░░░░░░░░░░░ 2\n"
        "  kept      [0, 115)         1 batch, 3 records, offsets 0-2\n"
        "  cut       [115, 155)       40 bytes, partial-batch: the last batch declares 97 bytes, 40 remain\n"
        "            lost offsets from 3 on (where they end is unknown): 40 damaged bytes\n"
        "            the damaged entry's header claims offsets 3-4, 0 records\n"
        "  a torn write at the end of the active segment, as a crash during an append leaves it\n"
        "  Kafka: recovers it at startup (unclean shutdown, at or after the recovery point) and truncates it to "
        "115 bytes\n"
        "  dry run: would write 115 bytes\n"
        "1 segment: 1 cut (40 bytes lost: 40 damaged bytes), 0 unchanged\n"
        "healthy: 20 partitions (40 segments) with nothing cut, not shown (--all lists them)\n"
        "map: █ kept  ▓ salvaged  ░ lost  · lost, all zero bytes\n"
        "21 partitions (1 changed), 41 segments (1 changed, 40 bytes lost); Kafka deletes 0 segments (0 bytes)\n"
        "verdict: error: the broker starts; committed offsets lost\n")
    every = run("recover", "--dry-run", "--all", "ld")
    assert every.exit_code == 1 and every.stdout.count("\n== ") == 21
    assert len(every.stdout.splitlines()) > 10 * len(result.stdout.splitlines())


def test_recover_quiet_and_all_exclude_each_other(tmp_path):
    crashed_broker(tmp_path, 1)
    result = run("recover", "--dry-run", "-q", "--all", "ld")
    assert (result.exit_code, result.stdout) == (2, "")
    assert result.stderr == "kseg: error: -q and --all exclude each other (see 'kseg recover --help')\n"


def test_triage_quiet_and_rebuilt_says_what_changes(tmp_path):
    crashed_broker(tmp_path, 3)
    result = run("triage", "-q", "ld")
    assert (result.exit_code, result.stdout) == (0, (
        "kseg triage: 1 log directory, 3 partitions: 3 rebuilt\n"
        "next start: the broker starts\n\n"
        "healthy: 3 partitions (3 rebuilt); rebuilt: every .log byte kept, only .index, .timeindex files change; "
        "--all lists them\n"
        "result: nothing lost\n"
        "verdict: ok: the broker starts; nothing lost\n"))
    rows = [line for line in run("triage", "--all", "--format", "text", "ld").stdout.splitlines()
            if line.startswith("rebuilt ")]
    assert rows[0] == ("rebuilt    ld/t-0  log end 5; every .log byte kept; rebuilds 00000000000000000003.index, "
                       "00000000000000000003.timeindex; nothing lost")


def test_rule_ids_are_in_json_only(tmp_path):
    crashed_broker(tmp_path, 0, torn=True)
    text = run("verify", "ld").stdout
    words = " ".join(text.split())  # the table wraps the message
    assert "recovered because the last shutdown was not clean and it is at or above the recovery point error" in words
    assert "[R" not in text and "(R" not in text
    as_json = run("verify", "--format", "json", "ld").stdout
    assert "recovery point (R4.2) [R4.3 LogSegment.recover]" in as_json
    triage = run("triage", "--format", "text", "ld").stdout
    assert "(else renamed -stray)" in triage and "R1.5" not in triage
    assert "R1.5" in run("triage", "--format", "json", "ld").stdout


def test_txn_reindex_and_convert_take_q(tmp_path):
    shutil.copytree(FIXTURES / "txn" / "logs", tmp_path / "logs")
    txn = run("txn", "-q", "--now", "newest", "logs")
    assert txn.exit_code == 1
    assert "\nok " not in txn.stdout
    assert txn.stdout.endswith("\n\nok: 3 partitions without a problem (not listed: -q)\n"
                               "verdict: error: the broker starts; not served (renamed -stray) (8 partitions)\n")
    crashed_broker(tmp_path, 1)
    reindex = run("reindex", "-q", "--check", "ld/t-0")
    assert reindex.exit_code == 1
    assert reindex.stdout.splitlines()[0] == "ld/t-0/00000000000000000003.log: base offset 3, 1 batch, 97 bytes"
    assert reindex.stdout.splitlines()[-1] == "2 segments: 1 with differences, 1 same"
    assert len(reindex.stdout.splitlines()) == 5  # the healthy segment 0 is not listed
    convert = run("convert", "-q", "ld/t-0", "-o", "converted", "--to-magic", "2")
    assert (convert.exit_code, convert.stdout) == (
        0, "converted 2 segments to magic 2 (each batch's own codec): 5 records, 212 -> 212 bytes\n")


def test_the_jq_example_of_triage_help_selects_what_it_says(tmp_path):
    """The example's filter, run with jq, keeps the partitions that lose data and nothing else."""
    jq = shutil.which("jq")
    if jq is None:
        if IN_CI:
            pytest.fail("jq is not installed (apt-get install jq): the --help example cannot be run")
        pytest.skip("jq is not installed")
    crashed_broker(tmp_path, 2, torn=True)
    help_text = run("triage", "--help").stdout
    example = help_text.split("| jq '", 1)[1].split("'", 1)[0]
    assert example == 'select(.type == "partition" and (.outcome == "truncated" or .outcome == "fails"))'
    lines = run("triage", "--format", "json", "ld").stdout
    picked = subprocess.run([jq, "-c", example], input=lines, capture_output=True, text=True, check=True).stdout
    assert [(o["path"], o["outcome"]) for o in map(json.loads, picked.splitlines())] == [("ld/pay-0", "truncated")]
