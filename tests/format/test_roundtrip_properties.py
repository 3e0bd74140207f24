"""decode(encode(x)) == x for records and batches of each magic x codec (hypothesis).

For generated records -- keys, values and header values that are bytes, empty or null, header keys
in any Unicode, timestamps in any order (or -1), offset gaps, values large enough to cross the
snappy (32 KiB) and lz4 (64 KiB) blocks now and then -- and every batch option Kafka's builder
accepts (codec, level, timestamp type, producer fields, transactions, markers, leader epochs, delete
horizons), kseg's writer and reader must agree on every field, by Kafka's rules:

* V2: record timestamps are the batch's LogAppendTime when set; sequences are base + offset delta,
  wrapping past 2**31 - 1; maxTimestamp is the largest record timestamp (or the LogAppendTime);
* V1: the same without headers or producer fields; V0 has no timestamps at all;
* encode(decode(bytes)) == bytes: re-encoding what was read gives the very same bytes.

The interop tests (tests/interop) check the same writer and reader against Kafka itself; these
check them against each other over many more shapes. max_examples stays modest: < 30 s in all.
"""

from __future__ import annotations

from dataclasses import dataclass

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from kseg.errors import EncodeError
from kseg.format import END_OF_DATA, BatchWalk, RecordSpec, encode_batch, read_batch
from kseg.format.control import (
    ABORT,
    COMMIT,
    decode_control_key,
    decode_end_txn_marker,
    encode_control_key,
    encode_end_txn_marker,
)
from kseg.format.model import CODEC_NAMES

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
INT32_MAX = 2**31 - 1
INT64_MAX = 2**63 - 1
LEVELS = {
    "none": [None],
    "snappy": [None],
    "gzip": [None, 1, 9],
    "lz4": [None, 1, 17],
    "zstd": [None, -3, 1, 9],
}

small_bytes = st.binary(max_size=40)
#: now and then a value larger than a snappy block and an lz4 block (cheap: a repeated pattern)
big_bytes = st.builds(
    lambda pattern, n: pattern * n, st.binary(min_size=1, max_size=7), st.integers(5000, 12000)
)
payload = st.one_of(st.none(), small_bytes, small_bytes, small_bytes, big_bytes)
timestamp = st.one_of(st.just(-1), st.just(INT64_MAX), st.integers(0, 2**42), st.integers(0, INT64_MAX))
header_key = st.text(max_size=12)  # Kafka's header keys are Java Strings, written as UTF-8
headers = st.lists(st.tuples(header_key, st.one_of(st.none(), small_bytes)), max_size=4)


@st.composite
def record_specs(draw, with_headers: bool, max_records: int = 6) -> list[RecordSpec]:
    """1..max_records records with strictly increasing offsets (gaps allowed)."""
    count = draw(st.integers(1, max_records))
    offset = draw(st.integers(0, 2**40))
    specs = []
    for _ in range(count):
        hs = tuple(draw(headers)) if with_headers else ()
        specs.append(RecordSpec(offset, draw(timestamp), draw(payload), draw(payload), hs))
        offset += draw(st.integers(1, 300))
    return specs


@dataclass
class Producer:
    producer_id: int = -1
    producer_epoch: int = -1
    base_sequence: int = -1
    is_transactional: bool = False


producers = st.one_of(
    st.just(Producer()),
    st.builds(
        Producer, st.integers(0, INT64_MAX), st.integers(0, 32767), st.integers(0, INT32_MAX), st.booleans()
    ),
)


def _spec_headers(spec: RecordSpec) -> tuple:
    return tuple((k.encode("utf-8"), v) for k, v in spec.headers)


def _respecs(batch) -> list[RecordSpec]:
    """What a reader would hand back to the writer: the decoded records as RecordSpecs."""
    return [
        RecordSpec(r.offset, r.timestamp, r.key, r.value, tuple((k.decode("utf-8"), v) for k, v in r.headers))
        for r in batch.iter_records()
    ]


# --------------------------------------------------------------------------- magic 2


