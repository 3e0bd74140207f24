"""Each fact of the one verdict (docs/cli.md, "One verdict"), on a damaged log directory: the exact
headline every command prints, triage's exact lines, and one exit code from triage, verify,
``recover --dry-run``, txn and spark verify (:func:`agreement.verdicts`).

The log directories are written by ``tests/logdirs.py`` as a clean shutdown leaves them (kseg's encoder
and index builder, whose bytes the interop tests prove equal to Kafka's), then damaged as each test says.
Which rule of docs/kafka-log-loading.md each fact rests on is proved against Kafka's code by the tests
named there; here the commands must state it alike.
"""

from __future__ import annotations

import json
import struct
import subprocess
import sys
from pathlib import Path

from agreement import verdicts
from click.testing import CliRunner
from logdirs import LogDir, batch, checkpoint

from kseg.cli import cli
from kseg.format import encode_batch
from kseg.format.model import RecordSpec

OK = "verdict: ok: the broker starts; nothing lost"
SEGMENTS = {0: [batch(0, 3, epoch=0), batch(3, 2, epoch=1)], 5: [batch(5, 2, epoch=1)], 7: [batch(7, 3, epoch=2)]}


def _logdir(tmp_path: Path) -> tuple[LogDir, Path]:
    logdir = LogDir(tmp_path / "d")
    part = logdir.partition("t", 0, SEGMENTS, epochs=[(0, 0), (1, 3), (2, 7)])
    return logdir, part.path


def _all_say(logdir: Path, code: int, headline: str) -> None:
    assert verdicts(logdir) == {cmd: (code, headline) for cmd in
                                ("triage", "verify", "recover --dry-run", "txn", "spark verify")}


def _triage(*args: str) -> tuple[int, list[str]]:
    result = CliRunner().invoke(cli, ["triage", *args], env={"COLUMNS": "100", "NO_COLOR": "1"})
    return result.exit_code, result.stdout.splitlines()


def test_a_healthy_log_directory(tmp_path):
    logdir, _ = _logdir(tmp_path)
    _all_say(logdir.finish(), 0, OK)


def test_no_partition_metadata_is_the_headline_not_nothing_lost(tmp_path, monkeypatch):
    """R1.5: a KRaft broker renames the directory -stray; none of its offsets is served (exit 1)."""
    logdir, part = _logdir(tmp_path)
    (part / "partition.metadata").unlink()
    root = logdir.finish()
    _all_say(root, 1, "verdict: error: the broker starts; not served (renamed -stray)")
    monkeypatch.chdir(tmp_path)
    code, lines = _triage("d")
    assert code == 1
    assert "clean      d/t-0  not served: renamed t-0.<uuid>-stray (no partition.metadata); no client reads it; " \
           "log end 10" in lines
    assert lines[-3:] == ["healthy: 0 partitions", "result: 1 partition not served (renamed -stray)",
                          "verdict: error: the broker starts; not served (renamed -stray)"]


def test_damage_served_as_it_is_names_the_offsets(tmp_path, monkeypatch):
    """R4.1: after a clean shutdown no segment is recovered: the flipped byte stays and is served."""
    logdir, part = _logdir(tmp_path)
    log = part / "00000000000000000000.log"
    data = bytearray(log.read_bytes())
    data[len(batch(0, 3)) + 70] ^= 0xFF  # inside the second batch (offsets 3-4): its CRC no longer matches
    log.write_bytes(bytes(data))
    root = logdir.finish()
    _all_say(root, 1, "verdict: error: the broker starts; damaged offsets served as they are")
    monkeypatch.chdir(tmp_path)
    code, lines = _triage("d")
    assert code == 1
    assert ("clean      d/t-0  served as it is, unreadable for consumers and followers: "
            "00000000000000000000.log offsets 3-4; log end 10") in lines
    facts = json.loads(_triage("--format", "json", "d")[1][-1])["verdict"]["facts"]
    assert facts == [{"kind": "unreadable-served", "severity": "error", "where": "d/t-0", "offsets": [[3, 4]],
                      "text": "served as it is, unreadable for consumers and followers: 00000000000000000000.log "
                              "offsets 3-4"}]


def test_a_zero_filled_tail_is_no_loss(tmp_path, monkeypatch):
    """R5.1: the unclean start recovers the active segment and cuts the zeros: no offset lost (exit 0)."""
    logdir, part = _logdir(tmp_path)
    log = part / "00000000000000000007.log"
    log.write_bytes(log.read_bytes() + bytes(4096))
    root = logdir.finish(clean=False)
    _all_say(root, 0, OK)
    monkeypatch.chdir(tmp_path)
    code, lines = _triage("d")
    assert code == 0
    assert ("truncated  d/t-0  4,096 bytes of zero-filled tail cut (no offset lost); log end 10; nothing lost"
            in lines)
    assert lines[-2:] == ["result: 4,096 bytes cut or deleted", OK]


