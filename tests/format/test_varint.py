"""Varints: known answers from Kafka's ByteUtils rules, and round trips over the whole ranges."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kseg.errors import InvalidRecord, Truncated
from kseg.format.varint import (
    decode_unsigned_varint,
    decode_varint,
    decode_varlong,
    encode_unsigned_varint,
    encode_varint,
    encode_varlong,
    size_of_varint,
    size_of_varlong,
)

# (value, zigzag varint bytes) -- zigzag maps 0,-1,1,-2,2 to 0,1,2,3,4
KNOWN_VARINTS = [
    (0, "00"),
    (-1, "01"),
    (1, "02"),
    (-2, "03"),
    (63, "7e"),
    (-64, "7f"),
    (64, "8001"),
    (300, "d804"),
    (2**31 - 1, "feffffff0f"),
    (-(2**31), "ffffffff0f"),
]


@pytest.mark.parametrize("value,hexbytes", KNOWN_VARINTS)
def test_known_varints(value, hexbytes):
    data = bytes.fromhex(hexbytes)
    assert encode_varint(value) == data
    assert decode_varint(data, 0) == (value, len(data))
    assert size_of_varint(value) == len(data)


def test_decode_at_an_absolute_position():
    buf = b"\xff\xff" + bytes.fromhex("d804") + b"\x00"
    assert decode_varint(buf, 2) == (300, 4)


@given(st.integers(min_value=-(2**31), max_value=2**31 - 1))
def test_varint_round_trip(value):
    data = encode_varint(value)
    assert decode_varint(data, 0) == (value, len(data))
    assert size_of_varint(value) == len(data) <= 5


@given(st.integers(min_value=-(2**63), max_value=2**63 - 1))
def test_varlong_round_trip(value):
    data = encode_varlong(value)
    assert decode_varlong(data, 0) == (value, len(data))
    assert size_of_varlong(value) == len(data) <= 10


@given(st.integers(min_value=0, max_value=2**32 - 1))
def test_unsigned_varint_round_trip(value):
    data = encode_unsigned_varint(value)
    assert decode_unsigned_varint(data, 0) == (value, len(data))


def test_varint_with_continuation_in_fifth_byte_is_refused():
    with pytest.raises(InvalidRecord, match="Varint is too long, the most significant bit in the 5th byte is set") as err:
        decode_varint(b"\x00\x80\x80\x80\x80\x80\x01", 1)
    assert err.value.offset == 1


def test_varlong_with_continuation_in_tenth_byte_is_refused():
    with pytest.raises(InvalidRecord) as err:
        decode_varlong(b"\xfd" + b"\xff" * 9 + b"\x01", 0)
    # ByteUtils.illegalVarlongException's words: no "the" before "most", unlike the varint's
    assert err.value.message == ("Varlong is too long, most significant bit in the 10th byte is set, "
                                 "converted value: fffffffffffffffd")


def test_varint_cut_short_is_truncated_with_position():
    with pytest.raises(Truncated) as err:
        decode_varint(b"\x00\x80\x80", 1)
    assert err.value.offset == 1


def test_varint_respects_end_bound():
    with pytest.raises(Truncated):
        decode_varint(b"\x80\x01", 0, end=1)
