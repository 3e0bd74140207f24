"""The segment layer: Kafka's walk rules, where a walk stops and why, seeking, and atomic writes."""

import hashlib
import os

import pytest

from kseg.errors import Corrupt
from kseg.format import BAD_SIZE, END_OF_DATA, PARTIAL_BATCH, SHORT_TAIL, RecordSpec, encode_batch
from kseg.index import OFFSET_ENTRY, TIME_ENTRY
from kseg.segment import base_offset_from_name, open_segment
from kseg.writing import atomic_write

TS = 1700000000000


def _segment_bytes(n: int = 5, first: int = 100) -> bytes:
    return b"".join(
        encode_batch([RecordSpec(first + 2 * i, TS + i, b"k", b"v" * 50), RecordSpec(first + 2 * i + 1, TS + i, None, b"w")])
        for i in range(n)
    )


def _write(tmp_path, data: bytes, name="00000000000000000100.log"):
    path = tmp_path / name
    path.write_bytes(data)
    return path


def test_walk_reads_every_batch_and_ends_cleanly(tmp_path):
    data = _segment_bytes()
    with open_segment(_write(tmp_path, data)) as seg:
        walk = seg.walk()
        batches = list(walk)
        assert [b.base_offset for b in batches] == [100, 102, 104, 106, 108]
        assert batches[-1].position + batches[-1].size == len(data)
        assert (walk.end.position, walk.end.remaining, walk.end.reason) == (len(data), 0, END_OF_DATA)
        assert seg.base_offset == 100


def test_empty_file_has_no_batches(tmp_path):
    with open_segment(_write(tmp_path, b"")) as seg:
        walk = seg.walk()
        assert list(walk) == [] and walk.end.reason == END_OF_DATA and seg.size == 0


@pytest.mark.parametrize("cut", [1, 17, 18, 30, 100])
def test_partial_trailing_batch_stops_where_kafka_stops(tmp_path, cut):
    data = _segment_bytes()
    last_start = len(data) - len(encode_batch([RecordSpec(108, TS + 4, b"k", b"v" * 50), RecordSpec(109, TS + 4, None, b"w")]))
    truncated = data[: last_start + cut]
    with open_segment(_write(tmp_path, truncated)) as seg:
        walk = seg.walk()
        assert len(list(walk)) == 4
        assert walk.end.position == last_start and walk.end.remaining == cut
        assert walk.end.reason == (SHORT_TAIL if cut <= 17 else PARTIAL_BATCH)


def test_zero_filled_tail_is_a_bad_size(tmp_path):
    data = _segment_bytes(2) + bytes(4096)
    with open_segment(_write(tmp_path, data)) as seg:
        walk = seg.walk()
        assert len(list(walk)) == 2
        assert (walk.end.reason, walk.end.declared_size, walk.end.remaining) == (BAD_SIZE, 0, 4096)
        with pytest.raises(Corrupt, match=r"Found record size 0 smaller than minimum record overhead \(14\)") as err:
            list(seg.iter_batches())
        assert err.value.path == str(seg.path) and err.value.offset == len(data) - 4096 + 8


def test_segment_is_opened_read_only_and_left_unchanged(tmp_path):
    path = _write(tmp_path, _segment_bytes())
    before = (hashlib.sha256(path.read_bytes()).hexdigest(), os.stat(path).st_mtime_ns)
    os.chmod(path, 0o444)
    with open_segment(path) as seg:
        for batch in seg.iter_batches():
            list(batch.iter_records())
    assert (hashlib.sha256(path.read_bytes()).hexdigest(), os.stat(path).st_mtime_ns) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == [path.name]


def test_seek_by_offset_through_the_index(tmp_path):
    data = _segment_bytes(20)
    path = _write(tmp_path, data)
    with open_segment(path) as seg:
        positions = [b.position for b in seg.iter_batches()]
    # an index entry for the batch holding offsets 110..111 (relative 11), then a preallocated zero tail
    index = OFFSET_ENTRY.pack(11, positions[5]) + bytes(8 * 10)
    (tmp_path / "00000000000000000100.index").write_bytes(index)
    with open_segment(path) as seg:
        assert seg.offset_index()[0].offset == 111 and len(seg.offset_index()) == 1
        assert seg.position_of_offset(100) == positions[0]
        assert seg.position_of_offset(113) == positions[6]
        assert seg.position_of_offset(139) == positions[19]
        assert seg.position_of_offset(140) is None


def test_seek_by_timestamp_through_the_time_index(tmp_path):
    data = _segment_bytes(20)
    path = _write(tmp_path, data)
    (tmp_path / "00000000000000000100.timeindex").write_bytes(TIME_ENTRY.pack(TS + 5, 11))
    with open_segment(path) as seg:
        positions = [b.position for b in seg.iter_batches()]
        assert seg.position_of_timestamp(TS + 7) == positions[7]
        assert seg.position_of_timestamp(TS) == positions[0]
        assert seg.position_of_timestamp(TS + 100) is None


def test_names():
    assert base_offset_from_name("x/00000000000000000862.log") == 862
    assert base_offset_from_name("00000000000000007207-0000000001.checkpoint") == 7207
    assert base_offset_from_name("leader-epoch-checkpoint") is None


def test_atomic_write_replaces_whole_or_not_at_all(tmp_path):
    dest = tmp_path / "out.log"
    with atomic_write(dest) as out:
        out.write(b"abc")
    assert dest.read_bytes() == b"abc"
    with pytest.raises(FileExistsError), atomic_write(dest) as out:
        out.write(b"x")
    with pytest.raises(RuntimeError), atomic_write(dest, replace=True) as out:
        out.write(b"partial")
        raise RuntimeError("killed mid-write")
    assert dest.read_bytes() == b"abc"
    assert [p.name for p in tmp_path.iterdir()] == ["out.log"]


def test_seek_through_a_preallocated_index_reads_only_a_few_slots(tmp_path, monkeypatch):
    import kseg.index as index_module

    data = _segment_bytes(20)
    path = _write(tmp_path, data)
    with open_segment(path) as seg:
        positions = [b.position for b in seg.iter_batches()]
    entries = b"".join(OFFSET_ENTRY.pack(11 + 2 * i, positions[5 + i]) for i in range(10))
    (tmp_path / "00000000000000000100.index").write_bytes(entries + bytes(10 * 1024 * 1024 - len(entries)))
    calls = []
    real = index_module.MappedSlots._relative
    monkeypatch.setattr(index_module.MappedSlots, "_relative", lambda self, i: calls.append(i) or real(self, i))
    with open_segment(path) as seg:
        assert seg.position_of_offset(125) == positions[12]
        assert seg.position_of_offset(100) == positions[0]
    assert len(calls) < 60  # a binary search, not 1.3 million slots


def test_a_stale_index_entry_is_not_trusted(tmp_path):
    data = _segment_bytes(20)
    path = _write(tmp_path, data)
    with open_segment(path) as seg:
        positions = [b.position for b in seg.iter_batches()]
    # the entry claims offset 111 but points into the middle of a batch
    (tmp_path / "00000000000000000100.index").write_bytes(OFFSET_ENTRY.pack(11, positions[5] + 7))
    with open_segment(path) as seg:
        assert seg.position_of_offset(113) == positions[6]
