"""The one V2 record scanner against the validating reader: same records where it answers, no answer otherwise."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kseg.errors import KsegError
from kseg.format import RecordSpec, encode_batch, read_batch
from kseg.format.records import (
    HEADER_COUNT,
    HEADER_STRIDE,
    KEY_LENGTH,
    KEY_START,
    OFFSET_DELTA,
    RECORD_STRIDE,
    TIMESTAMP_DELTA,
    VALUE_LENGTH,
    VALUE_START,
    scan_records,
)
from kseg.format.v2 import RECORD_BATCH_OVERHEAD
from kseg.format.v2_validate import RecordValidator
from kseg.format.varint import decode_varint, decode_varlong, encode_varint, short_varint_table

T0 = 1_700_000_000_000


def _validated(batch, data, start, end, compressed_at):
    """(records, error) as the validating reader gives them."""
    records = []
    try:
        for record in RecordValidator(batch, data, start, end, compressed_at).records():
            records.append(record)
    except KsegError as err:
        return records, err
    return records, None


def test_short_varint_table_is_the_decoders_answer_for_every_one_and_two_byte_varint():
    table = short_varint_table()
    assert len(table) == 0x80 + 0x4000
    for b0 in range(0x80):
        assert table[b0] == decode_varint(bytes([b0]), 0)[0] == decode_varlong(bytes([b0]), 0)[0]
    for b0 in range(0x80, 0x100):
        for b1 in range(0x80):
            data = bytes([b0, b1])
            assert table[b0 + (b1 << 7)] == decode_varint(data, 0)[0] == decode_varlong(data, 0)[0]


def test_columns_of_a_batch():
    specs = [
        RecordSpec(10, T0, b"k0", b"value-0", (("h", b"x"), ("g", None))),
        RecordSpec(11, T0 + 5, None, b"v" * 300),
        RecordSpec(13, T0 - 3, b"", None, (("trace", b"abc"),)),
    ]
    data = encode_batch(specs)
    batch = read_batch(data, 0)
    scan = batch.scan()
    assert scan is not None and scan.count == 3
    assert len(scan.fields) == 3 * RECORD_STRIDE
    assert scan.column(OFFSET_DELTA) == [0, 1, 3]
    assert scan.column(TIMESTAMP_DELTA) == [0, 5, -3]
    assert scan.column(KEY_LENGTH) == [2, -1, 0]
    assert scan.column(VALUE_LENGTH) == [7, 300, -1]
    assert scan.column(HEADER_COUNT) == [2, 0, 1]
    assert [data[s : s + 2] for s in scan.column(KEY_START)[:1]] == [b"k0"]
    assert data[scan.column(VALUE_START)[1]] == ord("v")
    assert len(scan.header_fields) == 3 * HEADER_STRIDE
    assert scan.offsets() == [10, 11, 13]
    assert scan.timestamps() == [T0, T0 + 5, T0 - 3]
    assert scan.keys() == [b"k0", None, b""]
    assert scan.values() == [b"value-0", b"v" * 300, None]
    assert scan.headers() == [((b"h", b"x"), (b"g", None)), (), ((b"trace", b"abc"),)]
    assert scan.sequences(-1) == [-1, -1, -1]
    assert scan.sequences(0x7FFFFFFF) == [0x7FFFFFFF, 0, 2]
    assert [list(r) for r in batch.iter_records()] == [list(r) for r in _validated(
        batch, data, RECORD_BATCH_OVERHEAD, len(data), None)[0]]


def test_the_scanner_refuses_a_region_it_cannot_fill_exactly():
    data = encode_batch([RecordSpec(0, T0, b"k", b"v")])
    start = RECORD_BATCH_OVERHEAD
    assert scan_records(data, start, len(data), 1) is not None
    assert scan_records(data, start, len(data), 2) is None  # a record missing
    assert scan_records(data + b"\0", start, len(data) + 1, 1) is None  # a byte left over
    assert scan_records(data, start, len(data) - 1, 1) is None  # the record runs past the region
    assert scan_records(data, start, len(data) + 1, 1) is None  # the region runs past the buffer
    assert scan_records(data, start, len(data), -1) is None


def test_wrapping_timestamps_and_offsets_are_javas():
    record = bytes([0]) + bytes.fromhex("feffffffffffffffff01") + encode_varint(5) + encode_varint(-1) * 2 + b"\0"
    region = encode_varint(len(record)) + record
    scan = scan_records(region, 0, len(region), 1, base_offset=2**63 - 2, base_timestamp=2**63 - 1)
    assert scan is not None
    assert scan.offsets() == [-(2**63) + 3]
    assert scan.timestamps() == [2**63 - 1 + 2**63 - 1 - 2**64]


_specs = st.lists(
    st.tuples(
        st.integers(1, 3),
        st.integers(-(2**20), 2**20),
        st.one_of(st.none(), st.binary(max_size=40)),
        st.one_of(st.none(), st.binary(max_size=300)),
        st.lists(st.tuples(st.text(max_size=4), st.one_of(st.none(), st.binary(max_size=6))), max_size=2),
    ),
    min_size=1,
    max_size=8,
)


def _batch(records, codec, base_sequence):
    offset, specs = 100, []
    for gap, delta, key, value, headers in records:
        offset += gap
        specs.append(RecordSpec(offset, T0 + delta, key, value, tuple(headers)))
    producer = {"producer_id": 7, "producer_epoch": 0, "base_sequence": base_sequence} if base_sequence >= 0 else {}
    return encode_batch(specs, codec=codec, **producer)


def _check_agreement(data):
    batch = read_batch(data, 0)
    try:
        region, start, end, compressed_at, _ = batch._records_bytes(1 << 20)
    except KsegError:
        return
    count = batch.records_count
    scan = scan_records(region, start, end, count, batch.base_offset, batch.base_timestamp)
    slow, err = _validated(batch, region, start, end, compressed_at)
    if scan is None:
        assert err is not None or count <= 0
        return
    assert err is None, err
    assert batch._records_of(scan) == slow


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(records=_specs, codec=st.sampled_from(["none", "gzip"]), base_sequence=st.sampled_from([-1, 0, 2**31 - 3]))
def test_clean_batches_scan_to_the_validating_readers_records(records, codec, base_sequence):
    data = _batch(records, codec, base_sequence)
    batch = read_batch(data, 0)
    assert batch.scan() is not None
    _check_agreement(data)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(records=_specs, where=st.integers(0, 10_000), xor=st.integers(1, 255), cut=st.integers(0, 3))
def test_damaged_records_are_scanned_only_where_kafka_reads_them(records, where, xor, cut):
    data = bytearray(_batch(records, "none", -1))
    position = RECORD_BATCH_OVERHEAD + where % (len(data) - RECORD_BATCH_OVERHEAD)
    data[position] ^= xor
    if cut:
        del data[len(data) - cut :]
        data[8:12] = (len(data) - 12).to_bytes(4, "big")
    _check_agreement(bytes(data))


@pytest.mark.parametrize("extra", [b"\x00", b"\x02\x00\x00\x00\x00\x00"])
def test_bytes_after_the_last_record_are_left_to_the_validating_reader(extra):
    data = bytearray(encode_batch([RecordSpec(0, T0, b"k", b"v")]))
    data += extra
    data[8:12] = (len(data) - 12).to_bytes(4, "big")
    _check_agreement(bytes(data))


# -- large batches are read a part at a time --------------------------------------------------------


def _many_records_batch(count: int, codec: int = 0) -> bytes:
    from kseg.format import compression
    from kseg.format.v2 import assemble_batch

    record = b"\x0c\x00\x00\x00\x01\x01\x00"  # length 6, attributes, deltas 0, null key and value, no headers
    region = record * count
    if codec:
        region = compression.compress(codec, region, magic=2)
    return assemble_batch(region, base_offset=0, partition_leader_epoch=0, attributes=codec, last_offset_delta=0,
                          base_timestamp=T0, max_timestamp=T0, producer_id=-1, producer_epoch=-1, base_sequence=-1,
                          records_count=count)


@pytest.mark.parametrize("codec", [0, 1])
def test_a_batch_of_many_records_is_decoded_in_flat_memory(codec):
    import tracemalloc

    batch = read_batch(_many_records_batch(100_000, codec), 0)
    short_varint_table()  # built once per process: not the batch's memory
    tracemalloc.start()
    seen = sum(1 for record in batch.iter_records() if record.offset == 0)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert seen == 100_000
    assert peak < 4_000_000, peak  # the whole batch at once: about 40 MB


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(records=_specs, where=st.integers(0, 10_000), xor=st.integers(0, 255), part=st.integers(1, 3))
def test_parts_give_the_records_and_errors_of_the_whole(records, where, xor, part):
    import kseg.format.v2 as v2

    data = bytearray(_batch(records, "none", -1))
    position = RECORD_BATCH_OVERHEAD + where % (len(data) - RECORD_BATCH_OVERHEAD)
    data[position] ^= xor
    batch = read_batch(bytes(data), 0)

    def outcome():
        out = []
        try:
            out.extend(batch.iter_records())
        except KsegError as err:
            return out, (type(err), err.message, err.offset, err.field)
        return out, None

    whole = outcome()
    saved = v2._PART_RECORDS, v2._PART_BYTES
    v2._PART_RECORDS, v2._PART_BYTES = part, 1
    try:
        parts = outcome()
    finally:
        v2._PART_RECORDS, v2._PART_BYTES = saved
    assert parts == whole
