"""Producer snapshots through a load: which ``<offset>.snapshot`` files are deleted and which are written (§6).

:class:`ProducerStates` stands for one ``ProducerStateManager``: the load's
own (built in ``UnifiedLog.create``, R1.3/R6.1) or a temporary one of
``LogLoader.recoverSegment`` (R3.5).  It keeps what decides the files --
the snapshot offsets it knows, ``lastSnapOffset``/``lastMapOffset`` -- and the
open transactions (a :class:`~kseg.recovery.producer_state.TxnTracker`) that
recovery of the next segment needs.  :func:`rebuild_producer_state` is
``UnifiedLog.rebuildProducerState`` (R6.3).
"""

from __future__ import annotations

import time
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Sequence
from dataclasses import replace

from kseg.errors import KsegError
from kseg.format.snapshot import ProducerEntry, check_snapshot, encode_snapshot, read_snapshot
from kseg.recovery.loading.model import BROKER_STOPS, CREATE, DELETE, LoadError, LoadFailed
from kseg.recovery.loading.segments import Seg, file_name
from kseg.recovery.loading.state import SNAPSHOT_SUFFIX, PartitionDir
from kseg.recovery.producer_state import TxnTracker
from kseg.segment import read_small_file

SUFFIX = SNAPSHOT_SUFFIX
PSM = "ProducerStateManager"
PRODUCER_ID_EXPIRATION_MS = 86_400_000  # producer.id.expiration.ms, the broker default LoadLogDir and a broker use


def snapshot_offsets(pdir: PartitionDir) -> dict[int, str]:
    """``ProducerStateManager.loadSnapshots``: every ``*.snapshot`` by offset (R1.3: a bad name stops the broker)."""
    kept = pdir.snapshot_offsets()  # the directory's own up-to-date listing, when every name is regular
    if kept is not None:
        return kept
    found: dict[int, str] = {}
    for name in pdir.names():
        if name.endswith(SUFFIX):
            stem = name[: name.index(".")]
            if not stem.lstrip("-").isdigit():
                raise LoadFailed(LoadError("java.lang.NumberFormatException", f'For input string: "{stem}"',
                                           BROKER_STOPS, "R1.3", "SnapshotFile.offsetFromFileName"))
            found[int(stem)] = name
    return dict(sorted(found.items()))


