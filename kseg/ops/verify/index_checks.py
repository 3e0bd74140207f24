"""Verify the indexes of a segment -- .index, .timeindex, .txnindex -- on their own and against the log.

Each index gets Kafka's own sanity checks first (:mod:`kseg.index`; reference
§3.5: what ``kafka-dump-log --index-sanity-check`` and tiered storage run; the
broker itself only checks the .txnindex at startup), then a full check against
the segment's .log: the log is walked once and every valid batch is shown to
each index check (``observe``), which keeps only state bounded by the size of
its index, never by the size of the log.

What Kafka writes, and so what is checked (reference §3.6, §3.7):

* an offset-index entry ``(O, P)`` is written per append: P is where the
  append began and O its last offset -- the last offset of the batch at P, or
  of a later batch when one append held several (follower, cleaner);
* a time-index entry ``(T, O)``: T is the largest timestamp so far and O the
  last offset of the batch holding it (before Kafka 3.8 possibly an offset
  inside that batch);
* a preallocated index (an active segment, or an unclean shutdown) ends in
  zero-filled slots, recognised here as such (:func:`kseg.index.written_slots`).
"""

from __future__ import annotations

import os
from collections.abc import Callable

from kseg.format.layout import Buffer
from kseg.index import (
    OFFSET_ENTRY,
    TIME_ENTRY,
    TXN_ENTRY,
    AbortedTxn,
    SanityFailure,
    offset_index_sanity,
    time_index_sanity,
    txn_entry_sanity,
    txn_version,
    written_slots,
    zero_steps,
)
from kseg.ops.verify.model import ERROR, INFO, WARNING, Collector


def _txn_entry(data: Buffer, position: int) -> AbortedTxn:
    """The entry at ``position`` as Kafka reads it (``AbortedTxn.version()`` reads one signed byte)."""
    _, pid, first, last, lso = TXN_ENTRY.unpack_from(data, position)
    return AbortedTxn(txn_version(data, position), pid, first, last, lso)


def _report_sanity(findings: Collector, failures: list[SanityFailure]) -> None:
    for failure in failures:
        findings.add("index-sanity", ERROR, failure.position, failure.offset, failure.message, size=failure.size)


def _preallocated(findings: Collector, live: int, slots: int, entry_size: int, note: str = "") -> None:
    if live < slots:
        findings.add(
            "index-preallocated", INFO, live * entry_size, None,
            f"{slots - live} of {slots} slots are a preallocated zero tail after {live} entries (the index of an "
            f"active segment, or of a broker that did not shut down cleanly); Kafka takes every slot as an entry "
            f"until it trims the file{note}",
            size=(slots - live) * entry_size,
        )


# -- .index --------------------------------------------------------------------------------------


