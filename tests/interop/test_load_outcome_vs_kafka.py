"""The loading model's outcome and file-level prediction against Kafka 4.3.0's own load (LoadLogDir).

Every case is a log directory built as Kafka leaves it (tests/logdirs.py: Kafka's index rules, an empty
producer snapshot at the log end and -- ``base_snapshots`` -- at each roll) and then damaged the way its
kind needs.  All cases load in one JVM (``KafkaStorage.load``: a broker start of a copy, then
``UnifiedLog.close``); each test compares the model's partition with the line LoadLogDir printed for it,
field by field, and states what the case is about (docs/kafka-log-loading.md §13):

1. after an unclean shutdown Kafka recovers from the recovery point, but rewrites indexes, snapshots and the
   leader-epoch checkpoint to the bytes already there (or never reads damage below the recovery point):
   ``clean``, no file changes (R4.2, R4.8, R6.3, §13);
2. after a clean shutdown the close trims the active segment's odd-sized ``.index``/``.timeindex`` (R4.8);
3. ``lost_offsets`` is what Kafka's ``FileRecords`` iterator yielded before the load and not after: it stops
   at a header it cannot read, so the intact batches behind that header are counted apart, in kseg's
   ``lost_offsets_behind_damage``; batches beyond the log end Kafka computes stay on disk and are yielded
   after the load too, so they are kseg's ``unserved_offsets`` (R5.5);
4. ``files_created``/``files_changed``/``files_deleted``/``pending_async_deletes``, ``disposition`` and
   ``renamed_to`` (``topic-partition.<uuid>-stray``: Kafka's uuid is random).

Runs in about 15 s here (three JVMs: 26 log directories, then 6 with producers loaded twice).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from kafka_storage import KafkaStorage

from kseg.format import encode_batch
from kseg.format.model import RecordSpec
from kseg.recovery.loading import PartitionPrediction, predict_log_dir
from tests.logdirs import LogDir, Partition, batch, checkpoint
from tests.support import REPO

#: The fields of LoadLogDir's partition line the model answers, compared as they are.
FIELDS = ("outcome", "log_start_offset", "log_end_offset", "recovery_point", "number_of_segments",
          "leader_epochs", "truncated_bytes", "deleted_segments", "lost_offsets", "files_created",
          "files_changed", "files_deleted", "pending_async_deletes", "disposition")
UUID_STRAY = re.compile(r"^(?P<name>.+)\.[0-9a-f]{32}-stray$")
EPOCHS = [(0, 0), (1, 3), (2, 7)]


def _two_segments(ld: LogDir, topic: str = "t", *, metadata: bool = True) -> Partition:
    """Offsets 0..9 in segments 0 (0-2 epoch 0, 3-4 epoch 1) and 5 (5-6 epoch 1, 7-9 epoch 2)."""
    part = ld.partition(topic, 0, {0: [batch(0, 3), batch(3, 2, epoch=1)],
                                   5: [batch(5, 2, epoch=1), batch(7, 3, epoch=2)]},
                        epochs=EPOCHS, base_snapshots=True)
    if not metadata:
        (part.path / "partition.metadata").unlink()
    return part


def _patch(path: Path, at: int, data: bytes) -> None:
    raw = bytearray(path.read_bytes())
    raw[at : at + len(data)] = data
    path.write_bytes(bytes(raw))


def _second_batch(path: Path) -> int:
    """Byte position of the second batch of a .log."""
    return 12 + int.from_bytes(path.read_bytes()[8:12], "big")


def _unclean(rp: int) -> Callable[[LogDir, Partition], None]:
    def finish(ld: LogDir, part: Partition) -> None:
        ld.finish(clean=False, recovery_points={("t", 0): rp})
    return finish


# -- the cases: (kind, how the directory is damaged), what kseg alone says ----------------------------------


def unclean_rp_0(ld: LogDir, part: Partition) -> None:
    """Kind 1: every segment recovered from 0; indexes, snapshots and epochs come out byte for byte."""
    _unclean(0)(ld, part)


def unclean_rp_inside_last(ld: LogDir, part: Partition) -> None:
    """Kind 1: recovery starts at the segment holding rp 6 (R4.2)."""
    _unclean(6)(ld, part)


def unclean_rp_at_end(ld: LogDir, part: Partition) -> None:
    """Kind 1: rp = log end: the active segment is still recovered (R4.2)."""
    _unclean(10)(ld, part)


def unclean_damage_below_rp(ld: LogDir, part: Partition) -> None:
    """Kind 1: a CRC error in segment 0, below rp 6: Kafka never reads it."""
    _unclean(6)(ld, part)
    _patch(part.file(".log", 0), part.file(".log", 0).stat().st_size - 1, b"\xee")


def clean_active_index_odd(ld: LogDir, part: Partition) -> None:
    """Kind 2: 3 bytes after the active .index's entries: the close trims them (R4.8)."""
    ld.finish()
    with part.file(".index", 5).open("ab") as f:
        f.write(b"\x01\x02\x03")


