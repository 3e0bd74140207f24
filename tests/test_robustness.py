"""Hostile bytes: mutated segments raise only kseg's own errors, located inside the file.

Never struct.error, IndexError, a hang, or unbounded memory: every failure is
a KsegError whose offset lies within the data.
"""

from __future__ import annotations

import struct
import tracemalloc

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kseg.errors import KsegError, LimitExceeded
from kseg.format import BatchWalk, RecordSpec, encode_batch, read_batch

TS = 1700000000000


def _sample() -> bytes:
    parts = [
        encode_batch([RecordSpec(0, TS, b"k", b"v" * 40, (("h", b"x"),)), RecordSpec(1, TS + 1, None, b"w")]),
        encode_batch([RecordSpec(2, TS, b"k", b"v" * 100)] * 1, codec="gzip"),
        encode_batch([RecordSpec(3, TS, b"k", b"v" * 100)], codec="lz4"),
        encode_batch([RecordSpec(4, TS, b"k", b"v" * 100)], codec="snappy"),
        encode_batch([RecordSpec(5, TS, b"k", b"v" * 100)], codec="zstd"),
        encode_batch([RecordSpec(6, TS, b"k", b"v"), RecordSpec(7, TS, b"k", b"v")], magic=1),
        encode_batch([RecordSpec(8, TS, b"k", b"v"), RecordSpec(9, TS, b"k", b"v")], magic=1, codec="gzip"),
        encode_batch([RecordSpec(10, TS, b"k", b"v"), RecordSpec(11, TS, b"k", b"v")], magic=0, codec="lz4"),
    ]
    return b"".join(parts)


SAMPLE = _sample()


def _exercise(data: bytes) -> None:
    """Everything a reader does to a file; only located KsegErrors may escape."""
    walk = BatchWalk(data, strict=False)
    try:
        for batch in walk:
            batch.is_valid()
            (batch.base_offset, batch.last_offset, batch.max_timestamp, batch.codec, batch.last_sequence)
            for record in batch.iter_records(max_decompressed=1 << 20):
                (record.offset, record.key, record.value, record.headers)
    except KsegError as err:
        assert err.offset is not None, err
        assert 0 <= err.offset <= len(data), err


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_bit_flips_raise_only_located_kseg_errors(data):
    buf = bytearray(SAMPLE)
    for _ in range(data.draw(st.integers(1, 8))):
        i = data.draw(st.integers(0, len(buf) - 1))
        buf[i] ^= 1 << data.draw(st.integers(0, 7))
    _exercise(bytes(buf))


@settings(max_examples=300, deadline=None)
@given(st.integers(0, len(SAMPLE)))
def test_truncation_anywhere(cut):
    _exercise(SAMPLE[:cut])


@settings(max_examples=300, deadline=None)
@given(st.integers(0, len(SAMPLE) - 4), st.sampled_from([0, -1, 13, 14, 60, 61, 2**31 - 1, -(2**31), 123456789]))
def test_garbage_lengths(pos, value):
    buf = bytearray(SAMPLE)
    struct.pack_into(">i", buf, pos, value)
    _exercise(bytes(buf))


@settings(max_examples=200, deadline=None)
@given(st.binary(min_size=0, max_size=300))
def test_random_bytes(blob):
    _exercise(blob)


def test_length_claiming_two_gib_is_a_partial_tail_not_an_allocation():
    buf = bytearray(SAMPLE[:100])
    struct.pack_into(">i", buf, 8, 2**31 - 1)
    walk = BatchWalk(bytes(buf), strict=False)
    assert list(walk) == [] and walk.end.declared_size == 2**31 - 1


def test_decompression_bomb_stays_flat_in_memory():
    bomb = encode_batch([RecordSpec(0, TS, None, bytes(64 * 1024 * 1024))], codec="zstd")
    assert len(bomb) < 100_000
    batch = read_batch(bomb, 0)
    tracemalloc.start()
    try:
        try:
            list(batch.iter_records(max_decompressed=8 * 1024 * 1024))
            raise AssertionError("a 64 MiB batch passed an 8 MiB cap")
        except LimitExceeded as err:
            assert err.offset == 61
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 24 * 1024 * 1024
