"""``kseg reindex`` end to end: exact output, exact files, exit codes, and what is (not) touched."""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import re
import shutil
import struct
from pathlib import Path

import pytest
from click.testing import CliRunner
from support import FIXTURES

from kseg.cli import cli

FX = FIXTURES / "reindex"
TS = 1_700_000_000_000
ENV = {"COLUMNS": "100", "NO_COLOR": "1"}


def run(*args: str):
    return CliRunner().invoke(cli, ["reindex", *args], env=ENV)


def idx(*entries: tuple[int, int]) -> bytes:
    return b"".join(struct.pack(">ii", rel, pos) for rel, pos in entries)


def tidx(*entries: tuple[int, int]) -> bytes:
    return b"".join(struct.pack(">qi", ts, rel) for ts, rel in entries)


def tree(directory: Path) -> dict[str, tuple[str, int]]:
    """Every file under ``directory``: sha256 and mtime, to prove nothing was touched."""
    return {
        str(p.relative_to(directory)): (hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else "dir", p.stat().st_mtime_ns)
        for p in sorted(directory.rglob("*"))
    }


def copy(name: str, tmp_path: Path) -> Path:
    target = tmp_path / Path(name).name
    shutil.copytree(FX / name, target)
    return target


def test_fixtures_regenerate_byte_for_byte(tmp_path):
    spec = importlib.util.spec_from_file_location("make_reindex_fixtures", FX / "make_fixtures.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.main(tmp_path)
    made = {str(p.relative_to(tmp_path)): p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()}
    kept = {str(p.relative_to(FX)): p.read_bytes() for p in FX.rglob("*") if p.is_file() and p.suffix not in (".py", ".md")}
    assert made == kept
    provenance = dict(re.findall(r"^\| `([^`]+)` \| `([0-9a-f]{64})` \|", (FX / "PROVENANCE.md").read_text(), re.MULTILINE))
    assert provenance == {name: hashlib.sha256(data).hexdigest() for name, data in made.items()}


def test_check_shows_the_first_difference_and_touches_nothing():
    before = tree(FX)
    result = run("--check", str(FX / "partition" / "txn-0"))
    assert tree(FX) == before
    first, second = FX / "partition/txn-0/00000000000000000000.log", FX / "partition/txn-0/00000000000000000010.log"
    assert result.stdout.splitlines() == [
        f"{first}: base offset 0, 5 batches, 10368 bytes",
        "  .index          2 entries  differs: the same 2 entries, then 3 preallocated zero slots (never trimmed)",
        "  .timeindex      2 entries  same",
        "  .txnindex       0 entries  same (no file needed)",
        f"{second}: base offset 10, 5 batches, 9879 bytes",
        "  .index          1 entry    missing",
        "  .timeindex      2 entries  missing",
        "  .txnindex       1 entry    missing",
        "2 segments: 2 with differences, 0 same",
    ]
    assert (result.exit_code, result.stderr) == (1, "")


def test_check_of_rebuilt_indexes_is_clean(tmp_path):
    part = copy("legacy/v1-0", tmp_path)
    assert run(str(part)).exit_code == 0  # no indexes yet: created beside the .log
    before = tree(tmp_path)
    result = run("--check", str(part))
    assert tree(tmp_path) == before
    assert result.stdout.splitlines()[1:] == [
        "  .index          3 entries  same",
        "  .timeindex      3 entries  same",
        "  .txnindex       0 entries  same (no file needed)",
        "1 segment: 0 with differences, 1 same",
    ]
    assert result.exit_code == 0


def test_output_dir_writes_the_rebuild_and_leaves_the_input_alone(tmp_path):
    before = tree(FX)
    out = tmp_path / "out"
    result = run(str(FX / "partition" / "txn-0"), "-o", str(out))
    assert tree(FX) == before
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[1:4] == [
        f"  .index          2 entries  created {out / '00000000000000000000.index'} "
        "(old: differs: the same 2 entries, then 3 preallocated zero slots (never trimmed))",
        f"  .timeindex      2 entries  created {out / '00000000000000000000.timeindex'} (old: same)",
        "  .txnindex       0 entries  not written: no aborted transactions (old: no file)",
    ]
    assert result.stdout.splitlines()[-1] == "2 segments: 5 files written"
    assert (out / "00000000000000000000.index").read_bytes() == idx((6, 6046), (10, 10244))
    assert (out / "00000000000000000000.timeindex").read_bytes() == tidx((TS + 13, 6), (TS + 40, 9))
    assert (out / "00000000000000000010.index").read_bytes() == idx((5, 4802))
    assert (out / "00000000000000000010.timeindex").read_bytes() == tidx((TS + 45, 5), (TS + 50, 10))
    # producer 9's transaction began at offset 0 in the previous segment; producer 4's (offset 6) is still open
    assert (out / "00000000000000000010.txnindex").read_bytes() == struct.pack(">hqqqq", 0, 9, 0, 15, 6)
    assert not (out / "00000000000000000000.txnindex").exists()


def test_legacy_and_magic_0_segments(tmp_path):
    result = run(str(FX / "legacy"), "-o", str(tmp_path))  # a log directory: one output folder per partition
    assert result.exit_code == 0, result.output
    v1, v0 = tmp_path / "v1-0", tmp_path / "v0-0"
    assert (v1 / "00000000000000000000.index").read_bytes() == idx((5, 5559), (8, 11118), (9, 16668))
    assert (v1 / "00000000000000000000.timeindex").read_bytes() == tidx((TS + 30, 2), (TS + 60, 8), (TS + 70, 10))
    assert (v0 / "00000000000000000000.index").read_bytes() == idx((5, 4635), (10, 9270))
    assert (v0 / "00000000000000000000.timeindex").read_bytes() == b""


def test_index_interval_bytes(tmp_path):
    result = run(str(FX / "legacy" / "v0-0"), "-o", str(tmp_path), "--index-interval-bytes", "0")
    assert result.exit_code == 0
    assert (tmp_path / "00000000000000000000.index").read_bytes() == idx(*[(i, 927 * i) for i in range(1, 12)])


def test_without_options_only_the_missing_indexes_are_created(tmp_path, monkeypatch):
    """``kseg reindex LD/p-0 LD/q-0``: p-0 has its first segment's indexes (a preallocated, untrimmed .index),
    q-0 lost that .index: each partition gets only what it lacks; nothing existing is touched."""
    ld = tmp_path / "ld"
    ld.mkdir()
    p0, q0 = copy("partition/txn-0", ld), ld / "q-0"
    p0 = p0.rename(ld / "p-0")
    shutil.copytree(p0, q0)
    (q0 / "00000000000000000000.index").unlink()
    kept = {p: p.read_bytes() for p in (p0 / "00000000000000000000.index", p0 / "00000000000000000000.timeindex",
                                         q0 / "00000000000000000000.timeindex")}
    monkeypatch.chdir(tmp_path)
    result = run("ld/p-0", "ld/q-0")
    assert (result.exit_code, result.stderr) == (0, "")
    assert result.stdout == """\
ld/p-0/00000000000000000000.log: base offset 0, 5 batches, 10368 bytes
  .index          2 entries  kept: it exists, --in-place would replace it (old: differs: the same 2 entries, then 3 \
preallocated zero slots (never trimmed))
  .timeindex      2 entries  kept: it exists (old: same)
  .txnindex       0 entries  not written: no aborted transactions (old: no file)
ld/p-0/00000000000000000010.log: base offset 10, 5 batches, 9879 bytes
  .index          1 entry    created ld/p-0/00000000000000000010.index (old: missing)
  .timeindex      2 entries  created ld/p-0/00000000000000000010.timeindex (old: missing)
  .txnindex       1 entry    created ld/p-0/00000000000000000010.txnindex (old: missing)
ld/q-0/00000000000000000000.log: base offset 0, 5 batches, 10368 bytes
  .index          2 entries  created ld/q-0/00000000000000000000.index (old: missing)
  .timeindex      2 entries  kept: it exists (old: same)
  .txnindex       0 entries  not written: no aborted transactions (old: no file)
ld/q-0/00000000000000000010.log: base offset 10, 5 batches, 9879 bytes
  .index          1 entry    created ld/q-0/00000000000000000010.index (old: missing)
  .timeindex      2 entries  created ld/q-0/00000000000000000010.timeindex (old: missing)
  .txnindex       1 entry    created ld/q-0/00000000000000000010.txnindex (old: missing)
4 segments: 7 files written
"""
    assert {p: p.read_bytes() for p in kept} == kept
    # the created .index is the rebuild: --check now finds q-0's first segment the same
    check = run("--check", "ld/q-0/00000000000000000000.log")
    assert (check.exit_code, check.stdout.splitlines()[1]) == (0, "  .index          2 entries  same")
    again = run("ld/q-0")  # everything exists now: nothing written
    assert (again.exit_code, again.stdout.splitlines()[-1]) == (0, "2 segments: 0 files written")


def test_in_place_replaces_what_differs_and_keeps_the_old_file(tmp_path):
    part = copy("partition/txn-0", tmp_path)
    old_index = (part / "00000000000000000000.index").read_bytes()
    old_timeindex_stat = (part / "00000000000000000000.timeindex").stat()
    result = run("--in-place", str(part))
    assert result.exit_code == 0, result.output
    index = part / "00000000000000000000.index"
    assert result.stdout.splitlines()[1:4] == [
        f"  .index          2 entries  replaced {index} (old kept as {index}.bak) "
        "(old: differs: the same 2 entries, then 3 preallocated zero slots (never trimmed))",
        "  .timeindex      2 entries  unchanged (old: same)",
        "  .txnindex       0 entries  not written: no aborted transactions (old: no file)",
    ]
    assert index.read_bytes() == idx((6, 6046), (10, 10244))
    assert (part / "00000000000000000000.index.bak").read_bytes() == old_index
    assert (part / "00000000000000000000.timeindex").stat().st_mtime_ns == old_timeindex_stat.st_mtime_ns
    assert (part / "00000000000000000010.txnindex").read_bytes() == struct.pack(">hqqqq", 0, 9, 0, 15, 6)
    again = run("--in-place", str(part))
    assert again.stdout.splitlines()[-1] == "2 segments: 0 files written"
    assert sorted(p.name for p in part.iterdir() if p.name.endswith(".bak")) == ["00000000000000000000.index.bak"]


@pytest.mark.parametrize(
    ("name", "line", "index", "timeindex"),
    [
        (
            "damaged/torn-0",
            "  .log: recovery would truncate 1206 bytes at byte 9520 "
            "(partial-batch: the last batch declares 1906 bytes, 1206 remain)",
            idx((11, 5709)),  # the fourth batch holds offsets 9..11
            tidx((TS + 32, 11), (TS + 42, 14)),
        ),
        (
            "damaged/crc-0",
            "  .log: recovery would truncate 7620 bytes at byte 3806 "
            "(corrupt-batch: Record is corrupt (stored crc = 3371334457, computed crc = 2565765806))",
            b"",
            tidx((TS + 12, 5)),
        ),
    ],
)
def test_bytes_recovery_would_cut_are_reported_and_exit_1(tmp_path, name, line, index, timeindex):
    before = tree(FX)
    result = run(str(FX / name), "-o", str(tmp_path))
    assert tree(FX) == before
    assert result.exit_code == 1
    assert result.stdout.splitlines()[1] == line
    assert result.stdout.splitlines()[-1] == "1 segment: 2 files written, 1 with bytes recovery would truncate"
    assert (tmp_path / "00000000000000000000.index").read_bytes() == index
    assert (tmp_path / "00000000000000000000.timeindex").read_bytes() == timeindex


def test_json_lines(tmp_path):
    result = run("--check", "--format", "json", str(FX / "partition" / "txn-0"))
    assert result.exit_code == 1
    first, second = [json.loads(line) for line in result.stdout.splitlines()]
    assert (first["base_offset"], first["valid_bytes"], first["truncated_bytes"], first["stop"]) == (0, 10368, 0, "end")
    assert first["files"][0]["difference"] == {
        "slot": 2,
        "old": {"offset": 0, "position": 0},
        "new": None,
        "old_entries": 5,
        "new_entries": 2,
        "old_live": 2,
        "old_trailing_bytes": 0,
        "old_missing": False,
        "preallocated_tail": True,
    }
    assert second["files"][2]["difference"]["new"] == {
        "version": 0,
        "producer_id": 9,
        "first_offset": 0,
        "last_offset": 15,
        "last_stable_offset": 6,
    }
    assert [f["action"] for f in second["files"]] == ["checked"] * 3


def test_one_segment_given_alone_replays_the_earlier_ones(tmp_path):
    result = run(str(FX / "partition" / "txn-0" / "00000000000000000010.log"), "-o", str(tmp_path))
    assert result.exit_code == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "00000000000000000010.index",
        "00000000000000000010.timeindex",
        "00000000000000000010.txnindex",
    ]
    assert (tmp_path / "00000000000000000010.txnindex").read_bytes() == struct.pack(">hqqqq", 0, 9, 0, 15, 6)


