"""The resynchronising scanner: every valid batch and every gap, located exactly."""

import struct

from kseg.format import RecordSpec, encode_batch
from kseg.format.scan import BAD_CRC, BAD_SIZE, PARTIAL, SHORT_TAIL, Gap, find_next_batch, scan

TS = 1700000000000


def _batches(n=6):
    return [encode_batch([RecordSpec(i * 10, TS, b"k", b"v" * (20 + i))]) for i in range(n)]


def _positions(parts):
    out, pos = [], 0
    for p in parts:
        out.append(pos)
        pos += len(p)
    return out


def test_clean_data_is_all_batches():
    parts = _batches()
    items = list(scan(b"".join(parts)))
    assert [i.base_offset for i in items] == [0, 10, 20, 30, 40, 50]


def test_crc_damage_in_the_middle_costs_one_batch():
    parts = _batches()
    data = bytearray(b"".join(parts))
    pos = _positions(parts)
    data[pos[2] + 70] ^= 0xFF
    items = list(scan(bytes(data)))
    assert [i.base_offset for i in items if not isinstance(i, Gap)] == [0, 10, 30, 40, 50]
    [gap] = [i for i in items if isinstance(i, Gap)]
    assert (gap.start, gap.end, gap.reason) == (pos[2], pos[3], BAD_CRC)


def test_garbled_length_resyncs_on_the_next_good_batch():
    parts = _batches()
    data = bytearray(b"".join(parts))
    pos = _positions(parts)
    struct.pack_into(">i", data, pos[1] + 8, 5)
    items = list(scan(bytes(data)))
    [gap] = [i for i in items if isinstance(i, Gap)]
    assert (gap.start, gap.end, gap.reason, gap.declared_size) == (pos[1], pos[2], BAD_SIZE, 5)
    assert len([i for i in items if not isinstance(i, Gap)]) == 5


def test_zeroed_hole_is_recognised_and_skipped():
    parts = _batches()
    data = bytearray(b"".join(parts))
    pos = _positions(parts)
    data[pos[1] : pos[4]] = bytes(pos[4] - pos[1])
    items = list(scan(bytes(data)))
    [gap] = [i for i in items if isinstance(i, Gap)]
    assert (gap.start, gap.end, gap.zero_filled) == (pos[1], pos[4], True)


def test_torn_last_batch_is_a_partial_gap_to_the_end():
    parts = _batches()
    data = b"".join(parts)[:-10]
    items = list(scan(data))
    gap = items[-1]
    assert isinstance(gap, Gap) and gap.reason == PARTIAL and gap.end == len(data)


def test_short_tail():
    data = b"".join(_batches(2)) + b"\x01" * 5
    gap = list(scan(data))[-1]
    assert (gap.reason, gap.size) == (SHORT_TAIL, 5)


def test_find_next_batch_in_garbage():
    parts = _batches(2)
    data = b"\x07" * 1000 + parts[0]
    assert find_next_batch(data, 0, len(data)).position == 1000
    assert find_next_batch(b"\x00" * 100000, 0, 100000) is None


def test_a_log_dir_named_like_a_partition_is_a_log_dir(tmp_path):
    from kseg.ops.discover import expand_paths, is_partition_dir

    log_dir = tmp_path / "kafka-logs-1"
    part = log_dir / "orders-0"
    part.mkdir(parents=True)
    (part / "00000000000000000000.log").write_bytes(b"")
    assert not is_partition_dir(log_dir) and is_partition_dir(part)
    assert expand_paths([log_dir]) == [part / "00000000000000000000.log"]
    empty_partition = tmp_path / "payments-3"
    empty_partition.mkdir()
    assert is_partition_dir(empty_partition)
