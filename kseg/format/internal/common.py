"""What every internal-topic decoder returns, and the failure they raise among themselves.

A decoder never raises to its caller: a record it cannot decode becomes a
:class:`Decoded` with kafka-dump-log's error text and a :class:`Problem`.
Inside the decoders a :class:`Failed` carries both Kafka's message and kseg's
explanation up to the decoder's entry point.
"""

from __future__ import annotations

import base64
import struct
from dataclasses import dataclass
from typing import Any

VERSION_PREFIX = struct.Struct(">h")  # int16 version (or record type) in front of a coordinator key/value


@dataclass(frozen=True, slots=True)
class Problem:
    """Why a record was not (fully) decoded; ``raw_*`` hold the bytes as standard base64."""

    kind: str  # "error", "unknown-type" or "unknown-version"
    part: str  # "key" or "value"
    message: str  # kseg's explanation (Kafka's own text is in the Decoded texts)
    offset: int | None  # byte in the key/value where decoding stopped
    field: str | None
    raw_key: str | None
    raw_value: str | None

    def as_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind, "part": self.part, "message": self.message, "offset": self.offset,
            "field": self.field, "rawKey": self.raw_key, "rawValue": self.raw_value,
        }


@dataclass(frozen=True, slots=True)
class Decoded:
    """One record as a decoder sees it: kafka-dump-log's text parts and the structured form."""

    key_text: str | None
    payload_text: str | None
    key: dict[str, Any] | None = None
    value: dict[str, Any] | None = None
    problem: Problem | None = None
    kafka_aborts: bool = False

    @property
    def complete(self) -> bool:
        """Every byte of key and value was understood."""
        return self.problem is None

    def as_json(self) -> dict[str, Any]:
        """The record for ``--format json``: ``key``, ``value`` and, when something failed, ``problem``."""
        out: dict[str, Any] = {"key": self.key, "value": self.value}
        if self.problem is not None:
            out["problem"] = self.problem.as_dict()
        return out


class Failed(Exception):
    """A record cannot be decoded; carries Kafka's message and kseg's (never leaves the decoders)."""

    def __init__(self, kind: str, part: str, kafka_message: str, message: str,
                 offset: int | None = None, field: str | None = None) -> None:
        super().__init__(message)
        self.kind, self.part, self.kafka_message, self.message = kind, part, kafka_message, message
        self.offset, self.field = offset, field


def b64(data: bytes | None) -> str | None:
    """Standard base64 with padding, or None."""
    return None if data is None else base64.b64encode(data).decode("ascii")


def as_problem(failed: Failed, key: bytes | None, value: bytes | None) -> Problem:
    """The :class:`Problem` a failure leaves in the :class:`Decoded`, with the raw key and value."""
    return Problem(failed.kind, failed.part, failed.message, failed.offset, failed.field,
                   b64(key), b64(value))


def read_prefix(data: bytes, part: str) -> int:
    """The int16 in front of a coordinator key or value (``CoordinatorRecordSerde.readVersion``)."""
    if len(data) < VERSION_PREFIX.size:
        raise Failed("error", part, f"Could not read version from {part}'s buffer.",
                      f"{part} has {len(data)} byte(s), too few for its version", 0)
    return VERSION_PREFIX.unpack_from(data)[0]