def test_usage_errors_exit_2(tmp_path):
    assert run(str(tmp_path / "nope.log")).exit_code == 2
    bad = run(str(FX / "partition" / "txn-0" / "00000000000000000000.index"))
    assert (bad.exit_code, bad.stderr) == (
        2,
        f"kseg: error: {FX / 'partition/txn-0/00000000000000000000.index'}: "
        "not a .log segment, a partition directory or a log directory\n",
    )
    both = run("--in-place", "--check", str(FX / "legacy"))
    assert (both.exit_code, both.stderr) == (2, "kseg: error: --check, --output-dir and --in-place exclude each other\n")
    assert run("--index-interval-bytes", "-1", str(FX / "legacy")).exit_code == 2
    empty = tmp_path / "empty"
    empty.mkdir()
    nothing = run(str(empty))
    assert (nothing.exit_code, nothing.stderr) == (2, f"kseg: error: {empty}: no .log segments found\n")


def test_a_log_that_is_not_a_regular_file_is_refused_without_blocking(tmp_path):
    fifo = tmp_path / "00000000000000000000.log"
    os.mkfifo(fifo)
    result = run("--check", str(fifo))
    assert (result.exit_code, result.stderr) == (2, f"kseg: error: {fifo}: not a regular file\n")


def test_an_unreadable_log_exits_2(tmp_path, monkeypatch):
    # Simulated EACCES: a real chmod 0 is no obstacle to root, which CI runs as.
    part = copy("legacy/v0-0", tmp_path)
    log = part / "00000000000000000000.log"
    real_open = os.open

    def refuse(path, flags, *args, **kwargs):
        if os.fspath(path) == str(log):
            raise PermissionError(13, "Permission denied", str(log))
        return real_open(path, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", refuse)
    result = run("--check", str(part))
    assert result.exit_code == 2
    assert result.stderr.startswith("kseg: error: ") and "Permission denied" in result.stderr


def test_help():
    result = run("--help")
    assert result.exit_code == 0
    assert "Rebuild segment indexes exactly as Kafka's LogSegment.recover writes them." in result.stdout


def test_the_docs_example_is_what_the_command_prints(monkeypatch):
    from support import REPO

    doc = (REPO / "docs" / "reindex.md").read_text()
    block = re.search(r"^\$ kseg reindex (--check \S+)\n(.*?)^\$", doc, re.MULTILINE | re.DOTALL)
    monkeypatch.chdir(REPO)
    result = run(*block[1].split())
    assert result.stdout == block[2]


def test_a_real_partition_is_reproduced_byte_for_byte():
    part = FIXTURES / "real" / "kafka-logs" / "__consumer_offsets-12"
    result = run("--check", str(part))
    assert result.stdout.splitlines() == [
        f"{part / '00000000000000000000.log'}: base offset 0, 147 batches, 64548 bytes",
        "  .index         14 entries  same",
        "  .timeindex     15 entries  same",
        "  .txnindex       0 entries  same (no file needed)",
        f"{part / '00000000000000000862.log'}: base offset 862, 1 batch, 317 bytes",
        "  .index          0 entries  missing",  # this copy of the partition has no .index for it
        "  .timeindex      1 entry    same",
        "  .txnindex       0 entries  same (no file needed)",
        "2 segments: 1 with differences, 1 same",
    ]
    assert result.exit_code == 1
