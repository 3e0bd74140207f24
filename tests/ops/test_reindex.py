"""Rebuilding indexes the way LogSegment.recover does (reference §3.6-3.8, §4.2).

Each rule is shown on a hand-built segment whose batch positions are known,
and the expected index files are written out as bytes, entry by entry.
"""

from __future__ import annotations

import hashlib
import os
import stat
import struct
from datetime import datetime, timezone
from pathlib import Path

import pytest

from kseg.format import RecordSpec, encode_batch
from kseg.format.control import ABORT, COMMIT, encode_control_key, encode_end_txn_marker
from kseg.index import AbortedTxn, OffsetEntry, TimeEntry, encode_txn_index
from kseg.ops.reindex.run import (
    CREATED,
    KEPT,
    NOT_WRITTEN,
    REPLACED,
    SKIPPED,
    UNCHANGED,
    ReindexRefused,
    backup_path,
    reindex_paths,
    reindex_segment,
)
from kseg.recovery.index_compare import compare_index
from kseg.recovery.indexes import build_indexes
from kseg.recovery.producer_state import TxnTracker, replay_producer_state
from kseg.recovery.stops import (
    STOP_BAD_SIZE,
    STOP_CORRUPT,
    STOP_END,
    STOP_FAILED,
    STOP_INVALID_RECORD,
    STOP_PARTIAL,
    STOP_SHORT_TAIL,
)

TS = 1_700_000_000_000
LOG = "00000000000000000000.log"


def idx(*entries: tuple[int, int]) -> bytes:
    """Offset-index bytes: (relative offset, position) per 8-byte entry."""
    return b"".join(struct.pack(">ii", rel, pos) for rel, pos in entries)


def tidx(*entries: tuple[int, int]) -> bytes:
    """Time-index bytes: (timestamp, relative offset) per 12-byte entry."""
    return b"".join(struct.pack(">qi", ts, rel) for ts, rel in entries)


def batch(offset: int, timestamp: int = TS, value: int = 10, count: int = 1, **kw: object) -> bytes:
    records = [RecordSpec(offset + i, timestamp, None, b"v" * value) for i in range(count)]
    return encode_batch(records, **kw)


def sized(offset: int, timestamp: int, size: int) -> bytes:
    """A one-record V2 batch of exactly ``size`` bytes."""
    for value in range(max(0, size - 80), size):  # 61 header bytes + a few varints around the value
        data = batch(offset, timestamp, value)
        if len(data) == size:
            return data
        if len(data) > size:
            break
    raise AssertionError(f"no batch of exactly {size} bytes")


def txn_batch(offset: int, pid: int, count: int = 1, transactional: bool = True) -> bytes:
    records = [RecordSpec(offset + i, TS, b"k", b"v") for i in range(count)]
    return encode_batch(records, producer_id=pid, producer_epoch=0, base_sequence=0, is_transactional=transactional)


def marker(offset: int, pid: int, kind: int = ABORT, key: bytes | None = None, value: bytes | None = None) -> bytes:
    record = RecordSpec(
        offset,
        TS,
        encode_control_key(kind) if key is None else key,
        encode_end_txn_marker(5) if value is None else value,
    )
    return encode_batch([record], producer_id=pid, producer_epoch=0, is_transactional=True, is_control=True)


def positions(parts: list[bytes]) -> list[int]:
    out, pos = [], 0
    for part in parts:
        out.append(pos)
        pos += len(part)
    return out


# -- the offset index -----------------------------------------------------------


def test_the_first_batch_is_never_indexed_and_the_final_time_entry_is_added():
    build = build_indexes(sized(0, TS + 5, 6000), 0)
    assert build.offset_index == b""
    assert build.time_index == tidx((TS + 5, 0))  # only the entry a clean close writes
    assert (build.batches, build.valid_bytes, build.stop) == (1, 6000, STOP_END)


