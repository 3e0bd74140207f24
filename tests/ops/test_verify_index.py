"""verify on .index, .timeindex, .txnindex and .snapshot files, each checked against its log."""

from __future__ import annotations

import importlib.util
import struct
from pathlib import Path

import pytest
from support import FIXTURES

from kseg.format import RecordSpec, encode_batch
from kseg.format.control import ABORT, encode_control_key, encode_end_txn_marker
from kseg.format.crc import crc32c
from kseg.format.snapshot import ProducerEntry, encode_snapshot
from kseg.ops.verify import run as verify  # the orchestration: POOL_MIN_BYTES lives there
from kseg.ops.verify import verify_paths

_spec = importlib.util.spec_from_file_location("make_verify_fixtures", FIXTURES / "verify" / "make_fixtures.py")
gen = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(gen)  # type: ignore[union-attr]

TS = 1_700_000_000_000
BASE = 100


def segment(n: int = 12, size: int = 400) -> bytes:
    """n batches of 2 records (~1 KB each) from offset BASE; timestamps rise."""
    return b"".join(gen.v2_batch(BASE + 2 * i, 2, size=size) for i in range(n))


def offset_index(entries: list[tuple[int, int]]) -> bytes:
    return b"".join(struct.pack(">ii", offset - BASE, pos) for offset, pos in entries)


def time_index(entries: list[tuple[int, int]]) -> bytes:
    return b"".join(struct.pack(">qi", ts, offset - BASE) for ts, offset in entries)


def write(tmp_path: Path, log: bytes | None, **files: bytes) -> Path:
    stem = f"{BASE:020d}"
    if log is not None:
        (tmp_path / f"{stem}.log").write_bytes(log)
    for suffix, data in files.items():
        (tmp_path / f"{stem}.{suffix}").write_bytes(data)
    return tmp_path / stem


def findings(*paths: Path, **kw) -> list[tuple]:
    result = verify_paths(list(paths), jobs=1, **kw)
    return [(Path(f.path).suffix, f.kind, f.severity, f.position, f.offset) for f in result.findings()]


LOG = segment()
INFO = gen.batch_info(LOG)  # (position, base, last, max timestamp)


def test_indexes_built_as_kafka_recovery_does_verify_clean(tmp_path):
    index, timeindex = gen.kafka_indexes(LOG, BASE)
    assert len(index) >= 16 and len(timeindex) >= 24
    stem = write(tmp_path, LOG, index=index, timeindex=timeindex)
    assert findings(stem.with_suffix(".index"), stem.with_suffix(".timeindex")) == []


def test_a_multi_batch_append_entry_is_accepted(tmp_path):
    # a follower's append of batches 3-5 in one go: (last offset of batch 5, position of batch 3)
    entry = (INFO[5][2], INFO[3][0])
    stem = write(tmp_path, LOG, index=offset_index([entry]))
    assert findings(stem.with_suffix(".index")) == []


def test_offset_index_entries_that_do_not_match_the_log(tmp_path):
    entries = [
        (INFO[2][2], INFO[2][0]),  # fine
        (INFO[4][1], INFO[4][0]),  # the batch's first offset, not its last: lookups still work
        (INFO[6][2], INFO[6][0] + 3),  # not a batch start
        (INFO[7][2], INFO[8][0]),  # at or below the previous batch's last offset
        (INFO[9][2] + 1, INFO[9][0]),  # inside the next batch: no batch ends there
        (INFO[11][2] + 40, len(LOG) + 100),  # past the end of the log (a stale index)
    ]
    stem = write(tmp_path, LOG, index=offset_index(entries))
    assert findings(stem.with_suffix(".index")) == [
        (".index", "index-entry", "warning", 8, INFO[4][1]),
        (".index", "index-entry", "error", 16, INFO[6][2]),
        (".index", "index-entry", "error", 24, INFO[7][2]),
        (".index", "index-entry", "warning", 32, INFO[9][2] + 1),
        (".index", "index-entry", "error", 40, INFO[11][2] + 40),
    ]


