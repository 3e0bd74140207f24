"""The generic decoder for Kafka's generated-message encoding (kseg.format.messages).

Byte vectors are written by hand from the encoding rules (reference §9,
``MessageDataGenerator``), one comment per field.  The error texts are the
ones Kafka's generated readers throw (``ByteBufferAccessor.readArray``,
``MessageDataGenerator.generateVariableLengthReader``, ``ByteUtils``).
"""

from __future__ import annotations

import struct

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kseg.errors import InvalidRecord
from kseg.format import schemas
from kseg.format.messages import (
    UNKNOWN_TAGS,
    MessageDecodeError,
    UnknownVersion,
    Versions,
    decode_exact,
    decode_message,
    field,
    java_double,
    json_string,
    kafka_json,
    message,
    read_unsigned_varint,
)

ITEM = [field("Key", "string", "0+"), field("Value", "int32", "0+")]
ALL_TYPES = message(
    "AllTypes", valid="0-2", flexible="1+", source="(test)",
    fields=[
        field("Flag", "bool", "0+"),
        field("Tiny", "int8", "0+"),
        field("Short", "int16", "0+"),
        field("Port", "uint16", "0+"),
        field("Count", "int32", "0+"),
        field("Big", "uint32", "0+"),
        field("Offset", "int64", "0+"),
        field("Ratio", "float64", "0+"),
        field("Id", "uuid", "0+"),
        field("Name", "string", "0+"),
        field("Maybe", "string", "0+", nullable="0+"),
        field("Blob", "bytes", "0+"),
        field("Numbers", "[]int32", "0+"),
        field("Names", "[]string", "0+"),
        field("Items", "[]Item", "0+", fields=ITEM),
        field("Inner", "Inner", "0+", nullable="0+", fields=[field("A", "int16", "0+")]),
        field("Extra", "int32", "1+", tagged="1+", tag=0, default="-1"),
        field("Note", "string", "1+", nullable="1+", tagged="1+", tag=1, default="null"),
        field("Later", "int32", "2+", tagged="2+", tag=2),
    ],
)
UUID = bytes(range(16))  # 00 01 .. 0f -> base64url "AAECAwQFBgcICQoLDA0ODw"


def i8(v: int) -> bytes:
    return struct.pack(">b", v)


def i16(v: int) -> bytes:
    return struct.pack(">h", v)


def i32(v: int) -> bytes:
    return struct.pack(">i", v)


def i64(v: int) -> bytes:
    return struct.pack(">q", v)


def uv(n: int) -> bytes:
    out = bytearray()
    while n > 0x7F:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


V0_FIELDS = [
    ("flag", b"\x01"),                          # bool: 1 -> true
    ("tiny", b"\xfe"),                          # int8: -2
    ("short", i16(-300)),                       # int16
    ("port", b"\xff\xfe"),                      # uint16: 65534
    ("count", i32(7)),                          # int32
    ("big", b"\xff\xff\xff\xff"),               # uint32: 4294967295
    ("offset", i64(-5)),                        # int64
    ("ratio", struct.pack(">d", 0.5)),          # float64
    ("id", UUID),                               # uuid: 16 bytes (two int64)
    ("name", i16(3) + b"abc"),                  # string: int16 length + UTF-8
    ("maybe", i16(-1)),                         # nullable string: -1 = null
    ("blob", i32(2) + b"\x00\xff"),             # bytes: int32 length
    ("numbers", i32(2) + i32(1) + i32(-1)),     # []int32: int32 count, then the elements
    ("names", i32(1) + i16(1) + b"x"),          # []string: count 1, "x"
    ("items", i32(1) + i16(1) + b"k" + i32(9)),  # []Item: count 1, {Key "k", Value 9}
    ("inner", i8(1) + i16(42)),                 # nullable struct: int8 marker 1 = present, then A = 42
]
V0_BYTES = b"".join(data for _, data in V0_FIELDS)


def v0_offset(name: str) -> int:
    """Where field ``name`` starts in V0_BYTES."""
    names = [n for n, _ in V0_FIELDS]
    return sum(len(data) for _, data in V0_FIELDS[: names.index(name)])


V0_DATA = {
    "flag": True, "tiny": -2, "short": -300, "port": 65534, "count": 7, "big": 4294967295, "offset": -5,
    "ratio": 0.5, "id": "AAECAwQFBgcICQoLDA0ODw", "name": "abc", "maybe": None, "blob": "AP8=",
    "numbers": [1, -1], "names": ["x"], "items": [{"key": "k", "value": 9}], "inner": {"a": 42},
}