class ProducerStates:
    """One ``ProducerStateManager``, as far as snapshot files and open transactions go."""

    def __init__(self, pdir: PartitionDir, rule: str, max_batch_bytes: int) -> None:
        self.pdir = pdir
        self.rule = rule
        self.max_batch_bytes = max_batch_bytes  # the read cap of every tracker this manager starts
        self.snapshots = snapshot_offsets(pdir)
        self._in_order = True  # the map's keys go up (snapshot_offsets sorts them); see _add
        self.last_snap = self.last_map = 0
        self.tracker = TxnTracker(max_batch_bytes, keep_completed=True)
        self.expired: list[int] = []  # producer ids the last reload dropped as expired

    def _clear(self) -> None:
        """``clearProducerIds`` and the transactions: a new tracker, the map's capacity kept (``HashMap.clear``)."""
        capacity = self.tracker.producers.capacity
        self.tracker = TxnTracker(self.max_batch_bytes, keep_completed=True)
        self.tracker.producers.capacity = capacity

    def latest_snapshot(self) -> int | None:
        if not self.snapshots:
            return None
        return next(reversed(self.snapshots)) if self._in_order else max(self.snapshots)

    def _delete(self, offset: int, method: str, rule: str | None = None) -> None:
        name = self.snapshots.pop(offset, None)
        if name is not None:
            self.pdir.delete(name, rule or self.rule, f"{PSM}.{method}")

    def truncate_and_reload(self, log_start: int, log_end: int) -> None:
        """``truncateAndReload``: snapshots above the end or at/below the start go, then the newest loads."""
        for offset in self._outside(log_start, log_end):
            self._delete(offset, "truncateAndReload")
        if log_end != self.last_map:
            self._clear()
            self._load_from_snapshot(log_start)
        else:  # onLogStartOffsetIncremented: the map end moves up to the log start; lastSnap = newest or start
            self.last_map = max(self.last_map, log_start)
            latest = self.latest_snapshot()
            self.last_snap = log_start if latest is None else latest

    def _outside(self, log_start: int, log_end: int) -> list[int]:
        """The snapshot offsets above ``log_end`` or at/below ``log_start``, in the map's order.

        The map is nearly always in offset order: then two binary searches find them, instead of
        a pass in Python over every snapshot (one per recovered segment, for each segment).
        """
        offsets = list(self.snapshots)
        if not self._in_order:
            return [offset for offset in offsets if offset > log_end or offset <= log_start]
        below, above = bisect_right(offsets, log_start), bisect_right(offsets, log_end)
        return offsets[:below] + offsets[max(above, below) :]

    def _load_from_snapshot(self, log_start: int) -> None:
        """``loadFromSnapshot``: the newest readable snapshot; a corrupt one is deleted and the next tried."""
        while self.snapshots:
            offset = self.latest_snapshot()
            assert offset is not None
            entries = self._read(self.snapshots[offset])
            if entries is None:
                self._delete(offset, "loadFromSnapshot (CorruptSnapshotException)")
                continue
            if isinstance(entries, list):
                for entry in entries:
                    if entry.current_txn_first_offset >= 0:
                        self.tracker.append_data(entry.producer_id, entry.current_txn_first_offset, True)
                    self.tracker.producers.load(entry)
            else:  # written by this load with bytes the model does not know: only its open transactions
                for producer_id, txn_first in entries[1]:
                    self.tracker.append_data(producer_id, txn_first, True)
                self.tracker.producers.unknown = True
            self.last_snap = self.last_map = offset
            return
        self.last_snap = self.last_map = log_start

    def _read(self, name: str) -> list[ProducerEntry] | tuple[None, list[tuple[int, int]]] | None:
        """The entries ``loadFromSnapshot`` keeps, in file order; None if Kafka finds the snapshot corrupt.

        An entry without an open transaction idle for ``producer.id.expiration.ms`` by the load's
        wall clock (``pdir.now_ms``) is dropped (``isProducerExpired``; expiry never happens during
        the load itself: ``removeExpiredProducers`` is a scheduled task).  A snapshot this load wrote with bytes the model
        does not know gives ``(None, open transactions)``.
        """
        data = self.pdir.current(name)
        if data is None:
            return None, self.pdir.written_snapshots.get(name, [])
        try:
            snapshot = read_snapshot(data)
            check_snapshot(snapshot)
        except KsegError:
            return None
        now = self.pdir.now_ms if self.pdir.now_ms is not None else time.time_ns() // 1_000_000
        kept = [e for e in snapshot.entries
                if e.current_txn_first_offset >= 0 or now - e.timestamp < PRODUCER_ID_EXPIRATION_MS]
        self.expired = [e.producer_id for e in snapshot.entries if e not in kept]
        return kept

    def take_snapshot(self, rule: str | None = None) -> None:
        """``takeSnapshot``: a new file only when the map end passed the last snapshot.

        Its bytes are predicted while the producer map's order is known; a snapshot the load
        deleted and writes again with the bytes it had is no change.
        """
        if self.last_map > self.last_snap:
            name = file_name(self.last_map, SUFFIX)
            method, detail = f"{PSM}.takeSnapshot", f"snapshot at {self.last_map}"
            if self.expired:
                detail += f" (expired at load, dropped: producer ids {', '.join(map(str, self.expired))})"
            producers = self.tracker.producers
            if not producers.unknown:
                data = encode_snapshot(producers.ordered())
                self.pdir.overwrite(name, data, rule or self.rule, method, detail)
                self._same_as_before(name)
            else:  # the map's order is not modelled: bytes unknown, open transactions kept
                self.pdir.rewrite(name, 0, rule or self.rule, method, detail)
                self.pdir.written_snapshots[name] = list(self.tracker.open_transactions.items())
            self._add(self.last_map, name)
            self.last_snap = self.last_map

    def _add(self, offset: int, name: str) -> None:
        """A snapshot written: the map stays in offset order unless a new key is below the newest."""
        if self._in_order and offset not in self.snapshots and self.snapshots and offset < next(reversed(self.snapshots)):
            self._in_order = False
        self.snapshots[offset] = name

    def remove_strays(self, bases: Sequence[int]) -> None:
        """``removeStraySnapshots`` (R6.2): of the non-base snapshots only the newest may stay, above every base."""
        self.snapshots = snapshot_offsets(self.pdir)
        self._in_order = True
        segment_bases = set(bases)
        stray: int | None = None
        for offset in list(self.snapshots):
            if offset not in segment_bases:
                if stray is not None:
                    self._delete(stray, "removeStraySnapshots", "R6.2")
                stray = offset
        if stray is not None and bases and stray < max(bases):
            self._delete(stray, "removeStraySnapshots", "R6.2")

    def _same_as_before(self, name: str) -> None:
        """A snapshot deleted earlier in this load and now written with its original bytes: no change."""
        original = self.pdir.path / name
        data = self.pdir.current(name)
        if data is None or not original.is_file() or read_small_file(original) != data:
            return
        rel = self.pdir.rel(name)
        self.pdir.actions[:] = [replace(a, changes_content=False) if a.path == rel and a.kind in (DELETE, CREATE)
                                else a for a in self.pdir.actions]

    def mark_deleted(self, bases: Sequence[int], rule: str) -> None:
        """``removeAndMarkSnapshotForDeletion`` for deleted segments: renamed ``.deleted`` if known and present."""
        for base in bases:
            name = self.snapshots.pop(base, None)
            if name is not None and self.pdir.exists(name):
                self.pdir.rename(name, name + ".deleted", rule, f"{PSM}.removeAndMarkSnapshotForDeletion")

    def truncate_fully(self, offset: int) -> None:
        """``truncateFullyAndStartAt`` (R8.2): every snapshot the manager knows is deleted."""
        for snap in list(self.snapshots):
            self._delete(snap, "truncateFullyAndStartAt", "R8.2")
        self._clear()
        self.last_snap, self.last_map = 0, offset