def test_an_entry_needs_strictly_more_than_the_interval_since_the_last_indexed_batch():
    parts = [sized(0, TS, 4096), sized(1, TS + 1, 100), sized(2, TS + 2, 100)]
    build = build_indexes(b"".join(parts), 0)
    # batch 1 starts exactly 4096 bytes in: 4096 > 4096 is false; batch 2 at 4196 is indexed
    assert build.offset_index == idx((2, 4196))
    assert build.time_index == tidx((TS + 2, 2))
    lower = build_indexes(b"".join(parts), 0, index_interval_bytes=4095)
    assert lower.offset_index == idx((1, 4096))  # then 4196 - 4096 = 100 is not > 4095
    assert lower.time_index == tidx((TS + 1, 1), (TS + 2, 2))


def test_the_distance_counts_from_the_last_indexed_batch_not_from_the_start():
    parts = [sized(i, TS + i, 1000) for i in range(12)]
    build = build_indexes(b"".join(parts), 0, index_interval_bytes=2500)
    # indexed at 3000 (3000 - 0 > 2500), then 6000 (6000 - 3000 > 2500), then 9000
    assert build.offset_index == idx((3, 3000), (6, 6000), (9, 9000))
    assert build.time_index == tidx((TS + 3, 3), (TS + 6, 6), (TS + 9, 9), (TS + 11, 11))


def test_entries_hold_the_batch_last_offset_relative_to_the_base_offset():
    parts = [batch(1000, TS, count=3), batch(1003, TS + 1, count=4), batch(1007, TS + 2, count=2)]
    build = build_indexes(b"".join(parts), 1000, index_interval_bytes=0)
    pos = positions(parts)
    assert build.offset_index == idx((6, pos[1]), (8, pos[2]))
    assert build.offset_entries == (OffsetEntry(1006, pos[1]), OffsetEntry(1008, pos[2]))
    assert build.time_index == tidx((TS + 1, 6), (TS + 2, 8))


def test_interval_zero_indexes_every_batch_but_the_first():
    parts = [batch(i, TS + i) for i in range(5)]
    build = build_indexes(b"".join(parts), 0, index_interval_bytes=0)
    pos = positions(parts)
    assert build.offset_index == idx(*[(i, pos[i]) for i in range(1, 5)])


# -- the time index -----------------------------------------------------------------


def test_ties_keep_the_earliest_batch_holding_the_max_timestamp():
    stamps = [TS + 10, TS + 20, TS + 20, TS + 15, TS + 5]
    parts = [sized(i, stamps[i], 1500) for i in range(5)]
    build = build_indexes(b"".join(parts), 0, index_interval_bytes=4000)
    # the only index point is batch 3 (4500 > 4000); the max (TS+20) was first reached by batch 1
    assert build.offset_index == idx((3, 4500))
    assert build.time_index == tidx((TS + 20, 1))


def test_no_time_entry_when_the_max_timestamp_did_not_grow():
    stamps = [TS + 50, TS + 10, TS + 20, TS + 30]
    parts = [sized(i, stamps[i], 1000) for i in range(4)]
    build = build_indexes(b"".join(parts), 0, index_interval_bytes=500)
    assert build.offset_index == idx((1, 1000), (2, 2000), (3, 3000))
    assert build.time_index == tidx((TS + 50, 0))  # appended once, at the first index point


def test_magic_0_data_gives_an_empty_time_index():
    parts = [batch(i, -1, value=200, magic=0) for i in range(40)]
    build = build_indexes(b"".join(parts), 0)
    pos = positions(parts)
    assert build.time_index == b""
    first = next(i for i, p in enumerate(pos) if p > 4096)
    assert build.offset_entries[0] == OffsetEntry(first, pos[first])


def test_log_append_time_batches_are_indexed_by_their_batch_max_timestamp():
    stamped = TS + 999
    parts = [
        batch(0, TS, value=3000),
        encode_batch(
            [RecordSpec(1, TS + 1, None, b"x" * 3000), RecordSpec(2, TS + 2, None, b"y")],
            timestamp_type="LogAppendTime",
            log_append_time=stamped,
        ),
        batch(3, TS + 3, value=3000),
    ]
    build = build_indexes(b"".join(parts), 0)
    pos = positions(parts)
    assert build.offset_index == idx((3, pos[2]))
    assert build.time_index == tidx((stamped, 2))


