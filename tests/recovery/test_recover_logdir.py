"""``kseg recover`` on the small log directories of test_loading_paths: Kafka's fate of each segment comes
from the loading model, and every ``-o`` output is a log directory Kafka 4.3.0 loads without a change.

The expected fates are the model's paths (docs/kafka-log-loading.md): R3.4 (a missing .index is recovered
in loadSegmentFiles, nothing deleted), R4.3 (a cut in recoverLog deletes every later segment), R4.5 (an
offset below base: the split is refused, the broker stops), R4.1 (clean shutdown: nothing recovered).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from kseg.cli import cli
from kseg.ops.recover.kafka import DELETED, RECOVERS_NO_INDEX, RECOVERS_UNCLEAN, SKIPPED_CLEAN
from kseg.ops.recover.report import LogDirReport
from kseg.ops.recover.run import recover_path
from kseg.recovery.loading import predict_log_dir
from kseg.render.recover import report_lines
from kseg.render.recover_logdir import log_dir_lines

SEGMENTS = {0: [(0, 3, 0), (3, 2, 1)], 5: [(5, 2, 1)], 7: [(7, 3, 2)]}
EPOCHS = [(0, 0), (1, 3), (2, 7)]


@pytest.fixture
def three(logdir, kit):
    segs = {base: [kit.batch(o, n, epoch=e) for o, n, e in specs] for base, specs in SEGMENTS.items()}
    return logdir.partition("t", 0, segs, epochs=EPOCHS)


def damage(path: Path, at: int = -3) -> None:
    data = bytearray(path.read_bytes())
    data[at] ^= 0xFF
    path.write_bytes(bytes(data))


def assert_loads_clean(out: Path) -> None:
    """The model on OUTDIR: every partition clean, no action that changes content (only the marker goes)."""
    pred = predict_log_dir(out)
    assert pred.error is None and pred.partitions
    assert [a.path for a in pred.actions] == [".kafka_cleanshutdown"]
    for part in pred.partitions:
        assert (part.outcome, part.error, part.lost_offsets) == ("clean", None, []), part.path
        assert [a for a in part.actions if a.changes_content] == [], part.path


def fates(report) -> list[tuple[str, str, int | None]]:
    return [(s.log.name[:20].lstrip("0") or "0", s.kafka.why, s.kafka.truncated_to) for s in report.segments]


@pytest.mark.parametrize("salvage", [False, True])
@pytest.mark.parametrize("clean", [True, False])
def test_missing_index_is_recovered_early_and_nothing_is_deleted(tmp_path, logdir, three, clean, salvage):
    """R3.4: whatever the shutdown, no later segment is deleted (kseg once said it was)."""
    damage(three.file(".log", 5))
    three.file(".index", 5).unlink()
    root = logdir.finish(clean=clean, recovery_points={("t", 0): 3})
    report = recover_path(root / "t-0", dry_run=True)
    assert report.deletion is None and report.prediction.deleted_segments == []
    assert fates(report)[1][1:] == (RECOVERS_NO_INDEX if clean else RECOVERS_UNCLEAN, 0)
    assert fates(report)[2][1] == (SKIPPED_CLEAN if clean else RECOVERS_UNCLEAN)
    out = tmp_path / "out"
    result = recover_path(root, out_dir=out, salvage=salvage)
    assert isinstance(result, LogDirReport)
    assert_loads_clean(out)


def test_a_cut_in_recover_log_deletes_the_later_segments(tmp_path, logdir, three):
    """R4.3: the .index is present, recoverLog cuts segment 5 and deletes segment 7; its bytes are counted."""
    damage(three.file(".log", 5))
    root = logdir.finish(clean=False, recovery_points={("t", 0): 3})
    report = recover_path(root, dry_run=True)
    [part] = report.partitions
    assert [f[1] for f in fates(part)] == [RECOVERS_UNCLEAN, RECOVERS_UNCLEAN, DELETED]
    assert part.deletion.after.name == "00000000000000000005.log"
    assert report.totals.kafka_deleted_segments == 1
    assert report.totals.kafka_deleted_bytes == three.file(".log", 7).stat().st_size
    text = [str(line) for line in log_dir_lines(report, 100)]
    assert text[-1].endswith(f"Kafka deletes 1 segment ({report.totals.kafka_deleted_bytes} bytes)")
    out = tmp_path / "out"
    recover_path(root, out_dir=out)
    assert_loads_clean(out)
    # by default OUTDIR is what Kafka keeps: no segment 7, and epoch 2 (which started at 7) is gone
    assert not (out / "t-0" / "00000000000000000007.log").exists()
    assert (out / "t-0" / "leader-epoch-checkpoint").read_text() == "0\n2\n0 0\n1 3\n"
    text = [str(line) for line in log_dir_lines(recover_path(root, out_dir=tmp_path / "again"), 100)]
    assert "  not written: Kafka deletes it at startup (--salvage keeps it)" in text
    # --salvage deletes nothing: segment 7 is in OUTDIR, and its epoch 2 is in the checkpoint Kafka reads
    salvaged = tmp_path / "salvaged"
    recover_path(root, out_dir=salvaged, salvage=True)
    assert_loads_clean(salvaged)
    assert (salvaged / "t-0" / "00000000000000000007.log").read_bytes() == three.segments[7]
    assert (salvaged / "t-0" / "leader-epoch-checkpoint").read_text() == "0\n3\n0 0\n1 3\n2 7\n"


def test_an_offset_below_base_makes_the_load_throw(tmp_path, logdir, kit):
    """R4.5: not "the broker splits the segment" -- IllegalArgumentException, the broker stops."""
    part = logdir.partition("t", 0, {0: [kit.batch(0, 3)], 10: [kit.batch(10, 2), kit.batch(4, 1)]})
    part.file(".index", 10).unlink()
    root = logdir.finish()
    report = recover_path(root / "t-0", dry_run=True)
    error = report.segments[1].kafka.error
    assert error is not None and error.exception == "java.lang.IllegalArgumentException"
    assert error.message.startswith("Split operation is only permitted for segments with overflow")
    lines = [str(line) for line in report_lines(report, 100)]
    assert any(line.startswith("Kafka's load of ") and line.endswith("the broker stops") for line in lines)
    assert not any("splits the segment" in line for line in lines)
    out = tmp_path / "out"
    recover_path(root, out_dir=out, salvage=True)
    assert_loads_clean(out)


def test_clean_shutdown_below_the_recovery_point_serves_the_damage(tmp_path, logdir, three):
    """R4.1: with .kafka_cleanshutdown Kafka recovers nothing that has its .index: the damaged bytes stay."""
    damage(three.file(".log", 5))
    root = logdir.finish()
    report = recover_path(root / "t-0", dry_run=True)
    assert report.segments[1].kafka.why == SKIPPED_CLEAN
    assert [str(line) for line in report_lines(report, 100)].count(
        "  Kafka: does not recover it at startup (clean shutdown marker present); it would serve the damaged "
        "bytes as they are until a read fails on them"
    ) == 1
    out = tmp_path / "out"
    recover_path(root, out_dir=out)
    assert_loads_clean(out)


def test_log_start_above_the_first_segment_and_several_partitions(tmp_path, logdir, three, kit):
    """R8.1/R7.5: the log start checkpoint is carried to OUTDIR; two partitions, totals over both."""
    other = logdir.partition("u", 1, {0: [kit.batch(0, 4, epoch=3)]}, epochs=[(3, 0)])
    damage(other.file(".log", 0))
    root = logdir.finish(clean=False, log_starts={("t", 0): 4})
    out = tmp_path / "out"
    report = recover_path(root, out_dir=out)
    assert [p.path.name for p in report.partitions] == ["t-0", "u-1"]
    assert (report.totals.partitions, report.totals.changed_partitions) == (2, 1)
    assert (out / "log-start-offset-checkpoint").read_text() == "0\n1\nt 0 4\n"
    assert (out / "recovery-point-offset-checkpoint").read_text() == "0\n2\nt 0 10\nu 1 0\n"
    assert (out / "t-0" / "leader-epoch-checkpoint").read_text() == "0\n2\n1 4\n2 7\n"
    assert_loads_clean(out)
    as_json = _lines(CliRunner().invoke(cli, ["recover", "--dry-run", "--format", "json", str(root)]).stdout)
    assert as_json[-1]["totals"]["partitions"] == 2 and as_json[0]["kafka_load"]["outcome"]
    assert [o["type"] for o in as_json] == ["partition", "partition", "summary"]


def test_a_producer_with_an_open_transaction_is_in_the_snapshot(tmp_path, logdir, kit):
    """OUTDIR's snapshot at the log end holds the open transaction (R6.3b loads it; nothing is replayed)."""
    from kseg.format.snapshot import read_snapshot

    txn = kit.batch(0, 2, producer_id=9, producer_epoch=1, base_sequence=0, is_transactional=True)
    logdir.partition("t", 0, {0: [txn, kit.batch(2, 1)]})
    root = logdir.finish(clean=False)
    out = tmp_path / "out"
    recover_path(root, out_dir=out)
    [entry] = read_snapshot((out / "t-0" / "00000000000000000003.snapshot").read_bytes()).entries
    assert (entry.producer_id, entry.epoch, entry.last_sequence, entry.current_txn_first_offset) == (9, 1, 1, 0)
    assert_loads_clean(out)


