"""Kafka's JSON text: what Jackson's ``JsonNode.toString()`` writes in Kafka's tools.

kafka-dump-log prints decoded internal records through Kafka's generated JSON
converters and Jackson; :func:`kafka_json` reproduces that text byte for
byte (compact separators, Jackson's string escaping, Java's
``Double.toString``), leaving out ``_unknownTaggedFields`` as the converters do.
"""

from __future__ import annotations

import math
import re
from decimal import Decimal, localcontext
from typing import Any

from kseg.format.messages.schema import UNKNOWN_TAGS


def kafka_json(value: Any) -> str:
    """Serialise a decoded value exactly as Jackson's ``JsonNode.toString()`` does in Kafka's tools.

    Compact separators, strings escaped as Jackson escapes them (``\\uXXXX`` in
    upper-case hex for control characters, nothing else), doubles in Java's
    ``Double.toString`` notation, and ``_unknownTaggedFields`` left out.
    """
    parts: list[str] = []
    _write_json(value, parts)
    return "".join(parts)


def _write_json(value: Any, out: list[str]) -> None:
    if value is None:
        out.append("null")
    elif value is True or value is False:
        out.append("true" if value else "false")
    elif isinstance(value, int):
        out.append(str(value))
    elif isinstance(value, float):
        out.append(java_double(value))
    elif isinstance(value, str):
        out.append(json_string(value))
    elif isinstance(value, dict):
        items = [(k, v) for k, v in value.items() if k != UNKNOWN_TAGS]
        out.append("{")
        for i, (key, item) in enumerate(items):
            if i:
                out.append(",")
            out.append(json_string(key))
            out.append(":")
            _write_json(item, out)
        out.append("}")
    elif isinstance(value, (list, tuple)):
        out.append("[")
        for i, item in enumerate(value):
            if i:
                out.append(",")
            _write_json(item, out)
        out.append("]")
    else:
        raise TypeError(f"cannot write {type(value).__name__} as JSON")


_JSON_ESCAPES = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t"}
_NEEDS_ESCAPE = re.compile(r'[\x00-\x1f"\\]')


def _escape(match: re.Match[str]) -> str:
    ch = match.group()
    return _JSON_ESCAPES.get(ch) or f"\\u{ord(ch):04X}"


def json_string(text: str) -> str:
    """A JSON string literal with Jackson's escaping: the short escapes, else ``\\uXXXX`` below U+0020."""
    return '"' + _NEEDS_ESCAPE.sub(_escape, text) + '"'


def java_double(value: float) -> str:
    """``Double.toString`` (JDK 19+ rules): shortest round-trip digits, at least two where one would do.

    Plain notation for 1e-3 <= |value| < 1e7 (``100.0``, ``0.001``), else
    ``d.dddE±n`` (``1.0E7``, ``4.9E-324``).
    """
    if value == 0:
        return "-0.0" if math.copysign(1.0, value) < 0 else "0.0"
    digits, power = _java_digits(abs(value))
    sign = "-" if value < 0 else ""
    if -3 <= power < 7:
        if power >= 0:
            whole = digits[: power + 1].ljust(power + 1, "0")
            return f"{sign}{whole}.{digits[power + 1:] or '0'}"
        return f"{sign}0.{'0' * (-power - 1)}{digits}"
    return f"{sign}{digits[0]}.{digits[1:] or '0'}E{power}"


def _java_digits(value: float) -> tuple[str, int]:
    """Significant digits and decimal exponent (value = d.ddd x 10^power) as Java chooses them.

    Python's ``repr`` gives the shortest digits that round-trip; where that is a
    single digit, Java also considers two-digit decimals and takes the one
    closest to the exact binary value (so ``Double.MIN_VALUE`` is ``4.9E-324``).
    """
    _, shortest, exponent = Decimal(repr(value)).as_tuple()
    text = "".join(map(str, shortest)).rstrip("0") or "0"
    power = int(exponent) + len(shortest) - 1
    if len(text) == 1:
        with localcontext() as context:
            context.prec = 1100  # enough for any double's exact decimal expansion
            exact = Decimal(value)
            two = exact.scaleb(-power).quantize(Decimal("0.1")).scaleb(power)  # half-even to 2 digits
            closer = abs(two - exact) < abs(Decimal(text).scaleb(power) - exact)
        if closer:
            _, two_digits, two_exponent = two.as_tuple()
            text = "".join(map(str, two_digits)).rstrip("0")
            power = int(two_exponent) + len(two_digits) - 1
    return text, power
