"""kseg.ops.convert.run: Kafka's conversion rules, batch by batch, with kseg's reader on the output.

Every expected output here is built with ``encode_batch`` (MemoryRecordsBuilder semantics, checked
byte for byte against Kafka in tests/interop) from the records and the batch arguments the rule in
question prescribes; tests/interop/test_convert_vs_kafka.py has Kafka itself read the conversions.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kseg.errors import Corrupt, KsegError, Truncated
from kseg.format import RecordSpec, encode_batch
from kseg.format.compression import codec_id
from kseg.format.control import ABORT, COMMIT, encode_control_key, encode_end_txn_marker
from kseg.format.v2 import V2Batch, assemble_batch
from kseg.ops.convert.build import with_last_offset
from kseg.ops.convert.run import ConvertRefused, Target, convert_path
from kseg.ops.convert.target import DEFAULT_MAX_MESSAGE_BYTES
from kseg.recovery.indexes import build_indexes
from kseg.segment import open_segment

TS = 1_700_000_000_000
NAME = "00000000000000000000.log"


def segment(tmp_path: Path, *batches: bytes, name: str = NAME, directory: str = "src-0") -> Path:
    path = tmp_path / directory / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"".join(batches))
    return path


def convert(source: Path, tmp_path: Path, magic: int, codec: str | None = None, out: str = "out", **kw):
    target = Target(magic, None if codec is None else codec_id(codec), **kw)
    report = convert_path(source, tmp_path / out, target)
    return report, tmp_path / out / source.name if source.is_file() else tmp_path / out


def batches(path: Path) -> list:
    with open_segment(path) as seg:
        return [(b, list(b.iter_records())) for b in seg.iter_batches()]


def rows(path: Path) -> list[tuple]:
    """(offset, timestamp, timestamp type, key, value, headers, sequence) of every record."""
    return [
        (r.offset, r.timestamp, r.timestamp_type, r.key, r.value, r.headers, r.sequence)
        for _, records in batches(path)
        for r in records
    ]


def rec(offset: int, ts: int = -1, key: bytes | None = b"k", value: bytes | None = b"v", headers=()) -> RecordSpec:
    return RecordSpec(offset, ts, key, value, headers)


def marker(offset: int, pid: int, kind: int, epoch: int = 0) -> bytes:
    return encode_batch(
        [RecordSpec(offset, TS, encode_control_key(kind), encode_end_txn_marker(1))],
        producer_id=pid, producer_epoch=epoch, is_transactional=True, is_control=True,
    )


def tree(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(root.rglob("*")) if p.is_file()}


# -- up-conversion (LogValidator) ------------------------------------------------------------


def test_v0_messages_are_packed_into_one_v2_batch_with_no_timestamps(tmp_path):
    src = segment(tmp_path, encode_batch([rec(0), rec(1, key=None), rec(2, value=None)], magic=0))
    report, out = convert(src, tmp_path, 2)
    # LogValidator: one batch for the request, timestamps -1, CreateTime, no producer
    assert out.read_bytes() == encode_batch([rec(0), rec(1, key=None), rec(2, value=None)])
    tally = report.segments[0].tally
    assert (tally.batches_in, tally.batches_out, tally.packed, tally.records_out) == (3, 1, 3, 3)
    assert [r[1:3] for r in rows(out)] == [(-1, "CreateTime")] * 3


def test_v1_log_append_time_wrapper_keeps_its_time(tmp_path):
    src = segment(
        tmp_path,
        encode_batch([rec(5, TS + 1), rec(6, TS + 2)], magic=1, codec="gzip", timestamp_type="LogAppendTime",
                     log_append_time=TS + 99),
    )
    _, out = convert(src, tmp_path, 2)
    expected = encode_batch([rec(5, TS + 99), rec(6, TS + 99)], codec="gzip", timestamp_type="LogAppendTime",
                            log_append_time=TS + 99)
    assert out.read_bytes() == expected
    assert [r[:3] for r in rows(out)] == [(5, TS + 99, "LogAppendTime"), (6, TS + 99, "LogAppendTime")]


def test_wrappers_keep_their_boundaries_and_plain_messages_group_by_timestamp_type(tmp_path):
    src = segment(
        tmp_path,
        encode_batch([rec(0, TS)], magic=1),
        encode_batch([rec(1, TS + 1)], magic=1),
        encode_batch([rec(2, TS + 2)], magic=1, timestamp_type="LogAppendTime", log_append_time=TS + 50),
        encode_batch([rec(3, TS + 3)], magic=1, timestamp_type="LogAppendTime", log_append_time=TS + 50),
        encode_batch([rec(4, TS + 4)], magic=1, timestamp_type="LogAppendTime", log_append_time=TS + 60),
        encode_batch([rec(5, TS + 5), rec(6, TS + 6)], magic=1, codec="snappy"),
        encode_batch([rec(7, TS + 7)], magic=1),
    )
    _, out = convert(src, tmp_path, 2, "lz4")
    lat = {"timestamp_type": "LogAppendTime"}
    assert out.read_bytes() == b"".join(
        [
            encode_batch([rec(0, TS), rec(1, TS + 1)], codec="lz4"),
            encode_batch([rec(2, TS + 50), rec(3, TS + 50)], codec="lz4", log_append_time=TS + 50, **lat),
            encode_batch([rec(4, TS + 60)], codec="lz4", log_append_time=TS + 60, **lat),
            encode_batch([rec(5, TS + 5), rec(6, TS + 6)], codec="lz4"),
            encode_batch([rec(7, TS + 7)], codec="lz4"),
        ]
    )


def test_packing_respects_the_limit_and_never_reorders(tmp_path):
    messages = [encode_batch([rec(i, TS + i, b"k", b"x" * 100)], magic=1) for i in range(20)]
    src = segment(tmp_path, *messages)
    report, out = convert(src, tmp_path, 2, max_message_bytes=600)
    got = batches(out)
    assert [r.offset for _, rs in got for r in rs] == list(range(20))
    assert all(b.size <= 600 for b, _ in got)
    # records of 110 bytes (estimated 127) after a 61-byte header: 4 per batch
    assert [len(rs) for _, rs in got] == [4] * 5 and report.segments[0].tally.batches_out == 5


# -- down-conversion (RecordsUtil.downConvert) ------------------------------------------------


def test_v2_to_v1_is_one_wrapper_per_batch_with_the_same_codec(tmp_path):
    src = segment(
        tmp_path,
        encode_batch([rec(10, TS + 3), rec(12, TS + 1)], codec="gzip", base_offset=8, producer_id=3,
                     producer_epoch=0, base_sequence=7, partition_leader_epoch=5),
        encode_batch([rec(13, TS + 9)], timestamp_type="LogAppendTime", log_append_time=TS + 20),
    )
    report, out = convert(src, tmp_path, 1)
    assert out.read_bytes() == encode_batch([rec(10, TS + 3), rec(12, TS + 1)], magic=1, codec="gzip") + encode_batch(
        [rec(13, TS + 20)], magic=1, timestamp_type="LogAppendTime", log_append_time=TS + 20
    )
    dropped = report.segments[0].tally.dropped
    assert (dropped.producer_batches, dropped.partition_leader_epochs, dropped.timestamps) == (1, 1, 0)


def test_v2_to_v0_drops_timestamps_and_counts_them(tmp_path):
    src = segment(tmp_path, encode_batch([rec(0, TS), rec(1, -1), rec(2, TS + 2)]))
    report, out = convert(src, tmp_path, 0)
    assert out.read_bytes() == encode_batch([rec(0), rec(1), rec(2)], magic=0)
    assert report.segments[0].tally.dropped.timestamps == 2
    assert [r[1:3] for r in rows(out)] == [(-1, "NoTimestampType")] * 3


def test_headers_are_refused_below_v2_unless_dropped(tmp_path):
    first = encode_batch([rec(0, TS)])
    src = segment(tmp_path, first, encode_batch([rec(1, TS), rec(2, TS, headers=(("a", b"1"), ("b", None)))]))
    with pytest.raises(ConvertRefused) as refused:
        convert(src, tmp_path, 1)
    assert refused.value.offset == len(first)
    assert str(refused.value) == (
        f"{src} byte {len(first)} (record.headers): record at offset 2 has 2 header(s) and magic 1 cannot hold "
        "headers (1 such record(s) in this batch); --drop-headers drops them"
    )
    assert not (tmp_path / "out").exists()
    report, out = convert(src, tmp_path, 1, drop_headers=True)
    assert (report.segments[0].tally.dropped.header_records, report.segments[0].tally.dropped.headers) == (1, 2)
    assert [r[5] for r in rows(out)] == [(), (), ()]


def transactions(tmp_path: Path) -> Path:
    """Producer 7 aborts 2 records, 8 commits 1, 7 opens again with 1 record and no marker."""
    txn7 = {"producer_id": 7, "producer_epoch": 0, "is_transactional": True}
    return segment(
        tmp_path,
        encode_batch([rec(0, TS), rec(1, TS)], base_sequence=0, **txn7),
        encode_batch([rec(2, TS)], producer_id=8, producer_epoch=0, base_sequence=0, is_transactional=True),
        marker(3, 7, ABORT),
        marker(4, 8, COMMIT),
        encode_batch([rec(5, TS)]),
        encode_batch([rec(6, TS)], base_sequence=2, **txn7),
    )


def test_transactions_are_refused_below_v2_naming_the_first_batch(tmp_path):
    src = transactions(tmp_path)
    with pytest.raises(ConvertRefused) as refused:
        convert(src, tmp_path, 0)
    assert refused.value.offset == 0 and "transactional batch (producer 7)" in refused.value.message
    assert "--drop-control" in refused.value.message


def test_drop_control_drops_markers_and_says_what_aborted_data_becomes(tmp_path):
    report, out = convert(transactions(tmp_path), tmp_path, 1, drop_control=True)
    dropped = report.segments[0].tally.dropped
    assert (dropped.control_batches, dropped.control_records) == (2, 2)
    assert (dropped.transactional_batches, dropped.transactional_records, dropped.producer_batches) == (3, 4, 3)
    assert (report.txn.aborted, report.txn.committed, report.txn.undecided) == (2, 1, 1)
    assert [r[0] for r in rows(out)] == [0, 1, 2, 5, 6]  # offsets kept, markers gone


def test_a_control_batch_alone_is_refused_too(tmp_path):
    src = segment(tmp_path, encode_batch([rec(0, TS)]), marker(1, 4, COMMIT))
    with pytest.raises(ConvertRefused, match=r"control batch \(1 records\) cannot be represented in magic 0"):
        convert(src, tmp_path, 0)


def test_zstd_cannot_go_below_v2(tmp_path):
    first = encode_batch([rec(0, TS)])
    src = segment(tmp_path, first, encode_batch([rec(1, TS)], codec="zstd"))
    with pytest.raises(ConvertRefused) as refused:
        convert(src, tmp_path, 1)
    assert refused.value.message.startswith("Down-conversion of zstandard-compressed batches is not supported")
    assert refused.value.offset == len(first)
    _, out = convert(src, tmp_path, 1, "gzip")  # an explicit codec converts it
    assert [b.codec for b, _ in batches(out)] == ["gzip", "gzip"]
    with pytest.raises(ConvertRefused, match="^ZStandard compression is not supported for magic 0$"):
        convert(src, tmp_path, 0, "zstd", out="other")
    assert not (tmp_path / "other").exists()


def test_empty_v2_batches_stay_at_v2_and_are_counted_when_dropped(tmp_path):
    empty = assemble_batch(
        b"", base_offset=3, partition_leader_epoch=1, attributes=0x10, last_offset_delta=1, base_timestamp=-1,
        max_timestamp=TS, producer_id=5, producer_epoch=0, base_sequence=3, records_count=0,
    )
    src = segment(tmp_path, encode_batch([rec(0, TS)], codec="gzip"), empty)
    _, out = convert(src, tmp_path, 2, "lz4")
    assert out.read_bytes().endswith(empty)
    report, _ = convert(src, tmp_path, 1, out="v1", drop_control=True)
    assert report.segments[0].tally.dropped.empty_batches == 1


# -- V2 -> V2 (the cleaner's rebuild) ---------------------------------------------------------


def test_same_magic_and_codec_is_copied_byte_for_byte(tmp_path):
    data = encode_batch([rec(0, TS, headers=(("h", b"1"),))], codec="snappy", producer_id=1, producer_epoch=0,
                        base_sequence=0) + encode_batch([rec(1, TS)])
    src = segment(tmp_path, data)
    report, out = convert(src, tmp_path, 2)
    assert out.read_bytes() == data and report.segments[0].tally.copied == 2


def test_a_codec_change_gives_the_builders_batch(tmp_path):
    # CreateTime: the record bytes are kept and recompressed; LogAppendTime: rebuilt, deltas become 0
    kw = {"base_offset": 40, "producer_id": 2, "producer_epoch": 1, "base_sequence": 9, "partition_leader_epoch": 3}
    specs = [rec(41, TS + 5, headers=(("h", b"1"),)), rec(43, TS + 1, key=None), rec(44, -1, value=None)]
    lat = {"timestamp_type": "LogAppendTime", "log_append_time": TS + 9}
    src = segment(
        tmp_path,
        encode_batch(specs, codec="gzip", is_transactional=True, **kw),
        encode_batch([rec(45, TS), rec(46, TS + 3)], codec="snappy", **lat),
    )
    _, out = convert(src, tmp_path, 2, "lz4")
    assert out.read_bytes() == encode_batch(specs, codec="lz4", is_transactional=True, **kw) + encode_batch(
        [rec(45, TS + 9), rec(46, TS + 9)], codec="lz4", **lat
    )


def test_a_compacted_batch_keeps_base_and_last_offset_producer_and_flags(tmp_path):
    # as the cleaner leaves it: records 12 and 14 kept of 10..16, base 10, last offset 16 (lastSequence!)
    kept = encode_batch([rec(12, TS + 2), rec(14, TS + 4)], base_offset=10, codec="gzip", producer_id=9,
                        producer_epoch=3, base_sequence=100, is_transactional=True, partition_leader_epoch=6,
                        delete_horizon_ms=TS + 1000)
    src = segment(tmp_path, with_last_offset(kept, 16))
    _, out = convert(src, tmp_path, 2, "zstd")
    [(batch, records)] = batches(out)
    assert (batch.base_offset, batch.last_offset, batch.codec) == (10, 16, "zstd")
    assert (batch.producer_id, batch.producer_epoch, batch.base_sequence, batch.last_sequence) == (9, 3, 100, 106)
    assert (batch.is_transactional, batch.partition_leader_epoch, batch.delete_horizon_ms) == (True, 6, TS + 1000)
    assert [(r.offset, r.timestamp, r.sequence) for r in records] == [(12, TS + 2, 102), (14, TS + 4, 104)]


def test_a_split_idempotent_batch_gives_each_part_its_base_sequence(tmp_path):
    specs = [rec(o, TS + o, b"k", b"x" * 40) for o in (20, 21, 23, 24, 25, 28)]
    batch = with_last_offset(
        encode_batch(specs, base_offset=18, producer_id=4, producer_epoch=1, base_sequence=2**31 - 4), 29
    )
    src = segment(tmp_path, batch)
    report, out = convert(src, tmp_path, 2, "none", max_message_bytes=200)
    got = batches(out)
    assert report.segments[0].tally.split == 1 and len(got) > 1
    assert all(b.size <= 200 for b, _ in got)
    # every record keeps its sequence (base + offset - base offset, wrapping past Integer.MAX_VALUE)
    original = [(r.offset, r.sequence) for _, rs in batches(src) for r in rs]
    assert [(r.offset, r.sequence) for _, rs in got for r in rs] == original
    assert original[-1] == (28, 6)  # 2**31 - 4 + 10, wrapped
    assert (got[0][0].base_offset, got[-1][0].last_offset, got[-1][0].last_sequence) == (18, 29, 7)
    assert {(b.producer_id, b.producer_epoch) for b, _ in got} == {(4, 1)}


def test_control_batches_are_never_compressed(tmp_path):
    src = transactions(tmp_path)
    _, out = convert(src, tmp_path, 2, "gzip")
    assert [(b.is_control, b.codec) for b, _ in batches(out)] == [
        (False, "gzip"), (False, "gzip"), (True, "none"), (True, "none"), (False, "gzip"), (False, "gzip"),
    ]
    assert rows(out) == rows(src)


def test_batches_of_different_producers_are_never_merged(tmp_path):
    src = segment(
        tmp_path,
        encode_batch([rec(0, TS)], producer_id=1, producer_epoch=0, base_sequence=0),
        encode_batch([rec(1, TS)], producer_id=2, producer_epoch=0, base_sequence=0),
        encode_batch([rec(2, TS)]),
    )
    _, out = convert(src, tmp_path, 2, "zstd")
    assert [(b.base_offset, b.producer_id) for b, _ in batches(out)] == [(0, 1), (1, 2), (2, -1)]


def test_a_record_above_the_limit_goes_alone_and_is_reported(tmp_path):
    src = segment(tmp_path, encode_batch([rec(0, TS, value=b"a" * 50), rec(1, TS, value=b"b" * 500), rec(2, TS)]))
    report, out = convert(src, tmp_path, 2, "none", max_message_bytes=300)
    assert [[r.offset for r in rs] for _, rs in batches(out)] == [[0], [1], [2]]
    tally = report.segments[0].tally
    assert (tally.oversized, tally.oversized_offsets) == (1, [1])


def test_default_limit_is_kafkas_max_message_bytes():
    assert DEFAULT_MAX_MESSAGE_BYTES == 1048588


# -- round trips --------------------------------------------------------------------------------

records_strategy = st.lists(
    st.tuples(
        st.integers(0, 3),  # offset gap
        st.one_of(st.just(-1), st.integers(0, 2**42)),
        st.one_of(st.none(), st.binary(max_size=20)),
        st.one_of(st.none(), st.binary(max_size=60)),
    ),
    min_size=1,
    max_size=12,
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(records_strategy, st.sampled_from(["none", "gzip", "snappy", "lz4"]), st.integers(1, 4))
def test_round_trips_keep_what_the_narrower_format_holds(tmp_path_factory, raw, codec, batch_size):
    tmp = tmp_path_factory.mktemp("rt")
    specs, offset = [], 5
    for gap, ts, key, value in raw:
        offset += gap + 1
        specs.append(rec(offset, ts, key, value))
    chunks = [specs[i : i + batch_size] for i in range(0, len(specs), batch_size)]
    v2 = segment(tmp, *[encode_batch(c, codec=codec) for c in chunks], directory="v2-0")
    _, v1 = convert(v2, tmp, 1, out="a")
    _, back = convert(v1, tmp, 2, out="b")
    assert [r[:5] for r in rows(back)] == [r[:5] for r in rows(v2)]
    legacy = segment(tmp, *[encode_batch(c, magic=1, codec=codec) for c in chunks], directory="v1-0")
    _, up = convert(legacy, tmp, 2, out="c")
    _, down = convert(up, tmp, 1, out="d")
    assert rows(down) == rows(legacy)
    if codec != "none":  # wrappers keep their boundaries both ways: the same bytes come back
        assert down.read_bytes() == legacy.read_bytes()


# -- damage, refusals, files ------------------------------------------------------------------


def good_batches() -> list[bytes]:
    return [encode_batch([rec(2 * i, TS + i), rec(2 * i + 1, TS + i)]) for i in range(3)]


def test_a_crc_mismatch_refuses_and_writes_nothing(tmp_path):
    parts = good_batches()
    bad = bytearray(parts[1])
    bad[70] ^= 0x01
    src = segment(tmp_path, parts[0], bytes(bad), parts[2])
    with pytest.raises(Corrupt) as refused:
        convert(src, tmp_path, 1)
    assert refused.value.offset == len(parts[0]) + 17
    assert f"in the batch at byte {len(parts[0])}; --skip-corrupt" in refused.value.message
    assert not (tmp_path / "out").exists()


def test_skip_corrupt_converts_around_the_damage_and_reports_it(tmp_path):
    parts = good_batches()
    bad = bytearray(parts[1])
    bad[70] ^= 0x01
    src = segment(tmp_path, parts[0], bytes(bad), parts[2])
    report = convert_path(src, tmp_path / "out", Target(1), skip_corrupt=True)
    [result] = report.segments
    assert [(s.start, s.end, s.reason) for s in result.skipped] == [(len(parts[0]), 2 * len(parts[0]), "bad-crc")]
    assert report.skipped_any
    assert [r[0] for r in rows(result.output)] == [0, 1, 4, 5]


@pytest.mark.parametrize(
    ("tail", "error", "message"),
    [
        (b"\0" * 30, Corrupt, "Found record size 0 smaller than minimum record overhead (14)"),
        (None, Truncated, "the last batch declares 79 bytes but only 40 remain (a partial write)"),
        (b"\0" * 10, Truncated, "10 bytes at the end are too few to hold a batch"),
    ],
)
def test_a_bad_tail_refuses_unless_skipped(tmp_path, tail, error, message):
    parts = good_batches()
    assert len(parts[2]) == 79
    tail = parts[2][:40] if tail is None else tail
    src = segment(tmp_path, parts[0], parts[1], tail)
    with pytest.raises(error) as refused:
        convert(src, tmp_path, 2, "gzip")
    assert refused.value.message == message + "; --skip-corrupt skips damaged bytes and converts the rest"
    assert refused.value.offset in (2 * len(parts[0]), 2 * len(parts[0]) + 8)
    report = convert_path(src, tmp_path / "skip", Target(2), skip_corrupt=True)
    assert [s.start for s in report.segments[0].skipped] == [2 * len(parts[0])]
    assert (tmp_path / "skip" / NAME).read_bytes() == parts[0] + parts[1]


def test_a_refusal_in_a_later_segment_removes_everything_written(tmp_path):
    segment(tmp_path, *good_batches())
    segment(tmp_path, encode_batch([rec(6, TS, headers=(("h", b""),))]), name="00000000000000000006.log")
    (tmp_path / "deep").mkdir()
    with pytest.raises(ConvertRefused):
        convert_path(tmp_path / "src-0", tmp_path / "deep" / "er" / "out", Target(1))
    assert list((tmp_path / "deep").iterdir()) == []


def test_outputs_are_never_replaced_and_the_input_is_untouched(tmp_path):
    src = segment(tmp_path, *good_batches())
    before = tree(tmp_path / "src-0")
    convert(src, tmp_path, 1)
    assert tree(tmp_path / "src-0") == before
    with pytest.raises(ConvertRefused, match="exists; refusing to replace it"):
        convert(src, tmp_path, 2)
    with pytest.raises(ConvertRefused, match="is the input's own directory"):
        convert_path(src, tmp_path / "src-0", Target(2))
    assert tree(tmp_path / "src-0") == before


def test_the_output_indexes_are_kafkas_recovery_indexes(tmp_path):
    big = [encode_batch([rec(i, TS + i % 3, b"k", bytes(1500))], codec="none") for i in range(12)]
    src = segment(tmp_path, *big)
    report, out = convert(src, tmp_path, 1, "none")
    build = build_indexes(out.read_bytes(), 0)
    assert out.with_suffix(".index").read_bytes() == build.offset_index
    assert out.with_suffix(".timeindex").read_bytes() == build.time_index
    assert not out.with_suffix(".txnindex").exists()
    assert report.segments[0].index_entries == len(build.offset_entries) >= 3


def test_a_transaction_aborted_in_a_later_segment_gets_a_txnindex(tmp_path):
    txn = {"producer_id": 3, "producer_epoch": 0, "is_transactional": True}
    segment(tmp_path, encode_batch([rec(0, TS)], base_sequence=0, **txn))
    later = segment(tmp_path, encode_batch([rec(1, TS)]), marker(2, 3, ABORT), name="00000000000000000001.log")
    report, out = convert(tmp_path / "src-0", tmp_path, 2, "lz4")
    txnindex = out / "00000000000000000001.txnindex"
    assert [s.txnindex_entries for s in report.segments] == [0, 1]
    # the same when only the later segment is converted: earlier segments are replayed
    _, single = convert(later, tmp_path, 2, "lz4", out="single")
    assert single.with_suffix(".txnindex").read_bytes() == txnindex.read_bytes()


@pytest.mark.parametrize(
    ("kw", "message"),
    [
        ({"codec": "snappy", "level": 3}, "snappy has no compression level (got 3)"),
        ({"codec": "gzip", "level": 10}, "gzip doesn't support given compression level: 10"),
        ({"level": 5}, "--level needs --compression (each codec has its own levels)"),
    ],
)
def test_levels_are_checked_before_anything_is_read(tmp_path, kw, message):
    src = segment(tmp_path, *good_batches())
    with pytest.raises(ConvertRefused) as refused:
        convert(src, tmp_path, 2, **kw)
    assert refused.value.message == message


def test_a_level_is_used(tmp_path):
    src = segment(tmp_path, encode_batch([rec(0, TS, value=b"abc" * 500)]))
    _, fast = convert(src, tmp_path, 2, "zstd", level=1)
    _, slow = convert(src, tmp_path, 2, "zstd", out="slow", level=19)
    assert fast.read_bytes() == encode_batch([rec(0, TS, value=b"abc" * 500)], codec="zstd", level=1)
    assert slow.read_bytes() == encode_batch([rec(0, TS, value=b"abc" * 500)], codec="zstd", level=19)
    # an explicit level recompresses batches already in that codec; without one they are copied
    _, again = convert(fast, tmp_path, 2, "zstd", out="again", level=19)
    assert again.read_bytes() == slow.read_bytes()
    report, copied = convert(fast, tmp_path, 2, "zstd", out="copied")
    assert copied.read_bytes() == fast.read_bytes() and report.segments[0].tally.copied == 1


def test_inputs_that_are_not_segments_are_refused(tmp_path):
    (tmp_path / "logs").mkdir()
    (tmp_path / "x.index").write_bytes(b"")
    for path, message in [
        (tmp_path / "x.index", "not a .log segment or a partition directory"),
        (tmp_path / "logs", "not a partition directory"),
    ]:
        with pytest.raises(ConvertRefused, match=message):
            convert_path(path, tmp_path / "out", Target(2))


def test_an_empty_segment_gives_an_empty_segment(tmp_path):
    src = segment(tmp_path)
    report, out = convert(src, tmp_path, 0)
    assert out.read_bytes() == b"" and out.with_suffix(".index").read_bytes() == b""
    assert report.segments[0].tally.batches_in == 0


def test_only_kseg_errors_escape_on_garbage(tmp_path):
    src = segment(tmp_path, bytes(range(256)) * 3)
    with pytest.raises(KsegError):
        convert(src, tmp_path, 2)
    report = convert_path(src, tmp_path / "skip", Target(2), skip_corrupt=True)
    assert report.segments[0].skipped[0].start == 0


def test_v2_batch_helpers():
    batch = encode_batch([rec(3, TS)], base_offset=1)
    longer = with_last_offset(batch, 9)
    assert V2Batch(longer, 0).last_offset == 9 and V2Batch(longer, 0).is_valid()
    assert with_last_offset(batch, 3) == batch


# -- real segments (the shared corpus) ------------------------------------------------------


def corpus_logs() -> list[Path]:
    import json

    from support import CORPUS_REAL, require_dir

    root = require_dir(CORPUS_REAL, "real corpus")
    manifest = json.loads((root / "manifest.json").read_text())
    small = [e for e in manifest if e["file"].endswith(".log") and e["size"] <= 64 * 1024]
    legacy = [e for e in manifest if e["file"].endswith(".log") and "magic 1" in e["desc"] and e["size"] <= 100_000]
    # every other small segment (each conversion fsyncs three files), and every legacy one
    chosen = {e["file"] for e in small[::2] + legacy}
    return [root / name for name in sorted(chosen)]


def test_real_segments_convert_to_every_magic_with_their_records(tmp_path):
    logs = corpus_logs()
    assert len(logs) >= 80
    drop = {"drop_control": True, "drop_headers": True}
    targets = [Target(0, **drop), Target(1, codec_id("gzip"), **drop), Target(2, codec_id("zstd"))]
    for i, log in enumerate(logs):
        with open_segment(log) as seg:
            kept = [(b.is_control, r.offset, r.key, r.value) for b in seg.iter_batches() for r in b.iter_records()]
        for target in targets:
            out = tmp_path / f"{i}-{target.magic}"
            report = convert_path(log, out, target)
            with open_segment(out / log.name) as seg:
                got = [(r.offset, r.key, r.value) for b in seg.iter_batches() for r in b.iter_records()]
                assert {b.magic for b in seg.iter_batches()} <= {target.magic}
            expected = [(o, k, v) for control, o, k, v in kept if target.magic == 2 or not control]
            assert got == expected, (log, target.magic)
            assert report.segments[0].tally.records_out == len(expected)