def test_legacy_wrappers_are_taken_by_their_shallow_offset_and_timestamp():
    def wrapper(first: int, stamps: list[int]) -> bytes:
        records = [RecordSpec(first + i, ts, None, os.urandom(800)) for i, ts in enumerate(stamps)]
        return encode_batch(records, magic=1, codec="gzip")

    parts = [wrapper(0, [TS + 5, TS + 30, TS + 10]), wrapper(3, [TS + 1, TS + 2, TS + 3]), wrapper(6, [TS + 40, TS, TS])]
    build = build_indexes(b"".join(parts), 0, index_interval_bytes=0)
    pos = positions(parts)
    # wrapper offset = last inner offset, wrapper timestamp = max inner timestamp
    assert build.offset_index == idx((5, pos[1]), (8, pos[2]))
    assert build.time_index == tidx((TS + 30, 2), (TS + 40, 8))


def test_legacy_log_append_time_wrapper_uses_the_wrapper_timestamp():
    records = [RecordSpec(i, TS + i, None, b"v" * 10) for i in range(3)]
    data = encode_batch(records, magic=1, codec="gzip", timestamp_type="LogAppendTime", log_append_time=TS + 77)
    assert build_indexes(data, 0).time_index == tidx((TS + 77, 2))


# -- where recovery stops --------------------------------------------------------


def _three() -> tuple[list[bytes], list[int]]:
    parts = [sized(0, TS, 3000), sized(1, TS + 1, 3000), sized(2, TS + 2, 3000)]
    return parts, positions(parts)


def test_a_partial_trailing_batch_is_left_out():
    parts, pos = _three()
    data = b"".join(parts)[:-10]
    build = build_indexes(data, 0)
    assert (build.valid_bytes, build.stop, build.batches) == (pos[2], STOP_PARTIAL, 2)
    assert build.truncated_bytes == 2990
    assert build.time_index == tidx((TS + 1, 1))


def test_seventeen_trailing_bytes_end_the_walk_quietly():
    parts, pos = _three()
    build = build_indexes(b"".join(parts) + bytes(range(17)), 0)
    assert (build.valid_bytes, build.stop, build.truncated_bytes) == (9000, STOP_SHORT_TAIL, 17)


def test_a_zero_filled_tail_is_a_bad_size():
    parts, pos = _three()
    build = build_indexes(b"".join(parts) + bytes(100), 0)
    assert (build.valid_bytes, build.stop) == (9000, STOP_BAD_SIZE)
    assert build.stop_detail == "Found record size 0 smaller than minimum record overhead (14)"


def test_a_crc_mismatch_stops_recovery_at_that_batch():
    parts, pos = _three()
    data = bytearray(b"".join(parts))
    data[pos[1] + 100] ^= 0x01
    build = build_indexes(bytes(data), 0)
    assert (build.valid_bytes, build.stop, build.batches) == (pos[1], STOP_CORRUPT, 1)
    assert build.stop_detail.startswith("Record is corrupt (stored crc = ")
    assert build.offset_index == b"" and build.time_index == tidx((TS, 0))


def test_a_v2_batch_under_61_bytes_is_corrupt():
    parts, pos = _three()
    small = struct.pack(">qiib", 3, 40, 0, 2) + bytes(40 - 5)  # whole, but below the V2 overhead
    build = build_indexes(b"".join(parts) + small, 0)
    assert (build.valid_bytes, build.stop) == (9000, STOP_CORRUPT)
    assert build.stop_detail == "Record batch is corrupt (the size 52 is smaller than the minimum allowed overhead 61)"


def test_end_limits_the_walk():
    parts, pos = _three()
    build = build_indexes(b"".join(parts), 0, end=pos[2])
    assert (build.size, build.valid_bytes, build.stop) == (6000, 6000, STOP_END)


# -- what Kafka's recovery does not survive --------------------------------------


def test_an_offset_beyond_the_segment_range_fails_like_kafka():
    data = batch(0) + batch(2**31)
    build = build_indexes(data, 0)
    assert build.stop == STOP_FAILED
    assert build.failure.exception == "LogSegmentOffsetOverflowException"
    assert (build.failure.position, build.valid_bytes) == (len(batch(0)), len(batch(0)))
    # not "the broker splits the segment" -- the split is refused unless the last batch overflows
    assert build.failure.consequence.startswith("the load splits the segment only if its last batch overflows")


