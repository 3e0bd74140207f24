"""``--at``: an offset, an ISO-8601 time or epoch milliseconds.

A bare integer is a metadata offset -- unless it has 13 or more digits: no
metadata log reaches offset 10^12 (a NoOp every 500 ms for 15,000 years), so
such a number is epoch milliseconds, as ``1795738601947ms`` always is.
"""

from __future__ import annotations

from datetime import datetime, timezone

from kseg.errors import KsegError
from kseg.metadata.replay import Target

MS_DIGITS = 13


def parse_at(text: str) -> Target:
    """The target ``text`` names; :class:`KsegError` when it is none of the three forms."""
    raw = text.strip()
    if raw.endswith("ms") and raw[:-2].isdigit():
        return Target(time_ms=int(raw[:-2]))
    if raw.isdigit():
        return Target(time_ms=int(raw)) if len(raw) >= MS_DIGITS else Target(offset=int(raw))
    try:
        moment = datetime.fromisoformat(raw.replace("Z", "+00:00"))
    except ValueError:
        raise KsegError(f"--at {text!r}: not an offset, an ISO-8601 time or epoch milliseconds") from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    return Target(time_ms=int(moment.timestamp() * 1000))


def iso(ms: int) -> str:
    """Epoch milliseconds as ISO-8601 UTC (``2026-11-26T09:00:00.123Z``); "-" for an unknown time."""
    if ms < 0:
        return "-"
    return datetime.fromtimestamp(ms / 1000, tz=timezone.utc).isoformat(timespec="milliseconds").replace(
        "+00:00", "Z")