def test_offset_index_order_and_kafkas_sanity_checks(tmp_path):
    entries = [(INFO[4][2], INFO[4][0]), (INFO[2][2], INFO[2][0])]
    stem = write(tmp_path, LOG, index=offset_index(entries) + b"\x01\x02")
    result = findings(stem.with_suffix(".index"))
    assert result == [
        (".index", "index-order", "error", 8, INFO[2][2]),
        (".index", "index-order", "error", 8, INFO[2][2]),
        (".index", "index-sanity", "error", 16, None),
    ]
    message = verify_paths([stem.with_suffix(".index")]).files[0].findings[-1].message
    assert message == f"Index file {BASE:020d}.index is corrupt, found 18 bytes which is neither positive nor a multiple of 8"
    below = write(tmp_path, LOG, index=struct.pack(">ii", -1, INFO[1][0]))
    assert ("index-sanity", "error", 0, BASE - 1) in [f[1:] for f in findings(below.with_suffix(".index"))]


def test_a_preallocated_zero_tail_is_recognised_not_an_error(tmp_path):
    index, timeindex = gen.kafka_indexes(LOG, BASE)
    stem = write(tmp_path, LOG, index=index + bytes(8 * 100), timeindex=timeindex + bytes(12 * 100))
    result = verify_paths([stem.with_suffix(".index"), stem.with_suffix(".timeindex")])
    assert [(f.kind, f.severity, f.position, f.size) for f in result.findings()] == [
        ("index-preallocated", "info", len(index), 800),
        ("index-preallocated", "info", len(timeindex), 1200),
    ]
    assert result.exit_code(strict=True) == 0
    assert "kafka-dump-log --index-sanity-check would call it corrupt" in result.files[1].findings[0].message


def test_an_all_zero_index_has_no_entries(tmp_path):
    stem = write(tmp_path, LOG, index=bytes(8 * 64), timeindex=bytes(12 * 64))
    result = verify_paths([stem.with_suffix(".index"), stem.with_suffix(".timeindex")])
    assert [(r.entries, [f.kind for f in r.findings]) for r in result.files] == [
        (0, ["index-preallocated"]),
        (0, ["index-preallocated", "timeindex-entry"]),  # and the log's timestamps have no entry
    ]


def test_time_index_entries_against_the_batches(tmp_path):
    entries = [
        (INFO[1][3], INFO[1][2]),  # fine
        (INFO[3][3] - 1, INFO[3][2]),  # not the batch's max timestamp
        (INFO[5][3], INFO[5][1]),  # an offset inside the batch: what brokers before 3.8 wrote
        (INFO[11][3] + 50, INFO[11][2] + 5),  # beyond the log: stale
    ]
    stem = write(tmp_path, LOG, timeindex=time_index(entries))
    assert findings(stem.with_suffix(".timeindex")) == [
        (".timeindex", "timeindex-entry", "error", 12, INFO[3][2]),
        (".timeindex", "timeindex-entry", "error", 36, INFO[11][2] + 5),
    ]


def test_time_index_order_sanity_and_running_maximum(tmp_path):
    # batch 2 holds an older timestamp than batch 1: an entry at batch 2 is not "the largest so far"
    parts = [gen.v2_batch(BASE, 2, ts=TS + 10), gen.v2_batch(BASE + 2, 2, ts=TS + 50), gen.v2_batch(BASE + 4, 2, ts=TS)]
    log = b"".join(parts)
    info = gen.batch_info(log)
    stem = write(tmp_path, log, timeindex=time_index([(info[1][3], info[1][2]), (info[2][3], info[2][2])]))
    assert findings(stem.with_suffix(".timeindex")) == [
        (".timeindex", "index-sanity", "error", 12, info[2][2]),  # Kafka's check: last < first
        (".timeindex", "index-order", "error", 12, info[2][2]),  # the timestamp went down
        (".timeindex", "timeindex-entry", "error", 12, info[2][2]),  # below an earlier batch's maximum
    ]