V1_BODY = b"".join([
    b"\x00",                          # Flag      bool: 0 -> false
    b"\x7f",                          # Tiny      int8
    i16(1),                           # Short
    b"\x00\x50",                      # Port      uint16: 80
    i32(-1),                          # Count
    i32(0),                           # Big
    i64(1 << 40),                     # Offset
    struct.pack(">d", float("nan")),  # Ratio     NaN -> "NaN", as Jackson writes it
    bytes(16),                        # Id        zero uuid
    uv(5) + "né".encode() + b"\xff",  # Name      compact string: uvarint length+1 (4 bytes); 0xff -> U+FFFD
    uv(0),                            # Maybe     compact nullable string: 0 = null
    uv(1),                            # Blob      compact bytes: length 0
    uv(1),                            # Numbers   compact array: count 0
    uv(3) + uv(2) + b"a" + uv(1),     # Names     compact []string: count 2, "a", ""
    uv(2) + uv(2) + b"k" + i32(1)     # Items     count 1: Key "k" (compact), Value 1,
    + uv(0),                          #           and the element's own (empty) tagged section
    i8(-1),                           # Inner     nullable struct: marker -1 = null
])
V1_NAME_AT = V1_BODY.index(uv(5) + "né".encode())
V1_BYTES = V1_BODY + b"".join([
    uv(3),                            # tagged section: 3 fields
    uv(0) + uv(4) + i32(12),          #   tag 0 (Extra), size 4, int32 12
    uv(1) + uv(3) + uv(3) + b"hi",    #   tag 1 (Note), size 3, compact string "hi"
    uv(5) + uv(2) + b"\xca\xfe",      #   tag 5: unknown, kept raw
])


def test_every_type_non_flexible() -> None:
    assert decode_exact(ALL_TYPES, 0, V0_BYTES) == V0_DATA


def test_every_type_flexible_with_tagged_fields() -> None:
    data = decode_exact(ALL_TYPES, 1, V1_BYTES)
    assert data == {
        "flag": False, "tiny": 127, "short": 1, "port": 80, "count": -1, "big": 0, "offset": 1 << 40,
        "ratio": "NaN", "id": "AAAAAAAAAAAAAAAAAAAAAA", "name": "né\ufffd", "maybe": None, "blob": "",
        "numbers": [], "names": ["a", ""], "items": [{"key": "k", "value": 1}], "inner": None,
        "extra": 12, "note": "hi", UNKNOWN_TAGS: [{"tag": 5, "data": "yv4="}],
    }
    # Kafka's converters never print unknown tags; tagged fields sit at their schema position
    assert kafka_json(data).endswith('"inner":null,"extra":12,"note":"hi"}')


def test_strings_decode_as_javas_utf8_constructor() -> None:
    # an encoded surrogate is one malformed sequence for Java (one U+FFFD), three for Python's "replace"
    schema = message("T", valid="0", flexible="none", source="(test)", fields=[field("S", "string", "0+")])
    assert decode_exact(schema, 0, i16(5) + b"a\xed\xa0\x80b") == {"s": "a\ufffdb"}


def test_tagged_fields_equal_to_their_default_are_not_shown() -> None:
    body = V1_BODY
    tagged = uv(2) + uv(0) + uv(4) + i32(-1) + uv(1) + uv(1) + uv(0)  # Extra = -1, Note = null: both defaults
    data = decode_exact(ALL_TYPES, 1, body + tagged)
    assert "extra" not in data and "note" not in data


def test_a_tag_outside_its_versions_is_kafkas_error() -> None:
    body = V1_BODY
    with pytest.raises(MessageDecodeError) as err:
        decode_message(ALL_TYPES, 1, body + uv(1) + uv(2) + uv(4) + i32(7))  # tag 2 (Later) exists from v2
    assert err.value.kafka_message == "Tag 2 is not valid for version 1"
    assert decode_exact(ALL_TYPES, 2, body + uv(1) + uv(2) + uv(4) + i32(7))["later"] == 7


def test_known_tags_are_read_in_place_whatever_their_size_says() -> None:
    # Kafka ignores the size of a known tag and reads the field itself (here: size says 1, int32 follows)
    body = V1_BODY
    assert decode_exact(ALL_TYPES, 1, body + uv(1) + uv(0) + uv(1) + i32(3))["extra"] == 3