# -- --in-place while a broker holds the log directory's .lock -----------------------------------------

HOLDER = "import fcntl, sys, time\nf = open(sys.argv[1], 'r+')\nfcntl.lockf(f, fcntl.LOCK_EX)\nprint('locked', flush=True)\ntime.sleep(60)\n"


@pytest.fixture
def locked(logdir, three):
    """The log directory with its .lock held by a child process, as Kafka's FileLock (FileChannel.tryLock)."""
    root = logdir.finish()
    (root / ".lock").write_bytes(b"")
    child = subprocess.Popen([sys.executable, "-c", HOLDER, str(root / ".lock")], stdout=subprocess.PIPE, text=True)
    assert child.stdout is not None and child.stdout.readline() == "locked\n"
    yield root
    child.kill()
    child.wait(timeout=30)


@pytest.mark.parametrize("command", ["recover", "reindex"])
@pytest.mark.parametrize("target", ["logdir", "partition", "segment"])
def test_in_place_is_refused_while_the_lock_is_held(locked, command, target):
    path = {"logdir": locked, "partition": locked / "t-0", "segment": locked / "t-0" / "00000000000000000005.log"}
    if command == "reindex" and target == "segment":
        (locked / "t-0" / "00000000000000000005.index").write_bytes(b"\x00" * 8)
    before = {p.name: p.read_bytes() for p in (locked / "t-0").iterdir()}
    result = CliRunner().invoke(cli, [command, "--in-place", str(path[target])])
    assert result.exit_code == 2
    assert result.stderr.count("\n") == 1 and ".lock is locked by another process" in result.stderr
    assert {p.name: p.read_bytes() for p in (locked / "t-0").iterdir()} == before


