"""The leader-epoch cache through a load: read, assigned by recovery, cut at both ends, written (§7).

``LeaderEpochFileCache`` (storage, 4.3.0).  The cache is read once in
``UnifiedLog.create`` before any segment file is touched (R1.3, R7.1, R7.2),
grows while ``LogSegment.recover`` runs (R7.3, synchronous writes), is cut
after the log end (R7.4) and before the raw log-start checkpoint (R7.5), or
cleared (R7.6).  Every write goes to ``leader-epoch-checkpoint`` (R7.7).
"""

from __future__ import annotations

from kseg.recovery.loading.checkpoints import (
    ILLEGAL_ARGUMENT,
    STORAGE_EXCEPTION,
    format_checkpoint,
    parse_checkpoint,
    storage_message,
)
from kseg.recovery.loading.model import BROKER_STOPS, DIR_OFFLINE, LoadError, LoadFailed
from kseg.recovery.loading.state import PartitionDir
from kseg.sidefile import read_side_file

EPOCH_FILE = "leader-epoch-checkpoint"
LEFC = "LeaderEpochFileCache"


class EpochCache:
    """The cache's entries, in order of epoch, and the file they are written to."""

    def __init__(self, pdir: PartitionDir) -> None:
        self.pdir = pdir
        self.entries: list[tuple[int, int]] = []
        self.current = b""  # the file's bytes as the load leaves them so far

    @classmethod
    def load(cls, pdir: PartitionDir) -> EpochCache:
        """``UnifiedLog.createLeaderEpochCache``: create the file if missing (R7.2), read it (R7.1, R7.8)."""
        cache = cls(pdir)
        if not pdir.exists(EPOCH_FILE):
            pdir.create(EPOCH_FILE, 0, "R7.2", "CheckpointFile.<init> (Files.createFile)")
            return cache
        source = pdir.source(EPOCH_FILE)
        if source is None:  # pragma: no cover - the file was only just listed
            return cache
        cache.current = read_side_file(source)
        entries, failure = parse_checkpoint(cache.current, str(source.absolute()), 2)
        if failure is not None:
            if failure.is_io:
                raise LoadFailed(LoadError(STORAGE_EXCEPTION, storage_message(source), DIR_OFFLINE, "R7.8",
                                           "CheckpointFileWithFailureHandler.read", cause=failure.text()))
            method = ("CheckpointFile.CheckpointReadBuffer.read (new ArrayList)" if failure.exception == ILLEGAL_ARGUMENT
                      else "LeaderEpochCheckpointFile.Formatter.fromString")
            raise LoadFailed(LoadError(failure.exception, failure.message, BROKER_STOPS, "R7.8", method))
        for epoch, start in entries:
            assert isinstance(epoch, int) and isinstance(start, int)
            cache.assign(epoch, start)
        return cache

    def latest_epoch(self) -> int | None:
        return self.entries[-1][0] if self.entries else None

    def assign(self, epoch: int, start_offset: int) -> bool:
        """``LeaderEpochFileCache.assign(EpochEntry)``; True when the cache changed."""
        if epoch < 0 or start_offset < 0:
            message = f"Received invalid partition leader epoch entry EpochEntry[epoch={epoch}, startOffset={start_offset}]"
            raise LoadFailed(LoadError("java.lang.IllegalArgumentException", message, BROKER_STOPS, "R7.1",
                                       "LeaderEpochFileCache.assign"))
        if self.entries and self.entries[-1][0] == epoch and start_offset >= self.entries[-1][1]:
            return False  # isUpdateNeeded: the latest epoch with a start at or after its own
        while self.entries and (self.entries[-1][0] >= epoch or self.entries[-1][1] >= start_offset):
            self.entries.pop()  # maybeTruncateNonMonotonicEntries
        self.entries.append((epoch, start_offset))
        return True

    def assign_from_recovery(self, epochs: list[tuple[int, int]], segment: str) -> None:
        """R7.3: each recovered V2 batch with a higher epoch than the cache's latest; written synchronously."""
        changed = False
        for epoch, base_offset in epochs:
            latest = self.latest_epoch()
            if epoch >= 0 and (latest is None or epoch > latest):
                changed = self.assign(epoch, base_offset) or changed
        if changed:
            self._write("R7.3", "LogSegment.recover -> LeaderEpochFileCache.assign", f"epochs of {segment}")

    def truncate_from_end(self, end_offset: int) -> None:
        """``truncateFromEndAsyncFlush``: drop entries starting at or after ``end_offset`` (R7.4)."""
        if end_offset >= 0 and self.entries and self.entries[-1][1] >= end_offset:
            while self.entries and self.entries[-1][1] >= end_offset:
                self.entries.pop()
            self._write("R7.4", "LeaderEpochFileCache.truncateFromEndAsyncFlush", f"epochs from offset {end_offset}")

    def truncate_from_start(self, start_offset: int) -> None:
        """``truncateFromStartAsyncFlush`` with the raw log-start checkpoint (R7.5).

        Leading entries starting at or before ``start_offset`` go; the last of
        them comes back starting at ``start_offset``.  Any removal rewrites the
        file, even when the result is the same entries.
        """
        removed = [e for e in self.entries if e[1] <= start_offset]
        if not removed:
            return
        self.entries = [(removed[-1][0], start_offset), *self.entries[len(removed) :]]
        self._write("R7.5", "LeaderEpochFileCache.truncateFromStartAsyncFlush", f"epochs before offset {start_offset}")

    def clear(self) -> None:
        """``clearAndFlush`` (R7.6, from R8.2)."""
        self.entries = []
        self._write("R7.6", "LeaderEpochFileCache.clearAndFlush", "every epoch")

    def _write(self, rule: str, method: str, detail: str) -> None:
        """Kafka writes the whole file; it counts as a change only when its bytes differ."""
        data = format_checkpoint(self.entries)
        self.pdir.write(EPOCH_FILE, data, rule, method, detail=detail)  # CheckpointFile.write: a whole new file
        self.current = data

    def as_lists(self) -> list[list[int]]:
        return [[epoch, start] for epoch, start in self.entries]