def test_time_index_entry_between_batches_of_a_compacted_log(tmp_path):
    parts = [gen.v2_batch(BASE, 2), gen.v2_batch(BASE + 10, 2)]  # offsets 102-109 compacted away
    log = b"".join(parts)
    stem = write(tmp_path, log, timeindex=time_index([(TS + 200, BASE + 5)]))
    assert findings(stem.with_suffix(".timeindex")) == [(".timeindex", "timeindex-entry", "error", 0, BASE + 5)]


def test_the_largest_timestamp_without_an_entry_is_information(tmp_path):
    stem = write(tmp_path, LOG, timeindex=time_index([(INFO[1][3], INFO[1][2])]))
    result = verify_paths([stem.with_suffix(".timeindex")])
    [finding] = result.findings()
    assert (finding.kind, finding.severity, finding.position, finding.offset) == (
        "timeindex-entry", "info", 12, INFO[11][2])
    assert result.exit_code(strict=True) == 0


def _aborted_log() -> tuple[bytes, int]:
    data = gen.v2_batch(BASE, 2, producer_id=7, producer_epoch=0, base_sequence=0, is_transactional=True)
    marker = encode_batch([RecordSpec(BASE + 2, TS, encode_control_key(ABORT), encode_end_txn_marker(0))],
                          is_control=True, is_transactional=True, producer_id=7, producer_epoch=0)
    return data + marker + gen.v2_batch(BASE + 3, 1), BASE + 2


def test_txn_index_matches_the_abort_markers(tmp_path):
    log, marker = _aborted_log()
    stem = write(tmp_path, log, txnindex=gen.txn_entry(7, BASE, marker, marker + 1))
    assert findings(stem.with_suffix(".txnindex")) == []


def test_txn_index_problems(tmp_path):
    log, marker = _aborted_log()
    entries = (
        gen.txn_entry(8, BASE, marker, marker + 1)  # wrong producer
        + struct.pack(">hqqqq", 0x100, 7, BASE, marker + 1, marker + 9)  # version byte 1; no marker; LSO too high
        + gen.txn_entry(7, BASE + 5, BASE + 1, BASE + 2)  # first above last; order; no marker
        + b"\x00" * 5
    )
    stem = write(tmp_path, log, txnindex=entries)
    assert findings(stem.with_suffix(".txnindex")) == [
        (".txnindex", "txnindex", "error", 0, marker),
        (".txnindex", "txnindex", "error", 34, marker + 1),  # version byte
        (".txnindex", "txnindex", "error", 34, marker + 1),  # no ABORT marker there
        (".txnindex", "txnindex", "warning", 34, marker + 1),  # last stable offset
        (".txnindex", "txnindex", "error", 68, BASE + 1),
        (".txnindex", "index-order", "error", 68, BASE + 1),
        (".txnindex", "txnindex", "error", 68, BASE + 1),
        (".txnindex", "txnindex", "warning", 102, None),
    ]


def test_an_abort_marker_without_an_entry(tmp_path):
    log, marker = _aborted_log()
    stem = write(tmp_path, log, txnindex=b"")
    result = verify_paths([stem.with_suffix(".txnindex")])
    [finding] = result.findings()
    assert (finding.kind, finding.severity, finding.offset) == ("txnindex", "warning", marker)
    assert finding.message == (
        f"the ABORT marker at offset {marker} (producer 7) has no entry: read_committed consumers would "
        "receive the aborted records"
    )


def test_txn_index_sanity_check_below_the_base_offset(tmp_path):
    stem = write(tmp_path, LOG, txnindex=gen.txn_entry(7, 1, 5, 6))
    assert (".txnindex", "index-sanity", "error", 0, 5) in findings(stem.with_suffix(".txnindex"))


def test_an_index_without_its_log_gets_the_sanity_checks_and_a_warning(tmp_path):
    stem = write(tmp_path, None, index=offset_index([(BASE + 5, 4000)]) + b"\x00")
    assert findings(stem.with_suffix(".index")) == [
        (".index", "index-sanity", "error", 8, None),
        (".index", "missing-log", "warning", None, None),
    ]