class OffsetIndexCheck:
    """An offset index: sanity, order, then each entry against the batches of its log."""

    kind = "index"

    def __init__(self, path: str, data: Buffer, base: int) -> None:
        self.path, self.base, self.size = path, base, len(data)
        self.findings = Collector(path)
        slots = len(data) // OFFSET_ENTRY.size
        live = written_slots(data, OFFSET_ENTRY.size)
        with memoryview(data) as view:  # only the written slots, decoded in place
            self.entries = [(base + rel, pos) for rel, pos in OFFSET_ENTRY.iter_unpack(view[: live * OFFSET_ENTRY.size])]
        _report_sanity(self.findings, offset_index_sanity(data, base, os.path.basename(path)))
        _preallocated(self.findings, live, slots, OFFSET_ENTRY.size)
        self._order()
        # against the log
        self._by_position: dict[int, list[int]] = {}
        self._by_last: dict[int, list[int]] = {}
        for i, (offset, pos) in enumerate(self.entries):
            self._by_position.setdefault(pos, []).append(i)
            self._by_last.setdefault(offset, []).append(i)
        self._at: dict[int, tuple[int, int, int | None]] = {}  # entry -> (batch base, batch last, previous last)
        self._last_match: dict[int, int] = {}  # entry -> position of a batch whose last offset is the entry's
        self._previous_last: int | None = None
        self._log_last: int | None = None

    def _order(self) -> None:
        add = self.findings.add
        for i, (offset, pos) in enumerate(self.entries):
            if offset < self.base:
                add("index-entry", ERROR, i * OFFSET_ENTRY.size, offset,
                    f"entry {i}: offset {offset} is below the segment's base offset {self.base}", field="relative_offset")
            if i == 0:
                continue
            prev_offset, prev_pos = self.entries[i - 1]
            if offset <= prev_offset:
                add("index-order", ERROR, i * OFFSET_ENTRY.size, offset,
                    f"entry {i}: offset {offset} is not above the previous entry's {prev_offset}", field="relative_offset")
            if pos <= prev_pos:
                add("index-order", ERROR, i * OFFSET_ENTRY.size, offset,
                    f"entry {i}: position {pos} is not above the previous entry's {prev_pos}", field="position")

    def observe(self, pos: int, base: int, last: int, max_timestamp: int) -> None:
        for i in self._by_position.get(pos, ()):
            self._at[i] = (base, last, self._previous_last)
        for i in self._by_last.get(last, ()):
            self._last_match.setdefault(i, pos)
        self._previous_last = last
        self._log_last = last if self._log_last is None else max(self._log_last, last)

    def finish(self, log_size: int) -> None:
        add = self.findings.add
        for i, (offset, pos) in enumerate(self.entries):
            where = i * OFFSET_ENTRY.size
            if pos >= log_size or pos < 0:
                add("index-entry", ERROR, where, offset,
                    f"entry {i} ({offset} -> byte {pos}) points past the end of the log ({log_size} bytes): "
                    "a stale index", field="position")
                continue
            if i not in self._at:
                add("index-entry", ERROR, where, offset,
                    f"entry {i} ({offset} -> byte {pos}) does not point at the start of a valid batch "
                    "(Kafka would read from the middle of the data)", field="position")
                continue
            batch_base, batch_last, previous_last = self._at[i]
            if self._log_last is not None and offset > self._log_last:
                add("index-entry", ERROR, where, offset,
                    f"entry {i}: offset {offset} is beyond the last offset {self._log_last} in the log: a stale index",
                    field="relative_offset")
            elif previous_last is not None and offset <= previous_last:
                add("index-entry", ERROR, where, offset,
                    f"entry {i}: offset {offset} is not above {previous_last}, the last offset of the batch before "
                    f"byte {pos}: lookups for offset {offset} would start after its data", field="relative_offset")
            elif offset == batch_last or self._last_match.get(i, -1) > pos:
                continue  # the batch's last offset, or the last offset of a multi-batch append
            elif offset < batch_last:
                add("index-entry", WARNING, where, offset,
                    f"entry {i}: offset {offset} is inside the batch at byte {pos} ({batch_base}..{batch_last}); "
                    "Kafka indexes a batch by its last offset (lookups still work)", field="relative_offset")
            else:
                add("index-entry", WARNING, where, offset,
                    f"entry {i}: offset {offset} is not the last offset of any batch at or after byte {pos} "
                    "(Kafka indexes the last offset of an append)", field="relative_offset")


# -- .timeindex ----------------------------------------------------------------------------------