@SETTINGS
@given(
    specs=record_specs(with_headers=True),
    codec=st.sampled_from(CODEC_NAMES),
    level_index=st.integers(0, 3),
    log_append_time=st.one_of(st.none(), st.integers(0, 2**42)),
    producer=producers,
    partition_leader_epoch=st.integers(-1, INT32_MAX),
    base_offset_gap=st.integers(0, 50),
    delete_horizon_ms=st.one_of(st.just(-1), st.integers(0, 2**42)),
)
def test_v2_batch_round_trip(
    specs,
    codec,
    level_index,
    log_append_time,
    producer,
    partition_leader_epoch,
    base_offset_gap,
    delete_horizon_ms,
):
    level = LEVELS[codec][level_index % len(LEVELS[codec])]
    base_offset = specs[0].offset - min(base_offset_gap, specs[0].offset)
    lat = log_append_time is not None
    data = encode_batch(
        specs,
        magic=2,
        codec=codec,
        level=level,
        base_offset=base_offset,
        timestamp_type="LogAppendTime" if lat else "CreateTime",
        log_append_time=log_append_time if lat else -1,
        partition_leader_epoch=partition_leader_epoch,
        delete_horizon_ms=delete_horizon_ms,
        **vars(producer),
    )
    batch = read_batch(data, 0)
    walk = BatchWalk(data)
    assert [b.position for b in walk] == [0] and walk.end.reason == END_OF_DATA
    assert batch.is_valid() and batch.size == len(data) and batch.codec == codec
    assert (batch.base_offset, batch.last_offset, batch.count) == (base_offset, specs[-1].offset, len(specs))
    assert batch.timestamp_type == ("LogAppendTime" if lat else "CreateTime")
    assert batch.max_timestamp == (log_append_time if lat else max(s.timestamp for s in specs))
    assert (batch.producer_id, batch.producer_epoch, batch.base_sequence) == (
        producer.producer_id,
        producer.producer_epoch,
        producer.base_sequence,
    )
    assert batch.is_transactional == producer.is_transactional and not batch.is_control
    assert batch.partition_leader_epoch == partition_leader_epoch
    assert batch.delete_horizon_ms == (delete_horizon_ms if delete_horizon_ms >= 0 else None)
    # Kafka's sequences wrap from Integer.MAX_VALUE to 0: modulo 2**31 for a base >= 0
    sequences = [
        -1 if producer.base_sequence < 0 else (producer.base_sequence + s.offset - base_offset) % 2**31
        for s in specs
    ]
    assert batch.last_sequence == sequences[-1]

    records = list(batch.iter_records())
    assert [(r.offset, r.key, r.value, r.headers) for r in records] == [
        (s.offset, s.key, s.value, _spec_headers(s)) for s in specs
    ]
    assert [r.timestamp for r in records] == [log_append_time if lat else s.timestamp for s in specs]
    assert [r.key_size for r in records] == [-1 if s.key is None else len(s.key) for s in specs]
    assert [r.value_size for r in records] == [-1 if s.value is None else len(s.value) for s in specs]
    assert [r.sequence for r in records] == sequences
    assert all(
        r.magic == 2 and r.timestamp_type == batch.timestamp_type and not r.is_control for r in records
    )

    if not lat:  # LogAppendTime hides the records' own timestamps; otherwise all is there to write again
        again = encode_batch(
            _respecs(batch),
            magic=2,
            codec=codec,
            level=level,
            base_offset=base_offset,
            partition_leader_epoch=partition_leader_epoch,
            delete_horizon_ms=delete_horizon_ms,
            **vars(producer),
        )
        assert again == data


@SETTINGS
@given(
    kind=st.sampled_from([ABORT, COMMIT]),
    coordinator_epoch=st.integers(-(2**31), INT32_MAX),
    offset=st.integers(0, 2**50),
    ts=timestamp,
    producer_id=st.integers(0, INT64_MAX),
    producer_epoch=st.integers(0, 32767),
    codec=st.sampled_from(CODEC_NAMES),
)
def test_transaction_marker_round_trip(
    kind, coordinator_epoch, offset, ts, producer_id, producer_epoch, codec
):
    marker = RecordSpec(offset, ts, encode_control_key(kind), encode_end_txn_marker(coordinator_epoch))
    data = encode_batch(
        [marker],
        codec=codec,
        producer_id=producer_id,
        producer_epoch=producer_epoch,
        is_transactional=True,
        is_control=True,
    )
    batch = read_batch(data, 0)
    assert batch.is_valid() and batch.is_control and batch.is_transactional
    assert (batch.base_sequence, batch.last_sequence, batch.producer_id) == (-1, -1, producer_id)
    (record,) = batch.iter_records()
    assert record.is_control and (record.offset, record.timestamp) == (offset, ts)
    key = decode_control_key(record.key)
    assert (key.version, key.type_id, key.name) == (0, kind, "COMMIT" if kind == COMMIT else "ABORT")
    assert decode_end_txn_marker(record.value).coordinator_epoch == coordinator_epoch


# --------------------------------------------------------------------------- magic 0 and 1


