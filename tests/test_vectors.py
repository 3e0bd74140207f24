"""Byte-exact vectors from client libraries' test suites decode to what their sidecars assert.

Where a vector is itself broken (a bad CRC, a short tail, an impossible magic)
kseg must say exactly that.
"""

from __future__ import annotations

import json

import pytest
from support import CORPUS_VECTORS, require_dir

from kseg.errors import Corrupt, InvalidRecord
from kseg.format import BAD_SIZE, END_OF_DATA, PARTIAL_BATCH, SHORT_TAIL, BatchWalk
from kseg.format.control import decode_control_key, decode_end_txn_marker


def _load(rel: str) -> tuple[bytes, dict]:
    base = require_dir(CORPUS_VECTORS, "the test-vector corpus")
    path = base / rel
    meta = json.loads(path.with_suffix(".json").read_text())
    data_file = meta.get("derived_log_file") or meta["file"]
    return (path.parent / data_file).read_bytes(), meta


def _walk(data: bytes):
    walk = BatchWalk(data, strict=False)
    return list(walk), walk.end


def test_kafka_python_v2_four_batches():
    data, meta = _load("kafka-python/v2_four_batches_kafka011_broker.bin")
    batches, end = _walk(data)
    expected = meta["expected"]["batches"]
    assert [b.base_offset for b in batches] == [e["base_offset"] for e in expected]
    assert [b.count for b in batches] == [e["record_count"] for e in expected]
    assert all(b.is_valid() for b in batches)
    assert end.position == meta["expected"]["valid_bytes"] == 299
    assert (end.remaining, end.reason) == (4, SHORT_TAIL)
    records = [list(b.iter_records()) for b in batches]
    first = records[0][0]
    exp = expected[0]["records"][0]
    assert (first.offset, first.key, first.value, first.timestamp) == (0, None, b"123", exp["timestamp"])
    assert [r.value for r in records[1]] == [b"", b""]
    assert records[3][0].value == b"hdr" and records[3][0].headers == ((b"hkey", b"hval"),)


@pytest.mark.parametrize("name,magic", [("v0_four_messages_kafka010_broker", 0), ("v1_four_messages_kafka010_broker", 1)])
def test_kafka_python_legacy_four_messages(name, magic):
    data, meta = _load(f"kafka-python/{name}.bin")
    batches, end = _walk(data)
    assert len(batches) == 4 and all(b.magic == magic and b.is_valid() for b in batches)
    assert [list(b.iter_records())[0].offset for b in batches] == [0, 1, 2, 3]
    assert end.position == meta["expected"].get("valid_bytes", len(data))
    assert end.reason == (SHORT_TAIL if magic == 1 else END_OF_DATA)
    first = list(batches[0].iter_records())[0]
    if magic == 1:
        exp = meta["expected"]["messages"][0]
        assert (first.timestamp, first.crc, first.value, first.key) == (exp["timestamp"], exp["crc"], b"123", None)


def test_kafka_python_control_batch_has_a_bad_crc_and_is_an_abort():
    data, _ = _load("kafka-python/v2_control_batch_abort.bin")
    [batch], end = _walk(data)
    assert batch.is_control and not batch.is_valid() and batch.crc != batch.compute_crc()
    [record] = batch.iter_records()
    assert decode_control_key(record.key).name == "ABORT"


def test_kafka_python_corrupt_length_is_a_short_tail_as_kafkas_file_reader_sees_it():
    # 15 bytes: kafka-python raises, but Kafka's FileLogInputStream stops quietly
    # when 17 or fewer bytes remain, before it ever reads the size field.
    data, _ = _load("kafka-python/corrupt_length3.bin")
    batches, end = _walk(data)
    assert batches == [] and (end.reason, end.remaining, end.position) == (SHORT_TAIL, 15, 0)


def test_a_size_below_14_with_enough_bytes_is_corrupt_and_located():
    data, _ = _load("kafka-python/corrupt_length3.bin")
    padded = data + bytes(20)
    batches, end = _walk(padded)
    assert batches == [] and (end.reason, end.declared_size, end.position) == (BAD_SIZE, 3, 0)
    with pytest.raises(Corrupt, match=r"Found record size 3 smaller than minimum record overhead \(14\)") as err:
        list(BatchWalk(padded))
    assert err.value.offset == 8


def test_kafka_python_three_bytes_is_a_short_tail():
    data, _ = _load("kafka-python/short_3bytes.bin")
    batches, end = _walk(data)
    assert batches == [] and (end.reason, end.remaining) == (SHORT_TAIL, 3)


SARAMA_V2 = {
    "record_batch_uncompressed": 1,
    "record_batch_gzip": 1,
    "record_batch_snappy_xerial": 1,
    "record_batch_lz4": 1,
    "record_batch_empty": 0,
    "record_batch_control_empty": 0,
    "record_batch_empty_idempotent": 0,
    "record_batch_one_record_from_fetch": 1,
}


