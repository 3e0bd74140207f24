"""``kseg recover`` end to end: exact output, exact files, exit codes, and what is (not) touched."""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import re
import shutil
from pathlib import Path

from click.testing import CliRunner
from support import FIXTURES, REPO

from kseg.cli import cli

FX = FIXTURES / "recover"
ENV = {"COLUMNS": "100", "NO_COLOR": "1"}
LOG = "00000000000000000000.log"
LEGEND = "map: █ kept  ▓ salvaged  ░ lost  · lost, all zero bytes"


def run(*args: str):
    return CliRunner().invoke(cli, ["recover", *args], env=ENV)


def segment(name: str) -> Path:
    return FX / "segments" / name / LOG


def tree(directory: Path) -> dict[str, tuple[str, int]]:
    return {
        str(p.relative_to(directory)): (
            hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else "dir",
            p.stat().st_mtime_ns,
        )
        for p in sorted(directory.rglob("*"))
    }


def not_a_partition(name: str) -> str:
    return (
        f"Kafka at startup: {FX / 'segments' / name} is not named <topic>-<partition>; "
        "as if after an unclean shutdown with recovery point 0"
    )


def test_fixtures_regenerate_byte_for_byte(tmp_path):
    spec = importlib.util.spec_from_file_location("make_recover_fixtures", FX / "make_fixtures.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.main(tmp_path)
    made = {str(p.relative_to(tmp_path)): p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()}
    kept = {
        str(p.relative_to(FX)): p.read_bytes()
        for p in FX.rglob("*")
        if p.is_file() and p.suffix not in (".py", ".md")
    }
    assert made == kept
    provenance = dict(
        re.findall(r"^\| `([^`]+)` \| `([0-9a-f]{64})` \|", (FX / "PROVENANCE.md").read_text(), re.MULTILINE)
    )
    assert provenance == {name: hashlib.sha256(data).hexdigest() for name, data in made.items()}


def test_kafka_mode_cuts_at_the_bad_batch_and_says_what_is_lost(tmp_path):
    out = tmp_path / "out"
    result = run(str(segment("crc-middle")), "-o", str(out))
    assert result.stdout.splitlines() == [
        f"recover {segment('crc-middle')} (Kafka's rules, into {out})",
        not_a_partition("crc-middle"),
        f"{segment('crc-middle')}: base offset 0, 6026 bytes, 5 intact batches",
        "  map  0 " + "█" * 29 + "░" * 59 + " 17",
        "  kept      [0, 2006)        2 batches, 6 records, offsets 0-5",
        (
            "  cut       [2006, 6026)     4020 bytes, corrupt-batch: Record is corrupt (stored crc = 2082861678, "
            "computed crc = 4036433015)"
        ),
        "            lost offsets 6-17: 3 intact batches (9 records) and 1003 damaged bytes",
        "            the damaged entry's header claims offsets 6-8, 3 records",
        "            --salvage keeps 3 of these batches",
        "  Kafka: recovers it at startup (unclean shutdown, at or after the recovery point) and truncates it to 2006 bytes",
        f"  wrote {out / LOG} (2006 bytes); .index 0 entries, .timeindex 1 entry",
        LEGEND,
        "1 segment: 1 cut (4020 bytes lost: 3 intact batches with 9 records, 1003 damaged bytes), 0 unchanged",
    ]
    assert (result.exit_code, result.stderr) == (1, "")
    assert (out / LOG).read_bytes() == segment("crc-middle").read_bytes()[:2006]
    assert sorted(p.name for p in out.iterdir()) == [
        "00000000000000000000.index",
        LOG,
        "00000000000000000000.timeindex",
    ]


def test_salvage_keeps_the_batches_after_the_damage(tmp_path):
    out = tmp_path / "out"
    result = run("--salvage", str(segment("zeroed")), "-o", str(out))
    assert result.stdout.splitlines()[2:] == [
        f"{segment('zeroed')}: base offset 0, 6026 bytes, 4 intact batches",
        "  map  0 " + "█" * 29 + "·" * 30 + "▓" * 29 + " 17",
        "  kept      [0, 2006)        2 batches, 6 records, offsets 0-5",
        (
            "  lost      [2006, 4014)     2008 damaged bytes, all zero: a size field below the minimum for its magic "
            "(size field 0)"
        ),
        "            lost offsets 6-11",
        "  salvaged  [4014, 6026)     2 batches, 6 records, offsets 12-17",
        "  Kafka: recovers it at startup (unclean shutdown, at or after the recovery point) and truncates it to 2006 bytes",
        f"  wrote {out / LOG} (4018 bytes); .index 0 entries, .timeindex 1 entry",
        LEGEND,
        "1 segment: 1 damaged (2008 bytes lost: 2008 damaged bytes; 2 batches kept after the damage), 0 unchanged",
    ]
    data = segment("zeroed").read_bytes()
    assert (out / LOG).read_bytes() == data[:2006] + data[4014:]
    assert result.exit_code == 1


def test_a_compressed_batch_is_said_to_be_lost_whole():
    result = run("--salvage", "--dry-run", str(segment("compressed-damaged")))
    assert (
        "            the damaged entry's header claims offsets 6-8, 3 records; a gzip batch: its records are one "
        "compressed stream, so it is lost whole"
    ) in result.stdout.splitlines()


def test_a_torn_tail_and_an_out_of_order_copy():
    torn = run("--dry-run", str(segment("torn-tail"))).stdout.splitlines()
    assert torn[5:9] == [
        "  cut       [5020, 5726)     706 bytes, partial-batch: the last batch declares 1006 bytes, 706 remain",
        "            lost offsets from 15 on (where they end is unknown): 706 damaged bytes",
        "            the damaged entry's header claims offsets 15-17, 3 records",
        "  a torn write at the end of the active segment, as a crash during an append leaves it",
    ]
    stray = run("--salvage", "--dry-run", str(segment("out-of-order"))).stdout.splitlines()
    assert stray[9:12] == [
        (
            "  lost      [4014, 5017)     1 intact batch (3 records), offsets-not-increasing: offsets 3-5 do not pass 11, "
            "the last offset kept"
        ),
        "            its offsets 3-5",
        "  salvaged  [5017, 7029)     2 batches, 6 records, offsets 12-17",
    ]


def test_nothing_to_cut_exits_0():
    for name in ("clean", "empty"):
        result = run("--dry-run", str(segment(name)))
        assert (result.exit_code, result.stdout.splitlines()[-2:]) == (
            0, ["1 segment: 1 unchanged", "verdict: ok: the broker starts; nothing lost"])
    assert run("--dry-run", "--all", str(segment("empty"))).stdout.splitlines()[3] == "  map  (empty file)"
    # without --all a dry run shows only what has something to say: the healthy segment is counted
    assert run("--dry-run", str(segment("clean"))).stdout.splitlines()[2:] == [
        "  1 healthy segment not shown: nothing cut (--all lists them)", "1 segment: 1 unchanged",
        "verdict: ok: the broker starts; nothing lost"]


def test_a_partition_directory(tmp_path):
    logdir = tmp_path / "logdir"
    shutil.copytree(FX / "logdir", logdir)
    part = logdir / "orders-0"
    out = tmp_path / "out"
    before = tree(logdir)
    result = run("--salvage", str(part), "-o", str(out))
    assert tree(logdir) == before
    lines = result.stdout.splitlines()
    assert lines[:2] == [
        f"recover {part} (--salvage, into {out})",
        (
            f"Kafka at startup: no .kafka_cleanshutdown in {logdir} (unclean shutdown); recovery point 20 from "
            "recovery-point-offset-checkpoint: it recovers the segments from base offset 18 on"
        ),
    ]
    # 18, 34 and 52 have no .index: Kafka recovers them in loadSegmentFiles and deletes nothing (docs/kafka-log-loading.md)
    assert [line for line in lines if line.startswith("  Kafka:")] == [
        "  Kafka: does not recover it at startup (below the recovery point: flushed before)",
        "  Kafka: recovers it at startup (unclean shutdown, at or after the recovery point) and truncates it to 1006 bytes",
        "  Kafka: recovers it at startup (unclean shutdown, at or after the recovery point)",
        "  Kafka: recovers it at startup (unclean shutdown, at or after the recovery point) and truncates it to 3018 bytes",
    ]
    assert lines[-6:] == [
        "copied partition.metadata",
        "wrote leader-epoch-checkpoint (2 epochs, as Kafka leaves it after the load)",
        "wrote 00000000000000000061.snapshot (producer state at the log end 61)",
        (
            "not copied: 00000000000000000034.snapshot (producer snapshot: kseg writes one at the new log end "
            "instead; an old one may describe batches that are gone)"
        ),
        LEGEND,
        "4 segments: 2 damaged (1156 bytes lost: 1156 damaged bytes; 4 batches kept after the damage), 2 unchanged",
    ]
    assert (
        f"  wrote {out / '00000000000000000018.log'} (4102 bytes); .index 0 entries, .timeindex 1 entry, "
        ".txnindex 1 entry"
    ) in lines
    assert result.exit_code == 1


def test_in_place_keeps_the_original_beside_it(tmp_path):
    directory = tmp_path / "torn"
    shutil.copytree(FX / "segments" / "torn-tail", directory)
    log = directory / LOG
    original = log.read_bytes()
    result = run("--in-place", str(log))
    assert f"  rewrote {log} (5020 bytes, old kept as {log}.bak); .index 0 entries, .timeindex 1 entry" in (
        result.stdout.splitlines()
    )
    assert (log.read_bytes(), (directory / (LOG + ".bak")).read_bytes()) == (original[:5020], original)
    assert result.exit_code == 1
    again = run("--in-place", str(log))
    assert "  in place: nothing to cut, left untouched" in again.stdout.splitlines()
    assert again.exit_code == 0


def test_json(tmp_path):
    result = run("--salvage", "--format", "json", str(segment("out-of-order")), "-o", str(tmp_path / "o"))
    report, summary = (json.loads(line) for line in result.stdout.splitlines())  # JSON Lines: the segment, a summary
    assert (result.exit_code, report["type"], report["mode"], report["target"], report["changed"]) == (
        1,
        "segment",
        "salvage",
        "output",
        True,
    )
    assert summary == {"type": "summary", "path": str(segment("out-of-order")), "log_directory": False,
                       "mode": "salvage", "target": "output", "output_dir": str(tmp_path / "o"), "changed": True,
                       "exit_code": 1}
    [seg] = report["segments"]
    assert [(k["start"], k["end"], k["salvaged"]) for k in seg["kept"]] == [
        (0, 2006, False),
        (3009, 4014, True),
        (5017, 7029, True),
    ]
    assert [
        (loss["start"], loss["end"], loss["reason"], loss["first_offset"], loss["last_offset"])
        for loss in seg["lost"]
    ] == [
        (2006, 3009, "damaged", 6, 8),
        (4014, 5017, "offsets-not-increasing", 3, 5),
    ]
    assert seg["lost"][0]["claimed"] == {
        "codec": "none",
        "first_offset": 6,
        "last_offset": 8,
        "magic": 2,
        "records": 3,
    }
    assert (seg["kafka_recovery"]["valid_bytes"], seg["output_bytes"], seg["lost_records"]) == (2006, 5023, 3)
    assert [f["kind"] for f in seg["files"]] == ["log", "index", "timeindex", "txnindex"]
    assert report["startup"]["recovery_point_source"] == "not-a-partition"


def test_usage_errors_exit_2(tmp_path):
    missing = run(str(tmp_path / "nope.log"), "--dry-run")
    assert missing.exit_code == 2 and "does not exist" in missing.stderr
    both = run(str(segment("clean")), "--dry-run", "--in-place")
    assert (both.exit_code, both.stderr) == (
        2,
        "kseg: error: give exactly one of -o OUTDIR, --in-place or --dry-run\n",
    )
    neither = run(str(segment("clean")))
    assert neither.exit_code == 2
    out = tmp_path / "out"
    out.mkdir()
    (out / LOG).write_bytes(b"x")
    exists = run(str(segment("clean")), "-o", str(out))
    assert (exists.exit_code, exists.stderr) == (
        2,
        f"kseg: error: {out / LOG} exists; refusing to replace it (choose an empty -o directory)\n",
    )
    assert (out / LOG).read_bytes() == b"x"
    (tmp_path / "nothing").mkdir()
    nothing = run(str(tmp_path / "nothing"), "--dry-run")
    assert nothing.exit_code == 2 and "not a partition directory or a log directory" in nothing.stderr


def test_a_log_that_is_not_a_regular_file_is_refused_without_blocking(tmp_path):
    fifo = tmp_path / LOG
    os.mkfifo(fifo)
    result = run("--dry-run", str(fifo))
    assert (result.exit_code, result.stderr) == (2, f"kseg: error: {fifo}: not a regular file\n")


def test_an_unreadable_log_exits_2(tmp_path, monkeypatch):
    # Simulated EACCES: a real chmod 0 is no obstacle to root, which CI runs as.
    log = tmp_path / LOG
    log.write_bytes(segment("clean").read_bytes())
    real_open = os.open

    def refuse(path, flags, *args, **kwargs):
        if os.fspath(path) == str(log):
            raise PermissionError(13, "Permission denied", str(log))
        return real_open(path, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", refuse)
    result = run("--dry-run", str(log))
    assert (result.exit_code, result.stderr) == (2, f"kseg: error: {log}: Permission denied\n")


def test_help():
    result = run("--help")
    assert result.exit_code == 0
    assert "Keep what Kafka's recovery keeps of a segment, or every intact batch." in result.stdout


def test_the_docs_example_is_what_the_command_prints(monkeypatch):
    doc = (REPO / "docs" / "recover.md").read_text()
    block = re.search(r"^\$ kseg recover (.+?)\n(.*?)^\$", doc, re.MULTILINE | re.DOTALL)
    monkeypatch.chdir(REPO)
    result = run(*block[1].split())
    assert result.stdout == block[2]
