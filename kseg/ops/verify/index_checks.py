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

from kseg.format.index_cross import (
    BELOW_BASE,
    BEYOND_LAST,
    IN_NO_BATCH,
    INSIDE_BATCH,
    KEY_ORDER,
    NOT_A_BATCH,
    NOT_ABOVE_PREVIOUS,
    NOT_BATCH_MAX,
    PAST_END,
    offset_cross,
    time_cross,
)
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
from kseg.ops.verify.index_reference import OffsetCross, PythonOffsetCross, PythonTimeCross, TimeCross
from kseg.ops.verify.log_state import Observer
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
#
# Each check against the log runs in the compiled core (kseg/format/index_cross.py: the index's
# entries, the walk's runs of batches in one call each, and only the entries with a finding come
# back) or, on the pure-Python path, in :mod:`~kseg.ops.verify.index_reference` (the reference).
# Both name each entry with a finding by a *verdict* (entry, code, a, b); the finding's words come
# from the verdict alone, so both paths report the same text.


class OffsetIndexCheck:
    """An offset index: sanity, order, then each entry against the batches of its log."""

    kind = "index"

    def __init__(self, path: str, data: Buffer, base: int) -> None:
        self.path, self.base, self.size = path, base, len(data)
        self.findings = Collector(path)
        slots = len(data) // OFFSET_ENTRY.size
        live = written_slots(data, OFFSET_ENTRY.size)
        cross = offset_cross(data, live, base)
        self.cross: OffsetCross = cross if cross is not None else PythonOffsetCross(data, live, base)
        self.count = len(self.cross)
        self.observe: Observer = self.cross.observe
        self.observe_run = self.cross.observe_run
        self.observe_messages = self.cross.observe_messages
        _report_sanity(self.findings, offset_index_sanity(data, base, os.path.basename(path)))
        _preallocated(self.findings, live, slots, OFFSET_ENTRY.size)
        self._order()

    def _order(self) -> None:
        add, entry = self.findings.add, self.cross.entry
        for i, code, previous, _ in self.cross.order():
            offset, pos = entry(i)
            where = i * OFFSET_ENTRY.size
            if code == BELOW_BASE:
                add("index-entry", ERROR, where, offset,
                    f"entry {i}: offset {offset} is below the segment's base offset {self.base}", field="relative_offset")
            elif code == KEY_ORDER:
                add("index-order", ERROR, where, offset,
                    f"entry {i}: offset {offset} is not above the previous entry's {previous}", field="relative_offset")
            else:
                add("index-order", ERROR, where, offset,
                    f"entry {i}: position {pos} is not above the previous entry's {previous}", field="position")

    def finish(self, log_size: int) -> None:
        add, entry = self.findings.add, self.cross.entry
        for i, code, a, b in self.cross.finish(log_size):
            offset, pos = entry(i)
            where = i * OFFSET_ENTRY.size
            if code == PAST_END:
                add("index-entry", ERROR, where, offset,
                    f"entry {i} ({offset} -> byte {pos}) points past the end of the log ({a} bytes): "
                    "a stale index", field="position")
            elif code == NOT_A_BATCH:
                add("index-entry", ERROR, where, offset,
                    f"entry {i} ({offset} -> byte {pos}) does not point at the start of a valid batch "
                    "(Kafka would read from the middle of the data)", field="position")
            elif code == BEYOND_LAST:
                add("index-entry", ERROR, where, offset,
                    f"entry {i}: offset {offset} is beyond the last offset {a} in the log: a stale index",
                    field="relative_offset")
            elif code == NOT_ABOVE_PREVIOUS:
                add("index-entry", ERROR, where, offset,
                    f"entry {i}: offset {offset} is not above {a}, the last offset of the batch before "
                    f"byte {pos}: lookups for offset {offset} would start after its data", field="relative_offset")
            elif code == INSIDE_BATCH:
                add("index-entry", WARNING, where, offset,
                    f"entry {i}: offset {offset} is inside the batch at byte {pos} ({a}..{b}); "
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
        cross = time_cross(data, live, base)
        self.cross: TimeCross = cross if cross is not None else PythonTimeCross(data, live, base)
        self.count = len(self.cross)
        self.observe: Observer = self.cross.observe
        self.observe_run = self.cross.observe_run
        self.observe_messages = self.cross.observe_messages
        self._sanity(data, slots, live)
        self._order()

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
        add, entry = self.findings.add, self.cross.entry
        for i, code, previous, _ in self.cross.order():
            ts, offset = entry(i)
            where = i * TIME_ENTRY.size
            if code == BELOW_BASE:
                add("timeindex-entry", ERROR, where, offset,
                    f"entry {i}: offset {offset} is below the segment's base offset {self.base}", field="relative_offset")
            elif code == KEY_ORDER:
                add("index-order", ERROR, where, offset,
                    f"entry {i}: timestamp {ts} is not above the previous entry's {previous}", field="timestamp")
            else:
                add("index-order", ERROR, where, offset,
                    f"entry {i}: offset {offset} is below the previous entry's {previous}", field="relative_offset")

    def finish(self, log_size: int) -> None:
        add, entry = self.findings.add, self.cross.entry
        verdicts, unindexed = self.cross.finish()
        for i, code, a, b in verdicts:
            ts, offset = entry(i)
            where = i * TIME_ENTRY.size
            if code == BEYOND_LAST:
                add("timeindex-entry", ERROR, where, offset,
                    f"entry {i}: offset {offset} is beyond the last offset {a} in the log: a stale index",
                    field="relative_offset")
            elif code == IN_NO_BATCH:
                add("timeindex-entry", ERROR, where, offset,
                    f"entry {i}: offset {offset} is in no valid batch of the log", field="relative_offset")
            elif code == NOT_BATCH_MAX:
                add("timeindex-entry", ERROR, where, offset,
                    f"entry {i}: timestamp {ts} is not the maxTimestamp {b} of the batch at byte {a} "
                    f"holding offset {offset}", field="timestamp")
            else:
                add("timeindex-entry", ERROR, where, offset,
                    f"entry {i}: timestamp {ts} is below {a}, the largest timestamp of an earlier batch "
                    "(Kafka indexes the largest timestamp so far)", field="timestamp")
        if unindexed is not None:
            running_max, running_max_offset = unindexed
            add("timeindex-entry", INFO, self.count * TIME_ENTRY.size, running_max_offset,
                f"the log's largest timestamp {running_max} (offset {running_max_offset}) has no entry; "
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
