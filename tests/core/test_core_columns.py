"""The Spark source's Arrow batches are identical whether the core builds them or pure Python does.

``kseg.spark.rows.record_batches`` sends each valid batch's records to the core
(``kseg.format.arrow_columns``, ``rust/kseg-wire/src/columns.rs``) when it takes them and to the
pure path (``kseg.spark.decode``) otherwise.  Compared here, batch by batch (same row counts, same
schema, ``RecordBatch.equals``): logs of hypothesis-built batches (null and empty keys and values,
headers with null values and keys that are not UTF-8, LogAppendTime, producer fields, every codec,
control and V0/V1 batches between), damaged copies of them, every real corpus file, every mode and
level, and ``chunk_rows`` from 1 up.  The pure side runs with no core at all (records scanner too).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from segments import corpus_logs, damaged

pa = pytest.importorskip("pyarrow")

from kseg.format import RecordSpec, arrow_columns, encode_batch, read_batch, records  # noqa: E402
from kseg.format.control import encode_control_key, encode_end_txn_marker  # noqa: E402
from kseg.format.layout import RECORD_BATCH_OVERHEAD  # noqa: E402
from kseg.spark import rows  # noqa: E402

MODES = (rows.DROPMALFORMED, rows.PERMISSIVE, rows.FAILFAST)
TS = 1_700_000_000_000


def _batches(path: Path, core, mode: str, level: str, chunk_rows: int) -> list | str:
    """The Arrow batches of every split of ``path`` on one path (``core`` None: pure), or FAILFAST's error."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(arrow_columns, "CORE", core)
        if core is None:
            patch.setattr(records, "CORE", None)
        try:
            return [b for split in rows.plan_splits([path]) for b in rows.read_split(split, level, mode, chunk_rows)]
        except Exception as err:  # FAILFAST: the same error on both paths
            return f"{type(err).__name__}: {err}"


def assert_same(path: Path, core, chunk_rows: int = rows.CHUNK_ROWS, levels=(rows.RECORD,), modes=MODES) -> list:
    """Core and pure give the same batches for ``path`` in every mode; returns the core's DROPMALFORMED ones."""
    first = None
    for level in levels:
        for mode in modes:
            compiled = _batches(path, core, mode, level, chunk_rows)
            pure = _batches(path, None, mode, level, chunk_rows)
            if isinstance(pure, str) or isinstance(compiled, str):
                assert compiled == pure
                continue
            assert [b.num_rows for b in compiled] == [b.num_rows for b in pure]
            for mine, theirs in zip(compiled, pure, strict=True):
                assert mine.schema.equals(theirs.schema, check_metadata=True)
                assert mine.schema.equals(rows.arrow_schema(level, mode))
                assert mine.equals(theirs), (mine.to_pylist(), theirs.to_pylist())
            table = pa.Table.from_batches(compiled, schema=rows.arrow_schema(level, mode))
            assert table.equals(pa.Table.from_batches(pure, schema=rows.arrow_schema(level, mode)))
            if first is None and mode == rows.DROPMALFORMED:
                first = compiled
    return first or []


def _partition(tmp_path: Path, data: bytes) -> Path:
    directory = tmp_path / "topic-3"
    directory.mkdir(exist_ok=True)
    log = directory / "00000000000000000000.log"
    log.write_bytes(data)
    return log


header_key = st.one_of(st.text(max_size=8), st.binary(max_size=8))
record = st.tuples(
    st.one_of(st.none(), st.binary(max_size=40)),
    st.one_of(st.none(), st.binary(max_size=60)),
    st.lists(st.tuples(header_key, st.one_of(st.none(), st.binary(max_size=10))), max_size=3),
    st.integers(-(2**20), 2**41),
)
batch = st.tuples(
    st.lists(record, min_size=1, max_size=6),
    st.sampled_from((2, 2, 2, 2, 1, 0)),
    st.sampled_from(("none", "none", "gzip", "lz4", "zstd", "snappy")),
    st.booleans(),  # LogAppendTime
    st.sampled_from((-1, 0, 7, 2**31 - 3)),  # base sequence (with a producer id when >= 0)
    st.integers(0, 12),  # one in 13: a control batch (an end marker) instead
)


def _encode(spec, offset: int) -> tuple[bytes, int]:
    items, magic, codec, log_append, base_sequence, control = spec
    if control == 0:
        marker = RecordSpec(offset, TS, encode_control_key(1), encode_end_txn_marker(3))
        return encode_batch([marker], base_offset=offset, producer_id=5, producer_epoch=1, is_transactional=True,
                            is_control=True), 1
    if magic < 2:
        codec = "none" if codec == "zstd" else codec
        specs = [RecordSpec(offset + i, TS + abs(ts) % 10**9, k, v) for i, (k, v, _, ts) in enumerate(items)]
        return encode_batch(specs, magic=magic, codec=codec), len(specs)
    specs = [RecordSpec(offset + i, max(TS + ts, 0), k, v, tuple(h)) for i, (k, v, h, ts) in enumerate(items)]
    producer = {"producer_id": 11, "producer_epoch": 2, "base_sequence": base_sequence} if base_sequence >= 0 else {}
    appended = {"timestamp_type": "LogAppendTime", "log_append_time": TS + 5} if log_append else {}
    return encode_batch(specs, codec=codec, base_offset=offset, **producer, **appended), len(specs)


