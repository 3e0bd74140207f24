"""``--at``: an offset, ``<n>ms`` or an ISO-8601 time -- each spelled one way only.

* digits alone are a metadata **offset** (``--at 1234``: the image after offset 1234);
* digits followed by ``ms`` are **epoch milliseconds** (``--at 1795738601947ms``);
* anything else must be an **ISO-8601 time** (``2026-11-27T09:00:00Z``; no zone means UTC).

A bare number of 13 or more digits is refused rather than guessed at: it looks
like epoch milliseconds with the ``ms`` forgotten, and as an offset it would
silently mean "the end of the log" (no metadata log reaches offset 10^12: a
NoOp every 500 ms for 15,000 years).
"""

from __future__ import annotations

from datetime import datetime, timezone

from kseg.errors import KsegError
from kseg.metadata.replay import Target

#: A bare number this long is refused: an offset no log reaches, a time without its ``ms``.
MS_DIGITS = 13


def parse_at(text: str) -> Target:
    """The target ``text`` names; :class:`KsegError` when it is none of the three forms."""
    raw = text.strip()
    if raw.endswith("ms") and raw[:-2].isdigit():
        return Target(time_ms=int(raw[:-2]))
    if raw.isdigit():
        if len(raw) >= MS_DIGITS:
            raise KsegError(f"--at {text!r}: a bare number is an offset, and no metadata log reaches this one; "
                            f"for epoch milliseconds write {raw}ms")
        return Target(offset=int(raw))
    try:
        moment = datetime.fromisoformat(raw.replace("Z", "+00:00"))
    except ValueError:
        raise KsegError(f"--at {text!r}: not an offset (1234), epoch milliseconds (1795738601947ms) or an "
                        "ISO-8601 time (2026-11-27T09:00:00Z)") from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    return Target(time_ms=int(moment.timestamp() * 1000))


def iso(ms: int) -> str:
    """Epoch milliseconds as ISO-8601 UTC (``2026-11-26T09:00:00.123Z``); "-" for an unknown time."""
    if ms < 0:
        return "-"
    return datetime.fromtimestamp(ms / 1000, tz=timezone.utc).isoformat(timespec="milliseconds").replace(
        "+00:00", "Z")
