"""Verify the side files of a segment: .index, .timeindex, .txnindex -- against the log -- and .snapshot.

Each index gets Kafka's own sanity checks first (reference §3.5: what
``kafka-dump-log --index-sanity-check`` and tiered storage run; the broker
itself only checks the .txnindex at startup), then a full check against the
segment's .log: the log is walked once and every valid batch is shown to
each index check (:meth:`observe`), which keeps only state bounded by the
size of its index, never by the size of the log.

What Kafka writes, and so what is checked (reference §3.6, §3.7):

* an offset-index entry ``(O, P)`` is written per append: P is where the
  append began and O its last offset -- the last offset of the batch at P, or
  of a later batch when one append held several (follower, cleaner);
* a time-index entry ``(T, O)``: T is the largest timestamp so far and O the
  last offset of the batch holding it (before Kafka 3.8 possibly an offset
  inside that batch);
* a preallocated index (an active segment, or an unclean shutdown) ends in
  zero-filled slots, recognised here as such.
"""

from __future__ import annotations

import os
import struct
from collections.abc import Callable

from kseg.ops.verify import ERROR, INFO, WARNING, Collector, FileReport, Unit, UnitResult
from kseg.ops.verify_log import LogWalk, Observer, SegmentFacts, read_file, walk_log

OFFSET_ENTRY = struct.Struct(
    ">i"  # relative offset
    "i"  # position in the .log
)
TIME_ENTRY = struct.Struct(
    ">q"  # timestamp
    "i"  # relative offset
)
TXN_ENTRY = struct.Struct(
    ">h"  # version (Kafka reads only the first byte)
    "q"  # producer id
    "q"  # first offset
    "q"  # last offset: the ABORT marker
    "q"  # last stable offset
)


def base_offset_of(path: str) -> int | None:
    """The base offset in a segment file's name (``Long.parseLong`` of the part before the first dot)."""
    stem = os.path.basename(path).split(".", 1)[0]
    return int(stem) if stem.isdigit() else None