class TimeIndexCheck:
    """A time index: sanity, order, then each entry against the batches' max timestamps."""

    kind = "timeindex"

    def __init__(self, path: str, data: Buffer, base: int) -> None:
        self.path, self.base = path, base
        self.findings = Collector(path)
        slots = len(data) // TIME_ENTRY.size
        live = written_slots(data, TIME_ENTRY.size)
        with memoryview(data) as view:  # only the written slots, decoded in place
            self.entries = [(ts, base + rel) for ts, rel in TIME_ENTRY.iter_unpack(view[: live * TIME_ENTRY.size])]
        self._sanity(data, slots, live)
        self._order()
        self._sorted = sorted(range(len(self.entries)), key=lambda i: self.entries[i][1])
        self._next = 0
        self._matched: dict[int, tuple[int, int, int, int]] = {}  # entry -> (position, last, max ts, max before)
        self._running_max = -1
        self._running_max_offset: int | None = None
        self._log_last: int | None = None

    def _sanity(self, data: Buffer, slots: int, live: int) -> None:
        failures = time_index_sanity(data, self.base, os.path.basename(self.path))
        if live < slots:  # Kafka would see the zero tail's last slot as a timestamp 0 below the first
            _report_sanity(self.findings, [f for f in failures if f.check == "length"])
            note = (
                "; kafka-dump-log --index-sanity-check would call it corrupt (its last timestamp, 0, is below the "
                "first)" if live else ""
            )
            _preallocated(self.findings, live, slots, TIME_ENTRY.size, note)
            return
        _report_sanity(self.findings, failures)

    def _order(self) -> None:
        add = self.findings.add
        for i, (ts, offset) in enumerate(self.entries):
            where = i * TIME_ENTRY.size
            if offset < self.base:
                add("timeindex-entry", ERROR, where, offset,
                    f"entry {i}: offset {offset} is below the segment's base offset {self.base}", field="relative_offset")
            if i == 0:
                continue
            prev_ts, prev_offset = self.entries[i - 1]
            if ts <= prev_ts:
                add("index-order", ERROR, where, offset,
                    f"entry {i}: timestamp {ts} is not above the previous entry's {prev_ts}", field="timestamp")
            if offset < prev_offset:
                add("index-order", ERROR, where, offset,
                    f"entry {i}: offset {offset} is below the previous entry's {prev_offset}", field="relative_offset")

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

    def finish(self, log_size: int) -> None:
        add = self.findings.add
        for i, (ts, offset) in enumerate(self.entries):
            where = i * TIME_ENTRY.size
            if self._log_last is not None and offset > self._log_last:
                add("timeindex-entry", ERROR, where, offset,
                    f"entry {i}: offset {offset} is beyond the last offset {self._log_last} in the log: a stale index",
                    field="relative_offset")
                continue
            if i not in self._matched:
                add("timeindex-entry", ERROR, where, offset,
                    f"entry {i}: offset {offset} is in no valid batch of the log", field="relative_offset")
                continue
            pos, _last, batch_max, max_before = self._matched[i]
            if ts != batch_max:
                add("timeindex-entry", ERROR, where, offset,
                    f"entry {i}: timestamp {ts} is not the maxTimestamp {batch_max} of the batch at byte {pos} "
                    f"holding offset {offset}", field="timestamp")
            elif ts < max_before:
                add("timeindex-entry", ERROR, where, offset,
                    f"entry {i}: timestamp {ts} is below {max_before}, the largest timestamp of an earlier batch "
                    "(Kafka indexes the largest timestamp so far)", field="timestamp")
        largest = max((ts for ts, _ in self.entries), default=-1)
        if self._running_max >= 0 and self._running_max > largest:
            add("timeindex-entry", INFO, len(self.entries) * TIME_ENTRY.size, self._running_max_offset,
                f"the log's largest timestamp {self._running_max} (offset {self._running_max_offset}) has no entry; "
                "Kafka adds it when the segment is rolled or closed (lookups still work)")


# -- .txnindex -----------------------------------------------------------------------------------


