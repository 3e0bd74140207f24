"""Magic-2 record batches: known bytes, every header field, records, and Kafka's error messages."""

import struct

import pytest

from kseg.errors import Corrupt, CrcMismatch, InvalidRecord, KsegError, LimitExceeded
from kseg.format import RecordSpec, encode_batch, read_batch
from kseg.format.control import (
    decode_control_key,
    decode_end_txn_marker,
    encode_control_key,
    encode_end_txn_marker,
)
from kseg.format.v2 import V2Batch
from kseg.format.varint import encode_varint

# One record, key "k" value "v", base offset 0, CreateTime 1700000000000,
# partitionLeaderEpoch 0, no producer, uncompressed (reference §1.7).
ONE_RECORD_BATCH = bytes.fromhex(
    "0000000000000000"  # baseOffset 0
    "0000003a"  # batchLength 58 (70 - 12)
    "00000000"  # partitionLeaderEpoch 0
    "02"  # magic 2
    "e99b8dd8"  # crc 3919285720: CRC-32C of bytes 21..69
    "0000"  # attributes: codec none, CreateTime, not transactional, not control
    "00000000"  # lastOffsetDelta 0
    "0000018bcfe56800"  # baseTimestamp 1700000000000
    "0000018bcfe56800"  # maxTimestamp 1700000000000
    "ffffffffffffffff"  # producerId -1
    "ffff"  # producerEpoch -1
    "ffffffff"  # baseSequence -1
    "00000001"  # recordsCount 1
    "10"  # record length 8 (zigzag)
    "00"  # record attributes
    "00"  # timestampDelta 0
    "00"  # offsetDelta 0
    "02"  # keyLength 1
    "6b"  # key "k"
    "02"  # valueLength 1
    "76"  # value "v"
    "00"  # headersCount 0
)
TS = 1700000000000


def test_known_batch_encodes_byte_for_byte():
    data = encode_batch([RecordSpec(0, TS, b"k", b"v")], partition_leader_epoch=0)
    assert data == ONE_RECORD_BATCH


def test_known_batch_decodes_every_field():
    batch = read_batch(ONE_RECORD_BATCH, 0)
    assert isinstance(batch, V2Batch)
    assert (batch.position, batch.size, batch.magic) == (0, 70, 2)
    assert (batch.base_offset, batch.last_offset, batch.count) == (0, 0, 1)
    assert (batch.codec, batch.timestamp_type, batch.max_timestamp) == ("none", "CreateTime", TS)
    assert batch.crc == 3919285720 and batch.compute_crc() == 3919285720 and batch.is_valid()
    assert (batch.producer_id, batch.producer_epoch, batch.base_sequence, batch.last_sequence) == (-1, -1, -1, -1)
    assert (batch.partition_leader_epoch, batch.is_transactional, batch.is_control) == (0, False, False)
    assert batch.delete_horizon_ms is None
    [record] = batch.iter_records()
    assert (record.offset, record.timestamp, record.key, record.value, record.headers) == (0, TS, b"k", b"v", ())
    assert (record.key_size, record.value_size, record.sequence) == (1, 1, -1)


def test_records_with_headers_nulls_gaps_and_negative_deltas():
    specs = [
        RecordSpec(10, TS + 5, None, b"", (("h1", b"x"), ("h2", None))),
        RecordSpec(12, TS, b"", None),
        RecordSpec(15, TS - 100, b"k" * 300, b"v" * 70000, (("\u00e9", b""),)),
    ]
    data = encode_batch(specs, base_offset=10, producer_id=7, producer_epoch=3, base_sequence=2**31 - 2)
    batch = read_batch(data, 0)
    assert batch.is_valid()
    assert (batch.base_offset, batch.last_offset, batch.count, batch.max_timestamp) == (10, 15, 3, TS + 5)
    assert batch.base_timestamp == TS + 5  # the first record's timestamp, not the minimum
    # sequences wrap past Integer.MAX_VALUE to 0
    assert batch.last_sequence == 3
    records = list(batch.iter_records())
    assert [r.offset for r in records] == [10, 12, 15]
    assert [r.timestamp for r in records] == [TS + 5, TS, TS - 100]
    assert [r.key for r in records] == [None, b"", b"k" * 300]
    assert [r.value for r in records] == [b"", None, b"v" * 70000]
    assert [r.key_size for r in records] == [-1, 0, 300]
    assert records[0].headers == ((b"h1", b"x"), (b"h2", None))
    assert records[2].headers == (("\u00e9".encode(), b""),)
    assert [r.sequence for r in records] == [2**31 - 2, 0, 3]