def test_in_place_goes_ahead_once_the_lock_is_released(logdir, three):
    root = logdir.finish()
    (root / ".lock").write_bytes(b"")  # a stopped broker leaves the file, unlocked
    damage(three.file(".log", 7))
    result = CliRunner().invoke(cli, ["recover", "--in-place", str(root / "t-0")])
    assert result.exit_code == 1 and (root / "t-0" / "00000000000000000007.log.bak").exists()


def test_a_dry_run_says_what_the_default_output_writes(logdir, three):
    """--dry-run reports what -o writes by default: damage Kafka does not recover kept whole (R4.1); the
    verdict names the offsets it serves unreadable, exit 1."""
    damage(three.file(".log", 5))
    root = logdir.finish()
    result = CliRunner().invoke(cli, ["recover", "--dry-run", str(root)])
    assert result.exit_code == 1
    assert result.stdout.splitlines()[-1] == "verdict: error: the broker starts; damaged offsets served as they are"
    assert ("  dry run: would write 97 bytes, damage and all, as Kafka keeps it: it does not recover this "
            "segment; --salvage cuts it") in result.stdout.splitlines()
    as_json = _lines(CliRunner().invoke(cli, ["recover", "--dry-run", "--format", "json", str(root)]).stdout)
    assert [s["output_bytes"] for s in as_json[0]["segments"]] == [212, 97, 115]
    salvage = CliRunner().invoke(cli, ["recover", "--dry-run", "--salvage", str(root)])
    assert salvage.exit_code == 1 and "  dry run: would write 0 bytes" in salvage.stdout.splitlines()


def test_a_dry_run_of_an_unclean_cut_leaves_the_deleted_segment_out(logdir, three):
    """R4.3: the segment Kafka deletes is not written by the default -o: the dry run says so, exit 1."""
    damage(three.file(".log", 5))
    root = logdir.finish(clean=False, recovery_points={("t", 0): 3})
    result = CliRunner().invoke(cli, ["recover", "--dry-run", "--format", "json", str(root)])
    assert result.exit_code == 1
    [part] = [o for o in _lines(result.stdout) if o["type"] == "partition"]
    assert [(s["action"], s["cut"], s["output_bytes"]) for s in part["segments"]] == [
        ("dry-run", False, 212), ("dry-run", True, 0), ("not-written-kafka-deletes", True, 0)]


def test_a_name_of_the_log_directory_already_in_outdir_is_refused(tmp_path, logdir, three):
    """Everything recover does not model is carried over: an existing name in OUTDIR is refused up front."""
    root = logdir.finish()
    (root / "README").write_text("notes\n")  # not Kafka's: carried over as it is
    out = tmp_path / "out"
    out.mkdir()  # not a log directory (a meta.properties or a checkpoint there is refused before: paths.py)
    (out / "README").write_text("other\n")
    result = CliRunner().invoke(cli, ["recover", str(root), "-o", str(out)])
    assert result.exit_code == 2 and "README exists; refusing to replace it" in result.stderr
    assert sorted(p.name for p in out.iterdir()) == ["README"]


def _lines(stdout: str) -> list[dict]:
    """``recover --format json`` is JSON Lines: the partitions, then one summary."""
    return [json.loads(line) for line in stdout.splitlines()]
