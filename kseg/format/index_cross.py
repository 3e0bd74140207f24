"""The compiled core's ``.index`` / ``.timeindex`` cross-check, for verify (kseg/ops/verify/index_checks.py).

``OffsetCross`` and ``TimeCross`` (rust/kseg-wire/src/index_check.rs) hold an index's written
entries and the state of its check against the log's batches; the walk shows them a run of batches
per call, and they name only the entries with a finding (*verdicts*), which index_checks.py words
exactly as its own Python check does.  None on the pure-Python path (or for a buffer the core cannot
borrow): the Python check is the reference (tests/core/test_core_index_cross.py).
"""

from __future__ import annotations

from typing import Any

from kseg.format._core import CORE, call
from kseg.format.layout import Buffer

#: Verdict codes (kseg-wire ``index_check::code``): (entry number, code, a, b).
BELOW_BASE, KEY_ORDER, VALUE_ORDER = 1, 2, 3
PAST_END, NOT_A_BATCH, BEYOND_LAST, NOT_ABOVE_PREVIOUS, INSIDE_BATCH, NOT_LAST_OF_ANY = 10, 11, 12, 13, 14, 15
IN_NO_BATCH, NOT_BATCH_MAX, BELOW_EARLIER = 16, 17, 18

Verdict = tuple[int, int, int, int]


def offset_cross(data: Buffer, live: int, base: int) -> Any | None:
    """The core's check of an ``.index`` over its first ``live`` slots, or None (run the Python check)."""
    return _make("OffsetCross", data, live, base)


def time_cross(data: Buffer, live: int, base: int) -> Any | None:
    """The core's check of a ``.timeindex`` over its first ``live`` slots, or None (run the Python check)."""
    return _make("TimeCross", data, live, base)


def _make(name: str, data: Buffer, live: int, base: int) -> Any | None:
    if CORE is None:
        return None
    made = call(getattr(CORE, name), 0, data, live, base)
    return None if made is NotImplemented else made