#: replay(segment, start offset, end offset or None, tracker): R6.3b's reading of one segment.
Replayer = Callable[[Seg, int, "int | None", TxnTracker], None]


def rebuild_producer_state(
    psm: ProducerStates,
    segments: Sequence[Seg],
    log_start: int,
    last_offset: int,
    clean: bool,
    replay: Replayer,
) -> None:
    """``UnifiedLog.rebuildProducerState`` (R6.3); ``segments`` are the loaded ones, in offset order."""
    to_snapshot = [s.base for s in segments[-2:]] + [last_offset]
    if psm.latest_snapshot() is None and clean:  # R6.3a: empty snapshots, the log is not read
        for offset in to_snapshot:
            psm.last_map = offset
            psm.take_snapshot("R6.3a")
        return
    empty_before = psm.last_map >= last_offset
    psm.truncate_and_reload(log_start, last_offset)
    if last_offset > psm.last_map and not empty_before:
        last = _floor(segments, last_offset)
        for seg in _values(segments, psm.last_map, last_offset):
            start = max(seg.base, psm.last_map, log_start)
            psm.last_map = start
            if seg.base in to_snapshot:
                psm.take_snapshot()
            replay(seg, start, last_offset if seg is last else None, psm.tracker)
    psm.last_map = last_offset
    psm.take_snapshot()


def _floor(segments: Sequence[Seg], offset: int) -> Seg | None:
    """``LogSegments.floorSegment``: the last segment whose base is at or below ``offset`` (in offset order)."""
    at = bisect_right(segments, offset, key=_base) - 1
    return segments[at] if at >= 0 else None


def _values(segments: Sequence[Seg], start: int, end: int) -> list[Seg]:
    """``LogSegments.values(from, to)``: from the segment containing ``from`` to those below ``to``."""
    if start == end:
        return []
    low = max(bisect_right(segments, start, key=_base) - 1, 0)  # the floor of ``from``, or the first
    return list(segments[low : bisect_left(segments, end, key=_base)])


def _base(seg: Seg) -> int:
    return seg.base