@pytest.mark.parametrize("name,count", SARAMA_V2.items())
def test_sarama_v2_batches(name, count):
    data, meta = _load(f"sarama/{name}.bin")
    [batch], end = _walk(data)
    assert batch.is_valid() and end.reason == END_OF_DATA
    records = list(batch.iter_records())
    assert len(records) == count == batch.count
    exp = meta["expected"]
    header_fields = {
        "base_offset": batch.base_offset,
        "partition_leader_epoch": batch.partition_leader_epoch,
        "magic": batch.magic,
        "last_offset_delta": batch.last_offset_delta,
        "producer_id": batch.producer_id,
        "producer_epoch": batch.producer_epoch,
        "base_sequence": batch.base_sequence,
        "timestamp_type": batch.timestamp_type,
        "transactional": batch.is_transactional,
        "codec": batch.codec,
        "control": batch.is_control,
        "first_timestamp": batch.base_timestamp,
        "max_timestamp": batch.max_timestamp,
        "record_count": batch.count,
    }
    for field, value in header_fields.items():
        if field in exp:
            assert value == exp[field], field
    for rec, want in zip(records, exp.get("records", [])):
        assert rec.offset == batch.base_offset + want["offset_delta"]
        assert rec.timestamp == want.get("timestamp_ms", batch.base_timestamp + want["timestamp_delta_ms"])
        assert rec.key == _hex(want.get("key_hex"))
        assert rec.value == _hex(want.get("value_hex"))
        assert rec.headers == tuple((_hex(h["key_hex"]), _hex(h["value_hex"])) for h in want.get("headers", []))


def _hex(text):
    return None if text is None else bytes.fromhex(text)


def test_sarama_partial_batch_is_a_partial_tail():
    data, _ = _load("sarama/record_batch_partial_truncated.bin")
    batches, end = _walk(data)
    assert batches == [] and end.reason == PARTIAL_BATCH and end.remaining == len(data)


def test_sarama_overflow_tail_keeps_the_whole_message():
    data, _ = _load("sarama/messageset_v0_with_overflow_tail.bin")
    batches, end = _walk(data)
    assert len(batches) == 1 and batches[0].is_valid()
    assert end.reason in (PARTIAL_BATCH, SHORT_TAIL)


SARAMA_LEGACY = {
    "message_v0_empty": (0, "none", 1),
    "message_v0_gzip_2_inner": (0, "gzip", 2),
    "message_v0_snappy_xerial_2_inner": (0, "snappy", 2),
    "message_v1_empty": (1, "none", 1),
    "message_v1_lz4_2_inner": (1, "lz4", 2),
}


@pytest.mark.parametrize("name,expected", SARAMA_LEGACY.items())
def test_sarama_legacy_messages(name, expected):
    magic, codec, inner = expected
    data, _ = _load(f"sarama/{name}.bin")
    [batch], end = _walk(data)
    assert (batch.magic, batch.codec, batch.is_valid()) == (magic, codec, True)
    records = list(batch.iter_records())
    assert len(records) == inner
    if name == "message_v1_lz4_2_inner":
        # a magic-1 wrapper holding magic-0 messages, as real clients wrote them
        assert [r.magic for r in records] == [0, 0]
        assert batch.max_timestamp == -6795364578871


@pytest.mark.parametrize("name", ["message_v0_gzip_empty", "message_v1_lz4_empty"])
def test_sarama_empty_wrappers_are_invalid_record_sets(name):
    data, _ = _load(f"sarama/{name}.bin")
    [batch], _ = _walk(data)
    assert batch.is_valid()
    with pytest.raises(InvalidRecord, match="Found invalid compressed record set with no inner records"):
        list(batch.iter_records())


@pytest.mark.parametrize("name", ["message_v1_zstd_2_inner", "message_v1_zstd_empty"])
def test_sarama_zstd_in_magic1_is_refused_as_kafka_refuses_it(name):
    data, _ = _load(f"sarama/{name}.bin")
    [batch], _ = _walk(data)
    assert batch.is_valid() and batch.codec == "zstd"
    with pytest.raises(InvalidRecord, match="Invalid wrapper compressionType found in legacy deep record iterator 1"):
        list(batch.iter_records())


def test_sarama_magic2_in_legacy_layout_is_not_a_valid_batch():
    data, _ = _load("sarama/message_magic2_legacy_layout_invalid.bin")
    [batch], end = _walk(data)
    # 26 bytes with magic 2: Kafka reads any magic >= 2 as a V2 batch, which needs 61 bytes
    assert (batch.magic, batch.size, batch.is_valid(), end.reason) == (2, 26, False, END_OF_DATA)
    with pytest.raises(Corrupt, match="the size 26 is smaller than the minimum allowed overhead 61"):
        batch.ensure_valid()


def test_sarama_control_record_bodies():
    base = require_dir(CORPUS_VECTORS, "the test-vector corpus")
    vectors = json.loads((base / "sarama/control_records.json").read_text())["vectors"]
    for v in vectors:
        key = decode_control_key(bytes.fromhex(v["key_hex"]))
        assert key.name == v["expected"]["type"]
        if key.name in ("ABORT", "COMMIT"):
            assert decode_end_txn_marker(bytes.fromhex(v["value_hex"])).coordinator_epoch == v["expected"]["coordinator_epoch"]


@pytest.mark.parametrize("name", ["record_batch_hello_world", "record_batch_hiiii_byeee"])
def test_kafka_protocol_rs_batches(name):
    data, meta = _load(f"kafka-protocol-rs/{name}.bin")
    exp = meta["expected"]
    [batch], end = _walk(data)
    assert batch.is_valid() and end.reason == END_OF_DATA
    assert (batch.last_offset_delta, batch.max_timestamp, batch.producer_id) == (3, 2**40, 0)
    [record] = batch.iter_records()
    want = exp["records"][0]
    assert record.key == want["key"].encode() and record.value == want["value"].encode()
    assert record.attributes == want["record_attributes"] == 1
    assert record.offset == batch.base_offset + want["offset_delta"]
    assert record.timestamp == exp["first_timestamp"] + want["timestamp_delta"]
