"""What ``kseg recover`` keeps and loses (kseg.ops.recover.run, kseg.ops.recover_files).

Expected outputs are written out from the pieces each segment is built from
(the batch bytes as encoded), never from kseg's recovery walk: Kafka mode
keeps the pieces before the first damaged one, --salvage keeps every intact
piece, byte for byte.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import random
import shutil
import signal
import struct
import subprocess
import sys
from pathlib import Path

import pytest
from support import CORPUS_REAL, FIXTURES, REPO, require_dir

from kseg.format import BatchWalk, RecordSpec, encode_batch
from kseg.format.control import ABORT, encode_control_key, encode_end_txn_marker
from kseg.index import AbortedTxn, read_txn_index
from kseg.ops.discover import segment_logs
from kseg.ops.recover.kafka import (
    DELETED,
    RECOVERS_NO_INDEX,
    RECOVERS_UNCLEAN,
    RP_ABSENT,
    RP_CHECKPOINT,
    RP_NO_ENTRY,
    RP_UNREADABLE,
    SKIPPED_CLEAN,
    SKIPPED_FLUSHED,
)
from kseg.ops.recover.report import (
    CREATED,
    NOT_WRITTEN,
    REPLACED,
    SEG_REFUSED,
    SEG_UNTOUCHED,
    UNCHANGED,
    RecoverRefused,
)
from kseg.ops.recover.run import recover_path
from kseg.recovery.indexes import build_indexes
from kseg.recovery.plan import (
    DAMAGED,
    HOLE,
    INVALID_RECORD,
    KEPT,
    LOST,
    NOT_INCREASING,
    OUT_OF_RANGE,
    RECOVERY_FAILS,
    SALVAGED,
    Region,
)
from kseg.recovery.segment_plan import is_torn_tail, plan_segment
from kseg.recovery.stops import STOP_INVALID_RECORD
from kseg.render.recover_map import map_cells
from kseg.segment import base_offset_from_name

TS = 1_700_000_000_000
LOG = "00000000000000000000.log"
FX = FIXTURES / "recover"


def _generator():
    spec = importlib.util.spec_from_file_location("make_recover_fixtures", FX / "make_fixtures.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


GEN = _generator()


def data(offset: int, count: int = 3, size: int = 200, **kw: object) -> bytes:
    records = [
        RecordSpec(offset + i, TS + offset + i, b"k", GEN.value(size, offset + i)) for i in range(count)
    ]
    return encode_batch(records, **kw)


def six() -> list[bytes]:
    return [data(3 * i) for i in range(6)]


def keep(buf: bytes, salvage: bool = False, **kw: object) -> tuple[bytes, object]:
    """The output bytes of a plan (its runs joined), and the plan."""
    plan, _ = plan_segment(buf, 0, salvage=salvage, **kw)
    return b"".join(buf[run.start : run.end] for run in plan.runs), plan


def flip(part: bytes, at: int = 100) -> bytes:
    damaged = bytearray(part)
    damaged[at] ^= 0x04
    return bytes(damaged)


def digest_tree(directory: Path) -> dict[str, tuple[str, int]]:
    return {
        str(p.relative_to(directory)): (
            hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else "dir",
            p.stat().st_mtime_ns,
        )
        for p in sorted(directory.rglob("*"))
    }


# -- Kafka's prefix ---------------------------------------------------------------------


def test_truncation_at_random_points_keeps_every_whole_batch_before_the_cut():
    parts = [
        data(0),
        data(3, codec="gzip"),
        encode_batch([RecordSpec(6, TS, b"k", b"v" * 50)], magic=1),
        encode_batch([RecordSpec(7 + i, TS + i, None, b"w" * 40) for i in range(3)], magic=1, codec="gzip"),
        encode_batch([RecordSpec(10, -1, b"k", b"x" * 30)], magic=0),
        data(11, codec="lz4"),
        data(14),
    ]
    whole = b"".join(parts)
    ends = [sum(len(p) for p in parts[: i + 1]) for i in range(len(parts))]
    rng = random.Random(6)
    cuts = sorted(
        {0, 1, 17, 18, len(whole), *(rng.randrange(len(whole)) for _ in range(60)), *(e - 1 for e in ends)}
    )
    for cut in cuts:
        expected_end = max([0] + [e for e in ends if e <= cut])
        for salvage in (False, True):
            out, plan = keep(whole[:cut], salvage)
            assert out == whole[:expected_end], (cut, salvage)
            assert plan.changed == (expected_end != cut)
            if plan.changed and salvage:
                assert [loss.reason for loss in plan.losses] == [DAMAGED]
                assert plan.losses[0].batches == 0


def test_a_bad_crc_in_the_middle_costs_one_batch_with_salvage_and_the_rest_without():
    parts = six()
    for bad in range(6):
        damaged = [*parts[:bad], flip(parts[bad]), *parts[bad + 1 :]]
        buf = b"".join(damaged)
        out, plan = keep(buf)
        assert out == b"".join(parts[:bad])
        assert (plan.losses[0].batches, plan.losses[0].salvageable) == (5 - bad, 5 - bad)
        out, plan = keep(buf, salvage=True)
        assert out == b"".join(parts[:bad] + parts[bad + 1 :])
        [loss] = plan.losses
        start = sum(map(len, parts[:bad]))
        assert (loss.start, loss.end, loss.reason, loss.first_offset, loss.last_offset) == (
            start,
            start + len(parts[bad]),
            DAMAGED,
            3 * bad,
            3 * bad + 2 if bad < 5 else None,
        )
        assert loss.open_ended == (bad == 5)
        assert (loss.claimed.first_offset, loss.claimed.last_offset, loss.claimed.records) == (
            3 * bad,
            3 * bad + 2,
            3,
        )


def test_kafka_mode_describes_the_cut_with_the_intact_batches_inside_it():
    parts = six()
    buf = b"".join([*parts[:2], flip(parts[2]), *parts[3:]])
    out, plan = keep(buf)
    [run] = plan.runs
    [cut] = plan.losses
    assert (run.start, run.end, run.first_offset, run.last_offset, run.batches, run.records) == (
        0,
        len(out),
        0,
        5,
        2,
        6,
    )
    assert (cut.start, cut.end, cut.reason) == (len(out), len(buf), "corrupt-batch")
    assert cut.detail.startswith("Record is corrupt (stored crc = ")
    assert (cut.batches, cut.records, cut.damaged_bytes, cut.first_offset, cut.last_offset) == (
        3,
        9,
        len(parts[2]),
        6,
        17,
    )
    assert [(r.kind, r.start, r.end) for r in plan.regions] == [
        (KEPT, 0, len(out)),
        (LOST, len(out), len(buf)),
    ]
    assert plan.kafka_next_offset == 6


def test_the_output_indexes_are_what_reindex_builds_for_the_kept_bytes(tmp_path):
    parts = [data(3 * i, size=700) for i in range(12)]
    buf = b"".join([*parts[:9], flip(parts[9]), *parts[10:]])
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / LOG).write_bytes(buf)
    for salvage in (False, True):
        out = tmp_path / f"out-{salvage}"
        report = recover_path(tmp_path / "in" / LOG, out_dir=out, salvage=salvage)
        written = (out / LOG).read_bytes()
        expected = b"".join(parts[:9] + (parts[10:] if salvage else []))
        assert written == expected
        reference = build_indexes(expected, 0)
        assert (out / "00000000000000000000.index").read_bytes() == reference.offset_index
        assert (out / "00000000000000000000.timeindex").read_bytes() == reference.time_index
        assert len(reference.offset_index) >= 16
        assert not (out / "00000000000000000000.txnindex").exists()
        assert [(f.kind, f.action) for f in report.segments[0].files] == [
            ("log", CREATED),
            ("index", CREATED),
            ("timeindex", CREATED),
            ("txnindex", NOT_WRITTEN),
        ]
    kafka = build_indexes(buf, 0)
    assert (tmp_path / "out-False" / "00000000000000000000.index").read_bytes() == kafka.offset_index


# -- the damage catalogue ------------------------------------------------------------------


def test_zero_filled_batches_are_a_hole():
    parts = six()
    buf = b"".join([*parts[:2], bytes(len(parts[2]) + len(parts[3])), *parts[4:]])
    out, plan = keep(buf, salvage=True)
    assert out == b"".join(parts[:2] + parts[4:])
    [loss] = plan.losses
    assert (loss.zero_filled, loss.first_offset, loss.last_offset, loss.detail) == (
        True,
        6,
        11,
        "a size field below the minimum for its magic (size field 0)",
    )
    assert [r.kind for r in plan.regions] == [KEPT, HOLE, SALVAGED]
    out, plan = keep(buf)
    assert out == b"".join(parts[:2])
    assert (plan.losses[0].reason, plan.losses[0].zero_filled, plan.losses[0].batches) == (
        "bad-size",
        True,
        2,
    )


def test_a_zero_tail_loses_no_offsets():
    buf = b"".join(six()) + bytes(5000)
    for salvage in (False, True):
        out, plan = keep(buf, salvage)
        assert out == b"".join(six())
        [loss] = plan.losses
        assert (loss.zero_filled, loss.first_offset, loss.open_ended) == (True, None, False)
        assert not is_torn_tail(plan)


@pytest.mark.parametrize("size_field", [5, 13, 0x7FFFFFF0, -1, 48])
def test_a_garbled_length_is_resynchronised_past(size_field):
    parts = six()
    garbled = parts[2][:8] + struct.pack(">i", size_field) + parts[2][12:]
    buf = b"".join([*parts[:2], garbled, *parts[3:]])
    assert keep(buf)[0] == b"".join(parts[:2])
    out, plan = keep(buf, salvage=True)
    assert out == b"".join(parts[:2] + parts[3:])
    assert [(loss.first_offset, loss.last_offset) for loss in plan.losses] == [(6, 8)]


def test_a_torn_last_batch():
    parts = six()
    buf = b"".join(parts)[:-300]
    for salvage in (False, True):
        out, plan = keep(buf, salvage)
        assert out == b"".join(parts[:5])
        [loss] = plan.losses
        assert (loss.first_offset, loss.open_ended, loss.claimed.first_offset, loss.claimed.last_offset) == (
            15,
            True,
            15,
            17,
        )
        assert is_torn_tail(plan)
    assert keep(buf)[1].losses[0].reason == "partial-batch"


def test_seventeen_trailing_bytes_are_a_torn_tail_too():
    buf = b"".join(six()) + b"\x01" * 17
    out, plan = keep(buf)
    assert (out, plan.losses[0].reason, is_torn_tail(plan)) == (b"".join(six()), "short-tail", True)


def test_an_empty_file():
    for salvage in (False, True):
        out, plan = keep(b"", salvage)
        assert (out, plan.runs, plan.losses, plan.changed, plan.first_offset) == (b"", (), (), False, None)


def test_a_file_of_garbage():
    junk = GEN.value(3000, 99)
    for salvage in (False, True):
        out, plan = keep(junk, salvage)
        assert (out, plan.output_size, len(plan.losses), plan.changed) == (b"", 0, 1, True)
        [loss] = plan.losses
        assert (loss.start, loss.end, loss.first_offset, loss.open_ended, loss.batches) == (
            0,
            3000,
            0,
            True,
            0,
        )
        assert not is_torn_tail(plan)


def test_a_compressed_batch_with_a_damaged_payload_is_lost_whole():
    parts = [data(3 * i, codec="gzip") for i in range(4)]
    buf = b"".join([parts[0], flip(parts[1], at=90), *parts[2:]])
    out, plan = keep(buf, salvage=True)
    assert out == b"".join([parts[0], *parts[2:]])
    assert (plan.losses[0].claimed.codec, plan.losses[0].claimed.records) == ("gzip", 3)


def test_offsets_must_strictly_increase_after_the_damage():
    parts = six()
    buf = b"".join([parts[0], parts[1], flip(parts[2]), parts[3], parts[1], parts[4], parts[5]])
    out, plan = keep(buf, salvage=True)
    assert out == b"".join([parts[0], parts[1], parts[3], parts[4], parts[5]])
    dropped = [loss for loss in plan.losses if loss.reason == NOT_INCREASING]
    assert [(d.first_offset, d.last_offset, d.batches, d.records, d.detail) for d in dropped] == [
        (3, 5, 1, 3, "offsets 3-5 do not pass 11, the last offset kept")
    ]
    assert build_indexes(out, 0, index_interval_bytes=0).failure is None


def test_a_batch_outside_the_segment_range_is_not_salvaged():
    parts = six()
    far = data(2**31 + 5)
    buf = b"".join([*parts[:2], flip(parts[2]), far, *parts[3:]])
    out, plan = keep(buf, salvage=True)
    assert out == b"".join(parts[:2] + parts[3:])
    assert [loss.reason for loss in plan.losses] == [DAMAGED, OUT_OF_RANGE]
    assert (plan.losses[0].first_offset, plan.losses[0].last_offset) == (6, 8)  # the far batch tells nothing
    assert plan.last_offset == 17


# -- what Kafka's recovery itself would refuse ---------------------------------------------------


def _txn(offset: int, pid: int, transactional: bool = True) -> bytes:
    return data(
        offset, producer_id=pid, producer_epoch=0, base_sequence=offset, is_transactional=transactional
    )


def _marker(offset: int, pid: int, key: bytes | None = None) -> bytes:
    record = RecordSpec(
        offset, TS, encode_control_key(ABORT) if key is None else key, encode_end_txn_marker(0)
    )
    return encode_batch([record], producer_id=pid, producer_epoch=0, is_transactional=True, is_control=True)


def test_a_lost_abort_marker_makes_salvage_drop_what_recovery_would_reject():
    parts = [
        _txn(0, 7),
        flip(_marker(3, 7), at=70),
        _txn(4, 7, transactional=False),
        data(7),
        _txn(10, 9),
        _marker(13, 9),
        data(14),
    ]
    buf = b"".join(parts)
    out, plan = keep(buf, salvage=True)
    assert out == b"".join([parts[0], parts[3], parts[4], parts[5], parts[6]])
    assert [(loss.reason, loss.first_offset, loss.last_offset) for loss in plan.losses] == [
        (DAMAGED, 3, 3),
        (RECOVERY_FAILS, 4, 6),
    ]
    assert (
        plan.losses[1].detail
        == "InvalidTxnStateException: Expected transactional write from producer 7 at offset 4"
    )
    build = build_indexes(out, 0)
    # producer 7's transaction stays open without its marker: the last stable offset is its first offset, 0
    assert (build.failure, build.valid_bytes, build.aborted) == (
        None,
        len(out),
        (AbortedTxn(0, 9, 10, 13, 0),),
    )


def test_an_undecodable_marker_is_kept_by_kafka_and_dropped_by_salvage():
    parts = [_txn(0, 7), _marker(3, 7, key=b"\x00"), data(4), data(7)]
    buf = b"".join(parts)
    out, plan = keep(buf)
    assert out == b"".join(parts[:2])  # Kafka counts the batch, then stops
    assert plan.losses[0].reason == STOP_INVALID_RECORD
    out, plan = keep(buf, salvage=True)
    assert out == b"".join([parts[0], parts[2], parts[3]])
    assert [loss.reason for loss in plan.losses] == [INVALID_RECORD]
    assert build_indexes(out, 0).valid_bytes == len(out)


def test_when_kafkas_recovery_throws_kafka_mode_keeps_nothing_and_salvage_keeps_what_is_acceptable(tmp_path):
    big = [
        data(o, count=1, size=2900) for o in (10, 20, 15, 16, 30)
    ]  # offsets go backwards at an index point
    buf = b"".join(big)
    out, plan = keep(buf, index_interval_bytes=2000)
    assert (out, plan.refused.exception, plan.changed) == (b"", "InvalidOffsetException", True)
    assert (plan.intact_batches, plan.first_offset, plan.last_offset) == (5, 10, 30)
    out, plan = keep(buf, salvage=True, index_interval_bytes=2000)
    assert out == b"".join([big[0], big[1], big[4]])
    assert [loss.reason for loss in plan.losses] == [NOT_INCREASING, NOT_INCREASING]
    (tmp_path / "p-0").mkdir()
    (tmp_path / "p-0" / LOG).write_bytes(buf)
    report = recover_path(tmp_path / "p-0", out_dir=tmp_path / "out", index_interval_bytes=2000)
    assert (report.segments[0].action, report.changed) == (SEG_REFUSED, True)
    assert not (tmp_path / "out" / LOG).exists()


# -- partitions: what Kafka's loader would do ------------------------------------------------


def make_partition(root: Path, checkpoint: bytes | None = b"0\n1\norders 0 20\n") -> Path:
    """Copy of the fixture partition under ``root/logdir`` (recovery-point checkpoint replaced)."""
    logdir = root / "logdir"
    shutil.copytree(FX / "logdir", logdir)
    target = logdir / "recovery-point-offset-checkpoint"
    if checkpoint is None:
        target.unlink()
    else:
        target.write_bytes(checkpoint)
    return logdir / "orders-0"


def views(report) -> list[tuple[str, bool, str, str | None]]:
    return [
        (
            s.log.name,
            s.kafka.recovers,
            s.kafka.why,
            s.kafka.deleted_after.name if s.kafka.deleted_after else None,
        )
        for s in report.segments
    ]


def test_unclean_shutdown_recovers_from_the_segment_holding_the_recovery_point_and_deletes_after_a_cut(
    tmp_path,
):
    part = make_partition(tmp_path)
    report = recover_path(part, dry_run=True)
    assert (
        report.startup.recovery_point,
        report.startup.recovery_point_source,
        report.startup.recovers_from,
    ) == (20, RP_CHECKPOINT, 18)
    # 18, 34 and 52 have no .index: LogLoader.loadSegmentFiles recovers each at once (R3.4) and deletes
    # nothing; recoverLog then finds 18 already cut, so no later segment is deleted
    assert views(report) == [
        (LOG, False, SKIPPED_FLUSHED, None),
        ("00000000000000000018.log", True, RECOVERS_UNCLEAN, None),
        ("00000000000000000034.log", True, RECOVERS_UNCLEAN, None),
        ("00000000000000000052.log", True, RECOVERS_UNCLEAN, None),
    ]
    assert report.deletion is None
    assert [s.kafka.truncated_to for s in report.segments] == [None, 1006, None, 3018]
    # with 18's .index present, recoverLog is the first to cut it, and deletes every later segment (R4.3)
    (part / "00000000000000000018.index").write_bytes(b"")
    report = recover_path(part, dry_run=True)
    assert views(report) == [
        (LOG, False, SKIPPED_FLUSHED, None),
        ("00000000000000000018.log", True, RECOVERS_UNCLEAN, None),
        ("00000000000000000034.log", False, DELETED, "00000000000000000018.log"),
        ("00000000000000000052.log", False, DELETED, "00000000000000000018.log"),
    ]
    assert report.deletion.message == "Corruption found in segment 18, truncating to offset 21"
    assert [p.name for p in report.deletion.segments] == [
        "00000000000000000034.log",
        "00000000000000000052.log",
    ]
    assert report.deletion.bytes == 6036 + 3168
    assert report.prediction.deleted_segments == [34, 52]


def test_a_recovery_point_past_the_damage_spares_the_damaged_segment(tmp_path):
    part = make_partition(tmp_path, b"0\n1\norders 0 40\n")
    report = recover_path(part, dry_run=True)
    assert report.startup.recovers_from == 34
    # below the recovery point, but without its .index: LogLoader.loadSegmentFiles recovers it anyway
    assert views(report)[1] == ("00000000000000000018.log", True, RECOVERS_NO_INDEX, None)
    assert views(report)[3] == ("00000000000000000052.log", True, RECOVERS_UNCLEAN, None)
    assert report.deletion is None  # loadSegmentFiles deletes nothing; the torn active segment is the last
    (part / "00000000000000000018.index").write_bytes(b"")
    report = recover_path(part, dry_run=True)
    assert views(report)[1] == ("00000000000000000018.log", False, SKIPPED_FLUSHED, None)


@pytest.mark.parametrize(
    ("checkpoint", "source"),
    [(None, RP_ABSENT), (b"0\n1\nother 0 40\n", RP_NO_ENTRY), (b"0\n2\norders 0 40\n", RP_UNREADABLE)],
)
def test_without_a_usable_recovery_point_kafka_uses_0(tmp_path, checkpoint, source):
    report = recover_path(make_partition(tmp_path, checkpoint), dry_run=True)
    assert (
        report.startup.recovery_point,
        report.startup.recovery_point_source,
        report.startup.recovers_from,
    ) == (0, source, 0)
    assert views(report)[0] == (LOG, True, RECOVERS_UNCLEAN, None)
    if source == RP_UNREADABLE:
        assert "Expected [2] entries" in report.startup.recovery_point_error


def test_a_clean_shutdown_recovers_only_segments_without_an_index(tmp_path):
    part = make_partition(tmp_path)
    (part.parent / ".kafka_cleanshutdown").write_bytes(b'{"version":0,"brokerEpoch":5}')
    report = recover_path(part, dry_run=True)
    assert report.startup.clean_shutdown and report.startup.recovers_from is None
    assert [(v[1], v[2]) for v in views(report)] == [
        (False, SKIPPED_CLEAN),
        (True, RECOVERS_NO_INDEX),
        (True, RECOVERS_NO_INDEX),
        (True, RECOVERS_NO_INDEX),
    ]
    assert report.deletion is None  # loadSegmentFiles truncates but never deletes later segments


def test_one_segment_given_alone_still_reports_what_kafka_would_delete(tmp_path):
    part = make_partition(tmp_path)
    (part / "00000000000000000018.index").write_bytes(b"")
    report = recover_path(part / "00000000000000000018.log", dry_run=True)
    assert [p.name for p in report.deletion.segments] == [
        "00000000000000000034.log",
        "00000000000000000052.log",
    ]
    (part / "00000000000000000018.index").unlink()  # missing .index: recovered early, nothing deleted (R3.4)
    report = recover_path(part / "00000000000000000018.log", out_dir=tmp_path / "out", salvage=True)
    assert report.deletion is None
    assert [p.name for p in report.later_segments] == ["00000000000000000034.log", "00000000000000000052.log"]
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == [
        "00000000000000000018.index",
        "00000000000000000018.log",
        "00000000000000000018.timeindex",
        "00000000000000000018.txnindex",
    ]
    # producer 5's transaction began in the first segment (replayed), its ABORT is salvaged here
    assert list(read_txn_index((tmp_path / "out" / "00000000000000000018.txnindex").read_bytes())) == [
        AbortedTxn(0, 5, 15, 30, 31)
    ]


def test_a_partition_output_is_complete_and_the_input_untouched(tmp_path):
    part = make_partition(tmp_path)
    before = digest_tree(part.parent)
    out = tmp_path / "out"
    report = recover_path(part, out_dir=out)
    assert digest_tree(part.parent) == before
    # what Kafka keeps: its recoveries of 18, 34 and 52 (no .index, R3.4) leave a snapshot at each base
    assert sorted(p.name for p in out.iterdir()) == sorted(
        [f"{base:020d}.{kind}" for base in (0, 18, 34, 52) for kind in ("log", "index", "timeindex")]
        + ["leader-epoch-checkpoint", "partition.metadata"]
        + [f"{offset:020d}.snapshot" for offset in (18, 34, 52, 61)]
    )
    pieces = GEN.partition()
    assert (out / "00000000000000000018.log").read_bytes() == pieces["00000000000000000018.log"][0]
    assert (out / "00000000000000000034.log").read_bytes() == b"".join(pieces["00000000000000000034.log"])
    assert (out / "00000000000000000052.log").read_bytes() == b"".join(pieces["00000000000000000052.log"][:3])
    assert (out / "leader-epoch-checkpoint").read_bytes() == (part / "leader-epoch-checkpoint").read_bytes()
    assert [(p.name, why.split(":")[0]) for p, why in report.not_copied] == [
        ("00000000000000000034.snapshot", "producer snapshot")
    ]


def test_refusals_come_before_anything_is_written(tmp_path):
    part = make_partition(tmp_path)
    out = tmp_path / "out"
    out.mkdir()
    (out / "00000000000000000052.timeindex").write_bytes(b"")
    with pytest.raises(RecoverRefused, match="00000000000000000052.timeindex exists"):
        recover_path(part, out_dir=out)
    assert [p.name for p in out.iterdir()] == ["00000000000000000052.timeindex"]
    with pytest.raises(RecoverRefused, match="the input's own directory"):
        recover_path(part, out_dir=part)
    with pytest.raises(RecoverRefused, match="exactly one of"):
        recover_path(part, out_dir=out, in_place=True)
    with pytest.raises(RecoverRefused, match="exactly one of"):
        recover_path(part)
    (tmp_path / "nothing").mkdir()
    with pytest.raises(RecoverRefused, match="not a partition directory"):
        recover_path(tmp_path / "nothing", dry_run=True)
    with pytest.raises(RecoverRefused, match="not a .log segment"):
        recover_path(part / "leader-epoch-checkpoint", dry_run=True)
    odd = tmp_path / "odd.log"
    odd.write_bytes(b"")
    with pytest.raises(RecoverRefused, match="cannot tell the base offset"):
        recover_path(odd, dry_run=True)


# -- in place -------------------------------------------------------------------------------


def test_in_place_keeps_backups_replaces_atomically_and_never_deletes_a_segment(tmp_path):
    part = make_partition(tmp_path)
    original = {p.name: p.read_bytes() for p in part.iterdir()}
    report = recover_path(part, in_place=True, salvage=True)
    names = sorted(p.name for p in part.iterdir())
    assert names == sorted(
        [
            *original,
            "00000000000000000018.log.bak",
            "00000000000000000052.log.bak",
            "00000000000000000018.index",
            "00000000000000000018.timeindex",
            "00000000000000000018.txnindex",
            "00000000000000000052.index",
            "00000000000000000052.timeindex",
        ]
    )
    for name in ("00000000000000000018.log", "00000000000000000052.log"):
        assert (part / (name + ".bak")).read_bytes() == original[name]
    pieces = GEN.partition()
    second = pieces["00000000000000000018.log"]
    assert (part / "00000000000000000018.log").read_bytes() == b"".join([second[0], *second[2:]])
    for name in (LOG, "00000000000000000034.log", "00000000000000000034.snapshot", "leader-epoch-checkpoint"):
        assert (part / name).read_bytes() == original[name]
    assert [s.action for s in report.segments] == [SEG_UNTOUCHED, "rewritten", SEG_UNTOUCHED, "rewritten"]
    again = recover_path(part, in_place=True, salvage=True)
    assert not again.changed and [s.action for s in again.segments] == [SEG_UNTOUCHED] * 4


def test_in_place_replaces_stale_indexes_with_a_backup_and_leaves_identical_ones(tmp_path):
    directory = tmp_path / "t-0"
    directory.mkdir()
    parts = [data(3 * i, size=1500) for i in range(6)]
    good = b"".join(parts[:4])
    (directory / LOG).write_bytes(good + flip(parts[4]) + parts[5])
    right = build_indexes(good, 0)
    (directory / "00000000000000000000.index").write_bytes(right.offset_index)
    (directory / "00000000000000000000.timeindex").write_bytes(b"\x00" * 24)
    os.chmod(directory / LOG, 0o640)
    report = recover_path(directory / LOG, in_place=True)
    files = {f.kind: f for f in report.segments[0].files}
    assert (
        files["log"].action,
        files["index"].action,
        files["timeindex"].action,
        files["txnindex"].action,
    ) == (REPLACED, UNCHANGED, REPLACED, NOT_WRITTEN)
    assert (directory / LOG).read_bytes() == good
    assert (directory / "00000000000000000000.timeindex").read_bytes() == right.time_index
    assert (directory / "00000000000000000000.timeindex.bak").read_bytes() == b"\x00" * 24
    assert os.stat(directory / LOG).st_mode & 0o777 == 0o640
    assert not list(directory.glob("*.kseg-tmp")) and not list(directory.glob(".*"))


def test_dry_run_and_output_never_modify_the_input(tmp_path):
    before = digest_tree(FX)
    listing = sorted(p.name for p in FX.rglob("*"))
    for case in sorted((FX / "segments").iterdir()):
        for salvage in (False, True):
            recover_path(case / LOG, dry_run=True, salvage=salvage)
            recover_path(case / LOG, out_dir=tmp_path / f"{case.name}-{salvage}", salvage=salvage)
    recover_path(FX / "logdir" / "orders-0", out_dir=tmp_path / "partition", salvage=True)
    assert digest_tree(FX) == before
    assert sorted(p.name for p in FX.rglob("*")) == listing


# -- a writer killed part way -------------------------------------------------------------

KILLED_WRITER = r"""
import os, sys, time
from pathlib import Path
import kseg.ops.recover.run as files