@pytest.mark.parametrize("codec", ["gzip", "snappy", "lz4", "zstd"])
def test_compressed_batches_round_trip(codec):
    specs = [RecordSpec(100 + i, TS + i, b"key%d" % i, b"value" * i, (("h", b"%d" % i),)) for i in range(50)]
    data = encode_batch(specs, codec=codec)
    batch = read_batch(data, 0)
    assert batch.codec == codec and batch.is_valid()
    got = [(r.offset, r.timestamp, r.key, r.value, r.headers) for r in batch.iter_records()]
    assert got == [(s.offset, s.timestamp, s.key, s.value, ((b"h", s.headers[0][1]),)) for s in specs]


def test_log_append_time_gives_every_record_the_max_timestamp():
    data = encode_batch(
        [RecordSpec(0, TS, b"a", b"b"), RecordSpec(1, TS + 9, b"c", b"d")],
        timestamp_type="LogAppendTime",
        log_append_time=TS + 1000,
    )
    batch = read_batch(data, 0)
    assert batch.timestamp_type == "LogAppendTime" and batch.max_timestamp == TS + 1000
    assert [r.timestamp for r in batch.iter_records()] == [TS + 1000, TS + 1000]


def test_commit_marker_control_batch():
    data = encode_batch(
        [RecordSpec(10, TS, encode_control_key(1), encode_end_txn_marker(5))],
        producer_id=1000,
        producer_epoch=0,
        is_transactional=True,
        is_control=True,
    )
    batch = read_batch(data, 0)
    assert batch.is_control and batch.is_transactional and batch.attributes == 0x30
    [record] = batch.iter_records()
    assert record.is_control
    assert decode_control_key(record.key).name == "COMMIT"
    assert decode_end_txn_marker(record.value).coordinator_epoch == 5
    assert record.key == bytes.fromhex("00000001") and record.value == bytes.fromhex("000000000005")


def test_unknown_control_type_maps_to_unknown():
    key = decode_control_key(bytes.fromhex("00000080"))
    assert (key.type_id, key.raw_type, key.name) == (-1, 128, "UNKNOWN")


def test_short_control_key_is_invalid():
    with pytest.raises(InvalidRecord, match="Must have at least 4 bytes, but found only 2"):
        decode_control_key(b"\x00\x00")


def test_only_low_attribute_byte_is_read():
    data = bytearray(ONE_RECORD_BATCH)
    data[21] = 0xFF  # high byte of attributes: ignored by Kafka (but covered by the CRC)
    batch = read_batch(bytes(data), 0)
    assert batch.attributes == 0 and batch.codec == "none"
    assert not batch.is_valid()


def test_crc_mismatch_is_located_at_the_crc_field():
    data = bytearray(ONE_RECORD_BATCH)
    data[-2] ^= 0x01  # flip a bit of the value
    batch = read_batch(bytes(data), 0)
    assert not batch.is_valid()
    with pytest.raises(CrcMismatch) as err:
        batch.ensure_valid()
    assert err.value.offset == 17 and err.value.stored == 3919285720
    assert "Record is corrupt (stored crc = 3919285720, computed crc = " in str(err.value)


def test_partition_leader_epoch_and_base_offset_are_outside_the_crc():
    data = bytearray(ONE_RECORD_BATCH)
    struct.pack_into(">q", data, 0, 123456)
    struct.pack_into(">i", data, 12, 99)
    batch = read_batch(bytes(data), 0)
    assert batch.is_valid() and batch.base_offset == 123456 and batch.partition_leader_epoch == 99


