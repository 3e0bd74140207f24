"""kseg.ops.dump and the pieces under it: Java's UTF-8 decoding, KRaft control values, the
summary ordering, Kafka's index search, windows, hold-back of half-read batches, the JSON fast path."""

from __future__ import annotations

import struct
import tracemalloc
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support import FIXTURES

from kseg.format import RecordSpec, encode_batch, read_batch
from kseg.format.control import encode_control_key
from kseg.format.internal import describe_control_record
from kseg.format.jvm_text import java_string_hash, java_utf8
from kseg.index import OffsetEntry, encode_offset_index
from kseg.ops.dump import (
    BatchEvent,
    ControlRecord,
    DumpOptions,
    DumpTarget,
    FileStart,
    LogStart,
    Problem,
    RecordsEvent,
    ScalaHashMapOrder,
    Summary,
    TrailingBytes,
    decode_records,
    dialect_for,
    iter_dump,
    java_path,
    kafka_offset_lookup,
    targets_for,
)
from kseg.render.dump import JsonRenderer, Sink, TextRenderer, render
from kseg.render.records_json import records_json_utf8

DUMP = FIXTURES / "dump"
T0 = 1_700_000_000_000


def events(paths: list[Path | str], **options) -> list:
    return list(iter_dump(targets_for([str(p) for p in paths]), DumpOptions(**options)))


# --------------------------------------------------------------------------- Java's String(bytes, UTF_8)


@pytest.mark.parametrize(
    "data, java, python",
    [
        (b"plain", "plain", "plain"),
        (b"\xed\xa0\x80|", "\ufffd|", "\ufffd\ufffd\ufffd|"),  # encoded surrogate: one malformed sequence for Java
        (b"ok\xed\xa0", "ok\ufffd", "ok\ufffd\ufffd"),  # the same, cut off by the end
        (b"\xc3\x28", "\ufffd(", "\ufffd("),  # bad second byte starts over
        (b"\xf0\x9f\x98", "\ufffd", "\ufffd"),  # truncated 4-byte sequence at the end
        (b"\xf0\x9f\x98A", "\ufffdA", "\ufffdA"),
        (b"\xe0\x80\x80", "\ufffd\ufffd\ufffd", "\ufffd\ufffd\ufffd"),  # overlong
        (b"\xf4\x90\x80\x80", "\ufffd" * 4, "\ufffd" * 4),  # above U+10FFFF
        (b"\xc0\xaf", "\ufffd\ufffd", "\ufffd\ufffd"),
        (b"\xff\xfe", "\ufffd\ufffd", "\ufffd\ufffd"),
        ("caf\u00e9 \U0001F600".encode(), "caf\u00e9 \U0001F600", "caf\u00e9 \U0001F600"),
    ],
)
def test_java_utf8_replacement_rules(data, java, python):
    assert java_utf8(data) == java
    assert data.decode("utf-8", "replace") == python  # where the two differ, it is on purpose


# --------------------------------------------------------------------------- KRaft control values
# (dump describes control records with kseg.format.internal.describe_control_record)


def test_kraft_control_values_print_as_kafka_json_with_unknown_tags_left_out():
    header = struct.pack(">hq", 0, T0) + b"\x00"
    assert describe_control_record(encode_control_key(3), header).text == (
        f'SnapshotHeader {{"version":0,"lastContainedLogTimestamp":{T0}}}'
    )
    assert describe_control_record(encode_control_key(4), b"\x00\x00\x00").text == 'SnapshotFooter {"version":0}'
    voter = (
        struct.pack(">i", 3) + bytes(16)  # voterId, voterDirectoryId (all zero)
        + b"\x02" + b"\x02C" + b"\x02h" + struct.pack(">H", 9093) + b"\x00"  # one endpoint: name "C", host "h"
        + struct.pack(">hh", 0, 1) + b"\x00"  # kRaftVersionFeature
        + b"\x01\x07\x02ab"  # one unknown tagged field (tag 7, 2 bytes): kept in data, not printed
    )
    described = describe_control_record(encode_control_key(6), b"\x00\x00" + b"\x02" + voter + b"\x00")
    assert described.text == (
        'KRaftVoters {"version":0,"voters":[{"voterId":3,"voterDirectoryId":"AAAAAAAAAAAAAAAAAAAAAA",'
        '"endpoints":[{"name":"C","host":"h","port":9093}],'
        '"kRaftVersionFeature":{"minSupportedVersion":0,"maxSupportedVersion":1}}]}'
    )
    assert described.data["voters"][0]["_unknownTaggedFields"] == [{"tag": 7, "data": "YWI="}]


