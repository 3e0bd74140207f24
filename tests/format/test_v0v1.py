"""Magic 0 and 1 messages and message sets, including compressed wrappers and their offset rules."""

import struct

import pytest

from kseg.errors import CrcMismatch, EncodeError, InvalidRecord
from kseg.format import RecordSpec, compression, encode_batch, iter_batches, read_batch
from kseg.format.v0v1 import LegacyBatch
from kseg.format.v0v1_encode import encode_entry, encode_message

TS = 1700000000000

V1_MESSAGE = bytes.fromhex(
    "0000000000000000"  # offset 0
    "00000018"  # size 24
    "39268c33"  # crc 958827571: CRC-32 of magic..end
    "01"  # magic 1
    "00"  # attributes: no codec, CreateTime
    "0000018bcfe56800"  # timestamp 1700000000000
    "00000001"  # key length 1
    "6b"  # key "k"
    "00000001"  # value length 1
    "76"  # value "v"
)
V0_MESSAGE = bytes.fromhex(
    "0000000000000000"  # offset 0
    "00000010"  # size 16
    "1fecd70a"  # crc 535615242
    "00"  # magic 0
    "00"  # attributes
    "00000001"  # key length 1
    "6b"  # key "k"
    "00000001"  # value length 1
    "76"  # value "v"
)


@pytest.mark.parametrize("magic,expected", [(1, V1_MESSAGE), (0, V0_MESSAGE)])
def test_known_messages_encode_byte_for_byte(magic, expected):
    assert encode_batch([RecordSpec(0, TS, b"k", b"v")], magic=magic) == expected


def test_v1_message_decodes_as_kafka_reports_it():
    batch = read_batch(V1_MESSAGE, 0)
    assert isinstance(batch, LegacyBatch)
    assert (batch.size, batch.magic, batch.crc, batch.is_valid()) == (36, 1, 958827571, True)
    assert (batch.base_offset, batch.last_offset, batch.count) == (0, 0, None)
    assert (batch.timestamp_type, batch.max_timestamp, batch.codec) == ("CreateTime", TS, "none")
    assert (batch.producer_id, batch.partition_leader_epoch, batch.is_control) == (-1, -1, False)
    [record] = batch.iter_records()
    assert (record.offset, record.timestamp, record.key, record.value) == (0, TS, b"k", b"v")
    assert (record.crc, record.valid, record.magic) == (958827571, True, 1)


def test_v0_message_has_no_timestamp():
    batch = read_batch(V0_MESSAGE, 0)
    assert (batch.timestamp_type, batch.max_timestamp, batch.crc) == ("NoTimestampType", -1, 535615242)
    [record] = batch.iter_records()
    assert (record.timestamp, record.timestamp_type) == (-1, "NoTimestampType")


def test_null_key_and_negative_lengths_keep_the_raw_size():
    message = encode_message(1, 0, TS, None, None)
    batch = read_batch(encode_entry(5, message), 0)
    [record] = batch.iter_records()
    assert (record.key, record.value, record.key_size, record.value_size) == (None, None, -1, -1)


@pytest.mark.parametrize("codec", ["gzip", "snappy", "lz4"])
@pytest.mark.parametrize("magic", [0, 1])
def test_compressed_wrapper_round_trip(magic, codec):
    specs = [RecordSpec(100 + 2 * i, TS + i, b"k%d" % i, b"v" * i) for i in range(20)]
    data = encode_batch(specs, magic=magic, codec=codec)
    [batch] = list(iter_batches(data))
    assert batch.is_valid() and batch.codec == codec
    assert batch.last_offset == 138  # the wrapper carries the last offset
    assert batch.base_offset == 100  # first inner offset, after decompressing
    records = list(batch.iter_records())
    assert [r.offset for r in records] == [s.offset for s in specs]
    expected_ts = [s.timestamp for s in specs] if magic == 1 else [-1] * 20
    assert [r.timestamp for r in records] == expected_ts
    assert all(r.valid for r in records)
    if magic == 1:
        assert batch.max_timestamp == TS + 19


def _wrapper(magic: int, wrapper_offset: int, inner: list[tuple[int, bytes]], codec="gzip", attributes=0, ts=TS) -> bytes:
    entries = b"".join(encode_entry(off, msg) for off, msg in inner)
    compressed = compression.compress(compression.codec_id(codec), entries, magic=magic)
    return encode_entry(wrapper_offset, encode_message(magic, compression.codec_id(codec) | attributes, ts, None, compressed))


def test_v1_inner_offsets_are_relative_to_the_wrapper():
    inner = [(0, encode_message(1, 0, TS, None, b"a")), (1, encode_message(1, 0, TS, None, b"b"))]
    batch = read_batch(_wrapper(1, 51, inner), 0)
    assert [r.offset for r in batch.iter_records()] == [50, 51]


def test_v1_wrapper_offset_zero_means_base_zero():
    inner = [(3, encode_message(1, 0, TS, None, b"a")), (4, encode_message(1, 0, TS, None, b"b"))]
    batch = read_batch(_wrapper(1, 0, inner), 0)
    assert [r.offset for r in batch.iter_records()] == [3, 4]


def test_v1_wrapper_offset_below_last_inner_offset_is_invalid():
    inner = [(0, encode_message(1, 0, TS, None, b"a")), (9, encode_message(1, 0, TS, None, b"b"))]
    batch = read_batch(_wrapper(1, 5, inner), 0)
    with pytest.raises(InvalidRecord, match="wrapper offset '5' is less than the last inner message offset '9'"):
        list(batch.iter_records())


