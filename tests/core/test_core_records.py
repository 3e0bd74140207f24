"""The core's V2 record scanner returns exactly what the pure-Python scanner returns (format/records.py).

Compared: ``scan_some_records``' columns (fields, header_fields), where the records end, whether a
timestamp delta was long, or ``None`` -- for records Kafka's writer made (keys and values null or
not, headers, large deltas), damaged copies of them (bit flips, truncations, a wrong count), random
bytes, and every V2 batch of the real corpus (decompressed when compressed).
"""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from segments import corpus_logs

from kseg.format import RecordSpec, encode_batch, records, scan
from kseg.format.layout import RECORD_BATCH_OVERHEAD
from kseg.format.v2 import V2Batch


def _outcome(result):
    if result is None:
        return None
    scanned, pos = result
    return scanned.fields, scanned.header_fields, scanned.short_timestamps, pos, scanned.count


def assert_same_records(core, buf, start, end, count, base_offset=0, base_timestamp=0) -> None:
    python = records._python_scan_some(buf, start, count, base_offset, base_timestamp, end)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(records, "CORE", core)
        compiled = records.scan_some_records(buf, start, end, count, base_offset, base_timestamp)
        whole = records.scan_records(buf, start, end, count, base_offset, base_timestamp)
    assert _outcome(compiled) == _outcome(python)
    expected_whole = python[0] if python is not None and python[1] == end else None
    assert _outcome((whole, end) if whole else None) == _outcome((expected_whole, end) if expected_whole else None)


record = st.builds(
    lambda key, value, headers, ts: (key, value, headers, ts),
    st.one_of(st.none(), st.binary(max_size=300)),
    st.one_of(st.none(), st.binary(max_size=300)),
    st.lists(st.tuples(st.binary(max_size=20), st.one_of(st.none(), st.binary(max_size=20))), max_size=3),
    st.integers(-(2**40), 2**40),
)


@settings(deadline=None, max_examples=80)
@given(st.lists(record, min_size=1, max_size=8), st.integers(0, 2**32), st.integers(-1, 1))
def test_written_records_damaged_or_not(core, items, seed, count_shift):
    base_ts = 1_700_000_000_000
    specs = [RecordSpec(i, base_ts + ts, k, v, tuple(h)) for i, (k, v, h, ts) in enumerate(items)]
    batch = encode_batch(specs)
    count = len(specs)
    assert_same_records(core, batch, RECORD_BATCH_OVERHEAD, len(batch), count, 5, base_ts)
    assert_same_records(core, batch, RECORD_BATCH_OVERHEAD, len(batch), max(0, count + count_shift))
    rnd = random.Random(seed)
    damaged = bytearray(batch)
    for _ in range(rnd.randint(1, 3)):
        damaged[rnd.randrange(RECORD_BATCH_OVERHEAD, len(damaged))] ^= 1 << rnd.randrange(8)
    damaged = bytes(damaged)
    assert_same_records(core, damaged, RECORD_BATCH_OVERHEAD, len(damaged), count)
    cut = rnd.randrange(RECORD_BATCH_OVERHEAD, len(batch) + 1)
    assert_same_records(core, batch[:cut], RECORD_BATCH_OVERHEAD, cut, count)
    assert_same_records(core, batch, RECORD_BATCH_OVERHEAD, cut, count)


@settings(deadline=None, max_examples=80)
@given(st.binary(max_size=200), st.integers(0, 20), st.integers(0, 10), st.integers(0, 10))
def test_random_bytes(core, data, count, start, trim):
    assert_same_records(core, data, min(start, len(data)), max(0, len(data) - trim), count)


@pytest.mark.parametrize(
    "data,count",
    [
        (b"", 0),
        (b"", 1),
        (b"\x01", 1),
        (bytes([0x0C, 0, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x7F]), 1),  # a 10-byte varlong
        (bytes([0x10, 0, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01]), 1),  # too long
        (bytes([0xFF, 0xFF, 0xFF, 0xFF, 0x0F]), 1),  # a length of -2**31
        (bytes([0x80, 0x00, 0, 0, 0, 1, 1, 0]), 1),  # a non-canonical two-byte length
    ],
)
def test_edges(core, data, count):
    assert_same_records(core, data, 0, len(data), count)


@pytest.mark.corpus
def test_every_v2_batch_of_the_real_corpus(core):
    logs = corpus_logs()
    batches = 0
    for path in logs:
        data = path.read_bytes()
        for item in scan.scan(data):
            if not isinstance(item, V2Batch):
                continue
            try:
                buf, start, end, _, _ = item._records_bytes(1 << 26)
            except Exception:
                continue
            assert_same_records(core, buf, start, end, item[12], item[0], item[7])
            batches += 1
    assert batches > 1000