def test_truncated_kraft_control_value_is_a_problem_and_kafka_would_stop():
    described = describe_control_record(encode_control_key(3), struct.pack(">hq", 0, T0))  # no tagged-field count
    assert described.problem is not None and described.data is None
    assert described.text == "controlType: SNAPSHOT_HEADER(3)"


def test_leader_change_value_is_not_read_by_kafka_so_damage_there_is_no_problem(tmp_path):
    """kafka-dump-log up to 4.0 names LEADER_CHANGE without reading its value; a SnapshotHeader it reads (and
    dies on).  From 4.1 printControlRecord reads LEADER_CHANGE too: the tool dies on the first record."""
    path = tmp_path / "00000000000000000000.log"
    first = encode_batch([RecordSpec(0, T0, encode_control_key(2), b"\x00")], is_control=True)
    path.write_bytes(first + encode_batch([RecordSpec(1, T0, encode_control_key(3), b"\x00")], is_control=True))
    got = events([path], deep_iteration=True, dialect=dialect_for("4.0"))
    records = [r for e in got if isinstance(e, RecordsEvent) for r in e.records]
    assert [(r.type_name, r.failed) for r in records] == [("LEADER_CHANGE", False), ("SNAPSHOT_HEADER", True)]
    (problem,) = [e for e in got if isinstance(e, Problem)]
    assert problem.position == len(first)
    assert problem.message == "control record at offset 1: int16 needs 2 bytes, only 1 left"
    got = events([path], deep_iteration=True)  # 4.3
    records = [r for e in got if isinstance(e, RecordsEvent) for r in e.records]
    assert [(r.type_name, r.failed) for r in records] == [("LEADER_CHANGE", True)]
    (problem,) = [e for e in got if isinstance(e, Problem)]
    assert problem.position == 0
    assert problem.message == "control record at offset 0: int16 needs 2 bytes, only 1 left"


# --------------------------------------------------------------------------- summary order (Scala HashMap)


def test_java_string_hash_known_values():
    assert java_string_hash("hello") == 99162322
    assert java_string_hash("Aa") == java_string_hash("BB") == 2112
    assert java_string_hash("polygenelubricants") == -(2**31)


def test_scala_hashmap_order_is_by_bucket_then_hash_not_insertion():
    order = ScalaHashMapOrder()
    for key in ("b", "a", "polygenelubricants"):
        order.put(key)
    # "a" = 97 -> bucket 1, "b" = 98 -> bucket 2; Integer.MIN_VALUE improves to 0x80008000 -> bucket 0
    assert order.order() == ["polygenelubricants", "a", "b"]
    same = ScalaHashMapOrder()
    for key in ("BB", "Aa"):  # equal hashes: the later put goes after the earlier one
        same.put(key)
    assert same.order() == ["BB", "Aa"]


def test_scala_hashmap_grows_on_a_put_that_only_replaces():
    order = ScalaHashMapOrder()
    keys = [chr(ord("a") + i) for i in range(11)]  # hashes 97..107: buckets 1..11 in a 16-slot table
    for key in keys:
        order.put(key)
    assert order.capacity == 16
    order.put("a")  # 11 entries + 1 >= 12: Scala grows even though no entry is added
    assert order.capacity == 32
    assert order.order() == keys


# --------------------------------------------------------------------------- Kafka's index search