def test_lost_offsets_without_a_high_watermark_say_so(tmp_path, monkeypatch):
    """A partition without a replication-offset-checkpoint entry: every lost offset may have been committed."""
    logdir, part = _logdir(tmp_path)
    log = part / "00000000000000000005.log"
    data = bytearray(log.read_bytes())
    data[-3] ^= 0xFF
    log.write_bytes(bytes(data))
    root = logdir.finish(clean=False, recovery_points={("t", 0): 0}, high_watermarks={})
    _all_say(root, 1, "verdict: error: the broker starts; committed offsets lost")
    monkeypatch.chdir(tmp_path)
    code, lines = _triage("d")
    assert lines[-2].startswith("result: lost 5 offsets (5 without a high watermark); ")


def test_a_live_lock_is_a_warning(tmp_path, monkeypatch):
    """A broker holds <log dir>/.lock (an fcntl write lock, as FileChannel.tryLock takes it)."""
    logdir, _ = _logdir(tmp_path)
    root = logdir.finish()
    (root / ".lock").write_bytes(b"")
    holder = subprocess.Popen([sys.executable, "-c", (
        "import fcntl, sys, time\n"
        f"f = open({str(root / '.lock')!r}, 'r+')\n"
        "fcntl.lockf(f, fcntl.LOCK_EX)\n"
        "print('held', flush=True)\n"
        "time.sleep(60)\n")], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"
        _all_say(root, 0, "verdict: warning: the broker starts; a running broker holds .lock")
        monkeypatch.chdir(tmp_path)
        facts = json.loads(_triage("--format", "json", "d")[1][-1])["verdict"]["facts"]
        assert facts == [{"kind": "broker-running", "severity": "warning", "where": "d", "offsets": [],
                          "text": "d/.lock is held by a live process (a running broker?): the files may change "
                                  "while read"}]
    finally:
        holder.kill()
        holder.wait()


def test_not_a_log_directory_is_refused(tmp_path):
    (tmp_path / "some-dir").mkdir()
    (tmp_path / "notes.txt").write_text("x")
    result = CliRunner().invoke(cli, ["triage", str(tmp_path)])
    assert (result.exit_code, result.stdout) == (2, "")
    assert result.stderr == (f"kseg: error: {tmp_path}: not a Kafka log directory (no meta.properties, no offset "
                             "checkpoint, no topic-partition directory)\n")


# -- the cases the commands used to disagree on: all exit 1 now ----------------------------------------------


def test_a_stale_active_index_loses_the_offsets_beyond_the_log_end(tmp_path):
    """R5.5: a clean start reads the log end off the active segment's last index entry: an entry left from a
    longer log (offset 107, no batch reaches it) makes it fall back to the base, and offsets 7-9 are never
    served."""
    logdir, part = _logdir(tmp_path)
    (part / "00000000000000000007.index").write_bytes(struct.pack(">ii", 100, 0))
    root = logdir.finish()
    _all_say(root, 1, "verdict: error: the broker starts; committed offsets lost")
    facts = json.loads(_triage("--format", "json", str(root))[1][-1])["verdict"]["facts"]
    assert [(f["kind"], f["offsets"]) for f in facts] == [("committed-lost", [[7, 9]])]


def test_a_malformed_epoch_cache_takes_the_log_dir_offline(tmp_path):
    """R7.8, R9.2: a leader-epoch-checkpoint with a wrong count: IOException, offline; one log dir: stops."""
    logdir, part = _logdir(tmp_path)
    (part / "leader-epoch-checkpoint").write_text("0\n5\n0 0\n")
    _all_say(logdir.finish(), 1, "verdict: error: the broker stops; a log directory goes offline")


def test_a_high_watermark_beyond_the_log_end(tmp_path):
    logdir, _ = _logdir(tmp_path)
    _all_say(logdir.finish(high_watermarks={("t", 0): 15}), 1,
             "verdict: error: the broker starts; committed offsets lost")


def test_a_log_start_beyond_the_log_end(tmp_path):
    """R8.2: every segment is deleted."""
    logdir, _ = _logdir(tmp_path)
    _all_say(logdir.finish(log_starts={("t", 0): 20}), 1, "verdict: error: the broker starts; committed offsets lost")


def test_a_checkpoint_entry_without_a_directory(tmp_path):
    logdir, _ = _logdir(tmp_path)
    root = logdir.finish()
    (root / "replication-offset-checkpoint").write_text(checkpoint([("gone", 0, 42), ("t", 0, 10)]))
    _all_say(root, 1, "verdict: error: the broker starts; a checkpointed partition has no directory")


def test_one_partition_in_two_log_directories_stops_the_broker(tmp_path):
    """R1.5: LogManager.loadLog's duplicate check; verify d1 d2 used to exit 0."""
    for name in ("d1", "d2"):
        logdir = LogDir(tmp_path / name)
        logdir.partition("t", 0, SEGMENTS)
        logdir.finish()
    dirs = [str(tmp_path / "d1"), str(tmp_path / "d2")]
    stops = "verdict: error: the broker stops"
    for command in (["triage"], ["verify"], ["txn"]):
        result = CliRunner().invoke(cli, [*command, "--format", "json", *dirs])
        summary = json.loads(result.stdout.splitlines()[-1])
        assert (result.exit_code, summary["verdict"]["headline"]) == (1, stops), command


def _commit(offset: int, group: str, topic: str, partition: int, committed: int) -> bytes:
    """One batch holding an OffsetCommitKey (type 1) and OffsetCommitValue v3 record (group-coordinator's
    OffsetCommitKey.json / OffsetCommitValue.json: group, topic, partition; offset, leader epoch, metadata,
    commit timestamp)."""
    def s16(text: str) -> bytes:
        return struct.pack(">h", len(text)) + text.encode()
    key = struct.pack(">h", 1) + s16(group) + s16(topic) + struct.pack(">i", partition)
    value = struct.pack(">hqi", 3, committed, -1) + s16("") + struct.pack(">q", 1_700_000_000_000)
    return encode_batch([RecordSpec(offset, 1_700_000_000_000 + offset, key, value)])


def test_lost_group_commits_name_the_groups_and_what_they_fall_back_to(tmp_path, monkeypatch):
    """An unclean start cuts __consumer_offsets-0 at a damaged batch (R5.1): the groups whose newest commit
    was behind the cut fall back to the commit before it, or to auto.offset.reset."""
    logdir = LogDir(tmp_path / "d")
    part = logdir.partition("__consumer_offsets", 0, {0: [
        _commit(0, "g", "orders", 0, 5), _commit(1, "g", "orders", 0, 9), _commit(2, "h", "orders", 0, 3)]})
    log = part.file(".log")
    data = bytearray(log.read_bytes())
    # the last byte of the commit timestamp in the batch at offset 1: the CRC no longer matches, the record parses
    data[len(_commit(0, "g", "orders", 0, 5)) + len(_commit(1, "g", "orders", 0, 9)) - 2] ^= 0xFF
    log.write_bytes(bytes(data))
    root = logdir.finish(clean=False, recovery_points={("__consumer_offsets", 0): 0})
    _all_say(root, 1, "verdict: error: the broker starts; committed offsets lost; consumer group commits lost")
    monkeypatch.chdir(tmp_path)
    facts = json.loads(_triage("--format", "json", "d")[1][-1])["verdict"]["facts"]
    assert facts[1] == {
        "kind": "group-commits-lost", "severity": "error", "where": "d/__consumer_offsets-0", "offsets": [],
        "text": "group 'g' orders-0: commit of offset 9 (record 1) lost; falls back to offset 5 (record 0): "
                "re-reads 4; group 'h' orders-0: commit of offset 3 (record 2) lost; no commit left: the "
                "consumers' auto.offset.reset decides"}


def test_offsets_behind_an_unreadable_size_field_are_counted_as_recover_finds_them(tmp_path, monkeypatch):
    """Kafka's iterator stops at a size field it cannot frame (LoadLogDir counts nothing behind it); the
    intact batches behind are lost all the same -- the same offsets ``recover --dry-run --salvage`` keeps."""
    logdir = LogDir(tmp_path / "d")
    part = logdir.partition("t", 0, {0: [batch(i, 1) for i in range(10)]})
    log = part.file(".log")
    data = bytearray(log.read_bytes())
    size = len(batch(0, 1))
    data[3 * size + 8 : 3 * size + 12] = b"\xff\xff\xff\xf0"  # batch 3's size field: -16
    log.write_bytes(bytes(data))
    logdir.finish(clean=False, recovery_points={("t", 0): 0})
    monkeypatch.chdir(tmp_path)
    code, lines = _triage("d")
    assert code == 1
    assert ("truncated  d/t-0  offsets 4-9 lost (6: 6 below the high watermark 10, 0 below the recovery point 0); "
            "553 bytes cut; log end 3, 7 below the high watermark 10") in lines
    salvage = CliRunner().invoke(cli, ["recover", "--dry-run", "--salvage", "d/t-0"]).stdout.splitlines()
    assert "  salvaged  [316, 790)       6 batches, 6 records, offsets 4-9" in salvage
    assert salvage[-1] == lines[-1] == "verdict: error: the broker starts; committed offsets lost"
