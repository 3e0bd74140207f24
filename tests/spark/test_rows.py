"""kseg.spark.rows without Spark: segments to Arrow rows, split planning, damage modes, the session setup."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from support import FIXTURES, IN_CI

try:
    import pyarrow as pa
except ImportError:  # pragma: no cover - the test extra installs it
    if IN_CI:
        raise
    pytest.skip("pyarrow is not installed (pip install 'kseg[spark]')", allow_module_level=True)

from click.testing import CliRunner

from kseg.cli import cli
from kseg.errors import Corrupt
from kseg.format import RecordSpec, encode_batch, read_batch
from kseg.format.control import encode_control_key, encode_end_txn_marker
from kseg.index import OFFSET_ENTRY
from kseg.segment import open_segment
from kseg.spark import rows, scratch
from kseg.spark.decode import batch_columns, v2_columns
from kseg.spark.session import _stderr_to_log, prepare_environment, session_conf

REAL = FIXTURES / "real" / "kafka-logs"
VERIFY = FIXTURES / "verify"
OFFSETS_LOG = REAL / "__consumer_offsets-12" / "00000000000000000000.log"


def dump_json(*paths: Path) -> list[dict]:
    result = CliRunner().invoke(
        cli, ["dump", "--format", "json", "--deep-iteration", "--payload", "base64", *map(str, paths)]
    )
    assert result.exit_code == 0, result.output
    return [json.loads(line) for line in result.stdout.splitlines()]


def _b64(text: str | None) -> bytes | None:
    return None if text is None else base64.b64decode(text)


# -- the rows are kseg dump's ------------------------------------------------------------------------


def test_record_rows_are_the_records_kseg_dump_shows():
    table = rows.read_paths([REAL])
    got = [
        (r["path"], r["batch_position"], r["offset"], r["timestamp"], r["key"], r["value"],
         [(h["key"], h["value"]) for h in r["headers"]])
        for r in table.to_pylist()
    ]
    expected = [
        (b["path"], b["position"], r["offset"], r["timestamp"], _b64(r["key"]), _b64(r["value"]),
         [(k, _b64(v)) for k, v in r["headers"]])
        for b in dump_json(*rows.segment_files([REAL])) if b["type"] == "batch"
        for r in b["records"]
    ]
    assert len(got) == 1094
    assert got == expected


def test_record_rows_carry_the_batch_and_file_fields():
    table = rows.read_paths([REAL / "nikhilDemo-0"])
    assert table.to_pylist()[1] == {
        "path": str(REAL / "nikhilDemo-0" / "00000000000000000000.log"),
        "topic": "nikhilDemo",
        "partition": 0,
        "segment_base_offset": 0,
        "batch_position": 70,
        "offset": 1,
        "timestamp": 1722857164633,
        "timestamp_type": "CreateTime",
        "key": None,
        "value": b"hi",
        "headers": [],
        "magic": 2,
        "codec": "none",
        "producer_id": 10000,
        "producer_epoch": 0,
        "sequence": 0,
        "is_transactional": False,
        "is_control": False,
    }


def test_batch_rows_are_the_batches_kseg_dump_shows():
    fields = ["size", "magic", "base_offset", "last_offset", "count", "codec", "timestamp_type", "max_timestamp",
              "crc", "producer_id", "producer_epoch", "base_sequence", "last_sequence", "partition_leader_epoch",
              "is_transactional", "is_control"]
    got = [(r["path"], r["batch_position"], *(r[f] for f in fields))
           for r in rows.read_paths([REAL], level=rows.BATCH).to_pylist()]
    batches = [b for b in dump_json(*rows.segment_files([REAL])) if b["type"] == "batch"]
    expected = [(b["path"], b["position"], *(b[f] for f in fields)) for b in batches]
    assert len(got) == 367
    assert got == expected


# -- split planning -----------------------------------------------------------------------------------


def _index_positions(log: Path) -> list[int]:
    data = log.with_suffix(".index").read_bytes()
    whole = len(data) - len(data) % OFFSET_ENTRY.size
    return [OFFSET_ENTRY.unpack_from(data, i)[1] for i in range(0, whole, OFFSET_ENTRY.size)]


def _batch_positions(log: Path) -> list[int]:
    with open_segment(log) as segment:
        return [batch.position for batch in segment.iter_batches()]


def test_a_large_segment_is_cut_at_index_positions_and_gives_the_same_rows():
    whole = rows.plan_splits([OFFSETS_LOG], split_bytes=1 << 20)
    cut = rows.plan_splits([OFFSETS_LOG], split_bytes=8192)
    assert [(s.start, s.end) for s in whole] == [(0, 64548)]
    assert [(s.start, s.end) for s in cut] == [
        (0, 4388), (4388, 13228), (13228, 22068), (22068, 30876), (30876, 39716), (39716, 48556),
        (48556, 52976), (52976, 64548),
    ]
    assert {s.start for s in cut[1:]} <= set(_index_positions(OFFSETS_LOG))
    one = pa.Table.from_batches([b for s in whole for b in rows.read_split(s)])
    many = pa.Table.from_batches([b for s in cut for b in rows.read_split(s)])
    assert one.num_rows == 862
    assert many.equals(one)


def test_without_an_index_a_segment_is_cut_where_walking_finds_batches(tmp_path):
    log = tmp_path / "orders-3" / OFFSETS_LOG.name
    log.parent.mkdir()
    shutil.copy(OFFSETS_LOG, log)
    cut = rows.plan_splits([log], split_bytes=8192)
    assert len(cut) == 8
    assert {s.start for s in cut[1:]} <= set(_batch_positions(log))
    assert {(s.topic, s.partition, s.segment_base_offset) for s in cut} == {("orders", 3, 0)}
    table = pa.Table.from_batches([b for s in cut for b in rows.read_split(s)])
    assert table.column("offset").to_pylist() == list(range(862))


def test_an_index_pointing_inside_a_batch_is_not_trusted_for_cuts():
    log = VERIFY / "corrupt" / "bad-indexes" / "orders-0" / "00000000000000000027.log"
    assert _index_positions(log)[0] not in _batch_positions(log)  # what the fixture is about
    cut = rows.plan_splits([log], split_bytes=1800)  # the entry (5289) would serve the last target, 5400
    assert [(s.start, s.end) for s in cut] == [(0, 1321), (1321, 2642), (2642, 5284), (5284, 5571)]
    assert {s.start for s in cut} <= set(_batch_positions(log))
    many = pa.Table.from_batches([b for s in cut for b in rows.read_split(s)])
    assert many.equals(rows.read_paths([log], split_bytes=1 << 20))


def test_the_default_split_size_follows_spark_rule():
    assert rows.default_split_bytes(1 << 30, 16) == 64 << 20
    assert rows.default_split_bytes(1 << 30, 2) == 128 << 20
    assert rows.default_split_bytes(1 << 20, 2) == 4 << 20


def test_directories_mean_their_log_and_checkpoint_files_and_files_are_taken_as_named(tmp_path):
    files = rows.segment_files([REAL])
    assert [f.relative_to(REAL).as_posix() for f in files] == [
        "__cluster_metadata-0/00000000000000007207-0000000001.checkpoint",
        "__consumer_offsets-12/00000000000000000000.log",
        "__consumer_offsets-12/00000000000000000862.log",
        "foo-0/00000000000000000000.log",
        "nikhilDemo-0/00000000000000000000.log",
        "some-topic-0/00000000000000000000.log",
    ]
    renamed = tmp_path / "evidence.bin"
    shutil.copy(OFFSETS_LOG, renamed)
    assert rows.segment_files([renamed]) == [renamed]
    with pytest.raises(FileNotFoundError, match="nope: no such file"):
        rows.segment_files([tmp_path / "nope"])


# -- records of every kind ------------------------------------------------------------------------------


def _generated_segment(path: Path) -> None:
    ts = 1_700_000_000_000
    data = encode_batch(
        [RecordSpec(0, ts, b"k0", b"v0", (("trace", b"\x01"), (b"\xff\xfe", None))),
         RecordSpec(1, ts + 5, None, None), RecordSpec(2, ts + 7, b"", b"")],
        producer_id=42, producer_epoch=3, base_sequence=2_147_483_646,
    )
    data += encode_batch([RecordSpec(3, ts + 9, b"k3", b"v3" * 50)], codec="gzip", base_offset=3,
                         timestamp_type="LogAppendTime", log_append_time=ts + 100)
    data += encode_batch([RecordSpec(4, ts + 10, b"k4", b"v4")], producer_id=42, producer_epoch=3,
                         base_sequence=0, is_transactional=True, base_offset=4)
    data += encode_batch([RecordSpec(5, ts + 11, encode_control_key(1), encode_end_txn_marker(7))],
                         producer_id=42, producer_epoch=3, is_transactional=True, is_control=True, base_offset=5)
    data += encode_batch([RecordSpec(6, ts + 12, b"k6", b"v6")], magic=1, base_offset=6)
    path.write_bytes(data)


def test_every_kind_of_record_comes_out_as_written(tmp_path):
    log = tmp_path / "00000000000000000000.log"
    _generated_segment(log)
    got = rows.read_paths([log]).to_pylist()
    ts = 1_700_000_000_000
    picked = [(r["offset"], r["timestamp"], r["timestamp_type"], r["key"], r["value"], r["headers"], r["sequence"],
               r["codec"], r["magic"], r["producer_id"], r["is_transactional"], r["is_control"]) for r in got]
    assert picked == [
        (0, ts, "CreateTime", b"k0", b"v0", [{"key": "trace", "value": b"\x01"}, {"key": "\ufffd\ufffd", "value": None}],
         2_147_483_646, "none", 2, 42, False, False),
        (1, ts + 5, "CreateTime", None, None, [], 2_147_483_647, "none", 2, 42, False, False),
        (2, ts + 7, "CreateTime", b"", b"", [], 0, "none", 2, 42, False, False),  # the sequence wraps, as in Kafka
        (3, ts + 100, "LogAppendTime", b"k3", b"v3" * 50, [], -1, "gzip", 2, -1, False, False),
        (4, ts + 10, "CreateTime", b"k4", b"v4", [], 0, "none", 2, 42, True, False),
        (5, ts + 11, "CreateTime", encode_control_key(1), encode_end_txn_marker(7), [], -1, "none", 2, 42, True, True),
        (6, ts + 12, "CreateTime", b"k6", b"v6", [], -1, "none", 1, -1, False, False),
    ]


def test_the_columnar_fast_path_gives_what_the_full_decoder_gives(tmp_path):
    log = tmp_path / "00000000000000000000.log"
    _generated_segment(log)
    paths = [log, *rows.segment_files([REAL]), *rows.segment_files([VERIFY / "clean"])]
    fast_used = 0
    for path in paths:
        with open_segment(path) as segment:
            for batch in segment.walk():
                records = list(batch.iter_records())
                full = [[r[i] for r in records] for i in (0, 1, 2, 3, 4, 5, 13)]
                assert [list(c) for c in batch_columns(batch)] == full
                fast_used += batch.magic == 2 and v2_columns(batch) is not None
    assert fast_used > 150


# -- damage ----------------------------------------------------------------------------------------------


CRC_FLIP = VERIFY / "corrupt" / "crc-flip.log"


def test_records_of_a_damaged_batch_are_dropped_by_default():
    with open_segment(CRC_FLIP) as segment:
        bad = read_batch(segment.buf, 434)
        assert not bad.is_valid()
        all_offsets = [r.offset for batch in segment.walk() for r in batch.iter_records()]
        lost = set(range(bad.base_offset, bad.last_offset + 1))
    table = rows.read_paths([CRC_FLIP])
    assert table.column_names == [name for name, _, _ in rows.RECORD_COLUMNS]
    assert table.column("offset").to_pylist() == [o for o in all_offsets if o not in lost]
    assert len(lost) == 3


def test_permissive_mode_adds_one_located_row_per_damaged_region():
    table = rows.read_paths([VERIFY / "corrupt" / "several.log"], mode=rows.PERMISSIVE)
    damaged = [r for r in table.to_pylist() if r["problem"] is not None]
    assert [(r["batch_position"], r["magic"], r["offset"], r["key"], r["problem"]) for r in damaged] == [
        (0, 2, None, None, "byte 17 (batch.crc): Record is corrupt (stored crc = 1384625300, computed crc = 2938831253)"),
        (651, 2, None, None, "byte 668 (batch.crc): Record is corrupt (stored crc = 2606055682, computed crc = "
                             "1268216967); then 215 bytes up to the next valid batch"),
    ]
    assert table.column_names[-1] == "problem"


def test_permissive_rows_for_framing_and_decoding_problems():
    table = rows.read_paths(
        [VERIFY / "corrupt" / "zero-tail.log", VERIFY / "corrupt" / "bad-codec.log"], mode=rows.PERMISSIVE
    )
    damaged = [(Path(r["path"]).name, r["batch_position"], r["codec"], r["problem"])
               for r in table.to_pylist() if r["problem"]]
    assert damaged == [
        ("zero-tail.log", 1090, None, "byte 1090: 3000 bytes in no valid batch (bad-size, size field 0, all zero)"),
        ("bad-codec.log", 217, "unknown(6)", "byte 278 (batch.records): Unknown compression type id: 6"),
    ]


def test_failfast_raises_the_located_error():
    with pytest.raises(Corrupt) as caught:
        rows.read_paths([CRC_FLIP], mode=rows.FAILFAST)
    assert str(caught.value) == (
        f"{CRC_FLIP}: byte 451 (batch.crc): Record is corrupt (stored crc = 1560510572, computed crc = 309840341)"
    )


def test_batch_level_permissive_keeps_the_header_of_a_batch_whose_crc_fails():
    table = rows.read_paths([CRC_FLIP], level=rows.BATCH, mode=rows.PERMISSIVE)
    got = [(r["batch_position"], r["base_offset"], r["last_offset"], r["problem"] is None) for r in table.to_pylist()]
    assert got == [(0, 0, 2, True), (217, 3, 5, True), (434, 6, 8, False), (651, 9, 11, True), (870, 12, 14, True)]


def test_an_unreadable_file_is_a_damage_row_not_a_crash(monkeypatch):
    # Simulated EACCES: a real chmod 0 is no obstacle to root, which CI runs as.
    def refuse(path):
        raise PermissionError(13, "Permission denied", str(path))

    monkeypatch.setattr(rows, "open_segment", refuse)
    table = rows.read_paths([CRC_FLIP], mode=rows.PERMISSIVE)
    assert [(r["batch_position"], r["problem"]) for r in table.to_pylist()] == [
        (None, "cannot read the file: Permission denied")
    ]
    assert rows.read_paths([CRC_FLIP]).num_rows == 0


def _snapshot(root: Path) -> dict[str, str]:
    return {str(p): hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(root.rglob("*")) if p.is_file()}


def test_reading_never_changes_or_creates_a_file():
    before = _snapshot(FIXTURES)
    for level in (rows.RECORD, rows.BATCH):
        rows.read_paths([REAL, VERIFY], level=level, mode=rows.PERMISSIVE, split_bytes=4 << 20)
    rows.plan_splits([OFFSETS_LOG], split_bytes=4096)
    assert _snapshot(FIXTURES) == before


# -- the core never imports pyspark; the session setup ---------------------------------------------------


def test_the_core_package_never_imports_pyspark():
    code = (
        "import sys, kseg, kseg.format, kseg.segment, kseg.ops.verify, kseg.ops.dump, kseg.cli, "
        "kseg.commands.spark, kseg.spark, kseg.spark.rows\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('pyspark', 'py4j')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout == "[]\n"


def test_local_mode_binds_to_loopback_and_uses_this_interpreter(monkeypatch):
    monkeypatch.delenv("SPARK_LOCAL_IP", raising=False)
    monkeypatch.setenv("PYSPARK_PYTHON", "/elsewhere/python")
    prepare_environment("local[2]")
    assert os.environ["SPARK_LOCAL_IP"] == "127.0.0.1"
    assert os.environ["PYSPARK_PYTHON"] == sys.executable
    conf = session_conf("local[2]", [("spark.executor.memory", "2g")])
    assert {k: conf[k] for k in ("spark.master", "spark.driver.host", "spark.ui.enabled",
                                 "spark.ui.showConsoleProgress", "spark.executor.memory")} == {
        "spark.master": "local[2]", "spark.driver.host": "127.0.0.1", "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "false", "spark.executor.memory": "2g",
    }
    assert conf["spark.driver.extraJavaOptions"].startswith("-Dlog4j2.configurationFile=file:")
    with_flags = session_conf("local[2]", [("spark.driver.extraJavaOptions", "-XX:+UseSerialGC")])
    assert with_flags["spark.driver.extraJavaOptions"] == conf["spark.driver.extraJavaOptions"] + " -XX:+UseSerialGC"


def test_on_a_cluster_the_driver_is_reachable_and_a_chosen_python_is_kept(monkeypatch):
    monkeypatch.delenv("SPARK_LOCAL_IP", raising=False)
    monkeypatch.setenv("PYSPARK_PYTHON", "/opt/py/bin/python3")
    prepare_environment("spark://head:7077")
    assert "SPARK_LOCAL_IP" not in os.environ
    assert os.environ["PYSPARK_PYTHON"] == "/opt/py/bin/python3"
    assert "spark.driver.host" not in session_conf("spark://head:7077")


def test_the_jvm_stderr_goes_to_the_log_file_not_the_terminal(tmp_path, capfd, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    monkeypatch.setitem(scratch._state, "dir", None)
    log = scratch.log_file()  # spark.log in this run's private directory under TMPDIR
    assert log.parent.parent == tmp_path and stat.S_IMODE(log.parent.stat().st_mode) == 0o700
    with _stderr_to_log():
        subprocess.run(["sh", "-c", "echo 'WARNING: Using incubator modules' >&2"], check=True)
    print("after", file=sys.stderr)
    assert capfd.readouterr().err == "after\n"
    assert log.read_text() == "WARNING: Using incubator modules\n"


def test_large_records_make_smaller_arrow_batches(tmp_path, monkeypatch):
    log = tmp_path / "00000000000000000000.log"
    log.write_bytes(b"".join(
        encode_batch([RecordSpec(i, 0, None, bytes([i]) * 1000)], base_offset=i) for i in range(10)
    ))
    monkeypatch.setattr(rows, "CHUNK_BYTES", 2500)
    split = rows.plan_splits([log])[0]
    assert [b.num_rows for b in rows.read_split(split)] == [3, 3, 3, 1]
    assert [b.num_rows for b in rows.read_split(split, chunk_rows=4)] == [3, 3, 3, 1]
    assert [b.num_rows for b in rows.read_split(split, chunk_rows=2)] == [2, 2, 2, 2, 2]