def test_batch_smaller_than_overhead_is_corrupt():
    data = bytearray(ONE_RECORD_BATCH)
    struct.pack_into(">i", data, 8, 40)
    batch = read_batch(bytes(data), 0)
    assert not batch.is_valid()
    with pytest.raises(Corrupt, match="the size 52 is smaller than the minimum allowed overhead 61"):
        batch.ensure_valid()


def _with_records(count: int, records: bytes) -> bytes:
    """The known batch with its records region and count replaced (CRC recomputed)."""
    from kseg.format.v2 import assemble_batch

    return assemble_batch(
        records, base_offset=0, partition_leader_epoch=0, attributes=0, last_offset_delta=0,
        base_timestamp=TS, max_timestamp=TS, producer_id=-1, producer_epoch=-1, base_sequence=-1,
        records_count=count,
    )


RECORD = bytes.fromhex("10 00 00 00 02 6b 02 76 00")


def test_count_larger_than_records_is_premature_eof():
    batch = read_batch(_with_records(2, RECORD), 0)
    with pytest.raises(InvalidRecord, match="Incorrect declared batch size, premature EOF reached") as err:
        list(batch.iter_records())
    assert err.value.offset == 70


def test_bytes_left_after_count_records_is_invalid():
    batch = read_batch(_with_records(1, RECORD + RECORD), 0)
    with pytest.raises(InvalidRecord, match="records still remaining in file") as err:
        list(batch.iter_records())
    assert err.value.offset == 70


def test_negative_count_is_invalid():
    batch = read_batch(_with_records(-1, RECORD), 0)
    with pytest.raises(InvalidRecord, match="Found invalid record count -1 in magic v2 batch"):
        list(batch.iter_records())


def test_zero_count_yields_nothing_without_checking_leftovers():
    batch = read_batch(_with_records(0, RECORD), 0)
    assert list(batch.iter_records()) == []


def test_record_length_beyond_batch_is_invalid_with_position():
    bad = encode_varint(100) + RECORD[1:]
    batch = read_batch(_with_records(1, bad), 0)
    with pytest.raises(InvalidRecord, match="expected 100 bytes in record payload, but instead the buffer has only 8") as err:
        list(batch.iter_records())
    assert err.value.offset == 61


def test_record_length_disagreeing_with_contents():
    bad = encode_varint(9) + RECORD[1:] + b"\x00"
    batch = read_batch(_with_records(1, bad), 0)
    with pytest.raises(InvalidRecord, match="expected to read 9 bytes in record payload, but instead read 8"):
        list(batch.iter_records())


def test_negative_header_key_size():
    body = bytes.fromhex("00 00 00 02 6b 02 76 02") + encode_varint(-3)
    bad = encode_varint(len(body)) + body
    batch = read_batch(_with_records(1, bad), 0)
    with pytest.raises(InvalidRecord, match="Invalid negative header key size -3"):
        list(batch.iter_records())


def test_key_longer_than_record_is_invalid_structure():
    body = bytes.fromhex("00 00 00") + encode_varint(50) + b"k"
    bad = encode_varint(len(body)) + body
    batch = read_batch(_with_records(1, bad), 0)
    with pytest.raises(InvalidRecord, match="Found invalid record structure"):
        list(batch.iter_records())


def test_decompression_bomb_is_refused():
    specs = [RecordSpec(0, TS, None, bytes(4 * 1024 * 1024))]
    batch = read_batch(encode_batch(specs, codec="gzip"), 0)
    with pytest.raises(LimitExceeded) as err:
        list(batch.iter_records(max_decompressed=1024 * 1024))
    assert err.value.offset == 61


def test_garbage_compressed_region_is_a_located_codec_error():
    data = bytearray(encode_batch([RecordSpec(0, TS, b"k", b"v" * 100)], codec="gzip"))
    data[70:80] = b"\xaa" * 10
    batch = read_batch(bytes(data), 0)
    with pytest.raises(KsegError) as err:
        list(batch.iter_records())
    assert err.value.offset == 61 and err.value.field == "batch.records"
