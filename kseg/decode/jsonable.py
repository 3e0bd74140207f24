"""Decoded values as JSON: what fastavro and protobuf hand back, in kseg's JSON conventions.

Bytes are a string when they are UTF-8 and ``{"base64": ...}`` otherwise (as
``kseg dump --format json`` writes payloads); decimals are strings (no
precision lost to a float); dates, times and UUIDs are their ISO/standard text.
"""

from __future__ import annotations

import base64
import datetime
import decimal
import uuid
from typing import Any


def jsonable(value: Any) -> Any:
    """``value`` with every part JSON can hold as it is, and the rest spelt as the module says."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if isinstance(value, (bytes, bytearray, memoryview)):
        raw = bytes(value)
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError:
            return {"base64": base64.b64encode(raw).decode("ascii")}
    if isinstance(value, decimal.Decimal):
        return str(value)
    if isinstance(value, (datetime.datetime, datetime.date, datetime.time)):
        return value.isoformat()
    if isinstance(value, uuid.UUID):
        return str(value)
    return str(value)