def test_an_offset_below_the_base_offset_fails_like_kafka():
    build = build_indexes(batch(5), 10)
    assert build.failure.exception == "LogSegmentOffsetOverflowException"


def test_offsets_going_backwards_at_an_index_point_fail_like_kafka():
    parts = [sized(10, TS, 3000), sized(20, TS, 3000), sized(15, TS, 3000), sized(16, TS, 3000)]
    build = build_indexes(b"".join(parts), 0, index_interval_bytes=2000)
    assert build.failure.exception == "InvalidOffsetException"
    assert build.failure.position == 6000
    assert build.failure.message == "Attempt to append an offset 15 to position 1 no larger than the last offset appended (20)"


def test_a_full_offset_index_fails_like_kafka():
    parts = [batch(i, TS + i) for i in range(6)]
    build = build_indexes(b"".join(parts), 0, index_interval_bytes=0, max_index_size=24)
    assert build.failure.exception == "IllegalArgumentException"
    assert build.failure.message == "Attempt to append to a full time index (size = 1)."


# -- the transaction index ------------------------------------------------------


def test_an_aborted_transaction_is_indexed_with_the_marker_offset_and_lso():
    data = txn_batch(0, pid=7, count=3) + marker(3, pid=7)
    build = build_indexes(data, 0)
    assert build.aborted == (AbortedTxn(0, 7, 0, 3, 4),)
    assert build.txn_index_bytes() == struct.pack(">hqqqq", 0, 7, 0, 3, 4)


def test_a_committed_transaction_is_not_indexed():
    assert build_indexes(txn_batch(0, pid=7) + marker(1, pid=7, kind=COMMIT), 0).aborted == ()


def test_the_lso_is_the_first_offset_of_the_earliest_other_open_transaction():
    data = txn_batch(0, pid=1) + txn_batch(1, pid=2) + txn_batch(2, pid=1) + marker(3, pid=1) + marker(4, pid=2)
    build = build_indexes(data, 0)
    assert build.aborted == (AbortedTxn(0, 1, 0, 3, 1), AbortedTxn(0, 2, 1, 4, 5))


def test_a_marker_without_an_open_transaction_completes_nothing():
    assert build_indexes(marker(0, pid=3) + txn_batch(1, pid=3) + marker(2, pid=3), 0).aborted == (
        AbortedTxn(0, 3, 1, 2, 3),
    )


def test_a_transaction_spanning_segments_is_indexed_where_its_abort_is():
    tracker = TxnTracker()
    first = build_indexes(txn_batch(0, pid=9, count=2) + txn_batch(2, pid=4), 0, txn=tracker)
    assert first.aborted == () and tracker.open_transactions == {9: 0, 4: 2}
    second = build_indexes(batch(3) + marker(4, pid=9), 3, txn=tracker)
    assert second.aborted == (AbortedTxn(0, 9, 0, 4, 2),)
    assert tracker.open_transactions == {4: 2}


def test_replaying_an_earlier_segment_finds_open_transactions():
    tracker = TxnTracker()
    data = txn_batch(0, pid=9) + txn_batch(1, pid=5) + marker(2, pid=5, kind=COMMIT)
    assert replay_producer_state(data, tracker) == len(data)
    assert tracker.open_transactions == {9: 0}


def test_a_non_transactional_write_inside_a_transaction_fails_like_kafka():
    data = txn_batch(0, pid=7) + txn_batch(1, pid=7, transactional=False)
    build = build_indexes(data, 0)
    assert build.failure.exception == "InvalidTxnStateException"
    assert build.failure.message == "Expected transactional write from producer 7 at offset 1"


def test_an_unreadable_marker_key_stops_recovery_after_that_batch():
    parts = [txn_batch(0, pid=7), marker(1, pid=7, key=b"\x00"), batch(2)]
    build = build_indexes(b"".join(parts), 0)
    # InvalidRecordException is caught by recover *after* validBytes counted the batch
    assert (build.stop, build.valid_bytes, build.batches) == (STOP_INVALID_RECORD, len(parts[0]) + len(parts[1]), 2)
    assert build.stop_detail.startswith("Invalid value size found for control record key")