def test_kafka_offset_lookup_over_every_slot_including_a_zero_tail():
    base = 100
    trimmed = encode_offset_index([OffsetEntry(105, 214), OffsetEntry(107, 428), OffsetEntry(114, 856)], base)
    assert [kafka_offset_lookup(trimmed, 3, base, t) for t in (100, 105, 106, 107, 113, 114, 900)] == [
        0, 214, 214, 428, 428, 856, 856,
    ]
    # With a preallocated zero tail Kafka's binary search also sees the (base, 0) slots: past the first
    # entry it lands on them and answers position 0 (the dump then scans from the start of the log).
    preallocated = trimmed + bytes(8 * 3)
    assert [kafka_offset_lookup(preallocated, 6, base, t) for t in (100, 105, 107, 113)] == [0, 214, 0, 0]
    assert kafka_offset_lookup(b"", 0, base, 105) == 0


# --------------------------------------------------------------------------- paths


def test_java_path_normalisation_and_directory_expansion():
    assert java_path("a//b/") == "a/b"
    assert java_path("./x.log") == "./x.log"
    shown = [t.display for t in targets_for([str(DUMP / "topic-0") + "/"])]
    assert [Path(s).name for s in shown] == [
        "00000000000000000000.log",
        "00000000000000000000.index",
        "00000000000000000000.timeindex",
        "00000000000000000000.log.deleted",
        "leader-epoch-checkpoint",
        "partition.metadata",
    ]
    assert all("//" not in s for s in shown)


# --------------------------------------------------------------------------- events of the .log walk


def test_events_of_a_clean_segment():
    got = events([DUMP / "worked-v2" / "00000000000000000000.log"], deep_iteration=True)
    assert [type(e) for e in got] == [FileStart, LogStart, BatchEvent, RecordsEvent]
    (record,) = got[3].records
    assert (record.offset, record.timestamp, record.key, record.value) == (0, T0, b"k", b"v")


def test_leftover_bytes_drop_the_last_record_as_kafka_never_returns_it():
    batch = read_batch((DUMP / "corrupt" / "00000000000000000020.log").read_bytes(), 0)
    records, err = decode_records(batch)
    assert records == [] and "records still remaining" in err.message
    got = events([DUMP / "corrupt" / "00000000000000000020.log"], deep_iteration=True)
    assert [type(e) for e in got] == [FileStart, LogStart, BatchEvent, RecordsEvent, Problem]
    assert got[3].records == []


def test_size_below_14_stops_the_file_with_the_entry_position():
    got = events([DUMP / "corrupt" / "00000000000000000010.log", DUMP / "worked-v0" / "00000000000000000000.log"])
    problem = next(e for e in got if isinstance(e, Problem))
    assert (problem.position, problem.message) == (
        70, "Found record size 0 smaller than minimum record overhead (14)"
    )
    assert not any(isinstance(e, TrailingBytes) for e in got)  # Kafka dies before that line
    assert [e.path for e in got if isinstance(e, FileStart)][-1].endswith("worked-v0/00000000000000000000.log")


def test_control_record_that_cannot_be_decoded_is_a_problem_unless_metadata_is_skipped():
    path = DUMP / "corrupt" / "00000000000000000050.log"
    got = events([path], deep_iteration=True)
    (control,) = got[3].records
    assert isinstance(control, ControlRecord) and control.failed and control.type_name is None
    assert control.type_id is None and control.key_unreadable
    assert "Must have at least 4 bytes, but found only 1" in got[4].message
    skipped = events([path], deep_iteration=True, skip_record_metadata=True)
    assert not any(isinstance(e, Problem) for e in skipped)


def test_non_consecutive_offsets_are_reported_newest_first():
    """Scala (<= 4.2) prepends to a list: newest first; 4.3 keeps a TreeMap: ascending."""
    got = events([DUMP / "records" / "00000000000000000000.log"], deep_iteration=True, dialect=dialect_for("4.2"))
    (summary,) = [e for e in got if isinstance(e, Summary)]
    assert summary.kind == "non_consecutive_offsets"
    assert summary.pairs == ((20, 22), (7, 20))
    got = events([DUMP / "records" / "00000000000000000000.log"], deep_iteration=True)
    (summary,) = [e for e in got if isinstance(e, Summary)]
    assert summary.pairs == ((7, 20), (20, 22))


# --------------------------------------------------------------------------- windows


def _batch_positions(evs: list) -> list[int]:
    return [e.batch.position for e in evs if isinstance(e, BatchEvent)]