class TxnIndexCheck:
    """A transaction index: one entry per aborted transaction, each at an ABORT marker of the log.

    Read in steps of 64 Ki entries (:func:`kseg.index.zero_steps`): a run of
    all-zero steps -- a sparse or zero-filled file, which Kafka never writes --
    is one finding with its count and byte range instead of one per entry, and
    its pages are given back as the walk passes them.
    """

    kind = "txnindex"

    def __init__(self, path: str, data: Buffer, base: int) -> None:
        self.path, self.base = path, base
        self.findings = Collector(path)
        whole = len(data) // TXN_ENTRY.size
        if len(data) % TXN_ENTRY.size:
            self.findings.add(
                "txnindex", WARNING, whole * TXN_ENTRY.size, None,
                f"{len(data) % TXN_ENTRY.size} trailing bytes do not make a whole {TXN_ENTRY.size}-byte entry "
                "(Kafka ignores them)", size=len(data) % TXN_ENTRY.size)
        self.count = whole  # every whole entry, as Kafka reads them
        self.entries: list[tuple[int, int, int, int]] = []  # (entry number, producer id, first, last offset)
        self.zero_runs: list[tuple[int, int]] = []  # (first entry, entries) of all-zero steps
        self._previous_last: int | None = None
        zero_from = None
        for first, end, zero in zero_steps(data, whole, TXN_ENTRY.size):
            if zero:
                zero_from = first if zero_from is None else zero_from
                continue
            if zero_from is not None:
                self._zero_run(zero_from, first)
                zero_from = None
            for i in range(first, end):
                self._check_entry(i, i * TXN_ENTRY.size, _txn_entry(data, i * TXN_ENTRY.size))
        if zero_from is not None:
            self._zero_run(zero_from, whole)

    def _zero_run(self, first: int, end: int) -> None:
        """Entries ``first`` to ``end - 1``, all zero: one finding for the run (Kafka reads each as an entry)."""
        start, stop = first * TXN_ENTRY.size, end * TXN_ENTRY.size
        below = (f"; each fails Kafka's sanity check (last offset 0 is less than start offset {self.base})"
                 if self.base > 0 else "")
        self.findings.add(
            "index-sanity" if below else "txnindex", ERROR, start, 0,
            f"entries {first}..{end - 1}: {end - first} all-zero entries (bytes {start}..{stop - 1}), which Kafka "
            "reads as aborted transactions of producer 0 at offset 0, none above the previous one's last "
            f"offset{below}", field="last_offset", size=stop - start)
        self.zero_runs.append((first, end - first))
        self._previous_last = 0

    def _check_entry(self, i: int, where: int, entry: AbortedTxn) -> None:
        add = self.findings.add
        for failure in txn_entry_sanity(entry, where, self.base, os.path.basename(self.path)):
            if failure.check == "version":
                add("txnindex", ERROR, where, failure.offset, failure.message,
                    field="version")
            else:
                add("index-sanity", ERROR, where, failure.offset,
                    failure.message, field="last_offset")
        first, last, lso = entry.first_offset, entry.last_offset, entry.last_stable_offset
        if first > last:
            add("txnindex", ERROR, where, last, f"entry {i}: first offset {first} is above last offset {last}",
                field="first_offset")
        if lso > last + 1:
            add("txnindex", WARNING, where, last,
                f"entry {i}: last stable offset {lso} is above the marker offset + 1 ({last + 1})",
                field="last_stable_offset")
        previous = self._previous_last
        if previous is not None and last <= previous:
            add("index-order", ERROR, where, last,
                f"entry {i}: last offset {last} is not above the previous entry's {previous} "
                "(Kafka: appends must have increasing last offsets)", field="last_offset")
        self.entries.append((i, entry.producer_id, first, last))
        self._previous_last = last

    def observe(self, pos: int, base: int, last: int, max_timestamp: int) -> None:
        pass  # entries are matched to the ABORT markers the walk collects

    def finish_with(self, aborts: list[tuple[int, int]]) -> None:
        add = self.findings.add
        markers = dict(aborts)
        indexed = {0} if self.zero_runs else set()  # a zero run's entries are reported with the run
        for i, pid, _first, last in self.entries:
            where = i * TXN_ENTRY.size
            indexed.add(last)
            if last not in markers:
                add("txnindex", ERROR, where, last, f"entry {i}: there is no ABORT marker at offset {last} in the log",
                    field="last_offset")
            elif markers[last] != pid:
                add("txnindex", ERROR, where, last,
                    f"entry {i}: the ABORT marker at offset {last} is from producer {markers[last]}, not {pid}",
                    field="producer_id")
        for offset, pid in aborts:
            if offset not in indexed:
                add("txnindex", WARNING, None, offset,
                    f"the ABORT marker at offset {offset} (producer {pid}) has no entry: read_committed consumers "
                    "would receive the aborted records")


IndexCheck = OffsetIndexCheck | TimeIndexCheck | TxnIndexCheck
#: The check of each index kind: ``check(path, data, base_offset)``.
CHECKS: dict[str, Callable[[str, Buffer, int], IndexCheck]] = {
    "index": OffsetIndexCheck,
    "timeindex": TimeIndexCheck,
    "txnindex": TxnIndexCheck,
}