def live_slots(data: bytes, entry_size: int) -> int:
    """Slots before the zero-filled tail: a preallocated index ends in all-zero slots."""
    stripped = len(data.rstrip(b"\0"))
    return min(len(data) // entry_size, -(-stripped // entry_size))


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

    def __init__(self, path: str, data: bytes, base: int) -> None:
        self.path, self.base, self.size = path, base, len(data)
        self.findings = Collector(path)
        slots = len(data) // OFFSET_ENTRY.size
        live = live_slots(data, OFFSET_ENTRY.size)
        self.entries = [(base + rel, pos) for rel, pos in OFFSET_ENTRY.iter_unpack(data[: live * OFFSET_ENTRY.size])]
        self._sanity(data, slots)
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

    def _sanity(self, data: bytes, slots: int) -> None:
        add = self.findings.add
        if len(data) % OFFSET_ENTRY.size:
            add("index-sanity", ERROR, slots * OFFSET_ENTRY.size, None,
                f"Index file {os.path.basename(self.path)} is corrupt, found {len(data)} bytes which is neither "
                f"positive nor a multiple of {OFFSET_ENTRY.size}", size=len(data) % OFFSET_ENTRY.size)
        if slots:
            rel, _ = OFFSET_ENTRY.unpack_from(data, (slots - 1) * OFFSET_ENTRY.size)
            if rel < 0:
                add("index-sanity", ERROR, (slots - 1) * OFFSET_ENTRY.size, self.base + rel,
                    f"Corrupt index found, index file ({os.path.basename(self.path)}) has non-zero size but the last "
                    f"offset is {self.base + rel} which is less than the base offset {self.base}")

    def _order(self) -> None:
        add = self.findings.add
        for i, (offset, pos) in enumerate(self.entries):
            if offset < self.base:
                add("index-entry", ERROR, i * 8, offset,
                    f"entry {i}: offset {offset} is below the segment's base offset {self.base}", field="relative_offset")
            if i == 0:
                continue
            prev_offset, prev_pos = self.entries[i - 1]
            if offset <= prev_offset:
                add("index-order", ERROR, i * 8, offset,
                    f"entry {i}: offset {offset} is not above the previous entry's {prev_offset}", field="relative_offset")
            if pos <= prev_pos:
                add("index-order", ERROR, i * 8, offset,
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

    def __init__(self, path: str, data: bytes, base: int) -> None:
        self.path, self.base = path, base
        self.findings = Collector(path)
        slots = len(data) // TIME_ENTRY.size
        live = live_slots(data, TIME_ENTRY.size)
        self.entries = [(ts, base + rel) for ts, rel in TIME_ENTRY.iter_unpack(data[: live * TIME_ENTRY.size])]
        self._sanity(data, slots, live)
        self._order()
        self._sorted = sorted(range(len(self.entries)), key=lambda i: self.entries[i][1])
        self._next = 0
        self._matched: dict[int, tuple[int, int, int, int]] = {}  # entry -> (position, last, max ts, max before)
        self._running_max = -1
        self._running_max_offset: int | None = None
        self._log_last: int | None = None

    def _sanity(self, data: bytes, slots: int, live: int) -> None:
        add = self.findings.add
        name = os.path.basename(self.path)
        if len(data) % TIME_ENTRY.size:
            add("index-sanity", ERROR, slots * TIME_ENTRY.size, None,
                f"Time index file {name} is corrupt, found {len(data)} bytes which is neither positive nor a "
                f"multiple of {TIME_ENTRY.size}", size=len(data) % TIME_ENTRY.size)
        if not slots:
            return
        if live < slots:
            note = (
                "; kafka-dump-log --index-sanity-check would call it corrupt (its last timestamp, 0, is below the "
                "first)" if live else ""
            )
            _preallocated(self.findings, live, slots, TIME_ENTRY.size, note)
            return
        first_ts, _ = TIME_ENTRY.unpack_from(data, 0)
        last_ts, last_rel = TIME_ENTRY.unpack_from(data, (slots - 1) * TIME_ENTRY.size)
        where = (slots - 1) * TIME_ENTRY.size
        if last_ts < first_ts:
            add("index-sanity", ERROR, where, self.base + last_rel,
                f"Corrupt time index found, time index file ({name}) has non-zero size but the last timestamp is "
                f"{last_ts} which is less than the first timestamp {first_ts}")
        if last_rel < 0:
            add("index-sanity", ERROR, where, self.base + last_rel,
                f"Corrupt time index found, time index file ({name}) has non-zero size but the last offset is "
                f"{self.base + last_rel} which is less than the first offset {self.base}")

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
    """A transaction index: one entry per aborted transaction, each at an ABORT marker of the log."""

    kind = "txnindex"

    def __init__(self, path: str, data: bytes, base: int) -> None:
        self.path, self.base = path, base
        self.findings = Collector(path)
        add = self.findings.add
        whole = len(data) // TXN_ENTRY.size
        if len(data) % TXN_ENTRY.size:
            add("txnindex", WARNING, whole * TXN_ENTRY.size, None,
                f"{len(data) % TXN_ENTRY.size} trailing bytes do not make a whole {TXN_ENTRY.size}-byte entry "
                "(Kafka ignores them)", size=len(data) % TXN_ENTRY.size)
        self.entries = []
        for i in range(whole):
            where = i * TXN_ENTRY.size
            _, pid, first, last, lso = TXN_ENTRY.unpack_from(data, where)
            self.entries.append((pid, first, last))
            self._check_entry(i, where, data[where], pid, first, last, lso)

    def _check_entry(self, i: int, where: int, version: int, pid: int, first: int, last: int, lso: int) -> None:
        add = self.findings.add
        name = os.path.basename(self.path)
        text = f"AbortedTxn(producerId={pid}, firstOffset={first}, lastOffset={last}, lastStableOffset={lso})"
        if version > 0:
            add("txnindex", ERROR, where, last,
                f"Unexpected aborted transaction version {version} in transaction index {name}, current version is 0 "
                "(Kafka throws while reading it)", field="version")
        if last < self.base:
            add("index-sanity", ERROR, where, last,
                f"Last offset of aborted transaction {text} in index {name} is less than start offset {self.base} "
                "(Kafka would recover the segment at startup)", field="last_offset")
        if first > last:
            add("txnindex", ERROR, where, last, f"entry {i}: first offset {first} is above last offset {last}",
                field="first_offset")
        if lso > last + 1:
            add("txnindex", WARNING, where, last,
                f"entry {i}: last stable offset {lso} is above the marker offset + 1 ({last + 1})",
                field="last_stable_offset")
        if i and last <= self.entries[i - 1][2]:
            add("index-order", ERROR, where, last,
                f"entry {i}: last offset {last} is not above the previous entry's {self.entries[i - 1][2]} "
                "(Kafka: appends must have increasing last offsets)", field="last_offset")

    def observe(self, pos: int, base: int, last: int, max_timestamp: int) -> None:
        pass  # entries are matched to the ABORT markers the walk collects

    def finish_with(self, aborts: list[tuple[int, int]]) -> None:
        add = self.findings.add
        markers = dict(aborts)
        indexed = set()
        for i, (pid, _first, last) in enumerate(self.entries):
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


# -- one segment: the log walked once, every requested index checked against it ------------------

CHECKS = {"index": OffsetIndexCheck, "timeindex": TimeIndexCheck, "txnindex": TxnIndexCheck}


def _kind_of(path: str) -> str:
    return path.rsplit(".", 1)[-1]


def unreadable_report(path: str, kind: str, err: OSError) -> FileReport:
    """A file that could not be opened or read: one ``unreadable`` finding (the run exits 2)."""
    findings = Collector(path)
    findings.add("unreadable", ERROR, None, None, f"cannot read: {err.strerror or err}")
    return FileReport(path, kind, None, findings.close())


def _combine(observers: list[Observer]) -> Observer | None:
    """One observer calling each index check's, or None when no index needs the batches."""
    if not observers:
        return None
    if len(observers) == 1:
        return observers[0]

    def observe(pos: int, base: int, last: int, max_timestamp: int) -> None:
        for fn in observers:
            fn(pos, base, last, max_timestamp)

    return observe


IndexCheck = OffsetIndexCheck | TimeIndexCheck | TxnIndexCheck


def _index_checks(unit: Unit, base: int, reports: dict[str, FileReport]) -> list[IndexCheck]:
    """Read each requested index and run its own checks; unreadable ones get a report right away."""
    checks: list[IndexCheck] = []
    for path in unit.paths:
        kind = _kind_of(path)
        if kind == "log":
            continue
        try:
            data = read_file(path)
        except OSError as err:
            reports[path] = unreadable_report(path, kind, err)
            continue
        check = CHECKS[kind](path, data, base)
        checks.append(check)
        reports[path] = FileReport(path, kind, len(data), entries=len(check.entries))
    return checks


def _finish_against(checks: list[IndexCheck], walk: LogWalk | None, log_size: int) -> None:
    """Each index against the walked log, or the note that there was no log to check it against."""
    for check in checks:
        if walk is None:
            check.findings.add(
                "missing-log", WARNING, None, None,
                "no .log beside this index: only Kafka's sanity checks could be run "
                "(Kafka deletes an index without its .log at startup)",
            )
        elif isinstance(check, TxnIndexCheck):
            check.finish_with(walk.aborts)
        else:
            check.finish(log_size)


def check_segment_unit(unit: Unit, deep: bool = False, progress: Callable[[int], None] | None = None) -> UnitResult:
    """The requested files of one segment: the .log walked once, each index checked against it."""
    name_base = base_offset_of(unit.paths[0])
    reports: dict[str, FileReport] = {}
    checks = _index_checks(unit, name_base if name_base is not None else 0, reports)
    log_requested = unit.log is not None and unit.log in unit.paths
    walk, size, facts = None, 0, None
    if unit.log is not None and (log_requested or checks):
        observers = [c.observe for c in checks if not isinstance(c, TxnIndexCheck)]
        try:
            walk, size = walk_log(unit.log, name_base=name_base, deep=deep and log_requested,
                                  observe=_combine(observers), progress=progress if log_requested else None)
        except OSError as err:
            if log_requested:
                reports[unit.log] = unreadable_report(unit.log, "log", err)
    if walk is not None and log_requested:
        reports[unit.log] = FileReport(
            unit.log, "log", size, walk.findings.close(), batches=walk.batches,
            records=walk.records if deep else None, skipped_bytes=walk.skipped,
            first_offset=walk.first_offset, last_offset=walk.last_offset,
        )
        facts = SegmentFacts(unit.log, name_base, size, walk.batches, walk.first_offset, walk.last_offset,
                             walk.epochs, walk.kafka_cut is not None, len(walk.aborts))
    if unit.log is None or walk is not None:
        _finish_against(checks, walk, size)
    for check in checks:
        reports[check.path].findings = check.findings.close()
    return UnitResult([reports[p] for p in unit.paths if p in reports], facts)


# -- .snapshot -----------------------------------------------------------------------------------


def check_snapshot(path: str) -> FileReport:
    """A producer-state snapshot: version 1, CRC-32C, entries that fit, offsets below the name's."""
    from kseg.errors import IndexCorrupt, KsegError
    from kseg.format.snapshot import SNAPSHOT_ENTRY, SNAPSHOT_HEADER, read_snapshot

    data = read_file(path)
    findings = Collector(path)
    add = findings.add
    report = FileReport(path, "snapshot", len(data))
    try:
        snapshot = read_snapshot(data)
    except IndexCorrupt as err:
        kind = "snapshot-version" if err.field == "snapshot.version" else "snapshot-structure"
        add(kind, ERROR, err.offset, None,
            f"{err.message} (Kafka would delete this snapshot and fall back to an older one)", field=err.field)
        report.findings = findings.close()
        return report
    except KsegError as err:
        add("snapshot-structure", ERROR, err.offset, None, err.message, field=err.field)
        report.findings = findings.close()
        return report
    report.entries = len(snapshot.entries)
    if not snapshot.crc_ok:
        add("snapshot-crc", ERROR, 2, None,
            f"Snapshot is corrupt (CRC is no longer valid). Stored crc: {snapshot.crc}. Computed crc: "
            f"{snapshot.computed_crc} (Kafka would delete this snapshot and fall back to an older one)",
            field="snapshot.crc")
    used = SNAPSHOT_HEADER.size + len(snapshot.entries) * SNAPSHOT_ENTRY.size
    if len(data) > used:
        add("snapshot-structure", WARNING, used, None,
            f"{len(data) - used} bytes after the {len(snapshot.entries)} entries", size=len(data) - used)
    end_offset = base_offset_of(path)
    if end_offset is not None and snapshot.crc_ok:
        for i, entry in enumerate(snapshot.entries):
            if entry.last_offset >= end_offset:
                add("snapshot-structure", WARNING, SNAPSHOT_HEADER.size + i * SNAPSHOT_ENTRY.size, entry.last_offset,
                    f"entry {i} (producer {entry.producer_id}): last offset {entry.last_offset} is not below the "
                    f"snapshot's offset {end_offset} (from the file name)", field=f"entries[{i}].last_offset")
    report.findings = findings.close()
    return report
