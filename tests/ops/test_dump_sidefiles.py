"""The side-file readers kseg dump uses (kseg.format.checkpoints, Kafka's read rules) and their events.

Expected values come from the Java readers' rules (reference §3.10; CheckpointReadBuffer.read,
PartitionMetadataReadBuffer.read, java.util.Properties.load, FileQuorumStateStore, CleanShutdownFileHandler),
worked by hand.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from support import FIXTURES

from kseg.errors import Corrupt
from kseg.format.checkpoints import (
    java_lines,
    java_number,
    java_split,
    parse_partition_metadata,
    parse_topic_id,
    read_clean_shutdown,
    read_java_properties,
    read_quorum_state,
    scan_checkpoint,
)
from kseg.ops.discover import PLAIN_FILES, expand_paths
from kseg.ops.dump import SIDE_FILE_NAMES, DumpOptions, DumpTarget, RecordsEvent, handler_kind, iter_dump
from kseg.ops.dump.sidefiles import (
    CLEAN_SHUTDOWN,
    LEADER_EPOCH_CHECKPOINT,
    META_PROPERTIES,
    OFFSET_CHECKPOINTS,
    PARTITION_METADATA,
    QUORUM_STATE,
    CheckpointStart,
    LeaderEpochEntry,
)

# --------------------------------------------------------------------------- Java's line and number rules


def test_lines_end_at_lf_cr_or_crlf_and_keep_byte_positions():
    assert java_lines("0\r\n2\rcaf\u00e9 1\n9".encode()) == ([(0, "0"), (3, "2"), (5, "caf\u00e9 1"), (13, "9")], None)
    assert java_lines(b"0\n") == ([(0, "0")], None)  # a final line end makes no empty line
    assert java_lines(b"\n\n") == ([(0, ""), (1, "")], None)
    lines, problem = java_lines(b"ok\nbad \xc3\x28\nnever")
    assert lines == [(0, "ok")] and problem is not None and problem.offset == 7


def test_java_split_and_parse_rules():
    assert java_split("a  b\t c ") == ["a", "b", "c"]  # trailing empty parts dropped
    assert java_split(" a b") == ["", "a", "b"]  # a leading separator gives an empty first part
    assert java_split("") == [""]
    assert [java_number(t, 32) for t in ("7", "+7", "-7", "2147483647", "2147483648", "7 ", "0x7", "")] == [
        7, 7, -7, 2147483647, None, None, None, None]
    assert java_number("9223372036854775807", 64) == 2**63 - 1 and java_number("9223372036854775808", 64) is None


# --------------------------------------------------------------------------- CheckpointFile


@pytest.mark.parametrize("data, version, declared, entries, problem", [
    (b"", None, None, (), None),  # empty file: no entries, no error
    (b"0\n", 0, None, (), None),  # no count line: Kafka returns no entries
    (b"0\n2\n0 0\n3 1500\n", 0, 2, ((0, 0), (3, 1500)), None),
    (b"0\r\n1\r\n5 10", 0, 1, ((5, 10),), None),  # CRLF, no final line end
    (b"0\n1\n0 0\n4 9\n", 0, 1, ((0, 0), (4, 9)), "Expected [1] entries in checkpoint file, but found only [2]"),
    (b"0\n2\n0 0\n\n", 0, 2, ((0, 0),), "Malformed line in checkpoint file: "),  # an empty line is an entry
    (b"0\n1\n 0 0\n", 0, 1, (), "Malformed line in checkpoint file:  0 0"),  # leading blank: 3 parts
    (b"0\n1\n0 99999999999\n", 0, 1, ((0, 99999999999),), None),  # start offset is a long
    (b"0\n1\n99999999999 0\n", 0, 1, (), "Malformed line in checkpoint file: 99999999999 0"),  # epoch is an int
    (b"x\n", None, None, (), "Malformed line in checkpoint file: x"),
    (b"1\n0\n", 1, None, (), "Unrecognised version:1, expected version: 0"),
])
def test_leader_epoch_checkpoint_scan(data, version, declared, entries, problem):
    scan = scan_checkpoint(data, fields=2)
    assert (scan.version, scan.declared, scan.entries) == (version, declared, entries)
    assert (scan.problem.message if scan.problem else None) == problem


def test_offset_checkpoint_scan_keeps_topic_names_as_text():
    scan = scan_checkpoint(b"0\n2\nmy.topic-1 3 42\n__consumer_offsets 49 0\n", fields=3)
    assert scan.entries == (("my.topic-1", 3, 42), ("__consumer_offsets", 49, 0)) and scan.problem is None


# --------------------------------------------------------------------------- partition.metadata


def test_partition_metadata_reads_the_second_part_of_each_line_whatever_the_key():
    assert parse_partition_metadata(b"version: 0\ntopic_id: JiPG0GbKRRqpJrShexbMfw").topic_id == "JiPG0GbKRRqpJrShexbMfw"
    assert parse_partition_metadata(b"v:  3\nx:\tJiPG0GbKRRqpJrShexbMfw\n").version == 3  # ":\s+" split, any version >= 0


@pytest.mark.parametrize("data, offset, message", [
    (b"", 0, "empty file (Kafka: NullPointerException reading the version line)"),
    (b"version:0\n", 0, "Malformed line in checkpoint file: version:0"),  # no blank after the colon
    (b"version: -1\n", 0, "Unrecognized version of partition metadata file: -1"),
    (b"version: 0", 10, "no topic_id line (Kafka: NullPointerException)"),
    (b"version: 0\ntopic_id: AAAAAAAAAAAAAAAAAAAAAA", 11, "Invalid topic ID in partition metadata file"),
    (b"version: 0\ntopic_id: abc", 11,
     "Input string `abc` decoded as 2 bytes, which is not equal to the expected 16 bytes of a base64-encoded UUID"),
])
def test_partition_metadata_errors(data, offset, message):
    with pytest.raises(Corrupt) as caught:
        parse_partition_metadata(data)
    assert (caught.value.offset, caught.value.message) == (offset, message)


def test_topic_id_accepts_padding_and_rejects_what_java_rejects():
    assert parse_topic_id("JiPG0GbKRRqpJrShexbMfw==") == "JiPG0GbKRRqpJrShexbMfw"
    for bad in ("JiPG0GbKRRqpJrShexbMfw+", "A" * 25, "JiPG0GbKRRqpJrShexbMf"):
        with pytest.raises(ValueError):
            parse_topic_id(bad)


# --------------------------------------------------------------------------- meta.properties


def test_java_properties_separators_escapes_continuations_and_comments():
    data = (b"# written by Properties.store\n! also a comment\n\n  node.id=1\ncluster.id : abc\n"
            b"key\\ with\\ blanks value with blanks\nlong = a\\\n     b\\\\\nuni=caf\\u00e9 \\t|\nlatin=\xe9\nempty\n")
    properties = read_java_properties(data)
    assert properties.comments == ("# written by Properties.store", "! also a comment")
    assert properties.properties == (
        ("node.id", "1"), ("cluster.id", "abc"), ("key with blanks", "value with blanks"), ("long", "ab\\"),
        ("uni", "caf\u00e9 \t|"), ("latin", "\u00e9"), ("empty", ""),
    )
    assert read_java_properties(b"a=1\na=2\n").as_dict() == {"a": "2"}  # the later one wins, as in Java


def test_bad_unicode_escape_is_javas_error_at_its_line():
    with pytest.raises(Corrupt) as caught:
        read_java_properties(b"version=1\nnode.id=\\u12\n")
    assert (caught.value.offset, caught.value.message) == (10, "Malformed \\uxxxx encoding.")


# --------------------------------------------------------------------------- quorum-state, .kafka_cleanshutdown


def test_quorum_state_is_the_first_line_as_a_json_object_in_file_order():
    state = read_quorum_state(b'{"leaderId":1,"leaderEpoch":2,"votedId":-1,"data_version":1}\nignored')
    assert list(state) == ["leaderId", "leaderEpoch", "votedId", "data_version"]
    for data, message in ((b"", "File ended prematurely."), (b"[1]", "Deserialized node [1] is not an object node"),
                          (b'{"a":', "not JSON: Expecting value"), (b'{"a":NaN}', "not JSON: NaN is not JSON")):
        with pytest.raises(Corrupt, match=message.replace("[", r"\[").replace("]", r"\]")):
            read_quorum_state(data)


def test_clean_shutdown_marker():
    assert read_clean_shutdown(b"") == read_clean_shutdown(b"").__class__(True, None, None)
    marker = read_clean_shutdown(b'{"version":0,"brokerEpoch":42}')
    assert (marker.empty, marker.version, marker.broker_epoch) == (False, 0, 42)
    for bad in (b"garbage", b"[]", b'{"version":"0"}', b" "):
        with pytest.raises(Corrupt):
            read_clean_shutdown(bad)


# --------------------------------------------------------------------------- dispatch and events


def test_every_plain_file_discover_knows_is_dumped_by_name():
    assert set(SIDE_FILE_NAMES) == {*PLAIN_FILES, ".kafka_cleanshutdown"} == {
        LEADER_EPOCH_CHECKPOINT, *OFFSET_CHECKPOINTS, PARTITION_METADATA, META_PROPERTIES, QUORUM_STATE,
        CLEAN_SHUTDOWN}
    assert all(handler_kind(name) == name for name in SIDE_FILE_NAMES)
    assert handler_kind("leader-epoch-checkpoint.tmp") is None and handler_kind("partition.metadata.bak") is None


def test_checkpoint_events_stream_entries_then_the_problem():
    path = FIXTURES / "dump" / "sidefiles" / "count" / "leader-epoch-checkpoint"
    got = list(iter_dump([DumpTarget("x", path)], DumpOptions()))
    assert [type(e).__name__ for e in got] == ["FileStart", "CheckpointStart", "LeaderEpochEntry", "LeaderEpochEntry",
                                              "Problem"]
    assert got[1] == CheckpointStart("x", LEADER_EPOCH_CHECKPOINT, 0, 3, False)
    assert got[3] == LeaderEpochEntry("x", 2, 100)


def test_log_directory_named_like_a_partition_with_bootstrap_checkpoint_expands_its_partitions(tmp_path):
    """``bootstrap.checkpoint`` and ``meta.properties`` sit only at a log directory's root."""
    log_dir = tmp_path / "kafka-logs-1"
    (log_dir / "orders-0").mkdir(parents=True)
    (log_dir / "orders-0" / "00000000000000000000.log").write_bytes(b"")
    (log_dir / "bootstrap.checkpoint").write_bytes(b"")
    (log_dir / "meta.properties").write_bytes(b"version=1\n")
    names = [p.relative_to(log_dir).as_posix() for p in expand_paths([log_dir])]
    assert names == ["orders-0/00000000000000000000.log", "bootstrap.checkpoint", "meta.properties"]
    lonely = tmp_path / "other"
    lonely.mkdir()
    (lonely / "bootstrap.checkpoint").write_bytes(b"")
    assert [p.name for p in expand_paths([lonely])] == ["bootstrap.checkpoint"]


def test_decoder_turns_off_the_json_fast_path():
    path = FIXTURES / "internal" / "segments" / "__consumer_offsets-0" / "00000000000000000000.log"
    target = [DumpTarget("x", Path(path))]
    fast = [e for e in iter_dump(target, DumpOptions(deep_iteration=True, json_records=True))
            if isinstance(e, RecordsEvent)]
    decoded = [e for e in iter_dump(target, DumpOptions(print_data_log=True, json_records=True, decoder="offsets"))
               if isinstance(e, RecordsEvent)]
    assert all(e.json is not None for e in fast)
    assert all(e.json is None and type(e.records[0]).__name__ == "DecodedRecord" for e in decoded)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_a_fifo_named_like_a_side_file_is_not_read(tmp_path):
    fifo = tmp_path / "quorum-state"
    os.mkfifo(fifo)
    got = list(iter_dump([DumpTarget("q", fifo)], DumpOptions()))  # would block forever if it were read
    assert [type(e).__name__ for e in got] == ["FileStart", "Problem"]
    assert got[1].message == "not a regular file; not read"