def test_a_control_record_that_is_no_transaction_marker_fails_like_kafka():
    build = build_indexes(txn_batch(0, pid=7) + marker(1, pid=7, key=encode_control_key(2)), 0)
    assert build.failure.exception == "IllegalArgumentException"
    assert build.failure.message == "Invalid control record type for end transaction markerLEADER_CHANGE"


def test_a_control_batch_without_records_completes_nothing():
    empty = bytearray(marker(1, pid=7))
    # drop the record: records_count 0, batch length shortened, CRC recomputed
    from kseg.format.crc import crc32c

    body = bytearray(empty[:61])
    struct.pack_into(">i", body, 8, 61 - 12)
    struct.pack_into(">i", body, 57, 0)
    struct.pack_into(">I", body, 17, crc32c(bytes(body[21:])))
    build = build_indexes(txn_batch(0, pid=7) + bytes(body) + marker(2, pid=7), 0)
    assert build.aborted == (AbortedTxn(0, 7, 0, 2, 3),)


# -- comparing ------------------------------------------------------------------


def test_compare_finds_the_first_differing_entry():
    old, new = idx((1, 100), (2, 200), (3, 300)), idx((1, 100), (3, 250))
    diff = compare_index("index", old, new, 1000)
    assert (diff.slot, diff.old, diff.new) == (1, OffsetEntry(1002, 200), OffsetEntry(1003, 250))
    assert (diff.old_entries, diff.new_entries, diff.preallocated_tail) == (3, 2, False)


def test_compare_recognises_a_preallocated_tail():
    new = tidx((TS, 1), (TS + 1, 2))
    diff = compare_index("timeindex", new + bytes(12 * 5), new, 0)
    assert (diff.slot, diff.old_live, diff.old_entries, diff.preallocated_tail) == (2, 2, 7, True)
    assert diff.old == TimeEntry(0, 0) and diff.new is None


def test_compare_missing_files():
    assert compare_index("txnindex", None, b"", 0) is None
    assert compare_index("index", None, b"", 0).old_missing
    assert compare_index("index", idx((1, 2)), idx((1, 2)), 0) is None


# -- files ----------------------------------------------------------------------


def _segment(directory: Path, base: int, data: bytes) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    log = directory / f"{base:020d}.log"
    log.write_bytes(data)
    return log