@SETTINGS
@given(
    specs=record_specs(with_headers=False),
    magic=st.sampled_from([0, 1]),
    codec=st.sampled_from(CODEC_NAMES[:4]),
    log_append_time=st.one_of(st.none(), st.integers(0, 2**42)),
    base_offset_gap=st.integers(0, 50),
)
def test_legacy_message_set_round_trip(specs, magic, codec, log_append_time, base_offset_gap):
    base_offset = specs[0].offset - min(base_offset_gap, specs[0].offset)
    lat = log_append_time is not None
    data = encode_batch(
        specs,
        magic=magic,
        codec=codec,
        base_offset=base_offset,
        timestamp_type="LogAppendTime" if lat else "CreateTime",
        log_append_time=log_append_time if lat else -1,
    )
    walk = BatchWalk(data)
    batches = list(walk)
    assert walk.end.reason == END_OF_DATA
    assert len(batches) == (len(specs) if codec == "none" else 1)  # one entry per record, or one wrapper
    assert all(b.magic == magic and b.codec == codec and b.is_valid() and b.count is None for b in batches)
    assert batches[-1].last_offset == specs[-1].offset and batches[0].base_offset == specs[0].offset
    if magic == 0:
        expected_type, expected_ts = "NoTimestampType", [-1] * len(specs)
    elif lat:
        expected_type, expected_ts = "LogAppendTime", [log_append_time] * len(specs)
    else:
        expected_type, expected_ts = "CreateTime", [s.timestamp for s in specs]
    assert {b.timestamp_type for b in batches} == {expected_type}
    wrapper_max = -1 if magic == 0 else max(expected_ts)
    assert max(b.max_timestamp for b in batches) == wrapper_max

    records = [r for b in batches for r in b.iter_records()]
    assert [(r.offset, r.key, r.value, r.headers) for r in records] == [
        (s.offset, s.key, s.value, ()) for s in specs
    ]
    assert [(r.timestamp, r.timestamp_type) for r in records] == [(t, expected_type) for t in expected_ts]
    assert all(r.magic == magic and r.valid and r.sequence == -1 and r.crc is not None for r in records)

    # encode(decode(bytes)) == bytes: the timestamps read back (-1 at magic 0, the LogAppendTime)
    # are what the writer stores anyway.
    again = encode_batch(
        [RecordSpec(r.offset, r.timestamp, r.key, r.value) for r in records],
        magic=magic,
        codec=codec,
        base_offset=base_offset,
        timestamp_type="LogAppendTime" if lat else "CreateTime",
        log_append_time=log_append_time if lat else -1,
    )
    assert again == data


# --------------------------------------------------------------------------- files and refusals


@SETTINGS
@given(
    st.lists(
        st.tuples(st.sampled_from([0, 1, 2]), st.sampled_from(CODEC_NAMES), record_specs(False, 3)),
        min_size=1,
        max_size=5,
    )
)
def test_mixed_magic_file_round_trip(parts):
    """Batches of any magic and codec, one after another, as after format upgrades."""
    data, expected, offset = b"", [], 0
    for magic, codec, specs in parts:
        if magic < 2 and codec == "zstd":
            codec = "lz4"
        shifted = [
            RecordSpec(offset + s.offset - specs[0].offset, s.timestamp, s.key, s.value) for s in specs
        ]
        offset = shifted[-1].offset + 1
        data += encode_batch(shifted, magic=magic, codec=codec)
        expected += [(s.offset, s.key, s.value) for s in shifted]
    walk = BatchWalk(data)
    records = [(r.offset, r.key, r.value) for b in walk for r in b.iter_records()]
    assert records == expected and walk.end.reason == END_OF_DATA and walk.end.position == len(data)


@SETTINGS
@given(
    specs=record_specs(with_headers=False, max_records=4),
    magic=st.sampled_from([0, 1, 2]),
    codec=st.sampled_from(CODEC_NAMES[:4]),
    repeat=st.integers(0, 3),
)
def test_offsets_that_do_not_increase_are_refused(specs, magic, codec, repeat):
    assume(len(specs) > repeat)
    bad = [*specs, RecordSpec(specs[repeat].offset, 0, None, None)]  # an offset already used
    try:
        encode_batch(bad, magic=magic, codec=codec)
    except EncodeError as error:
        assert error.message == (
            f"Illegal offset {specs[repeat].offset} following previous offset "
            f"{specs[-1].offset} (Offsets must increase monotonically)."
        )
    else:
        raise AssertionError("a repeated offset was accepted")
