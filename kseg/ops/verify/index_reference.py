"""The pure-Python reference of verify's .index / .timeindex cross-check (the core's ``OffsetCross`` / ``TimeCross``).

An index's written entries, shown every valid batch of the log walk in file order (one by one, a
fast path's run of V2 headers, or a run of V0/V1 messages), and at the end a *verdict*
``(entry, code, a, b)`` for each entry with a finding; :mod:`~kseg.ops.verify.index_checks` words
them.  The compiled core (rust/kseg-wire/src/index_check.rs) does the same without Python per
batch or entry; tests/core/test_core_index_cross.py compares the two.
"""

from __future__ import annotations

from typing import Protocol

from kseg.format.index_cross import (
    BELOW_BASE,
    BELOW_EARLIER,
    BEYOND_LAST,
    IN_NO_BATCH,
    INSIDE_BATCH,
    KEY_ORDER,
    NOT_A_BATCH,
    NOT_ABOVE_PREVIOUS,
    NOT_BATCH_MAX,
    NOT_LAST_OF_ANY,
    PAST_END,
    VALUE_ORDER,
    Verdict,
)
from kseg.format.layout import LOG_OVERHEAD, Buffer
from kseg.format.walk import V2Header
from kseg.index import OFFSET_ENTRY, TIME_ENTRY
from kseg.ops.verify.log_state import Observer


class _Cross(Protocol):
    """What both paths of an index's cross-check offer (the core's classes, the Python ones below)."""

    def __len__(self) -> int: ...

    def entry(self, i: int) -> tuple[int, int]: ...

    def order(self) -> list[Verdict]: ...

    def observe(self, pos: int, base: int, last: int, max_timestamp: int) -> None: ...

    def observe_run(self, start: int, headers: list[V2Header]) -> None: ...

    def observe_messages(self, messages: list[tuple[int, int, int]]) -> None: ...


class OffsetCross(_Cross, Protocol):
    def finish(self, log_size: int) -> list[Verdict]: ...


class TimeCross(_Cross, Protocol):
    def finish(self) -> tuple[list[Verdict], tuple[int, int | None] | None]: ...


class PythonOffsetCross:
    """The reference of the core's ``OffsetCross``: an offset index's entries checked against the log."""

    def __init__(self, data: Buffer, live: int, base: int) -> None:
        self.base = base
        with memoryview(data) as view:  # only the written slots, decoded in place
            self.entries = [(base + rel, pos) for rel, pos in OFFSET_ENTRY.iter_unpack(view[: live * OFFSET_ENTRY.size])]
        self._by_position: dict[int, list[int]] = {}
        self._by_last: dict[int, list[int]] = {}
        for i, (offset, pos) in enumerate(self.entries):
            self._by_position.setdefault(pos, []).append(i)
            self._by_last.setdefault(offset, []).append(i)
        self._at: dict[int, tuple[int, int, int | None]] = {}  # entry -> (batch base, batch last, previous last)
        self._last_match: dict[int, int] = {}  # entry -> position of a batch whose last offset is the entry's
        self._previous_last: int | None = None
        self._log_last: int | None = None

    def __len__(self) -> int:
        return len(self.entries)

    def entry(self, i: int) -> tuple[int, int]:
        return self.entries[i]

    def order(self) -> list[Verdict]:
        out = []
        for i, (offset, pos) in enumerate(self.entries):
            if offset < self.base:
                out.append((i, BELOW_BASE, 0, 0))
            if i == 0:
                continue
            prev_offset, prev_pos = self.entries[i - 1]
            if offset <= prev_offset:
                out.append((i, KEY_ORDER, prev_offset, 0))
            if pos <= prev_pos:
                out.append((i, VALUE_ORDER, prev_pos, 0))
        return out

    def observe(self, pos: int, base: int, last: int, max_timestamp: int) -> None:
        for i in self._by_position.get(pos, ()):
            self._at[i] = (base, last, self._previous_last)
        for i in self._by_last.get(last, ()):
            self._last_match.setdefault(i, pos)
        self._previous_last = last
        self._log_last = last if self._log_last is None else max(self._log_last, last)

    def observe_run(self, start: int, headers: list[V2Header]) -> None:
        _each_batch(self.observe, start, headers)

    def observe_messages(self, messages: list[tuple[int, int, int]]) -> None:
        for pos, offset, timestamp in messages:
            self.observe(pos, offset, offset, timestamp)

    def finish(self, log_size: int) -> list[Verdict]:
        out: list[Verdict] = []
        for i, (offset, pos) in enumerate(self.entries):
            if pos >= log_size or pos < 0:
                out.append((i, PAST_END, log_size, 0))
                continue
            if i not in self._at:
                out.append((i, NOT_A_BATCH, 0, 0))
                continue
            batch_base, batch_last, previous_last = self._at[i]
            if self._log_last is not None and offset > self._log_last:
                out.append((i, BEYOND_LAST, self._log_last, 0))
            elif previous_last is not None and offset <= previous_last:
                out.append((i, NOT_ABOVE_PREVIOUS, previous_last, 0))
            elif offset == batch_last or self._last_match.get(i, -1) > pos:
                continue  # the batch's last offset, or the last offset of a multi-batch append
            elif offset < batch_last:
                out.append((i, INSIDE_BATCH, batch_base, batch_last))
            else:
                out.append((i, NOT_LAST_OF_ANY, 0, 0))
        return out


