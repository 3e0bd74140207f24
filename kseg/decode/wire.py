"""The schema registry's wire format: magic byte 0, a 4-byte schema id, Protobuf's message indexes, the payload.

Every Confluent serializer (and Karapace's, Redpanda's, Apicurio's in its
Confluent mode) writes ``0x00``, the schema id as a big-endian int32, then the
payload.  Protobuf adds, before its payload, which message of the schema's
file the payload is: a list of indexes as zigzag varints, its length first
(``[0]``, the first message, is the single byte ``0x00``) -- the path from the
file's message types down through nested types.
"""

from __future__ import annotations

from dataclasses import dataclass

MAGIC = 0


class WireError(ValueError):
    """Bytes that are not in the registry's framing (a finding on the record, never fatal)."""


@dataclass(frozen=True, slots=True)
class Framed:
    """A payload in the registry's framing: the schema id and where the serializer's bytes begin."""

    schema_id: int
    start: int


def framed(data: bytes | None) -> Framed | None:
    """The schema id of ``data`` when it starts with the magic byte and holds an id; None otherwise."""
    if data is None or len(data) < 5 or data[0] != MAGIC:
        return None
    return Framed(int.from_bytes(data[1:5], "big", signed=True), 5)


def _zigzag_varint(data: bytes, pos: int) -> tuple[int, int]:
    shift = value = 0
    while True:
        if pos >= len(data):
            raise WireError(f"message indexes run past the payload at byte {pos}")
        b = data[pos]
        pos += 1
        value |= (b & 0x7F) << shift
        if b < 0x80:
            return (value >> 1) ^ -(value & 1), pos
        shift += 7
        if shift > 63:
            raise WireError(f"message index varint too long at byte {pos}")


def message_indexes(data: bytes, pos: int) -> tuple[list[int], int]:
    """Protobuf's message indexes at ``pos``: (indexes, where the message bytes start)."""
    count, pos = _zigzag_varint(data, pos)
    if count == 0:
        return [0], pos
    if count < 0 or count > 100:
        raise WireError(f"message index count {count} is not plausible")
    indexes = []
    for _ in range(count):
        index, pos = _zigzag_varint(data, pos)
        if index < 0:
            raise WireError(f"negative message index {index}")
        indexes.append(index)
    return indexes, pos