def test_offset_and_time_windows_select_whole_batches():
    codecs = DUMP / "codecs" / "00000000000000000000.log"
    every = events([codecs])
    offsets = {e.batch.position: (e.batch.base_offset, e.batch.last_offset) for e in every if isinstance(e, BatchEvent)}
    window = _batch_positions(events([codecs], from_offset=9, to_offset=18))
    assert [offsets[p] for p in window] == [(9, 9), (10, 11), (12, 13), (14, 15), (16, 17), (18, 19)]
    assert len(_batch_positions(events([codecs], max_batches=3))) == 3
    by_time = _batch_positions(events([codecs], from_time=T0 + 20, to_time=T0 + 23))
    assert [offsets[p] for p in by_time] == [(20, 21), (22, 23)]
    assert not any(isinstance(e, TrailingBytes) for e in events([codecs], max_batches=1))


def test_from_offset_seeks_through_the_index_instead_of_walking_from_the_start(tmp_path):
    """The first 16 bytes of the log are garbage a walk from 0 cannot pass; the .index points past them."""
    first = encode_batch([RecordSpec(o, T0 + o, b"k", b"v") for o in range(500, 510)])
    second = encode_batch([RecordSpec(o, T0 + o, b"k", b"v") for o in range(510, 520)])
    garbage = struct.pack(">qi", 0, 3) + b"\x02\x02\x02\x02"  # size 3 < 14: Kafka's walk throws here
    (tmp_path / "00000000000000000500.log").write_bytes(garbage + first + second)
    (tmp_path / "00000000000000000500.index").write_bytes(encode_offset_index([OffsetEntry(509, 16)], 500))
    seeked = events([tmp_path / "00000000000000000500.log"], from_offset=512)
    assert _batch_positions(seeked) == [16 + len(first)]
    assert not any(isinstance(e, Problem) for e in seeked)
    walked = events([tmp_path / "00000000000000000500.log"])
    assert _batch_positions(walked) == [] and isinstance(walked[-1], Problem)


# --------------------------------------------------------------------------- side files


def test_index_and_time_index_findings():
    got = events([DUMP / "indexes"])
    summaries = {e.kind: e.pairs for e in got if isinstance(e, Summary)}
    assert summaries == {
        "index_mismatch": ((107, 108),),
        "time_index_mismatch": ((T0 + 1051, T0 + 1050), (T0 + 1020, T0 + 1110)),
        "time_index_out_of_order": ((T0 + 1020, T0 + 1051),),
        "time_index_offset_not_found": ((113, 114), (600, -1)),
    }


def test_missing_sibling_log_is_a_problem_and_nothing_is_created(tmp_path):
    index = tmp_path / "00000000000000000000.timeindex"
    index.write_bytes(bytes(12))
    got = events([index])
    assert isinstance(got[-1], Problem) and "00000000000000000000.log not found" in got[-1].message
    assert sorted(p.name for p in tmp_path.iterdir()) == ["00000000000000000000.timeindex"]


def test_txn_index_with_a_future_version_prints_no_entry(tmp_path):
    from kseg.index import AbortedTxn, encode_txn_index

    data = encode_txn_index([AbortedTxn(0, 1, 2, 3, 4), AbortedTxn(0x0100, 5, 6, 7, 8)])
    (tmp_path / "00000000000000000000.txnindex").write_bytes(data)
    got = events([tmp_path / "00000000000000000000.txnindex"])
    assert [type(e) for e in got] == [FileStart, Problem]
    assert got[1].message.startswith("Unexpected aborted transaction version 1 in transaction index ")


# --------------------------------------------------------------------------- the JSON fast path


def _slow_json(batch) -> list[str]:
    renderer = JsonRenderer(Sink(None, None), DumpOptions())  # type: ignore[arg-type]
    return [renderer.record_json(r) for r in batch.iter_records()]