hook, nth = sys.argv[3], int(sys.argv[4])
calls = {"n": 0}

def pause(real):
    def wrapper(*args, **kwargs):
        calls["n"] += 1
        if calls["n"] == nth:
            print("paused", flush=True)
            time.sleep(60)
        return real(*args, **kwargs)
    return wrapper

if hook == "write":
    files.COPY_CHUNK = 512  # many writes per segment
    real_copy = files.copy_runs
    def copy_runs(buf, plan, out):
        out.write = pause(out.write)
        real_copy(buf, plan, out)
    files.copy_runs = copy_runs
else:
    setattr(os, hook, pause(getattr(os, hook)))
files.recover_path(Path(sys.argv[1]), out_dir=Path(sys.argv[2]), salvage=True)
print("finished", flush=True)
"""


@pytest.mark.parametrize(
    ("hook", "nth"),
    [("write", 3), ("fsync", 1), ("replace", 1), ("replace", 2), ("replace", 4), ("replace", 9)],
)
def test_a_writer_killed_part_way_leaves_no_file_or_a_complete_one(tmp_path, hook, nth):
    reference = tmp_path / "reference"
    recover_path(FX / "logdir" / "orders-0", out_dir=reference, salvage=True)
    out = tmp_path / "out"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}
    child = subprocess.Popen(
        [sys.executable, "-c", KILLED_WRITER, str(FX / "logdir" / "orders-0"), str(out), hook, str(nth)],
        stdout=subprocess.PIPE,
        env=env,
        text=True,
    )
    try:
        assert child.stdout.readline() == "paused\n"
        child.send_signal(signal.SIGKILL)
    finally:
        child.wait(timeout=30)
    assert child.returncode == -signal.SIGKILL
    finals = [p for p in out.iterdir() if not p.name.endswith(".kseg-tmp")]
    temps = [p for p in out.iterdir() if p.name.endswith(".kseg-tmp")]
    assert len(temps) <= 2 and all(t.name.startswith(".") for t in temps)  # the .log and one index at most
    for path in finals:
        assert path.read_bytes() == (reference / path.name).read_bytes(), path.name
    # a .log in OUTDIR always has its indexes beside it; temp files are never taken for segments
    for log in out.glob("*.log"):
        assert log.with_suffix(".index").exists() and log.with_suffix(".timeindex").exists()
    assert [p.name for p in segment_logs(out)] == sorted(p.name for p in finals if p.suffix == ".log")


# -- the map ---------------------------------------------------------------------------------


def test_the_map_is_to_scale_and_a_small_loss_still_shows():
    regions = [Region(0, 500, KEPT), Region(500, 1000, LOST)]
    assert map_cells(regions, 1000, 10) == [KEPT] * 5 + [LOST] * 5
    tiny = [Region(0, 100_000, KEPT), Region(100_000, 100_010, LOST), Region(100_010, 1_000_000, SALVAGED)]
    cells = map_cells(tiny, 1_000_000, 20)
    assert cells == [KEPT, KEPT, LOST] + [SALVAGED] * 17
    assert map_cells([Region(0, 3, HOLE)], 3, 50) == [HOLE] * 3
    assert map_cells([], 0, 50) == []


# -- real segments ------------------------------------------------------------------------


@pytest.mark.corpus
def test_real_segments_lose_nothing_and_one_damaged_batch_costs_only_itself():
    root = require_dir(CORPUS_REAL, "real corpus")
    damaged_cases = 0
    for log in sorted(root.rglob("*.log")):
        buf = log.read_bytes()
        base = base_offset_from_name(log) or 0
        plan, _ = plan_segment(buf, base, salvage=True)
        assert (plan.changed, plan.output_size) == (False, len(buf)), log
        if len(buf) > 500_000:  # damage only the smaller ones: the test stays quick, cases stay varied
            continue
        plain = [b for b in BatchWalk(buf) if b.producer_id < 0 and not b.is_control]
        if len(plain) < 3:
            continue
        victim = plain[len(plain) // 2]
        end = victim.position + victim.size
        damaged = bytearray(buf)
        damaged[end - 1] ^= 0x01  # the last byte is under the CRC for every magic
        out, plan = keep(bytes(damaged), salvage=True)
        assert out == buf[: victim.position] + buf[end:], log
        assert [(loss.start, loss.end) for loss in plan.losses] == [(victim.position, end)], log
        kafka_out, _ = keep(bytes(damaged))
        assert kafka_out == buf[: victim.position], log
        damaged_cases += 1
    assert damaged_cases >= 50


def test_random_damage_gives_a_plan_whose_output_recovery_keeps_whole():
    """Flipped bits, deletions, insertions, zeroed and garbled ranges: no exception, the kept and lost
    ranges tile the input, recovery keeps every byte of either output, and salvage extends Kafka's."""
    rng = random.Random(2024)
    sources = [p.read_bytes() for p in sorted(FX.rglob("*.log")) if p.stat().st_size]
    refused = 0
    for _ in range(300):
        buf = bytearray(rng.choice(sources))
        for _ in range(rng.randint(1, 5)):
            i = rng.randrange(len(buf))
            op = rng.randrange(4)
            if op == 0:
                buf[i] ^= 1 << rng.randrange(8)
            elif op == 1:
                del buf[i : i + rng.randint(1, 300)]
            elif op == 2:
                buf[i:i] = rng.randbytes(rng.randint(1, 200))
            else:
                buf[i : i + 1500] = bytes(len(buf[i : i + 1500]))
            if not buf:
                break
        data = bytes(buf)
        outputs = []
        for salvage in (False, True):
            out, plan = keep(data, salvage)
            outputs.append(out)
            if plan.refused is not None:  # Kafka's own recovery throws (here: an offset out of range)
                assert (salvage, out, plan.refused.exception) == (
                    False,
                    b"",
                    "LogSegmentOffsetOverflowException",
                )
                refused += 1
                continue
            ranges = sorted([(r.start, r.end) for r in plan.runs] + [(x.start, x.end) for x in plan.losses])
            assert [a for a, _ in ranges] == [0] + [b for _, b in ranges[:-1]] and ranges[-1][1] == len(data)
            build = build_indexes(out, 0)
            assert (build.failure, build.valid_bytes) == (None, len(out))
        assert outputs[1].startswith(outputs[0])
    assert refused < 30