def test_nullable_tagged_struct_uses_a_varint_marker() -> None:
    schema = message("T", valid="0", flexible="0+", source="(test)", fields=[
        field("S", "S", "0+", nullable="0+", tagged="0+", tag=0, default="null",
              fields=[field("A", "int8", "0+")]),
    ])
    assert decode_exact(schema, 0, uv(1) + uv(0) + uv(1) + uv(0)) == {}  # tag 0, size 1, marker 0 = null
    present = uv(1) + uv(0) + uv(3) + uv(1) + b"\x05" + uv(0)  # marker 1, A = 5, struct's tagged section
    assert decode_exact(schema, 0, present) == {"s": {"a": 5}}


def test_non_default_struct_defaults_and_empty_struct() -> None:
    schema = message("T", valid="0", flexible="0+", source="(test)", fields=[
        field("S", "S", "0+", tagged="0+", tag=0, fields=[field("A", "int8", "0+")]),
    ])
    assert decode_exact(schema, 0, uv(1) + uv(0) + uv(2) + b"\x00" + uv(0)) == {}  # equals new S(): omitted
    assert decode_exact(schema, 0, uv(1) + uv(0) + uv(2) + b"\x01" + uv(0)) == {"s": {"a": 1}}


def test_version_ranges() -> None:
    assert 3 in Versions.parse("0+") and 5 not in Versions.parse("0-4") and Versions.parse("none").empty
    assert str(Versions.parse("1")) == "1" and str(Versions.parse("2+")) == "2+"
    with pytest.raises(UnknownVersion) as err:
        decode_message(ALL_TYPES, 3, V0_BYTES)
    assert err.value.message == "unknown version 3 of AllTypes (kseg's schema has versions 0-2)"


@pytest.mark.parametrize(
    ("data", "version", "offset", "path", "kafka_message"),
    [
        # Flag..Count fit, then 2 of the 4 bytes of Big: Java's BufferUnderflowException has no message
        (V0_BYTES[: v0_offset("big") + 2], 0, v0_offset("big"), "big", "null"),
        # Name declares 3 bytes, only "ab" is there (the error is at the bytes, after the length)
        (V0_BYTES[: v0_offset("name") + 4], 0, v0_offset("name") + 2, "name",
         "Error reading byte array of 3 byte(s): only 2 byte(s) available"),
        # Numbers declares 1000 elements with 4 bytes left
        (V0_BYTES[: v0_offset("numbers")] + i32(1000) + i32(1), 0, v0_offset("numbers"), "numbers",
         "Tried to allocate a collection of size 1000, but there are only 4 bytes remaining."),
    ],
)
def test_errors_say_where_and_what_kafka_says(data, version, offset, path, kafka_message) -> None:
    with pytest.raises(InvalidRecord) as err:
        decode_message(ALL_TYPES, version, data)
    assert (err.value.offset, err.value.field, err.value.kafka_message) == (offset, path, kafka_message)


def test_null_in_a_non_nullable_field() -> None:
    at = v0_offset("name")
    with pytest.raises(MessageDecodeError) as err:
        decode_message(ALL_TYPES, 0, V0_BYTES[:at] + i16(-1))
    assert (err.value.kafka_message, err.value.offset, err.value.field) == (
        "non-nullable field name was serialized as null", at, "name")
    names = v0_offset("names")
    with pytest.raises(MessageDecodeError) as err:
        decode_message(ALL_TYPES, 0, V0_BYTES[:names] + i32(1) + i16(-1))  # a null element of []string
    assert err.value.kafka_message == "non-nullable field names element was serialized as null"
    assert err.value.field == "names[0]"


def test_errors_inside_nested_structs_name_the_path() -> None:
    items = v0_offset("items")
    with pytest.raises(MessageDecodeError) as err:
        decode_message(ALL_TYPES, 0, V0_BYTES[:items] + i32(1) + i16(1) + b"k" + b"\x00")
    assert (err.value.field, err.value.offset) == ("items[0].value", items + 7)  # count 4 + Key 3 bytes


def test_compact_string_longer_than_a_short() -> None:
    prefix = V1_BODY[:V1_NAME_AT]
    with pytest.raises(MessageDecodeError) as err:
        decode_message(ALL_TYPES, 1, prefix + uv(0x8001))  # length 0x8000
    assert err.value.kafka_message == "string field name had invalid length 32768"


def test_varints_are_java_ints() -> None:
    assert read_unsigned_varint(b"\xff\xff\xff\xff\x0f") == (-1, 5)  # 0xffffffff wraps to -1
    with pytest.raises(MessageDecodeError) as err:
        read_unsigned_varint(b"\xff\xff\xff\xff\xff")
    assert err.value.kafka_message == (
        "Varint is too long, the most significant bit in the 5th byte is set, converted value: ffffffff")
    with pytest.raises(MessageDecodeError) as err:
        read_unsigned_varint(b"\x80")
    assert (err.value.kafka_message, err.value.offset) == ("null", 0)