def _log(specs) -> bytes:
    out, offset = bytearray(), 0
    for spec in specs:
        data, count = _encode(spec, offset)
        out += data
        offset += count
    return bytes(out)


@settings(deadline=None, max_examples=60)
@given(st.lists(batch, min_size=1, max_size=8), st.sampled_from((1, 2, 3, 7, rows.CHUNK_ROWS)), st.integers(0, 2**32))
def test_built_logs_damaged_or_not(core, tmp_path_factory, specs, chunk_rows, seed):
    tmp_path = tmp_path_factory.mktemp("columns")
    data = _log(specs)
    assert_same(_partition(tmp_path, data), core, chunk_rows)
    assert_same(_partition(tmp_path, damaged(data, seed)), core, chunk_rows)


@settings(deadline=None, max_examples=30)
@given(st.lists(record, min_size=1, max_size=30), st.booleans())
def test_clean_v2_batches_all_go_through_the_core(core, tmp_path_factory, items, log_append):
    """UTF-8 header keys, no damage: the core takes every batch (the pure decoder is never called)."""
    tmp_path = tmp_path_factory.mktemp("clean")
    items = [(k, v, [(str(hk), hv) for hk, hv in h], ts) for k, v, h, ts in items]
    data = _log([(items[:7], 2, "none", log_append, -1, 1), (items[7:] or items[:1], 2, "gzip", False, 3, 1)])
    log = _partition(tmp_path, data)
    batches = assert_same(log, core, chunk_rows=4, modes=(rows.DROPMALFORMED,))
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(rows, "batch_columns", None)  # calling it would raise TypeError
        alone = _batches(log, core, rows.DROPMALFORMED, rows.RECORD, 4)
    assert alone == batches
    assert sum(b.num_rows for b in batches) == len(items[:7]) + len(items[7:] or items[:1])


def test_header_keys_that_are_not_utf8_go_to_the_pure_path(core, tmp_path):
    """Java decodes them with replacement characters (format/jvm_text.py): the core declines the batch."""
    specs = [RecordSpec(0, TS, b"k", b"v", ((b"\xed\xa0\x80x", b"1"), ("ok", None)))]
    data = encode_batch(specs) + encode_batch([RecordSpec(1, TS, None, b"", (("h", b"2"),))], base_offset=1)
    log = _partition(tmp_path, data)
    builder = core.RecordColumns()
    first = read_batch(data, 0)
    assert builder.add(data, RECORD_BATCH_OVERHEAD, first.size, 1, 0, TS, None, -1) is None
    assert builder.rows == 0
    batches = assert_same(log, core, chunk_rows=1)
    assert [b.column("headers").to_pylist() for b in batches] == [
        [[{"key": "\ufffdx", "value": b"1"}, {"key": "ok", "value": None}]],
        [[{"key": "h", "value": b"2"}]],
    ]


def test_sequences_wrap_as_kafka_increments_them(core, tmp_path):
    specs = [RecordSpec(i, TS, b"k", b"v") for i in range(5)]
    data = encode_batch(specs, producer_id=1, producer_epoch=0, base_sequence=2**31 - 3)
    batches = assert_same(_partition(tmp_path, data), core)
    assert batches[0].column("sequence").to_pylist() == [2**31 - 3, 2**31 - 2, 2**31 - 1, 0, 1]


def test_batch_level_and_chunk_bytes(core, tmp_path, monkeypatch):
    """The batch level is unchanged; a chunk also closes at CHUNK_BYTES of keys and values, on both paths."""
    data = b"".join(encode_batch([RecordSpec(o, TS, b"kk", b"v" * 50)], base_offset=o) for o in range(9))
    log = _partition(tmp_path, data)
    assert_same(log, core, levels=(rows.BATCH,))
    monkeypatch.setattr(rows, "CHUNK_BYTES", 100)
    batches = assert_same(log, core)
    assert [b.num_rows for b in batches] == [2, 2, 2, 2, 1]


@pytest.mark.parametrize("log", corpus_logs(), ids=lambda p: p.name)
def test_real_corpus_files(core, log, tmp_path):
    assert_same(log, core)
    assert_same(log, core, chunk_rows=97, modes=(rows.PERMISSIVE,))
    data = log.read_bytes()
    for seed in range(3):
        assert_same(_partition(tmp_path, damaged(data, seed)), core, chunk_rows=1000)