def _tree(directory: Path) -> dict[str, str]:
    return {
        str(p.relative_to(directory)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(directory.rglob("*"))
        if p.is_file()
    }


def _abort_partition(directory: Path) -> tuple[Path, Path]:
    """Two segments; the transaction opened in the first is aborted in the second."""
    first = _segment(directory, 0, txn_batch(0, pid=9, count=2) + sized(2, TS + 2, 5000) + sized(3, TS + 3, 100))
    second = _segment(directory, 4, batch(4, TS + 4) + marker(5, pid=9))
    return first, second


def test_output_dir_gets_the_files_and_the_input_is_untouched(tmp_path):
    first, second = _abort_partition(tmp_path / "t-0")
    before = _tree(tmp_path / "t-0")
    reports = list(reindex_paths([tmp_path / "t-0"], out_dir=tmp_path / "out"))
    assert _tree(tmp_path / "t-0") == before
    out = tmp_path / "out"
    assert sorted(p.name for p in out.iterdir()) == [
        "00000000000000000000.index",
        "00000000000000000000.timeindex",
        "00000000000000000004.index",
        "00000000000000000004.timeindex",
        "00000000000000000004.txnindex",
    ]
    assert (out / "00000000000000000000.index").read_bytes() == idx((3, len(txn_batch(0, pid=9, count=2)) + 5000))
    assert (out / "00000000000000000004.index").read_bytes() == b""  # an empty index is a zero-byte file
    assert (out / "00000000000000000004.txnindex").read_bytes() == encode_txn_index([AbortedTxn(0, 9, 0, 5, 6)])
    assert [o.action for o in reports[0].files] == [CREATED, CREATED, NOT_WRITTEN]


def test_one_segment_alone_still_sees_transactions_from_earlier_segments(tmp_path):
    _, second = _abort_partition(tmp_path / "t-0")
    [report] = reindex_paths([second], out_dir=tmp_path / "out")
    assert report.build.aborted == (AbortedTxn(0, 9, 0, 5, 6),)
    assert sorted(p.name for p in (tmp_path / "out").iterdir())[-1] == "00000000000000000004.txnindex"


def test_without_options_existing_indexes_are_kept_and_only_missing_ones_created(tmp_path):
    first, second = _abort_partition(tmp_path / "t-0")
    existing = tmp_path / "t-0" / "00000000000000000004.index"
    existing.write_bytes(b"")
    reports = list(reindex_paths([tmp_path / "t-0"]))
    assert [[o.action for o in r.files] for r in reports] == [[CREATED, CREATED, NOT_WRITTEN],
                                                              [KEPT, CREATED, CREATED]]
    assert existing.read_bytes() == b""  # kept as it was (the rebuild has no entry either: the same)
    assert reports[1].files[0].difference is None


def test_without_options_missing_indexes_are_created_beside_the_log(tmp_path):
    first, _ = _abort_partition(tmp_path / "t-0")
    os.chmod(first, 0o640)
    reports = list(reindex_paths([first]))
    assert [o.action for o in reports[0].files] == [CREATED, CREATED, NOT_WRITTEN]
    index = tmp_path / "t-0" / "00000000000000000000.index"
    assert stat.S_IMODE(index.stat().st_mode) == 0o640  # permissions follow the .log


def test_in_place_replaces_what_differs_keeps_a_backup_and_leaves_the_rest(tmp_path):
    first, _ = _abort_partition(tmp_path / "t-0")
    [fresh] = reindex_paths([first], out_dir=tmp_path / "good")
    good = tmp_path / "good"
    stale = good.joinpath("00000000000000000000.index").read_bytes() + bytes(16)
    (tmp_path / "t-0" / "00000000000000000000.index").write_bytes(stale)
    os.chmod(tmp_path / "t-0" / "00000000000000000000.index", 0o600)
    timeindex = good.joinpath("00000000000000000000.timeindex").read_bytes()
    (tmp_path / "t-0" / "00000000000000000000.timeindex").write_bytes(timeindex)
    [report] = reindex_paths([first], in_place=True)
    index = tmp_path / "t-0" / "00000000000000000000.index"
    assert [o.action for o in report.files] == [REPLACED, UNCHANGED, NOT_WRITTEN]
    assert index.read_bytes() == good.joinpath("00000000000000000000.index").read_bytes()
    assert report.files[0].backup == tmp_path / "t-0" / "00000000000000000000.index.bak"
    assert report.files[0].backup.read_bytes() == stale
    assert report.files[0].difference.preallocated_tail
    assert stat.S_IMODE(index.stat().st_mode) == 0o600  # permissions follow the replaced file
    assert not list((tmp_path / "t-0").glob("*.kseg-tmp"))


def test_in_place_truncates_a_stale_txnindex_to_zero_bytes_as_kafka_does(tmp_path):
    log = _segment(tmp_path / "t-0", 0, txn_batch(0, pid=1) + marker(1, pid=1, kind=COMMIT))
    stale = tmp_path / "t-0" / "00000000000000000000.txnindex"
    stale.write_bytes(encode_txn_index([AbortedTxn(0, 1, 0, 1, 2)]))
    [report] = reindex_paths([log], in_place=True)
    assert report.files[2].action == REPLACED
    assert stale.read_bytes() == b""
    assert (tmp_path / "t-0" / "00000000000000000000.txnindex.bak").read_bytes() == encode_txn_index(
        [AbortedTxn(0, 1, 0, 1, 2)]
    )


def test_backup_names_never_overwrite_an_earlier_backup(tmp_path):
    target = tmp_path / "00000000000000000000.index"
    target.write_bytes(b"x")
    assert backup_path(target) == tmp_path / "00000000000000000000.index.bak"
    (tmp_path / "00000000000000000000.index.bak").write_bytes(b"older")
    now = datetime(2024, 5, 6, 7, 8, 9, tzinfo=timezone.utc)
    assert backup_path(target, now) == tmp_path / "00000000000000000000.index.20240506T070809Z.bak"
    (tmp_path / "00000000000000000000.index.20240506T070809Z.bak").write_bytes(b"older still")
    assert backup_path(target, now) == tmp_path / "00000000000000000000.index.20240506T070809Z-1.bak"


def test_check_writes_nothing(tmp_path):
    _abort_partition(tmp_path / "t-0")
    (tmp_path / "t-0" / "00000000000000000000.index").write_bytes(idx((1, 1)))
    before = _tree(tmp_path)
    reports = list(reindex_paths([tmp_path / "t-0"], check=True))
    assert _tree(tmp_path) == before
    assert [[o.same for o in r.files] for r in reports] == [[False, False, True], [False, False, False]]


def test_nothing_is_written_for_a_segment_whose_recovery_fails(tmp_path):
    log = _segment(tmp_path / "t-0", 0, batch(0) + batch(2**31))
    [report] = reindex_paths([log], out_dir=tmp_path / "out")
    assert [o.action for o in report.files] == [SKIPPED, SKIPPED, SKIPPED]
    assert list((tmp_path / "out").iterdir()) == []


def test_conflicting_requests_are_refused(tmp_path):
    log = _segment(tmp_path / "a" / "t-0", 0, batch(0))
    with pytest.raises(ReindexRefused, match="exclude each other"):
        reindex_segment(log, tmp_path / "out", in_place=True)
    odd = tmp_path / "x.log"
    odd.write_bytes(batch(0))
    with pytest.raises(ReindexRefused, match="cannot tell the base offset"):
        reindex_segment(odd, check=True)
    _segment(tmp_path / "b" / "t-0", 0, batch(0))
    with pytest.raises(ReindexRefused, match="would both write"):
        list(reindex_paths([log, tmp_path / "b" / "t-0" / LOG], out_dir=tmp_path / "same"))
    assert not (tmp_path / "same").exists()
    with pytest.raises(ReindexRefused, match="not a .log segment"):
        list(reindex_paths([odd.with_suffix(".index")] if odd.with_suffix(".index").touch() is None else []))


def test_a_mapped_file_gives_the_same_build_with_pages_released_behind(tmp_path, monkeypatch):
    from kseg.recovery import indexes
    from kseg.segment import MappedFile

    monkeypatch.setattr(indexes, "RELEASE_EVERY", 8192)
    data = b"".join(sized(i, TS + i, 3000) for i in range(20))
    path = tmp_path / LOG
    path.write_bytes(data)
    with MappedFile(path) as mapped:
        mapped_build = build_indexes(mapped.buf, 0)
    assert mapped_build == build_indexes(data, 0)
    assert len(mapped_build.offset_entries) == 9


# -- damaged input never escapes as an exception -------------------------------------

from hypothesis import example, given, settings
from hypothesis import strategies as st

_CLEAN = b"".join(
    [txn_batch(0, pid=3, count=2), sized(2, TS + 2, 2000), marker(3, pid=3), sized(4, TS + 4, 3000)]
    + [batch(5 + i, TS + 5 + i, value=700, magic=1, codec="gzip") for i in range(3)]
    + [sized(8, TS + 8, 2500)]
)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, len(_CLEAN) - 1), st.integers(0, 255)), max_size=4),
    st.integers(0, len(_CLEAN)),
)
@example(flips=[(83, 1)], cut=5242)  # the time index refuses after the offset index took the entry
def test_damage_gives_a_build_never_an_exception(flips, cut):
    data = bytearray(_CLEAN[:cut])
    for pos, byte in flips:
        if pos < len(data):
            data[pos] = byte
    build = build_indexes(bytes(data), 0, index_interval_bytes=1000)
    assert 0 <= build.valid_bytes <= build.size == len(data)
    for entry in build.offset_entries:
        # LogSegment.recover appends the offset entry at validBytes before TimeIndex.maybeAppend can
        # throw; such a build fails, and its indexes are never written (Kafka empties the segment)
        at_failure = build.failure is not None and entry.position == build.valid_bytes
        assert 0 < entry.position < build.valid_bytes or at_failure
    assert (build.failure is None) == (build.stop != STOP_FAILED)