def _each_batch(observe: Observer, start: int, headers: list[V2Header]) -> None:
    """``observe`` for each batch of a run of the walk's V2 headers, the first at ``start``."""
    pos = start
    for header in headers:
        base, length, delta, max_timestamp = header[0], header[1], header[6], header[8]
        observe(pos, base, base + delta, max_timestamp)
        pos += LOG_OVERHEAD + length


class PythonTimeCross:
    """The reference of the core's ``TimeCross``: a time index's entries checked against the batches' max timestamps."""

    def __init__(self, data: Buffer, live: int, base: int) -> None:
        self.base = base
        with memoryview(data) as view:  # only the written slots, decoded in place
            self.entries = [(ts, base + rel) for ts, rel in TIME_ENTRY.iter_unpack(view[: live * TIME_ENTRY.size])]
        self._sorted = sorted(range(len(self.entries)), key=lambda i: self.entries[i][1])
        self._next = 0
        self._matched: dict[int, tuple[int, int, int, int]] = {}  # entry -> (position, last, max ts, max before)
        self._running_max = -1
        self._running_max_offset: int | None = None
        self._log_last: int | None = None

    def __len__(self) -> int:
        return len(self.entries)

    def entry(self, i: int) -> tuple[int, int]:
        return self.entries[i]

    def order(self) -> list[Verdict]:
        out = []
        for i, (ts, offset) in enumerate(self.entries):
            if offset < self.base:
                out.append((i, BELOW_BASE, 0, 0))
            if i == 0:
                continue
            prev_ts, prev_offset = self.entries[i - 1]
            if ts <= prev_ts:
                out.append((i, KEY_ORDER, prev_ts, 0))
            if offset < prev_offset:
                out.append((i, VALUE_ORDER, prev_offset, 0))
        return out

    def observe(self, pos: int, base: int, last: int, max_timestamp: int) -> None:
        order, entries, n = self._sorted, self.entries, len(self._sorted)
        j = self._next
        while j < n and entries[order[j]][1] < base:
            j += 1  # offset between batches: left unmatched
        while j < n and entries[order[j]][1] <= last:
            self._matched[order[j]] = (pos, last, max_timestamp, self._running_max)
            j += 1
        self._next = j
        if max_timestamp > self._running_max:
            self._running_max, self._running_max_offset = max_timestamp, last
        self._log_last = last if self._log_last is None else max(self._log_last, last)

    def observe_run(self, start: int, headers: list[V2Header]) -> None:
        _each_batch(self.observe, start, headers)

    def observe_messages(self, messages: list[tuple[int, int, int]]) -> None:
        for pos, offset, timestamp in messages:
            self.observe(pos, offset, offset, timestamp)

    def finish(self) -> tuple[list[Verdict], tuple[int, int | None] | None]:
        out: list[Verdict] = []
        for i, (ts, offset) in enumerate(self.entries):
            if self._log_last is not None and offset > self._log_last:
                out.append((i, BEYOND_LAST, self._log_last, 0))
                continue
            if i not in self._matched:
                out.append((i, IN_NO_BATCH, 0, 0))
                continue
            pos, _last, batch_max, max_before = self._matched[i]
            if ts != batch_max:
                out.append((i, NOT_BATCH_MAX, pos, batch_max))
            elif ts < max_before:
                out.append((i, BELOW_EARLIER, max_before, 0))
        largest = max((ts for ts, _ in self.entries), default=-1)
        unindexed = None
        if self._running_max >= 0 and self._running_max > largest:
            unindexed = (self._running_max, self._running_max_offset)
        return out, unindexed