def test_a_huge_compact_length_allocates_nothing() -> None:
    prefix = V1_BODY[:V1_NAME_AT]
    with pytest.raises(MessageDecodeError) as err:
        decode_message(ALL_TYPES, 1, prefix + b"\xff\xff\xff\xff\x07" + b"abc")  # length 2^31 - 2
    assert err.value.kafka_message == "string field name had invalid length 2147483646"


def test_unknown_tag_with_a_negative_size_is_javas_negative_array() -> None:
    body = V1_BODY
    with pytest.raises(MessageDecodeError) as err:
        decode_message(ALL_TYPES, 1, body + uv(1) + uv(9) + b"\xfe\xff\xff\xff\x0f")  # size 0xfffffffe = -2
    assert err.value.kafka_message == "-2"


def test_trailing_bytes() -> None:
    data, stop = decode_message(ALL_TYPES, 0, V0_BYTES + b"\x00\x01")
    assert (data, stop) == (V0_DATA, len(V0_BYTES))
    with pytest.raises(MessageDecodeError) as err:
        decode_exact(ALL_TYPES, 0, V0_BYTES + b"\x00\x01")
    assert (err.value.offset, err.value.kafka_message) == (len(V0_BYTES), "Found 2 byte(s) of garbage")


def test_offsets_are_relative_to_the_message_start() -> None:
    with pytest.raises(MessageDecodeError) as err:
        decode_message(ALL_TYPES, 0, b"\xaa\xbb" + V0_BYTES[: v0_offset("big") + 2], pos=2)
    assert err.value.offset == v0_offset("big")


# --------------------------------------------------------------------------- Kafka's JSON text


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (0.0, "0.0"), (-0.0, "-0.0"), (1.0, "1.0"), (100.0, "100.0"), (0.001, "0.001"),
        (9.999e-4, "9.999E-4"),
        (1234567.0, "1234567.0"), (1e7, "1.0E7"), (1e21, "1.0E21"), (0.1 + 0.2, "0.30000000000000004"),
        (5e-324, "4.9E-324"), (2e-323, "2.0E-323"), (1.23456789012e11, "1.23456789012E11"), (-2.5, "-2.5"),
        (1e-4, "1.0E-4"), (1e23, "1.0E23"),
    ],
)
def test_doubles_print_as_java_does(value: float, text: str) -> None:
    # values checked against Double.toString / Jackson DoubleNode on OpenJDK 17
    assert java_double(value) == text


def test_strings_escape_as_jackson_does() -> None:
    assert json_string('a\x01\x1f\n\t"\\/é\u2028\x7f') == '"a\\u0001\\u001F\\n\\t\\"\\\\/é\u2028\x7f"'


def test_kafka_json_is_compact_and_keeps_order() -> None:
    value = {"b": 1, "a": [True, None, "x", 1.5], UNKNOWN_TAGS: [{"tag": 1, "data": ""}], "c": {}}
    assert kafka_json(value) == '{"b":1,"a":[true,null,"x",1.5],"c":{}}'


# --------------------------------------------------------------------------- robustness

ALL_SCHEMAS = [
    (msg, version)
    for name in (*schemas.FAMILIES, *schemas.HISTORY.values())
    for msg in schemas.family(name).values()
    for version in range(msg.valid.low, msg.valid.high + 1)
] + [(ALL_TYPES, v) for v in range(3)]


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(ALL_SCHEMAS), st.binary(max_size=80))
def test_random_bytes_raise_only_invalid_record(schema_version, data: bytes) -> None:
    schema, version = schema_version
    try:
        decoded, stop = decode_message(schema, version, data)
    except MessageDecodeError as err:
        assert isinstance(err, InvalidRecord) and 0 <= (err.offset or 0) <= len(data)
    else:
        assert 0 <= stop <= len(data)
        kafka_json(decoded)


@pytest.mark.parametrize("version", [0, 1])
@settings(max_examples=150, deadline=None)
@given(index=st.integers(0, 200), byte=st.integers(0, 255), cut=st.integers(0, 200))
def test_damaged_valid_messages_raise_only_invalid_record(version: int, index: int, byte: int,
                                                          cut: int) -> None:
    valid = V0_BYTES if version == 0 else V1_BYTES
    data = bytearray(valid)
    data[index % len(data)] = byte
    try:
        decode_message(ALL_TYPES, version, bytes(data[: len(data) - cut % 8]))
    except MessageDecodeError:
        pass