def clean_active_timeindex_garbage(ld: LogDir, part: Partition) -> None:
    """Kind 2: 17 garbage bytes as the active .timeindex: trimmed to its one 12-byte "entry" (R4.8)."""
    ld.finish()
    part.file(".timeindex", 5).write_bytes(b"\xab" * 17)


def clean_inactive_index_odd(ld: LogDir, part: Partition) -> None:
    """Kind 2: an odd-sized .index of a segment a clean start never maps: untouched."""
    ld.finish()
    with part.file(".index", 0).open("ab") as f:
        f.write(b"\x01\x02\x03")


def clean_active_index_negative_slot(ld: LogDir, part: Partition) -> None:
    """Kind 2: the active .index is one garbage slot (negative offset and position) and 5 bytes: readNextOffset
    searches from Math.max(position, 0), so the log end stays 10 (R5.5); the close trims the 5 bytes (R4.8)."""
    ld.finish()
    part.file(".index", 5).write_bytes(bytes.fromhex("f2b9c512b8ec9800a2a635e5f0"))


def clean_stale_active_index(ld: LogDir, part: Partition) -> None:
    """Kind 3: R5.5: the last .index slot points past the data: log end 5, batches 5-9 stay on disk."""
    ld.finish()
    part.file(".index", 5).write_bytes(bytes.fromhex("0000000200001000"))


def unclean_size_below_14_in_active(ld: LogDir, part: Partition) -> None:
    """Kind 3: size 5 at batch 7-9 of segment 5: the iterator stops there; batch 7-9 itself is gone."""
    _unclean(0)(ld, part)
    _patch(part.file(".log", 5), _second_batch(part.file(".log", 5)) + 8, (5).to_bytes(4, "big"))


def unclean_size_past_end_then_intact(ld: LogDir, part: Partition) -> None:
    """Kind 3: batch 5-6's size runs past the file's end: Kafka's iterator yields nothing of segment 5,
    so lost_offsets is empty, though intact batch 7-9 behind it is cut (kseg: lost_offsets_behind_damage)."""
    _unclean(0)(ld, part)
    _patch(part.file(".log", 5), 8, (10**6).to_bytes(4, "big"))


def unclean_header_damage_first_segment(ld: LogDir, part: Partition) -> None:
    """Kind 3/4: size 5 at batch 3-4 of segment 0: cut there, segment 5 deleted (renamed .deleted)."""
    _unclean(0)(ld, part)
    _patch(part.file(".log", 0), _second_batch(part.file(".log", 0)) + 8, (5).to_bytes(4, "big"))


def unclean_magic_1_first_batch(ld: LogDir, part: Partition) -> None:
    """Kind 3: magic 1 and codec bits 5 in batch 0-2: recovery cuts segment 0 at byte 0 and deletes segment 5;
    Kafka's iterator throws on that batch's baseOffset() (CompressionType.forId(5)), so batch 3-4 behind it
    is not in lost_offsets (kseg: lost_offsets_behind_damage) while segment 5's batches are."""
    _unclean(0)(ld, part)
    _patch(part.file(".log", 0), 16, b"\x01\x05")


def unclean_crc_first_segment(ld: LogDir, part: Partition) -> None:
    """Kind 3/4: a CRC error in batch 3-4: the iterator still yields it, so it counts as lost."""
    _unclean(0)(ld, part)
    _patch(part.file(".log", 0), part.file(".log", 0).stat().st_size - 1, b"\xee")


def unclean_torn_tail(ld: LogDir, part: Partition) -> None:
    """Kind 3: half a batch after the last one: 30 bytes cut, no offset lost."""
    _unclean(10)(ld, part)
    with part.file(".log", 5).open("ab") as f:
        f.write(batch(10, 2, epoch=2)[:30])