records_strategy = st.lists(
    st.tuples(
        st.integers(1, 3),  # offset gap (offsets must increase)
        st.integers(-(2**20), 2**20),  # timestamp delta
        st.one_of(st.none(), st.binary(max_size=300)),
        st.one_of(st.none(), st.binary(max_size=9000)),
        st.lists(st.tuples(st.text(max_size=5), st.one_of(st.none(), st.binary(max_size=8))), max_size=3),
    ),
    min_size=1,
    max_size=12,
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(records=records_strategy, codec=st.sampled_from(["none", "gzip", "lz4"]), log_append=st.booleans())
def test_json_fast_path_agrees_with_the_full_decoder(records, codec, log_append):
    offset, specs = 1000, []
    for gap, delta, key, value, headers in records:
        offset += gap
        specs.append(RecordSpec(offset, T0 + delta, key, value, tuple(headers)))
    data = encode_batch(specs, codec=codec, timestamp_type="LogAppendTime" if log_append else "CreateTime",
                        log_append_time=T0 + 5)
    batch = read_batch(data, 0)
    fast = records_json_utf8(batch)
    assert fast is not None
    assert fast[1] == _slow_json(batch)
    assert list(fast[0]) == [r.offset for r in batch.iter_records()]


@settings(max_examples=150, deadline=None)
@given(position=st.integers(61, 400), xor=st.integers(1, 255))
def test_json_fast_path_on_damaged_records_answers_like_the_decoder_or_declines(position, xor):
    specs = [RecordSpec(i, T0 + i, b"key-%d" % i, b"value " * (i + 1), (("h", b"x"),)) for i in range(8)]
    data = bytearray(encode_batch(specs))
    position %= len(data)
    position = max(position, 61)
    data[position] ^= xor
    batch = read_batch(bytes(data), 0)
    fast = records_json_utf8(batch)
    try:
        slow = _slow_json(batch)
    except Exception:  # noqa: BLE001 - any decoder error: the fast path must have declined
        assert fast is None
        return
    assert fast is None or fast[1] == slow


# --------------------------------------------------------------------------- streaming


def test_deep_dump_streams_in_memory_that_does_not_grow_with_the_segment(tmp_path):
    path = tmp_path / "00000000000000000000.log"
    with open(path, "wb") as out:
        for b in range(50):  # 1.1 MB of 100-record batches: ~6 MB once decoded into Python objects
            specs = [RecordSpec(b * 100 + i, T0, b"key", b"v" * 200) for i in range(100)]
            out.write(encode_batch(specs, base_offset=b * 100))

    class Null:
        def write(self, data):
            return len(data)

        def flush(self):
            pass

    for renderer_type, options in ((TextRenderer, DumpOptions(print_data_log=True)),
                                   (JsonRenderer, DumpOptions(deep_iteration=True, json_records=True))):
        tracemalloc.start()
        render(iter_dump([DumpTarget(path.name, path)], options), renderer_type(Sink(Null(), Null()), options))
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        assert peak < 1_000_000, (renderer_type.__name__, peak)


def test_time_index_without_its_offset_index_is_still_checked_against_an_empty_one(tmp_path):
    """Kafka's tool would create the .index empty and die; kseg reports that and reads the entries on."""
    log = encode_batch([RecordSpec(o, T0 + o, b"k", b"v") for o in (0, 1)])
    log += encode_batch([RecordSpec(o, T0 + o, b"k", b"v") for o in (2, 3)])
    (tmp_path / "00000000000000000000.log").write_bytes(log)
    tindex = tmp_path / "00000000000000000000.timeindex"
    entries = [(T0 + 1, 1), (T0 + 2, 3), (T0 + 5, 5)]  # right; max timestamp is T0+3; past the log
    tindex.write_bytes(b"".join(struct.pack(">qi", ts, offset) for ts, offset in entries))
    got = events([tindex])
    assert [type(e).__name__ for e in got] == ["FileStart", "Problem", *["TimeIndexEntry"] * 3, "Summary", "Summary"]
    assert got[1].message == ("00000000000000000000.index not found beside it (Kafka's tool creates it empty and "
                              "dies; kseg checks the entries against an empty index)")
    assert [(e.timestamp, e.offset) for e in got[2:5]] == entries
    assert {e.kind: e.pairs for e in got if isinstance(e, Summary)} == {
        "time_index_mismatch": ((T0 + 2, T0 + 3),),
        "time_index_offset_not_found": ((5, -1),),
    }
    assert sorted(p.name for p in tmp_path.iterdir()) == ["00000000000000000000.log", "00000000000000000000.timeindex"]