def test_snapshot_clean_and_corrupt(tmp_path):
    good = encode_snapshot([ProducerEntry(3, 0, 4, 9, 4, TS, -1, -1)])
    (tmp_path / f"{10:020d}.snapshot").write_bytes(good)
    bad_crc = bytearray(good)
    bad_crc[-1] ^= 1
    (tmp_path / f"{11:020d}.snapshot").write_bytes(bytes(bad_crc))
    (tmp_path / f"{12:020d}.snapshot").write_bytes(b"\x00\x02" + good[2:])
    (tmp_path / f"{13:020d}.snapshot").write_bytes(good[:8])
    body = good[6:] + b"xx"  # two bytes after the entry, covered by a matching CRC
    (tmp_path / f"{5:020d}.snapshot").write_bytes(struct.pack(">hI", 1, crc32c(body)) + body)  # entry offset 9 > 5
    paths = sorted(tmp_path.iterdir())
    result = verify_paths(paths, jobs=1)
    got = [(Path(f.path).name[18:20], f.kind, f.severity, f.position) for f in result.findings()]
    assert got == [
        ("05", "snapshot-structure", "warning", 10),
        ("05", "snapshot-structure", "warning", 56),
        ("11", "snapshot-crc", "error", 2),
        ("12", "snapshot-version", "error", 0),
        ("13", "snapshot-structure", "error", 0),
    ]
    crc = next(f for f in result.findings() if f.kind == "snapshot-crc")
    assert crc.message.startswith("Snapshot is corrupt (CRC is no longer valid). Stored crc: ")


@pytest.mark.parametrize("jobs", [1, 2])
def test_one_walk_serves_every_index_of_a_segment(tmp_path, jobs, monkeypatch):
    monkeypatch.setattr(verify, "POOL_MIN_BYTES", 0)
    index, timeindex = gen.kafka_indexes(LOG, BASE)
    write(tmp_path, LOG, index=index, timeindex=timeindex)
    result = verify_paths([tmp_path], jobs=jobs)
    assert [(Path(r.path).suffix, r.kind, r.batches, r.entries) for r in result.files] == [
        (".log", "log", 12, None),
        (".index", "index", None, len(index) // 8),
        (".timeindex", "timeindex", None, len(timeindex) // 12),
    ]


def test_a_zeroed_page_inside_one_batch_is_only_its_crc_error(tmp_path):
    """Kafka's .index entry at the damaged batch and its .timeindex entry are what Kafka writes: no finding."""
    log = bytearray(b"".join(gen.v2_batch(BASE + 2 * i, 2, size=5000) for i in range(6)))
    info = gen.batch_info(bytes(log))
    index, timeindex = gen.kafka_indexes(bytes(log), BASE)
    pos = info[3][0]
    assert struct.pack(">ii", info[3][2] - BASE, pos) in index  # an entry points at the batch to be damaged
    log[pos + 200 : pos + 200 + 4096] = bytes(4096)
    stem = write(tmp_path, bytes(log), index=index, timeindex=timeindex)
    assert findings(stem.with_suffix(".log"), stem.with_suffix(".index"), stem.with_suffix(".timeindex")) == [
        (".log", "crc", "error", pos, info[3][1])]


def test_offset_index_sanity_quotes_kafka_4_3(tmp_path):
    """``OffsetIndex.sanityCheck`` in 4.3.0 names the file without parentheses (``TimeIndex`` has them)."""
    from kseg.index import OFFSET_ENTRY, offset_index_sanity

    data = OFFSET_ENTRY.pack(-5, 0)  # last relative offset below 0: the last offset is below the base
    [failure] = offset_index_sanity(data, 100, "/x/00000000000000000100.index")
    assert failure.message == (
        "Corrupt index found, index file /x/00000000000000000100.index has non-zero size but the last offset "
        "is 95 which is less than the base offset 100"
    )