def unclean_without_snapshots(ld: LogDir, part: Partition) -> None:
    """Kind 4: no producer snapshot at all: Kafka writes empty ones at the bases and the log end."""
    _unclean(0)(ld, part)
    for snapshot in part.path.glob("*.snapshot"):
        snapshot.unlink()


def unclean_log_start_beyond_cut(ld: LogDir, part: Partition) -> None:
    """Kind 4: log start 6, garbage after segment 0: recovery cuts it, deletes segment 5, then the log end 5 is
    below the log start: every segment goes, a new one starts at 6 (R4.3, R8.2). The recovery's temporary
    producer state moved its map end up to the log start (onLogStartOffsetIncremented), so it writes no
    snapshot, and the final one has its last snapshot at 6: no 6.snapshot either."""
    ld.finish(clean=False, recovery_points={("t", 0): 0}, log_starts={("t", 0): 6})
    with part.file(".log", 0).open("ab") as f:
        f.write(b"\x07" * 20)


def clean_log_start_beyond_end(ld: LogDir, part: Partition) -> None:
    """Kind 4: clean, log start 13 above the log end 10: every segment goes (R8.2) and the snapshot at base 5 is
    deleted outright, not renamed .snapshot.deleted (segments.values() is empty when the snapshots are marked);
    a clean start then writes an empty snapshot at 13 (R6.3a)."""
    ld.finish(log_starts={("t", 0): 13})


def clean_swap_same_bytes(ld: LogDir, part: Partition) -> None:
    """Kind 4: leftovers (R2.1) and a .log.swap holding segment 5's very bytes: it replaces 5.log (R2.3, R2.4),
    but no .log byte changes, so ``rebuilt``."""
    ld.finish()
    for name, data in (("00000000000000000003.log.deleted", b"x"), ("00000000000000000007.log.cleaned", b"x"),
                       ("00000000000000000008.log.swap", b"x")):
        (part.path / name).write_bytes(data)
    (part.path / "00000000000000000005.log.swap").write_bytes(part.file(".log", 5).read_bytes())


def clean_swap_shorter(ld: LogDir, part: Partition) -> None:
    """Kind 4: a .log.swap with only batch 5-6 replaces segment 5: ``truncated``, offsets 7-9 lost."""
    ld.finish()
    (part.path / "00000000000000000005.log.swap").write_bytes(batch(5, 2, epoch=1))


def clean_txnindex_negative_version(ld: LogDir, part: Partition) -> None:
    """Kind 4: a 36-byte garbage .txnindex whose version byte is 0xc0: AbortedTxn.version() is a signed byte (-64),
    not above 0, so no KafkaException; its last offset is below the base: CorruptIndexException, the segment is
    recovered at once (R3.3, R3.4) and the .txnindex goes (``rebuilt``)."""
    ld.finish()
    part.file(".txnindex", 5).write_bytes(bytes.fromhex(
        "c076a4ccb767fd79616c422286e99844f13fd7c1ef947917f82e84267ac00be344c51939"))


def fails_split_refused(ld: LogDir, part: Partition) -> None:
    """Kind 4 on a failing load: batch 4 after 7-9 in segment 5, whose .index is missing: recovered at once,
    the overflow split is refused (R3.4, R4.5). No close: the reset .timeindex stays preallocated (R4.8)."""
    ld.finish()
    part.file(".log", 5).write_bytes(batch(5, 2, epoch=1) + batch(7, 3, epoch=2) + batch(4, 1, epoch=2))
    part.file(".index", 5).unlink()


def clean_no_partition_metadata(ld: LogDir, part: Partition) -> None:
    """Kind 4: no topic id: renamed topic-partition.<uuid>-stray; no file changes, so ``clean``."""
    ld.finish()
    (part.path / "partition.metadata").unlink()


def _special(suffix: str) -> Callable[[LogDir, Partition], None]:
    def finish(ld: LogDir, part: Partition) -> None:
        ld.finish(clean=False, recovery_points={})
        with part.file(".timeindex", 5).open("ab") as f:  # trimmed at close only where the load maps it (R2.7, R4.8)
            f.write(b"\x01\x02\x03")
        part.path.rename(part.path.with_name(f"t-0.0123456789abcdef0123456789abcdef-{suffix}"))
    finish.__doc__ = f"Kind 4: a -{suffix} directory (R2.7, R1.5)."
    return finish


