"""``kseg txn`` on damaged log directories: a torn marker, a clean shutdown without snapshots, a moved high watermark.

Each partition is written by ``tests/logdirs.py`` (kseg's encoder, byte-checked against Kafka's own record
classes in tests/interop) and then damaged as a crash leaves it:

* ``pay-0``: producer 7's transaction at offsets 0-4 (one transactional batch, 151 bytes), then its
  COMMIT (or ABORT) control batch at offset 5 (78 bytes), torn: only the first N bytes of the marker are on
  disk.  No ``.kafka_cleanshutdown``, no snapshot; the recovery point is 0, so the next start recovers the
  segment and cuts the torn batch (``LogSegment.recover``, R4.3); ``replication-offset-checkpoint`` says 6
  (the marker was replicated), so the broker lowers its high watermark to the new log end 5
  (``UnifiedLog.updateHighWatermark``).  The producer state it rebuilds from the log holds the transaction
  open: LSO 0.
* ``open-0``: producer 8's transaction at 0-2 with no marker, plain records 3-4, a **clean shutdown without
  any ``.snapshot``**: ``UnifiedLog.rebuildProducerState`` does not read the log (R6.3a), the broker has no
  producers, the LSO is the high watermark 5 and read_committed consumers read 0-2, which never committed.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from logdirs import LogDir, batch
from txn_damage_dirs import ABORT, COMMIT, clean_without_snapshots, marker_in_deleted_segment, torn_marker

from kseg.cli import cli

ENV = {"NO_COLOR": "1", "COLUMNS": "100"}


def run(root: Path, *args: str) -> Result:
    return CliRunner().invoke(cli, ["txn", *args], env=ENV, catch_exceptions=False)


@pytest.fixture(autouse=True)
def in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # paths print as ld/<partition>


HEAD = ("PROBLEM ld/pay-0: LSO 0, first unstable 0, high watermark 5 (replication-offset-checkpoint says 6; "
        "lowered to the log end), log end 5, newest timestamp 1700000000004; 1 producer, 1 {state}\n"
        "  replication-offset-checkpoint says 6, beyond the log end: the broker lowers the high watermark to 5 "
        "(UnifiedLog.updateHighWatermark); offset 5 replicated and not in this log\n"
        "  LSO 0 below the high watermark 5: read_committed consumers stop at 0, 5 offsets held back by the "
        "transaction from 0\n")
AFTER = ("After the start the broker holds the transaction open and pins the LSO at 0; a replica that has the "
         "marker gives it back when this broker follows it (the follower truncates to the leader's log and "
         "fetches the marker again); with none, nothing writes it again. ")
NOTE = "  note: replay stopped where batches no longer frame: ld/pay-0/00000000000000000000.log byte 151\n"
LOST = "verdict: error: the broker starts; committed offsets lost\n"  # offset 5 was replicated: docs/cli.md


def test_a_torn_commit_is_connected_with_its_transaction_and_never_aborted(tmp_path):
    torn_marker(tmp_path, COMMIT, 75)
    result = run(tmp_path, "--now", "1700000060004", "--transaction-max-timeout-ms", "1000", "ld")
    assert result.exit_code == 1  # find-hanging will list it once the broker runs: hanging
    assert result.stdout == (
        "kseg txn: 1 partition, 1 with problems; 1 transaction (1 hanging); 0 stuck groups\n"
        "transaction max timeout 1000 ms, measured against now 1700000060004 (2023-11-14T22:14:20.004Z); "
        "__transaction_state: 0 partitions, __consumer_offsets: 0 partitions\n\n"
        + HEAD.format(state="hanging")
        + "  hanging producer 7 epoch 0 offsets 0-4, idle 60000 ms: its COMMIT marker at offset 5 "
        "(ld/pay-0/00000000000000000000.log byte 151, 75 of its 78 bytes on disk) was written and is cut by the "
        "next start (a torn tail). " + AFTER + "Do not abort it: an ABORT would hide its records at offsets 0-4, "
        "which committed, from read_committed consumers; copy the partition from a replica that holds the "
        "marker; no __transaction_state in the paths given: the coordinator's side is unknown\n" + NOTE + LOST)
    assert "kafka-transactions.sh" not in result.stdout


def test_the_json_names_the_cut_marker_and_gives_no_abort_command(tmp_path):
    torn_marker(tmp_path, COMMIT, 75)
    lines = [json.loads(line) for line in run(tmp_path, "--now", "1700000060004", "--transaction-max-timeout-ms",
                                               "1000", "--format", "json", "ld").stdout.splitlines()]
    txn = next(line for line in lines if line["type"] == "transaction")
    assert (txn["state"], txn["abort_command"], txn["idle_ms"]) == ("hanging", None, 60000)
    assert txn["marker_cut"] == {"file": "ld/pay-0/00000000000000000000.log", "byte": 151, "bytes_on_disk": 75,
                                 "bytes_declared": 78, "offset": 5, "control": True, "producer_id": 7,
                                 "marker": "COMMIT"}
    part = lines[0]
    assert (part["problem"], part["high_watermark"], part["high_watermark_checkpoint"]) == (True, 5, 6)


@pytest.mark.parametrize(("kept", "what"), [
    (22, "the batch at offset 5 (ld/pay-0/00000000000000000000.log byte 151, 22 of its 78 bytes on disk) is cut "
         "by the next start (a torn tail) before its header says what it is: it may be this transaction's COMMIT"),
    (60, "a control batch of producer 7 at offset 5 (ld/pay-0/00000000000000000000.log byte 151, 60 of its 78 "
         "bytes on disk) is cut by the next start before its type (a torn tail): it may be this transaction's "
         "COMMIT"),
])
def test_a_marker_torn_before_its_type_may_be_a_commit(tmp_path, kept, what):
    torn_marker(tmp_path, COMMIT, kept)
    result = run(tmp_path, "--now", "1700000000004", "ld")  # idle 0 ms: open, not hanging
    assert result.exit_code == 1  # not hanging, but the next start's verdict: offset 5 was replicated
    assert result.stdout.split("\n\n", 1)[1] == (
        HEAD.format(state="open") + f"  open producer 7 epoch 0 offsets 0-4, idle 0 ms: {what}. " + AFTER
        + "Do not abort it before a replica shows what the batch was: were it a COMMIT, an ABORT would hide its "
        "records at offsets 0-4, which committed, from read_committed consumers; no __transaction_state in the "
        "paths given: the coordinator's side is unknown\n" + NOTE + LOST)


def test_a_torn_abort_may_be_written_again(tmp_path):
    torn_marker(tmp_path, ABORT, 75)
    result = run(tmp_path, "--now", "2023-11-14T22:14:20.004Z", "--transaction-max-timeout-ms", "1000", "ld")
    assert result.exit_code == 1
    detail = result.stdout.split(HEAD.format(state="hanging"), 1)[1]
    assert detail == (
        "  hanging producer 7 epoch 0 offsets 0-4, idle 60000 ms: its ABORT marker at offset 5 "
        "(ld/pay-0/00000000000000000000.log byte 151, 75 of its 78 bytes on disk) is cut by the next start (a "
        "torn tail): the broker holds the transaction open again; aborting it writes the ABORT that was lost; "
        "no __transaction_state in the paths given: the coordinator's side is unknown\n"
        "  $ kafka-transactions.sh --bootstrap-server BROKER:9092 abort --topic pay --partition 0 --start-offset 0\n"
        "  aborting it unblocks: the LSO moves from 0 to 6: read_committed consumers get 5 more offsets\n" + NOTE
        + LOST)


def test_a_clean_shutdown_without_snapshots_does_not_hide_an_open_transaction(tmp_path):
    clean_without_snapshots(tmp_path)
    result = run(tmp_path, "--now", "newest", "ld")
    assert result.exit_code == 1  # the verdict's uncommitted-served (docs/cli.md, "One verdict")
    assert result.stdout == (
        "kseg txn: 1 partition, 1 with problems; 1 transaction (1 open); 0 stuck groups\n"
        "transaction max timeout 900000 ms, measured against each partition's newest timestamp; "
        "__transaction_state: 0 partitions, __consumer_offsets: 0 partitions\n\n"
        "PROBLEM ld/open-0: LSO 5, high watermark 5 (replication-offset-checkpoint), log end 5, newest timestamp "
        "1700000000004; 0 producers, 1 open\n"
        "  open producer 8 epoch 0 offsets 0-2: open in the log, but the broker will not see it: after a clean "
        "shutdown without a .snapshot it does not read the log for producer state (UnifiedLog.rebuildProducerState "
        "takes it for an upgrade from an old message format), so the LSO is the high watermark and read_committed "
        "consumers read offsets 0-2, which never committed; a marker written later completes nothing "
        "(ProducerAppendInfo.appendEndTxnMarker: no transaction open), so even an ABORT leaves them readable. "
        "Removing .kafka_cleanshutdown before the start makes the broker replay the log and hold the "
        "transaction open\n"
        "  note: clean shutdown and no .snapshot: the broker does not read the log for producer state "
        "(UnifiedLog.rebuildProducerState), so it starts with no producers\n"
        "verdict: error: the broker starts; uncommitted records served as committed\n")


def test_a_high_watermark_beyond_the_log_end_is_reported_as_the_file_says(tmp_path):
    ld = LogDir(tmp_path / "ld")
    ld.partition("big", 0, {0: [batch(0, 4)], 4: [batch(4, 6)]})
    ld.finish(clean=True, high_watermarks={("big", 0): 15})
    result = run(tmp_path, "--now", "newest", "ld")
    assert (result.exit_code, result.stdout.split("\n\n", 1)[1]) == (1, (
        "PROBLEM ld/big-0: LSO 10, high watermark 10 (replication-offset-checkpoint says 15; lowered to the log "
        "end), log end 10, newest timestamp 1700000000009; 0 producers, no transactions\n"
        "  replication-offset-checkpoint says 15, beyond the log end: the broker lowers the high watermark to 10 "
        "(UnifiedLog.updateHighWatermark); offsets 10-14 replicated and not in this log\n"
        "  producer state loads from 00000000000000000010.snapshot\n"
        "verdict: error: the broker starts; committed offsets lost\n"))


@pytest.mark.parametrize(("now", "shown"), [
    ("1700000060004", "now 1700000060004 (2023-11-14T22:14:20.004Z)"),
    ("2023-11-14T22:14:20.004Z", "now 1700000060004 (2023-11-14T22:14:20.004Z)"),
    ("2023-11-14T22:14:20.004", "now 1700000060004 (2023-11-14T22:14:20.004Z)"),  # no zone: UTC
    ("2023-11-14T23:14:20.004+01:00", "now 1700000060004 (2023-11-14T22:14:20.004Z)"),
    ("newest", "each partition's newest timestamp"),
])
def test_now_takes_iso_8601_milliseconds_or_newest(tmp_path, now, shown):
    torn_marker(tmp_path, COMMIT, 75)
    result = run(tmp_path, "--now", now, "ld")
    assert result.stdout.splitlines()[1].startswith(f"transaction max timeout 900000 ms, measured against {shown};")


def test_now_defaults_to_the_wall_clock(tmp_path):
    torn_marker(tmp_path, COMMIT, 75)  # the transaction's last timestamp is in 2023: years idle by now
    result = run(tmp_path, "--format", "json", "ld")
    txn = next(json.loads(line) for line in result.stdout.splitlines() if '"transaction"' in line)
    assert (result.exit_code, txn["state"]) == (1, "hanging")
    assert txn["idle_ms"] > 3 * 365 * 86_400_000


def test_a_bad_now_is_a_usage_error(tmp_path):
    torn_marker(tmp_path, COMMIT, 75)
    result = run(tmp_path, "--now", "yesterday", "ld")
    assert (result.exit_code, result.stdout) == (2, "")
    assert result.stderr == ("kseg: error: Invalid value for '--now': 'yesterday' is not ISO-8601, milliseconds or "
                             "'newest' (see 'kseg txn --help')\n")


def test_a_commit_in_a_segment_the_start_deletes_is_found_there(tmp_path):
    """Damage in segment 0 (a flipped byte in the batch at offset 5) makes the start truncate there and
    delete segment 6, which holds producer 7's intact COMMIT: the transaction is open after the start."""
    marker_in_deleted_segment(tmp_path)
    result = run(tmp_path, "--now", "newest", "--format", "json", "ld")
    txn = next(json.loads(line) for line in result.stdout.splitlines() if '"transaction"' in line)
    assert (txn["state"], txn["first_offset"], txn["last_offset"], txn["abort_command"]) == ("open", 0, 4, None)
    assert txn["marker_cut"] == {"file": "ld/pay-0/00000000000000000006.log", "byte": 0, "bytes_on_disk": 78,
                                 "bytes_declared": 78, "offset": 6, "control": True, "producer_id": 7,
                                 "marker": "COMMIT"}
    assert txn["why"].startswith("its COMMIT marker at offset 6 (ld/pay-0/00000000000000000006.log byte 0) was "
                                 "written and is cut by the next start (in a later segment the start deletes "
                                 "after damage). ")
