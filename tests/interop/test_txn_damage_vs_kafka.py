"""``kseg txn``'s producer state after a torn marker and after a clean shutdown without snapshots, against Kafka.

Kafka 4.3.0 loads each log directory of ``tests/txn_damage_dirs.py`` (LoadLogDir: ``UnifiedLog.create`` as
``LogManager.loadLog`` calls it, on a copy kept with ``--work``), and the producer snapshot Kafka writes at
the new log end is read back: it holds exactly the producers Kafka's ``ProducerStateManager`` has after the
load.  kseg txn's producer lines for the same directory must hold the same entries:

* torn COMMIT: Kafka cuts the 75 bytes of the marker (``LogSegment.recover``), the log ends at 5, and its
  snapshot at 5 holds producer 7 with its transaction open from 0 -- the transaction kseg says the broker holds
  open, and whose abort it refuses to advise;
* clean shutdown without snapshots: Kafka writes empty snapshots and reads no producer from the log
  (``rebuildProducerState``, R6.3a) -- kseg says the broker will not see the open transaction.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from txn_damage_dirs import (
    COMMIT,
    DATA_BYTES,
    clean_without_snapshots,
    marker_in_deleted_segment,
    torn_marker,
)

from kseg.cli import cli
from kseg.format.snapshot import read_snapshot

pytestmark = pytest.mark.interop


def _kseg_producers(logdir: Path) -> list[tuple[int, int, int, int, int, int, int]]:
    result = CliRunner().invoke(cli, ["txn", "--now", "newest", "--format", "json", str(logdir)])
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    return [(p["producer_id"], p["producer_epoch"], p["last_sequence"], p["last_offset"], p["last_timestamp"],
             p["coordinator_epoch"], -1 if p["current_txn_first_offset"] is None else p["current_txn_first_offset"])
            for p in lines if p["type"] == "producer"]


def _kafka_producers(snapshot: Path) -> list[tuple[int, int, int, int, int, int, int]]:
    return [(e.producer_id, e.epoch, e.last_sequence, e.last_offset, e.timestamp, e.coordinator_epoch,
             e.current_txn_first_offset) for e in read_snapshot(snapshot.read_bytes()).entries]


def test_the_producer_state_kafka_loads_is_the_one_kseg_txn_reports(kafka_storage, tmp_path):
    torn = torn_marker(tmp_path, COMMIT, 75, "torn")
    clean = clean_without_snapshots(tmp_path, "clean")
    deleted = marker_in_deleted_segment(tmp_path, "deleted")
    work = tmp_path / "work"
    torn_lines, clean_lines, deleted_lines = kafka_storage.load(
        [torn, clean, deleted], "--no-kafka-log", "--no-stray-check", "--work", str(work))
    torn_part = next(p for p in torn_lines if p.get("type") != "logdir")
    assert (torn_part["outcome"], torn_part["truncated_bytes"], torn_part["log_end_offset"]) == ("truncated", 75, 5)
    assert (torn / "pay-0" / "00000000000000000000.log").stat().st_size == DATA_BYTES + 75
    torn_copy, clean_copy = work / "torn", work / "clean"
    kafka_torn = _kafka_producers(torn_copy / "pay-0" / "00000000000000000005.snapshot")
    assert kafka_torn == [(7, 0, 4, 4, 1_700_000_000_004, -1, 0)]  # open from 0: the COMMIT is gone
    assert _kseg_producers(torn) == kafka_torn

    clean_part = next(p for p in clean_lines if p.get("type") != "logdir")
    assert clean_part["log_end_offset"] == 5
    snapshots = sorted((clean_copy / "open-0").glob("*.snapshot"))
    assert [s.name for s in snapshots] == ["00000000000000000005.snapshot"]
    assert _kafka_producers(snapshots[0]) == []  # the log is not read: no producer, no open transaction
    assert _kseg_producers(clean) == []

    deleted_part = next(p for p in deleted_lines if p.get("type") != "logdir")
    assert (deleted_part["log_end_offset"], deleted_part["deleted_segments"]) == (5, [6])
    kafka_deleted = _kafka_producers(work / "deleted" / "pay-0" / "00000000000000000005.snapshot")
    assert kafka_deleted == [(7, 0, 4, 4, 1_700_000_000_004, -1, 0)]  # the COMMIT went with segment 6
    assert _kseg_producers(deleted) == kafka_deleted