CASES: dict[str, Callable[[LogDir, Partition], None]] = {f.__name__: f for f in (
    unclean_rp_0, unclean_rp_inside_last, unclean_rp_at_end, unclean_damage_below_rp,
    clean_active_index_odd, clean_active_timeindex_garbage, clean_inactive_index_odd, clean_active_index_negative_slot,
    clean_stale_active_index,
    unclean_size_below_14_in_active, unclean_size_past_end_then_intact, unclean_header_damage_first_segment,
    unclean_magic_1_first_batch, unclean_crc_first_segment, unclean_torn_tail, unclean_without_snapshots,
    unclean_log_start_beyond_cut, clean_log_start_beyond_end, clean_swap_same_bytes, clean_swap_shorter,
    clean_txnindex_negative_version,
    fails_split_refused,
    clean_no_partition_metadata)}
CASES |= {f"{kind}_dir": _special(kind) for kind in ("delete", "future", "stray")}

#: What each case is about, as Kafka answers it (checked against LoadLogDir below, not only asserted).
EXPECT = {
    "unclean_rp_0": {"outcome": "clean", "files_changed": []},
    "unclean_rp_inside_last": {"outcome": "clean"},
    "unclean_rp_at_end": {"outcome": "clean"},
    "unclean_damage_below_rp": {"outcome": "clean"},
    "clean_active_index_odd": {"outcome": "rebuilt", "files_changed": ["00000000000000000005.index"]},
    "clean_active_timeindex_garbage": {"outcome": "rebuilt", "files_changed": ["00000000000000000005.timeindex"]},
    "clean_inactive_index_odd": {"outcome": "clean"},
    "clean_active_index_negative_slot": {"log_end_offset": 10, "files_changed": ["00000000000000000005.index"]},
    "clean_stale_active_index": {"log_end_offset": 5, "lost_offsets": []},
    "unclean_size_below_14_in_active": {"outcome": "truncated", "lost_offsets": []},
    "unclean_size_past_end_then_intact": {"outcome": "truncated", "lost_offsets": []},
    "unclean_header_damage_first_segment": {"deleted_segments": [5], "pending_async_deletes": [
        "00000000000000000005.index.deleted", "00000000000000000005.log.deleted",
        "00000000000000000005.timeindex.deleted"]},
    "unclean_magic_1_first_batch": {"outcome": "truncated", "lost_offsets": [[5, 9]], "deleted_segments": [5]},
    "unclean_crc_first_segment": {"lost_offsets": [[3, 9]]},
    "unclean_torn_tail": {"truncated_bytes": 30, "lost_offsets": []},
    "unclean_without_snapshots": {"files_created": ["00000000000000000005.snapshot",
                                                    "00000000000000000010.snapshot"]},
    "unclean_log_start_beyond_cut": {"files_created": [
        "00000000000000000006.index", "00000000000000000006.log", "00000000000000000006.timeindex"]},
    "clean_log_start_beyond_end": {"deleted_segments": [0, 5], "files_created": [
        "00000000000000000013.index", "00000000000000000013.log", "00000000000000000013.snapshot",
        "00000000000000000013.timeindex"], "pending_async_deletes": [
        "00000000000000000000.index.deleted", "00000000000000000000.log.deleted", "00000000000000000000.timeindex.deleted",
        "00000000000000000005.index.deleted", "00000000000000000005.log.deleted", "00000000000000000005.timeindex.deleted"]},
    "clean_swap_same_bytes": {"outcome": "rebuilt", "files_deleted": [  # the swap range takes 5.snapshot too (R2.3)
        "00000000000000000003.log.deleted", "00000000000000000005.log.swap", "00000000000000000005.snapshot",
        "00000000000000000007.log.cleaned", "00000000000000000008.log.swap"]},
    "clean_swap_shorter": {"outcome": "truncated", "lost_offsets": [[7, 9]], "deleted_segments": []},
    "clean_txnindex_negative_version": {"outcome": "rebuilt", "error": None},
    "fails_split_refused": {"outcome": "fails", "disposition": None, "files_created": ["00000000000000000005.index"],
                            "files_changed": ["00000000000000000005.timeindex"]},
    "clean_no_partition_metadata": {"outcome": "clean", "disposition": "renamed_stray"},
    "delete_dir": {"disposition": "pending_delete", "log_end_offset": 0, "lost_offsets": [],
                   "files_changed": ["leader-epoch-checkpoint"]},
    "future_dir": {"disposition": "future"},
    "stray_dir": {"disposition": "stray"},
}

