"""Replay a metadata directory to an image at an offset or a time, the way Kafka's metadata loader does.

Kafka (``MetadataLoader`` + ``MetadataBatchLoader``) loads the newest
snapshot and then the log from the snapshot's end offset.  Records between
``BeginTransactionRecord`` and ``EndTransactionRecord`` become visible together
at the end; an ``AbortTransactionRecord`` throws them away; until either, the
published image is the one from before the transaction.  A record whose replay
throws is reported to the loader's fault handler and skipped -- the broker goes
on (on a combined broker+controller node the fault is fatal instead).

``--at`` means *the image after the record at this offset* (Kafka's
``lastContainedOffset``); a snapshot ``E-epoch.checkpoint`` is the image at
``E - 1``.  A time means every batch appended at or before it (a KRaft batch's
timestamp is its append time); snapshots are placed in time by their header's
``lastContainedLogTimestamp``.
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from kseg.metadata.image import HANDLERS, Image, ImpossibleRecord, PoisonedDelta
from kseg.metadata.source import (
    METADATA_DIR,
    Damage,
    MetaRecord,
    Snapshot,
    log_segments,
    records,
    snapshot_header,
    snapshots,
)

TXN_TYPES = ("BEGIN_TRANSACTION_RECORD", "END_TRANSACTION_RECORD", "ABORT_TRANSACTION_RECORD")
TXN_SET = frozenset(TXN_TYPES)
#: Past every offset and time a log can hold (Java's ``Long.MAX_VALUE``).
MAX_LONG = (1 << 63) - 1


@dataclass(frozen=True, slots=True)
class Target:
    """Where to stop: an offset (inclusive) or a time in ms (inclusive); neither = the end."""

    offset: int | None = None
    time_ms: int | None = None

    def includes(self, record: MetaRecord) -> bool:
        if self.offset is not None and record.offset > self.offset:
            return False
        return self.time_ms is None or record.timestamp <= self.time_ms


@dataclass(slots=True)
class Replay:
    """The outcome: the image, where it came from, and every finding on the way."""

    image: Image
    snapshot: Snapshot | None
    records: int = 0
    findings: list[Damage] = field(default_factory=list)
    open_transaction: int | None = None  # offset of a BeginTransaction with no end yet


def metadata_dir(path: Path) -> Path:
    """The ``__cluster_metadata-0`` directory of a log directory, or the directory itself."""
    return path / METADATA_DIR if (path / METADATA_DIR).is_dir() else path


class Observer(Protocol):
    """Told about each data record as it becomes part of the image (history watches this way)."""

    def before(self, record: MetaRecord, image: Image) -> None: ...

    def after(self, record: MetaRecord, image: Image) -> None: ...


class Replayer:
    """Kafka's order on one image: data records applied, transactions buffered, faults recorded.

    Kafka publishes its delta at batch ends (one batch per commit is assumed: the disk does not say how the
    quorum grouped them) and before a ``BeginTransactionRecord``.  When a record poisons the delta
    (:class:`PoisonedDelta`), the published image stays what it was: ``rebuild(offset)`` replays again to
    the last published offset, and every record of the delta is lost.
    """

    def __init__(self, image: Image, findings: list[Damage], observer: Observer | None = None,
                 rebuild: Callable[[int], Image] | None = None) -> None:
        self.image = image
        self.findings = findings
        self.pending: list[MetaRecord] | None = None
        self.pending_since: int | None = None
        self.applied = 0
        self.observer = observer
        self.rebuild = rebuild
        self.published = image.offset
        self.poisoned: MetaRecord | None = None
        self.base = (image.copy(), image.offset)  # the last copy a poisoned delta is rebuilt from
        self.base_applied = 0
        self.since_base: list[MetaRecord] = []  # every record fed after the base: a rebuild replays these
        self.copy_after = CHECKPOINT_RECORDS  # records after the base before the next copy is considered

    def batch_end(self) -> None:
        """The end of a batch: Kafka's ``maybeFlushBatches`` publishes unless a transaction is open."""
        if self.pending is None:
            self.publish()

    def publish(self) -> None:
        """``applyDeltaAndUpdate``: the delta becomes the image, or, poisoned, is thrown away."""
        poisoned, self.poisoned = self.poisoned, None
        if poisoned is not None and self.rebuild is not None:
            self.findings.append(Damage(poisoned.file, poisoned.position, poisoned.offset,
                                        f"Error generating new metadata image from metadata delta between offset "
                                        f"{self.published} and {self.image.offset}: every record of it is lost",
                                        False))
            self.image = self.rebuild(self.published)
        self.published = self.image.offset
        since = self.applied - self.base_applied
        if since >= self.copy_after:  # the image's size is counted only here: it changes slowly
            size = _size(self.image)
            if since >= size:
                self.base, self.base_applied = (self.image.copy(), self.image.offset), self.applied
                self.since_base[:] = [r for r in self.since_base if r.offset > self.image.offset]
            self.copy_after = max(CHECKPOINT_RECORDS, size)

    def feed(self, record: MetaRecord) -> None:
        """One record of the log, in offset order."""
        self.since_base.append(record)
        if not record.control:
            self._route(record)

    def _route(self, record: MetaRecord) -> None:
        """A data record: a transaction's boundary, buffered in one, or applied."""
        kind = record.type
        if kind not in TXN_SET:
            if self.pending is None:
                self._apply(record)
            else:
                self.pending.append(record)
        elif kind == "BEGIN_TRANSACTION_RECORD":
            if self.pending is not None:
                self._fault(record, "Encountered BeginTransactionRecord while already in a transaction")
                return
            self.publish()
            self.pending, self.pending_since = [], record.offset
        elif record.type == "END_TRANSACTION_RECORD":
            if self.pending is None:
                self._fault(record, "Encountered EndTransactionRecord without having seen a BeginTransactionRecord")
                return
            done, self.pending, self.pending_since = self.pending, None, None
            for item in done:
                self._apply(item)
            self._stamp(record)
        elif record.type == "ABORT_TRANSACTION_RECORD":
            if self.pending is None:
                self._fault(record, "Encountered AbortTransactionRecord without having seen a BeginTransactionRecord")
                return
            self.dry_run()
            self.pending, self.pending_since = None, None
            self._stamp(record)
        elif self.pending is not None:
            self.pending.append(record)
        else:
            self._apply(record)

    def dry_run(self) -> None:
        """The faults of a transaction that never becomes part of the image (aborted, or still open at the
        end): Kafka replays its records into the delta as they come, and reports what throws, before it
        throws the delta away; here they are replayed on a copy, only for the findings."""
        if self.pending:
            scratch = Replayer(self.image.copy(), self.findings)
            for item in self.pending:
                scratch._apply(item)

    def _apply(self, record: MetaRecord) -> None:
        observer = None if record.type == "NO_OP_RECORD" else self.observer
        if observer is not None:
            observer.before(record, self.image)
        image = self.image
        try:
            handler = HANDLERS.get(record.type)  # Image.apply, without its call
            if handler is not None:
                handler(image, record.data)
        except PoisonedDelta as err:
            self._fault(record, str(err))
            self.poisoned = self.poisoned or record
        except ImpossibleRecord as err:
            self._fault(record, str(err))
        except (KeyError, TypeError) as err:
            self._fault(record, f"record lacks a field Kafka needs: {err}")
        image.offset, image.timestamp = record.offset, record.timestamp
        self.applied += 1
        if observer is not None:
            observer.after(record, self.image)

    def _stamp(self, record: MetaRecord) -> None:
        self.image.offset, self.image.timestamp = record.offset, record.timestamp

    def _fault(self, record: MetaRecord, message: str) -> None:
        self.findings.append(Damage(record.file, record.position, record.offset,
                                    f"Error loading metadata log record from offset {record.offset}: "
                                    f"{record.type}: {message}", False))