def test_v0_inner_offsets_are_absolute():
    inner = [(70, encode_message(0, 0, -1, None, b"a")), (72, encode_message(0, 0, -1, None, b"b"))]
    batch = read_batch(_wrapper(0, 72, inner), 0)
    assert [r.offset for r in batch.iter_records()] == [70, 72]


def test_magic0_inner_messages_in_a_magic1_wrapper_are_read_with_their_own_magic():
    inner = [(0, encode_message(0, 0, -1, b"k", b"a")), (1, encode_message(0, 0, -1, None, b"b"))]
    batch = read_batch(_wrapper(1, 11, inner, codec="lz4"), 0)
    records = list(batch.iter_records())
    assert [(r.offset, r.magic, r.key, r.value, r.timestamp) for r in records] == [
        (10, 0, b"k", b"a", -1),
        (11, 0, None, b"b", -1),
    ]


def test_log_append_time_wrapper_stamps_inner_v1_records():
    inner = [(0, encode_message(1, 0, 5, None, b"a")), (1, encode_message(1, 0, 6, None, b"b"))]
    batch = read_batch(_wrapper(1, 1, inner, attributes=0x08, ts=TS), 0)
    assert batch.timestamp_type == "LogAppendTime"
    assert [(r.timestamp, r.timestamp_type) for r in batch.iter_records()] == [(TS, "LogAppendTime")] * 2


def test_create_time_wrapper_keeps_inner_timestamps():
    inner = [(0, encode_message(1, 0, 5, None, b"a")), (1, encode_message(1, 0, 6, None, b"b"))]
    batch = read_batch(_wrapper(1, 1, inner, ts=TS), 0)
    assert [r.timestamp for r in batch.iter_records()] == [5, 6]


def test_empty_wrapper_is_invalid():
    batch = read_batch(_wrapper(1, 0, []), 0)
    with pytest.raises(InvalidRecord, match="Found invalid compressed record set with no inner records"):
        list(batch.iter_records())


def test_nested_compression_is_invalid():
    inner_wrapper = encode_message(1, 1, TS, None, b"x")
    batch = read_batch(_wrapper(1, 0, [(0, inner_wrapper)]), 0)
    with pytest.raises(InvalidRecord, match="Inner messages must not be compressed"):
        list(batch.iter_records())


def test_zstd_in_a_legacy_wrapper_is_invalid():
    message = encode_message(1, 4, TS, None, b"\x28\xb5\x2f\xfd")
    batch = read_batch(encode_entry(0, message), 0)
    with pytest.raises(InvalidRecord, match="Invalid wrapper compressionType found in legacy deep record iterator 1"):
        list(batch.iter_records())


def test_null_wrapper_value_is_invalid():
    batch = read_batch(encode_entry(0, encode_message(1, 1, TS, None, None)), 0)
    with pytest.raises(InvalidRecord, match=r"null value \(magic = 1\)"):
        list(batch.iter_records())


def test_crc_mismatch_located():
    data = bytearray(V1_MESSAGE)
    data[-1] ^= 0x40
    batch = read_batch(bytes(data), 0)
    assert not batch.is_valid()
    with pytest.raises(CrcMismatch) as err:
        batch.ensure_valid()
    assert err.value.offset == 12


def test_key_length_past_message_end_is_invalid():
    data = bytearray(V1_MESSAGE)
    struct.pack_into(">i", data, 26, 1000)
    batch = read_batch(bytes(data), 0)
    with pytest.raises(InvalidRecord) as err:
        list(batch.iter_records())
    assert err.value.offset == 26


@pytest.mark.parametrize(
    "kwargs,message",
    [
        ({"codec": "zstd"}, "ZStandard compression is not supported for magic 1"),
        ({"is_transactional": True}, "not supported for magic 1"),
        ({"producer_id": 5}, "not supported for magic 1"),
    ],
)
def test_builder_refuses_what_magic_1_cannot_hold(kwargs, message):
    with pytest.raises(EncodeError, match=message):
        encode_batch([RecordSpec(0, TS, b"k", b"v")], magic=1, **kwargs)


def test_builder_refuses_headers_below_magic_2():
    with pytest.raises(EncodeError, match="Magic v0 does not support record headers"):
        encode_batch([RecordSpec(0, TS, b"k", b"v", (("h", b"x"),))], magic=0)


@pytest.mark.parametrize(("message", "edits", "sizes"), [
    (V1_MESSAGE, {}, (1, 1)),  # a whole message: the stored ints
    (V1_MESSAGE, {31: 2}, (1, 2)),  # the value runs past the end: its length still reads
    (V1_MESSAGE, {26: 2}, (2, 0x176)),  # the key takes the value length's first byte: read one byte on
    (V1_MESSAGE, {26: 3}, (3, None)),  # the value length would end past the message
    (V1_MESSAGE, {26: 2**31 - 1}, (2**31 - 1, None)),  # Java's int index overflows: getInt throws
    (V1_MESSAGE, {26: -5}, (-5, 0x6B000000)),  # a negative key length counts as 0: read from the key's place
    (V0_MESSAGE, {18: 1, 23: 7}, (1, 7)),  # magic 0: the key length at 6 of the message
])
def test_lazy_sizes_read_the_stored_ints_as_kafkas_legacy_record(message, edits, sizes):
    """``LegacyBatch.lazy_sizes``: LegacyRecord.keySize()/valueSize() read without checking that the key and
    value fit (docs/dump.md row 18): the value length at keyOffset + max(0, keySize); None where getInt throws."""
    data = bytearray(message)
    for at, value in edits.items():
        struct.pack_into(">i", data, at, value)
    assert LegacyBatch(bytes(data), 0).lazy_sizes() == sizes