#: kseg's own fields (Kafka has none): offsets behind an unreadable header, offsets beyond the log end.
KSEG_ONLY = {
    "clean_stale_active_index": {"unserved_offsets": [[5, 9]], "lost_offsets_behind_damage": []},
    "unclean_size_past_end_then_intact": {"lost_offsets_behind_damage": [[7, 9]], "unserved_offsets": []},
    "unclean_size_below_14_in_active": {"lost_offsets_behind_damage": [], "unserved_offsets": []},
    "unclean_crc_first_segment": {"lost_offsets_behind_damage": [], "unserved_offsets": []},
    "unclean_magic_1_first_batch": {"lost_offsets_behind_damage": [[3, 4]], "unserved_offsets": []},
}


@pytest.fixture(scope="module")
def loaded(tmp_path_factory: pytest.TempPathFactory, kafka_storage: KafkaStorage) -> dict[str, tuple[dict, Path]]:
    """Per case: LoadLogDir's partition line and the log directory (built once, loaded in one JVM)."""
    root = tmp_path_factory.mktemp("load-outcome")
    dirs = []
    for name, damage in CASES.items():
        ld = LogDir(root / name)
        damage(ld, _two_segments(ld))
        dirs.append(ld.path)
    results = kafka_storage.load(dirs, "--no-kafka-log", "--no-files")
    found = {}
    for name, path, lines in zip(CASES, dirs, results, strict=True):
        [line] = [o for o in lines if o["type"] == "partition"]
        found[name] = (line, path)
    return found


def _model(path: Path) -> PartitionPrediction:
    [part] = predict_log_dir(path).partitions
    return part


def _renamed(value: str | None) -> str | None:
    """Kafka's random uuid replaced by kseg's placeholder."""
    match = UUID_STRAY.match(value or "")
    return f"{match.group('name')}.<uuid>-stray" if match else value


@pytest.mark.parametrize("case", list(CASES))
def test_model_equals_kafka(case: str, loaded: dict[str, tuple[dict, Path]]) -> None:
    kafka, path = loaded[case]
    mine = _model(path).as_json()
    assert {f: mine[f] for f in FIELDS} == {f: kafka[f] for f in FIELDS}
    assert mine["renamed_to"] == _renamed(kafka["renamed_to"])
    assert (mine["error"] and mine["error"]["exception"]) == (kafka["error"] and kafka["error"]["exception"])
    assert {k: kafka[k] for k in EXPECT[case]} == EXPECT[case]  # the point of the case, on Kafka's side
    for key, value in KSEG_ONLY.get(case, {}).items():
        assert mine[key] == value


def test_triage_json_carries_the_prediction(tmp_path: Path, loaded: dict[str, tuple[dict, Path]]) -> None:
    """``kseg triage --format json``: the same fields, per partition, as LoadLogDir's, on the damaged cases."""
    cases = ["unclean_rp_0", "clean_active_index_odd", "unclean_header_damage_first_segment",
             "clean_no_partition_metadata"]
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    for case in cases:
        kafka, path = loaded[case]
        proc = subprocess.run([sys.executable, "-m", "kseg", "triage", "--format", "json", str(path)],
                              capture_output=True, text=True, env=env, check=False)
        [part] = [json.loads(line) for line in proc.stdout.splitlines() if '"partition"' in line[:30]]
        summary = json.loads(proc.stdout.splitlines()[-1])
        # the one verdict (docs/cli.md): offsets Kafka lost, or a -stray rename, exit 1; a cut tail alone does not
        assert proc.returncode == summary["verdict"]["exit_code"], proc.stderr
        if kafka["lost_offsets"] or kafka["renamed_to"]:
            assert proc.returncode == 1, case
        assert {f: part[f] for f in FIELDS} == {f: kafka[f] for f in FIELDS}
        assert part["renamed_to"] == _renamed(kafka["renamed_to"])


# -- producer snapshots with producers: Kafka writes them, then the model must predict Kafka's rewrite ----------

#: Recent timestamps: producer.id.expiration.ms (1 day, by the wall clock) keeps these producers; OLD drops them.
NOW = int(time.time() * 1000) - 60_000
OLD = 1_700_000_000_000


