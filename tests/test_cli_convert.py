"""``kseg convert`` end to end: exact output, exact files, exit codes, and inputs never touched."""

from __future__ import annotations

import hashlib
import importlib.util
import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner
from support import FIXTURES

from kseg.cli import cli
from kseg.recovery.indexes import build_indexes
from kseg.segment import open_segment

FX = FIXTURES / "convert"
ENV = {"COLUMNS": "100", "NO_COLOR": "1"}
NAME = "00000000000000000000.log"


def run(*args: str):
    return CliRunner().invoke(cli, ["convert", *map(str, args)], env=ENV)


def tree(directory: Path) -> dict[str, tuple[str, int]]:
    """Every file under ``directory``: sha256 and mtime, to prove nothing was touched."""
    return {
        str(p.relative_to(directory)): (hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else "dir", p.stat().st_mtime_ns)
        for p in sorted(directory.rglob("*"))
    }


@pytest.fixture(autouse=True)
def untouched_fixtures():
    before = tree(FX)
    yield
    assert tree(FX) == before


def offsets(path: Path) -> list[int]:
    with open_segment(path) as seg:
        return [r.offset for b in seg.iter_batches() for r in b.iter_records()]


def test_fixtures_regenerate_byte_for_byte(tmp_path):
    spec = importlib.util.spec_from_file_location("make_convert_fixtures", FX / "make_fixtures.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.main(tmp_path)
    made = {str(p.relative_to(tmp_path)): p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()}
    kept = {str(p.relative_to(FX)): p.read_bytes() for p in FX.rglob("*") if p.is_file() and p.suffix not in (".py", ".md")}
    assert made == kept
    provenance = dict(re.findall(r"^\| `([^`]+)` \| `([0-9a-f]{64})` \|", (FX / "PROVENANCE.md").read_text(), re.MULTILINE))
    assert provenance == {name: hashlib.sha256(data).hexdigest() for name, data in made.items()}


def test_mixed_magics_up_to_v1_lz4(tmp_path):
    out = tmp_path / "out"
    result = run(FX / "mixed-0", "-o", out, "--to-magic", "1", "--compression", "lz4", "--drop-headers")
    assert result.exit_code == 0, result.output
    assert result.stderr == ""
    assert result.stdout.splitlines() == [
        f"{FX / 'mixed-0' / NAME} -> {out / NAME}",
        "  read:      9 batches (magic 0: 3, magic 1: 3, magic 2: 3; none 5, gzip 1, snappy 1, lz4 1, zstd 1), "
        "15 records, 758 bytes",
        "  wrote:     8 batches (magic 1; lz4 8), 15 records, 934 bytes; 4 messages packed into batches",
        "  indexes:   .index 0 entries, .timeindex 1 entry",
        "  dropped:   headers of 1 record (1 header); partition leader epoch of 3 batches",
        "converted 1 segment to magic 1 (lz4): 15 records, 758 -> 934 bytes",
    ]
    assert sorted(p.name for p in out.iterdir()) == ["00000000000000000000.index", NAME, "00000000000000000000.timeindex"]
    assert offsets(out / NAME) == [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 12, 13, 14, 15]
    with open_segment(out / NAME) as seg:
        assert {(b.magic, b.codec) for b in seg.iter_batches()} == {(1, "lz4")}


def test_transactions_down_to_v0_with_everything_dropped(tmp_path):
    out = tmp_path / "v0"
    result = run(FX / "txn-0", "-o", out, "--to-magic", "0", "--drop-control", "--drop-headers", "--max-message-bytes", "60")
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines() == [
        f"{FX / 'txn-0' / NAME} -> {out / NAME}",
        "  read:      8 batches (magic 2: 8; none 7, gzip 1), 13 records, 765 bytes",
        "  wrote:     11 batches (magic 0; none 9, gzip 2), 11 records, 505 bytes; 1 batch split to fit 60 bytes",
        "  indexes:   .index 0 entries, .timeindex 0 entries",
        "  dropped:   2 control batches (2 records); transactional flag of 3 batches (7 records); headers of 1 "
        "record (1 header); producer id/epoch/sequence of 4 batches; partition leader epoch of 6 batches; "
        "timestamps of 11 records",
        "  oversized: 2 records alone in a batch above 60 bytes (offsets 5, 6)",
        "transactions: 3 records of aborted transactions are delivered as ordinary records (as Kafka's "
        "down-conversion does), 2 committed, 2 with no marker in the input",
        "converted 1 segment to magic 0 (each batch's own codec): 11 records, 765 -> 505 bytes",
    ]
    assert offsets(out / NAME) == [0, 1, 2, 3, 4, 5, 6, 9, 10, 11, 12]


def test_json_report(tmp_path):
    out = tmp_path / "j"
    result = run(FX / "txn-0", "-o", out, "--to-magic", "1", "--drop-control", "--drop-headers", "--format", "json")
    assert result.exit_code == 0, result.output
    *segments, report = [json.loads(line) for line in result.stdout.splitlines()]
    assert report["type"] == "summary" and report["exit_code"] == 0
    assert report["target"] == {
        "magic": 1, "compression": None, "level": None, "max_message_bytes": 1048588, "max_batch_bytes": 134217728,
        "drop_control": True, "drop_headers": True,
    }
    [segment] = segments
    assert segment["type"] == "segment"
    assert {k: segment[k] for k in ("batches_in", "records_in", "bytes_in", "batches_out", "records_out", "bytes_out")} == {
        "batches_in": 8, "records_in": 13, "bytes_in": 765, "batches_out": 10, "records_out": 11,
        "bytes_out": (out / NAME).stat().st_size,
    }
    assert segment["dropped"] == {
        "control_batches": 2, "control_records": 2, "transactional_batches": 3, "transactional_records": 7,
        "header_records": 1, "headers": 1, "producer_batches": 4, "timestamps": 0,
        "partition_leader_epochs": 6, "delete_horizons": 0, "empty_batches": 0,
    }
    assert segment["codecs_in"] == {"none": 7, "gzip": 1} and segment["magics_in"] == {"2": 8}
    assert segment["indexes"] == {"index": 0, "timeindex": 1, "txnindex": 0, "not_written": None}
    assert report["transactions"] == {"aborted_records_delivered": 3, "committed_records": 2, "undecided_records": 2}
    assert report["totals"]["segments"] == 1 and report["totals"]["skipped_bytes"] == 0


def test_a_partition_gets_all_its_segments_and_a_txnindex(tmp_path):
    out = tmp_path / "orders-0"
    result = run(FX / "orders-0", "-o", out, "--to-magic", "2", "--compression", "none", "--max-message-bytes", "1000")
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines() == [
        f"{FX / 'orders-0' / NAME} -> {out / NAME}",
        "  read:      4 batches (magic 2: 4; gzip 4), 8 records, 6048 bytes",
        "  wrote:     8 batches (magic 2; none 8), 8 records, 6200 bytes; 4 batches split to fit 1000 bytes",
        "  indexes:   .index 1 entry, .timeindex 1 entry",
        f"{FX / 'orders-0' / '00000000000000000008.log'} -> {out / '00000000000000000008.log'}",
        "  read:      4 batches (magic 2: 4; none 1, gzip 3), 7 records, 4618 bytes",
        "  wrote:     7 batches (magic 2; none 7), 7 records, 4732 bytes; 1 copied unchanged, 3 batches split to fit "
        "1000 bytes",
        "  indexes:   .index 0 entries, .timeindex 1 entry, .txnindex 1 entry",
        "converted 2 segments to magic 2 (none): 15 records, 10666 -> 10932 bytes",
    ]
    for log in (out / NAME, out / "00000000000000000008.log"):
        base = int(log.name[:20])
        build = build_indexes(log.read_bytes(), base)
        assert log.with_suffix(".index").read_bytes() == build.offset_index
        assert log.with_suffix(".timeindex").read_bytes() == build.time_index
    # producer 9's transaction began in the first segment and is aborted in the second
    assert (out / "00000000000000000008.txnindex").read_bytes().hex() == (
        "0000" "0000000000000009" "0000000000000002" "000000000000000a" "000000000000000b"
    )  # version 0, producer 9, first offset 2, last offset 10 (the marker), last stable offset 11


def test_skip_corrupt_reports_and_exits_1(tmp_path):
    out = tmp_path / "s"
    result = run(FX / "damaged-0", "-o", out, "--to-magic", "2", "--compression", "snappy", "--skip-corrupt")
    assert result.exit_code == 1
    assert result.stdout.splitlines() == [
        f"{FX / 'damaged-0' / NAME} -> {out / NAME}",
        "  read:      2 batches (magic 2: 2; none 2), 4 records, 415 bytes",
        "  wrote:     2 batches (magic 2; snappy 2), 4 records, 294 bytes",
        "  indexes:   .index 0 entries, .timeindex 1 entry",
        "  skipped:   bytes 250-415 (165 bytes): bad-crc",
        "converted 1 segment to magic 2 (snappy): 4 records, 415 -> 294 bytes; 165 damaged bytes skipped",
    ]


@pytest.mark.parametrize(
    ("args", "stderr"),
    [
        (
            ["damaged-0", "--to-magic", "1"],
            "kseg: error: {fx}/damaged-0/00000000000000000000.log byte 267 (batch.crc): Record is corrupt (stored "
            "crc = 1534200536, computed crc = 681898537) in the batch at byte 250; --skip-corrupt skips damaged "
            "bytes and converts the rest",
        ),
        (
            ["txn-0", "--to-magic", "1"],
            "kseg: error: {fx}/txn-0/00000000000000000000.log byte 101 (batch.attributes): transactional batch "
            "(producer 7) cannot be represented in magic 1: its records would reach consumers as ordinary records "
            "even if the transaction aborted; --drop-control converts it anyway, as Kafka's down-conversion does",
        ),
        (
            ["txn-0", "--to-magic", "0", "--drop-control"],
            "kseg: error: {fx}/txn-0/00000000000000000000.log byte 222 (record.headers): record at offset 5 has 1 "
            "header(s) and magic 0 cannot hold headers (1 such record(s) in this batch); --drop-headers drops them",
        ),
        (
            ["mixed-0", "--to-magic", "1", "--drop-headers"],
            "kseg: error: {fx}/mixed-0/00000000000000000000.log byte 625 (batch.attributes): Down-conversion of "
            "zstandard-compressed batches is not supported (magic 1); choose another codec with --compression",
        ),
        (["mixed-0", "--to-magic", "0", "--compression", "zstd"], "kseg: error: ZStandard compression is not supported for magic 0"),
        (["mixed-0", "--to-magic", "2", "--level", "3"], "kseg: error: --level needs --compression (each codec has its own levels)"),
    ],
)
def test_refusals_exit_2_with_one_line_and_write_nothing(tmp_path, args, stderr):
    out = tmp_path / "never"
    result = run(FX / args[0], "-o", out, *args[1:])
    assert result.exit_code == 2
    assert result.stdout == ""
    assert result.stderr.splitlines() == [stderr.format(fx=FX)]
    assert not out.exists()


def test_an_existing_output_is_refused(tmp_path):
    out = tmp_path / "o"
    out.mkdir()
    (out / "00000000000000000000.timeindex").write_bytes(b"keep")
    result = run(FX / "mixed-0", "-o", out, "--to-magic", "2")
    assert result.exit_code == 2
    assert result.stderr == f"kseg: error: {out / '00000000000000000000.timeindex'} exists; refusing to replace it\n"
    assert [p.name for p in out.iterdir()] == ["00000000000000000000.timeindex"]
    assert (out / "00000000000000000000.timeindex").read_bytes() == b"keep"


def test_usage_errors_exit_2(tmp_path):
    assert run(FX / "mixed-0", "--to-magic", "2").exit_code == 2  # no -o
    assert run(FX / "mixed-0", "-o", tmp_path / "x", "--to-magic", "3").exit_code == 2
    assert run(FX / "mixed-0", "-o", tmp_path / "x", "--to-magic", "1", "--compression", "brotli").exit_code == 2
    result = run(tmp_path / "missing.log", "-o", tmp_path / "x", "--to-magic", "1")
    assert result.exit_code == 2 and "does not exist" in result.stderr
    assert not (tmp_path / "x").exists()


def test_help_has_an_example():
    result = run("--help")
    assert result.exit_code == 0
    assert "kseg convert old-0/00000000000000000000.log -o new-0 --to-magic 2 --compression zstd" in result.stdout
