"""The cases the commands still disagreed on after the one verdict (docs/cli.md, "One verdict"): a damaged
``__consumer_offsets`` batch txn's coordinator reader refused, a partition directory given alone that
never got its log directory's ``-stray`` rule, and an open transaction a clean start without producer
snapshots serves as committed.  Each on a damaged log directory, with the exact headline
and exit code of every reading command (:func:`agreement.verdicts`) and the exact lines of the one that
differed.
"""

from __future__ import annotations

import json
import os
import shutil
import struct
import subprocess
import sys
from pathlib import Path

from agreement import verdicts
from click.testing import CliRunner
from logdirs import LogDir, batch
from test_facts import OK, SEGMENTS, _commit
from txn_damage_dirs import clean_without_snapshots

from kseg.cli import cli

_INTEROP = Path(__file__).resolve().parents[1] / "interop"
if str(_INTEROP) not in sys.path:
    sys.path.insert(0, str(_INTEROP))

COMMANDS = ("triage", "verify", "recover --dry-run", "txn", "spark verify")
GROUP_LOSS = "verdict: error: the broker starts; committed offsets lost; consumer group commits lost"
SERVED = "verdict: error: the broker starts; damaged offsets served as they are"
STRAY = "verdict: error: the broker starts; not served (renamed -stray)"


def _run(*args: str) -> tuple[int, list[str], str]:
    result = CliRunner().invoke(cli, list(args), env={"COLUMNS": "100", "NO_COLOR": "1"})
    return result.exit_code, result.stdout.splitlines(), result.stderr


def _offsets_log_dir(tmp_path: Path, clean: bool) -> Path:
    """``__consumer_offsets-0`` of three commits, byte 217 (the headers-count varint of the record in the
    batch at offset 1) flipped: the record cannot be parsed, the batch's CRC no longer matches."""
    logdir = LogDir(tmp_path / "d")
    part = logdir.partition("__consumer_offsets", 0, {0: [
        _commit(0, "g", "orders", 0, 5), _commit(1, "g", "orders", 0, 9), _commit(2, "h", "orders", 0, 3)]})
    log = part.file(".log")
    data = bytearray(log.read_bytes())
    assert len(data) == 327 and data[217] == 0  # 3 batches of 109 bytes; record headers count 0
    data[217] ^= 0xFF
    log.write_bytes(bytes(data))
    return logdir.finish(clean=clean, recovery_points={("__consumer_offsets", 0): 0})


def test_txn_cut_damaged_consumer_offsets_batch_agrees(tmp_path, monkeypatch):
    """Unclean start, recovery point 0: the start cuts at the damaged batch (R5.1); txn's coordinator replays
    what the start keeps and exits 1 with the others (it used to end: byte 217 (record[0]), exit 2)."""
    root = _offsets_log_dir(tmp_path, clean=False)
    assert verdicts(root) == dict.fromkeys(COMMANDS, (1, GROUP_LOSS))
    monkeypatch.chdir(tmp_path)
    code, lines, err = _run("txn", "d")
    assert (code, err) == (1, "")
    assert lines[2:] == [
        "",
        "PROBLEM d/__consumer_offsets-0: LSO 1, high watermark 1 (replication-offset-checkpoint says 3; lowered "
        "to the log end), log end 1, newest timestamp 1700000000000; 0 producers, no transactions",
        "  replication-offset-checkpoint says 3, beyond the log end: the broker lowers the high watermark to 1 "
        "(UnifiedLog.updateHighWatermark); offsets 1-2 replicated and not in this log",
        GROUP_LOSS]