def _size(image: Image) -> int:
    """About how many entities a copy of the image copies."""
    return (sum(len(p) for p in image.partitions.values()) + len(image.configs) + len(image.acls)
            + len(image.brokers) + len(image.quotas))


def _snapshot_image(snapshot: Snapshot, findings: list[Damage]) -> Image | None:
    """The image a snapshot holds, None when it cannot be read whole (damage, or no footer)."""
    image = Image()
    local: list[Damage] = []
    replayer = Replayer(image, local)
    footer = False
    for item in records(snapshot.path):
        if isinstance(item, Damage):
            local.append(item)
            if item.fatal_for_file:
                break
            continue
        footer = footer or item.type == "SNAPSHOT_FOOTER"
        replayer.feed(item)
    if any(d.fatal_for_file for d in local) or not footer:
        reason = "no SnapshotFooter" if not local else local[0].reason
        findings.append(Damage(str(snapshot.path), 0, snapshot.end_offset,
                               f"snapshot not usable ({reason}); an older one and the log are replayed", False))
        return None
    findings.extend(local)
    image.offset = snapshot.end_offset - 1
    header = snapshot_header(snapshot)
    if header is not None:
        image.timestamp = int(header.data.get("lastContainedLogTimestamp", -1))
    return image


def _usable(snapshot: Snapshot, target: Target) -> bool:
    """Is the snapshot at or before the target?"""
    if target.offset is not None and snapshot.end_offset - 1 > target.offset:
        return False
    if target.time_ms is not None:
        header = snapshot_header(snapshot)
        stamp = None if header is None else header.data.get("lastContainedLogTimestamp")
        if not isinstance(stamp, int) or stamp > target.time_ms:
            return False
    return True


def start_image(metadata: Path, target: Target, findings: list[Damage], *,
                use_snapshots: bool = True) -> tuple[Image, Snapshot | None]:
    """The newest readable snapshot at or before the target, or an empty image at the log start."""
    if use_snapshots:
        for snapshot in reversed(snapshots(metadata)):
            if _usable(snapshot, target):
                image = _snapshot_image(snapshot, findings)
                if image is not None:
                    return image, snapshot
    return Image(), None