def _producer(offset: int, count: int, pid: int, pepoch: int, seq: int, txn: bool = False, ts: int = NOW) -> bytes:
    records = [RecordSpec(offset + i, ts + i, b"k", b"v" * 10) for i in range(count)]
    return encode_batch(records, producer_id=pid, producer_epoch=pepoch, base_sequence=seq, is_transactional=txn,
                        partition_leader_epoch=0)


def _marker(offset: int, pid: int, pepoch: int, commit: bool, coordinator_epoch: int = 3) -> bytes:
    key = b"\x00\x00\x00\x01" if commit else b"\x00\x00\x00\x00"
    value = b"\x00\x00" + coordinator_epoch.to_bytes(4, "big")
    return encode_batch([RecordSpec(offset, NOW + 500, key, value)], producer_id=pid, producer_epoch=pepoch,
                        is_transactional=True, is_control=True, partition_leader_epoch=0)


#: Segments per case.  colliding: producer ids 1, 17, 33, 49 share a HashMap bucket (the snapshot keeps their
#: insertion order), a committed and an aborted transaction, an epoch bump; many: 22 producers, so the map
#: grows from 16 to 32 buckets (the order changes); open_txn: a transaction still open at the log end.
PRODUCER_CASES: dict[str, dict[int, list[bytes]]] = {
    "one_idempotent": {0: [_producer(0, 3, 1000, 0, 0), _producer(3, 2, 1000, 0, 3)],
                       5: [_producer(5, 2, 1000, 0, 5), _producer(7, 3, 1000, 0, 7)]},
    "one_idempotent_expired": {0: [_producer(0, 3, 1000, 0, 0, ts=OLD), _producer(3, 2, 1000, 0, 3, ts=OLD)],
                               5: [_producer(5, 2, 1000, 0, 5, ts=OLD), _producer(7, 3, 1000, 0, 7, ts=OLD)]},
    "colliding": {0: [_producer(0, 1, 17, 0, 0), _producer(1, 1, 1, 0, 0), _producer(2, 2, 33, 2, 0, txn=True),
                      _producer(4, 1, 5, 0, 0)],
                  5: [_marker(5, 33, 2, True), _producer(6, 1, 1, 1, 0), _producer(7, 1, 49, 0, 0, txn=True),
                      _marker(8, 49, 1, False), _producer(9, 1, 17, 0, 1)]},
    "many": {0: [_producer(i, 1, 100 + 17 * i, 0, 0) for i in range(10)],
             10: [_producer(10 + i, 1, 300 + 7 * i, 0, 0) for i in range(12)]},
    "open_txn": {0: [_producer(0, 2, 7, 0, 0), _producer(2, 2, 8, 0, 0, txn=True)], 4: [_producer(4, 1, 7, 0, 2)]},
    "replayed_bucket": {0: [_producer(0, 4, 19, 0, 0, txn=True), batch(4, 4), _producer(8, 4, 3, 0, 0)],
                        12: [batch(12, 2)]},
}
#: How each directory Kafka left is started again: a recovery point (unclean) or the clean-shutdown marker;
#: torn_first: unclean from 0 with 2 bytes after segment 0's last batch -- recovery cuts them and deletes every
#: later segment with its snapshot, so the final rebuild replays segment 0 from the records (R6.3b): producers
#: 19 and 3 share a bucket and come out last-seen-first (R6.8).  clean_odd_index_0 / clean_zeroed_0: clean, with 3
#: bytes after segment 0's .index entries / segment 0's .log zeroed: a transaction still open makes UnifiedLog's
#: constructor read the log at its first offset (R6.7), which maps segment 0's .index (trimmed at close, R4.8) and,
#: over zeros, throws CorruptRecordException; without one, a clean start never reads segment 0.
STARTS = {"unclean_rp_0": 0, "unclean_rp_5": 5, "unclean_rp_end": 1 << 40, "clean": None, "torn_first": 0,
          "clean_odd_index_0": None, "clean_zeroed_0": None}