def test_txn_served_damaged_consumer_offsets_batch_is_a_finding(tmp_path, monkeypatch):
    """Clean shutdown: the damaged batch is served as it is (R4.1); txn names it, skips it, goes on, and
    exits 1 with the others on the verdict's unreadable-served."""
    root = _offsets_log_dir(tmp_path, clean=True)
    assert verdicts(root) == dict.fromkeys(COMMANDS, (1, SERVED))
    monkeypatch.chdir(tmp_path)
    code, lines, err = _run("txn", "d")
    assert (code, err) == (1, "")
    assert lines[2] == ("damaged coordinator batch skipped (its records are not replayed): "
                        "d/__consumer_offsets-0/00000000000000000000.log byte 217 (record[0]): "
                        "Found invalid record structure")
    assert lines[-1] == SERVED
    code, lines, _ = _run("txn", "--format", "json", "d")
    summary = json.loads(lines[-1])
    assert (code, summary["coordinator_damaged"], summary["exit_code"]) == (1, [
        "d/__consumer_offsets-0/00000000000000000000.log byte 217 (record[0]): Found invalid record structure"], 1)


def _stray_partition(tmp_path: Path) -> Path:
    logdir = LogDir(tmp_path / "d")
    part = logdir.partition("t", 0, SEGMENTS, epochs=[(0, 0), (1, 3), (2, 7)])
    (part.path / "partition.metadata").unlink()
    logdir.finish()
    return part.path


def _alone(part: Path) -> dict[str, tuple[int, str | None]]:
    """Every command that takes a partition directory, given it alone (triage takes log directories only)."""
    got = verdicts(part)
    code, lines, err = _run("triage", str(part))
    assert (code, lines) == (2, []) and err.startswith(f"kseg: error: {part}: a partition directory; give the log "
                                                       "directory that holds it")
    del got["triage"]
    return got


def test_a_partition_directory_alone_gets_its_log_directorys_stray_rule(tmp_path, monkeypatch):
    """R1.5: the log directory above it renames it -stray; given alone or within it, one verdict."""
    part = _stray_partition(tmp_path)
    assert _alone(part) == {cmd: (1, STRAY) for cmd in COMMANDS if cmd != "triage"}
    assert verdicts(part.parent) == dict.fromkeys(COMMANDS, (1, STRAY))
    monkeypatch.chdir(tmp_path)
    code, lines, _ = _run("txn", "--format", "json", "d/t-0")
    facts = json.loads(lines[-1])["verdict"]["facts"]
    assert (code, facts) == (1, [{"kind": "not-served", "severity": "error", "where": "d/t-0", "offsets": [],
                                  "text": "renamed t-0.<uuid>-stray (no partition.metadata): none of its "
                                          "offsets 0-9 is served"}])


def test_a_partition_directory_outside_any_log_directory_is_not_renamed(tmp_path):
    """A copy whose parent holds no meta.properties and no offset checkpoint: no broker loads it there."""
    part = _stray_partition(tmp_path)
    copy = tmp_path / "elsewhere" / "t-0"
    shutil.copytree(part, copy)
    assert _alone(copy) == {cmd: (0, OK) for cmd in COMMANDS if cmd != "triage"}


UNCOMMITTED = "verdict: error: the broker starts; uncommitted records served as committed"


def test_an_open_transaction_after_a_clean_shutdown_without_snapshots_is_served_as_committed(tmp_path, monkeypatch):
    """R6.3a: no snapshot and a clean shutdown -- the start does not read the log for producer state, so
    producer 8's open transaction (offsets 0-2) is read by read_committed consumers as committed: exit 1
    from every command (txn used to say PROBLEM and exit 0)."""
    root = clean_without_snapshots(tmp_path)
    assert verdicts(root) == dict.fromkeys(COMMANDS, (1, UNCOMMITTED))
    monkeypatch.chdir(tmp_path)
    code, lines, _ = _run("triage", "--format", "json", "ld")
    assert (code, json.loads(lines[-1])["verdict"]["facts"]) == (1, [{
        "kind": "uncommitted-served", "severity": "error", "where": "ld/open-0", "offsets": [[0, 2]],
        "text": "read_committed consumers read as committed what never committed: producer 8 offsets 0-2 (an open "
                "transaction; after a clean shutdown without a .snapshot the start does not read the log for "
                "producer state, and a later marker completes nothing)"}])
    assert json.loads(lines[0])["next"] == [{
        "command": "kseg txn ld/open-0",
        "why": "the open transactions the start forgets (served as committed) and how to abort them"}]
    code, lines, _ = _run("triage", "ld")
    assert code == 1
    assert lines[-2:] == ["result: 1 partition serving uncommitted records as committed", UNCOMMITTED]
    assert any(line.strip().startswith("next: kseg txn ld/open-0") for line in lines)