def log_records(metadata: Path, from_offset: int, findings: list[Damage]) -> Iterator[MetaRecord]:
    """The log's records from ``from_offset`` on, across segments; the first damaged batch ends the log
    (Kafka's recovery truncates there)."""
    expected = from_offset
    for segment in log_segments(metadata):
        for item in records(segment, from_offset):
            if isinstance(item, Damage):
                findings.append(item)
                if item.fatal_for_file:
                    return
                continue
            if item.offset > expected and expected == from_offset and item.offset != from_offset:
                findings.append(Damage(item.file, item.position, item.offset,
                                       f"gap: the log resumes at offset {item.offset}, the image is at "
                                       f"{from_offset - 1}", False))
            expected = item.offset + 1
            yield item


def earliest_start(metadata: Path) -> Snapshot | None:
    """Where the longest replay starts: the log's first record when it is offset 0 (None), else the
    oldest snapshot the log continues without a gap (else the newest snapshot)."""
    segments = log_segments(metadata)
    first = int(segments[0].name[:-4]) if segments else None
    if first == 0:
        return None
    found = snapshots(metadata)
    for snapshot in found:
        if first is not None and snapshot.end_offset >= first:
            return snapshot
    return found[-1] if found else None


#: At least this many records between two copies of the image a poisoned delta is replayed again from, and at
#: least as many as the image has entities: a copy costs one pass over the image, the replay after a poison at
#: most that many records.
CHECKPOINT_RECORDS = 64


def _replay_from(metadata: Path, image: Image, target: Target, findings: list[Damage],
                 observer: Observer | None) -> Replayer:
    """The log after ``image`` up to ``target``, in Kafka's order, publishing at batch ends."""
    return _replay(log_records(metadata, image.offset + 1, findings), image, target, findings, observer)


def _replay(items: Iterable[MetaRecord], image: Image, target: Target, findings: list[Damage],
            observer: Observer | None) -> Replayer:
    """``items`` (in offset order, after ``image``) up to ``target``, publishing at batch ends.  A poisoned
    delta is rebuilt from the records kept since the last copy, never read from the files again."""
    replayer = Replayer(image, findings, observer)
    replayer.rebuild = lambda offset: _rebuild(replayer.base, replayer.since_base, offset)
    # Replayer.feed and batch_end, with the common case (a data record outside a transaction) inlined:
    # this loop runs once per record of the log
    last = MAX_LONG if target.offset is None else target.offset  # Target.includes, without its call
    until = MAX_LONG if target.time_ms is None else target.time_ms
    keep, apply, route, publish = replayer.since_base.append, replayer._apply, replayer._route, replayer.publish
    with _collector_paused():
        for record in items:
            if record.offset > last or record.timestamp > until:
                break
            keep(record)
            if record.control:
                pass
            elif record.type not in TXN_SET and replayer.pending is None:
                apply(record)
            else:
                route(record)
            if record.offset == record.batch_last_offset and replayer.pending is None:
                publish()
    if replayer.poisoned is not None:
        replayer.publish()
    replayer.dry_run()
    replayer.rebuild = None  # the closure refers to the replayer: no cycle left for the paused collector
    return replayer


@contextmanager
def _collector_paused() -> Iterator[None]:
    """Python's cyclic garbage collector paused for a replay: the replay allocates millions of records, dicts
    and registrations, none in a reference cycle, and the collector would scan the growing young generations
    again and again for nothing (a third of the CPU of a million-record replay).  Restored afterwards, also
    when the collector was already off."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def _rebuild(base: tuple[Image, int], since: list[MetaRecord], offset: int) -> Image:
    """The published image at ``offset``: the last copy, and the records after it replayed again."""
    image, at = base
    if offset == at:
        return image.copy()
    return _replay(list(since), image.copy(), Target(offset=offset), [], None).image


def image_at(path: Path, at: Target | None = None, *, use_snapshots: bool = True,
             from_snapshot: Snapshot | None = None, observer: Observer | None = None) -> Replay:
    """The image of ``path`` (a log directory or its ``__cluster_metadata-0``) at ``at`` (default: the end).

    ``from_snapshot`` forces the starting snapshot (the proof replays from an older one on purpose);
    ``use_snapshots=False`` replays the log alone from its first record.
    """
    target = at or Target()
    metadata = metadata_dir(path)
    findings: list[Damage] = []
    if from_snapshot is not None:
        image = _snapshot_image(from_snapshot, findings) or Image()
        snapshot: Snapshot | None = from_snapshot
    else:
        image, snapshot = start_image(metadata, target, findings, use_snapshots=use_snapshots)
    replayer = _replay_from(metadata, image, target, findings, observer)
    return Replay(replayer.image, snapshot, replayer.applied, findings, replayer.pending_since)