@pytest.fixture(scope="module")
def producer_loads(tmp_path_factory: pytest.TempPathFactory,
                   kafka_storage: KafkaStorage) -> dict[str, tuple[dict, Path]]:
    """Kafka loads each raw directory (no snapshot: it writes them, LoadLogDir --work keeps the result); each
    result is then started again per STARTS, in one more JVM.  Keys: ``<case>/first`` and ``<case>/<start>``."""
    root = tmp_path_factory.mktemp("load-producers")
    raw = []
    for name, segments in PRODUCER_CASES.items():
        ld = LogDir(root / "raw" / name)
        ld.partition("t", 0, segments, epochs=[(0, 0)], snapshot=False)
        ld.finish(clean=False, recovery_points={})
        raw.append(ld.path)
    first = kafka_storage.load(raw, "--no-kafka-log", "--no-files", "--work", str(root / "kafka"))
    again = []
    for name in PRODUCER_CASES:
        for start, rp in STARTS.items():
            target = root / f"{name}-{start}"
            shutil.copytree(root / "kafka" / name, target)
            if rp is None:
                (target / ".kafka_cleanshutdown").write_text('{"version":0,"brokerEpoch":5}')
            else:
                (target / "recovery-point-offset-checkpoint").write_text(checkpoint([("t", 0, rp)]))
            first_log = target / "t-0" / "00000000000000000000.log"
            if start == "torn_first":
                with first_log.open("ab") as f:
                    f.write(b"\x01\x02")
            elif start == "clean_odd_index_0":
                with first_log.with_suffix(".index").open("ab") as f:
                    f.write(b"\x01\x02\x03")
            elif start == "clean_zeroed_0":
                first_log.write_bytes(bytes(first_log.stat().st_size))
            again.append((f"{name}/{start}", target))
    second = kafka_storage.load([p for _, p in again], "--no-kafka-log", "--no-files")
    found = {}
    for name, path, lines in zip(PRODUCER_CASES, raw, first, strict=True):
        found[f"{name}/first"] = ([o for o in lines if o["type"] == "partition"][0], path)
    for (key, path), lines in zip(again, second, strict=True):
        found[key] = ([o for o in lines if o["type"] == "partition"][0], path)
    return found


@pytest.mark.parametrize("start", ["first", *STARTS])
@pytest.mark.parametrize("case", list(PRODUCER_CASES))
def test_producer_snapshots_equal_kafka(case: str, start: str, producer_loads: dict[str, tuple[dict, Path]]) -> None:
    """Kind 1 with producers: the snapshots Kafka rewrites hold the same entries in the same (HashMap) order, so
    a restart of what Kafka left changes no file; the first load creates them (``rebuilt``)."""
    kafka, path = producer_loads[f"{case}/{start}"]
    mine = _model(path).as_json()
    assert {f: mine[f] for f in FIELDS} == {f: kafka[f] for f in FIELDS}
    if start == "torn_first":
        assert kafka["outcome"] == "truncated" and kafka["truncated_bytes"] == 2
        return
    if start.startswith("clean_") and start != "clean":
        reads = case in ("open_txn", "replayed_bucket")  # a transaction open at the log end, in segment 0
        failed = {"clean_odd_index_0": None, "clean_zeroed_0": "org.apache.kafka.common.errors.CorruptRecordException"}
        assert (kafka["error"] and kafka["error"]["exception"]) == (failed[start] if reads else None)
        assert (mine["error"] and mine["error"]["exception"]) == (kafka["error"] and kafka["error"]["exception"])
        if start == "clean_odd_index_0":
            assert kafka["files_changed"] == (["00000000000000000000.index"] if reads else [])
        return
    expected = "rebuilt" if start == "first" else "clean"
    assert (kafka["outcome"], kafka["files_changed"]) == (expected, [])


def test_real_kafka_log_dir_equals_kafka(kafka_storage: KafkaStorage) -> None:
    """fixtures/real/kafka-logs (fixtures/real/PROVENANCE.md): written by real brokers, no checkpoints and no
    partition.metadata -- every partition is recovered from 0 (idempotent producers' snapshots rewritten to the
    same bytes) and renamed -stray."""
    logdir = REPO / "fixtures" / "real" / "kafka-logs"
    [lines] = kafka_storage.load([logdir], "--no-kafka-log", "--no-files")
    kafka = {o["dir"]: o for o in lines if o["type"] == "partition"}
    mine = {Path(p.path).name: p.as_json() for p in predict_log_dir(logdir).partitions}
    assert sorted(mine) == sorted(kafka) == ["__consumer_offsets-12", "foo-0", "nikhilDemo-0", "some-topic-0"]
    for name, line in kafka.items():
        assert {f: mine[name][f] for f in FIELDS} == {f: line[f] for f in FIELDS}, name
        assert mine[name]["renamed_to"] == _renamed(line["renamed_to"])
    assert kafka["nikhilDemo-0"]["files_changed"] == [] and kafka["nikhilDemo-0"]["outcome"] == "rebuilt"