def test_an_open_transaction_after_an_unclean_shutdown_is_not_a_fact(tmp_path):
    """The same directory without .kafka_cleanshutdown: the start replays the log (R6.3b) and holds the
    transaction open -- the LSO stays at 0, read_committed consumers wait (txn's own finding, exit 0: not
    hanging); nothing uncommitted is served as committed."""
    root = clean_without_snapshots(tmp_path)
    (root / ".kafka_cleanshutdown").unlink()
    assert verdicts(root) == dict.fromkeys(COMMANDS, (0, OK))
    code, lines, _ = _run("txn", "--now", "newest", str(root))
    assert code == 0
    assert lines[3] == (f"PROBLEM {root}/open-0: LSO 0, first unstable 0, high watermark 5 "
                        "(replication-offset-checkpoint), log end 5, newest timestamp 1700000000004; 1 producer, 1 open")


def _misdirected_index(tmp_path: Path) -> Path:
    """t-0: segment 0 holds offsets 0-39 (one 371-byte batch each, so its .index has entries for offsets 12 and
    24), segment 40 offsets 40-44; the .index entry for offset 12 is moved 7 bytes into its batch (position
    4,452 -> 4,459).  Clean shutdown: the start keeps the .index as it is (R3.3)."""
    logdir = LogDir(tmp_path / "d")
    part = logdir.partition("t", 0, {0: [batch(i, 1, size=300) for i in range(40)],
                                     40: [batch(40 + i, 1, size=300) for i in range(5)]})
    index = part.path / "00000000000000000000.index"
    data = bytearray(index.read_bytes())
    assert struct.unpack(">iiii", data[:16]) == (12, 4452, 24, 8904)
    data[:8] = struct.pack(">ii", 12, 4459)
    index.write_bytes(bytes(data))
    logdir.finish()
    return part.path


def test_a_misdirected_index_served_as_it_is_names_the_offsets_a_fetch_skips(tmp_path, monkeypatch):
    part = _misdirected_index(tmp_path)
    assert verdicts(part.parent) == dict.fromkeys(COMMANDS, (1, SERVED))
    monkeypatch.chdir(tmp_path)
    code, lines, _ = _run("triage", "d")
    assert code == 1
    assert ("clean      d/t-0  served as it is, unreadable for consumers and followers: 00000000000000000000.index "
            "offsets 12-23 (a fetch there skips to the next segment); log end 45") in lines
    assert any(line.strip().startswith("next: kseg verify --deep d/t-0") for line in lines)


def test_kafka_skips_the_offsets_a_misdirected_index_covers(tmp_path):
    """Kafka 4.3.0 itself: after a clean load, a fetch of 12-23 returns the next segment's batch at 40."""
    from kafka_storage import storage_or_skip
    from oracle import find_java

    storage = storage_or_skip()
    part = _misdirected_index(tmp_path)
    classes = tmp_path / "classes"
    javac = find_java()[1]
    source = Path(__file__).with_name("FetchAfterLoad.java")
    subprocess.run([javac, "--release", "17", "-nowarn", "-cp", storage.classpath, "-d", str(classes), str(source)],
                   check=True, capture_output=True)
    proc = subprocess.run([storage.java, "-cp", f"{classes}{os.pathsep}{storage.classpath}", "FetchAfterLoad",
                           str(part), "45"], capture_output=True, text=True, timeout=300, check=True)
    got = dict(line.split() for line in proc.stdout.splitlines())
    assert got == {str(o): str(40 if 12 <= o <= 23 else o) for o in range(45)}
