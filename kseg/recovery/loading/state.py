"""The partition directory as the load changes it -- in memory only; the real directory is never touched.

The model replays Kafka's load step by step against this picture: each file
is known by name with its size and, while unchanged, the real path its bytes
are read from.  Every change is recorded as an :class:`Action`, so the
prediction lists what Kafka does in the order it does it.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kseg.errors import LimitExceeded
from kseg.index import MAX_SEGMENT_SIZE
from kseg.listing import children
from kseg.recovery.clean_prefix import CleanPrefix
from kseg.recovery.loading.model import CREATE, DELETE, RENAME, REWRITE, TRUNCATE, Action
from kseg.segment import read_small_file
from kseg.sidefile import read_side_file

#: Files read whole through the side-file cap: the partition's text files (the log dir's checkpoints are read in logdir.py).
SIDE_FILES = frozenset({"partition.metadata", "leader-epoch-checkpoint"})
INDEX_NAMES = (".index", ".timeindex", ".txnindex", ".index.swap", ".timeindex.swap", ".txnindex.swap")

#: A producer snapshot's suffix (``<offset>.snapshot``: loading/snapshots.py).
SNAPSHOT_SUFFIX = ".snapshot"


@dataclass(slots=True)
class VFile:
    """One regular file of the partition directory, as the load leaves it so far."""

    size: int
    source: Path | None  # where its current bytes are; None once the model has written it
    readable: bool = True
    data: bytes | None = None  # what the model wrote, when known


class PartitionDir:
    """The regular files of one partition directory, and the actions taken on them."""

    def __init__(self, path: Path, prefix: str, prefixes: Mapping[str, CleanPrefix] | None = None) -> None:
        self.path = path
        self.prefix = prefix  # the directory's name, to make action paths relative to the log dir
        self.files: dict[str, VFile] = {}
        self.actions: list[Action] = []
        self.subdirs: list[str] = []
        #: open transactions (producer id, first offset) in the snapshots this load writes
        self.written_snapshots: dict[str, list[tuple[int, int]]] = {}
        #: LogSegment.recover results by (segment, bytes, producer state before): Kafka recovers a segment
        #: twice in one load (early for a missing index, again in recoverLog); the result is the same
        self.recoveries: dict[tuple[object, ...], Any] = {}  # -> (segments.Recovered, TxnTracker.state())
        #: the recovery loop over the leading clean batches of .log files the caller walked already,
        #: by absolute path (verify: kseg.recovery.clean_prefix); used only for the same bytes
        self.prefixes: Mapping[str, CleanPrefix] = prefixes or {}
        #: the wall clock of the load (ms): which reloaded producers are expired (loading/snapshots.py)
        self.now_ms: int | None = None
        #: ``*.snapshot`` files by offset, kept up to date with every change (``snapshot_offsets``): each
        #: recovered segment starts a ProducerStateManager that lists them, so a listing must not cost
        #: a pass over the whole directory (a partition of thousands of segments)
        self._snapshots: dict[int, str] = {}
        self._snapshots_sorted = True
        self._snapshots_irregular = False  # a bad or duplicate name: listings go back to the full scan
        #: index files the load maps (``LazyIndex.get``): ``LogSegment.close`` trims them (R4.8)
        self.loaded_indexes: set[str] = set()
        #: indexes left at their preallocated size (``AbstractIndex.reset``/``resize``) until a close trims them
        self.preallocated: set[str] = set()
        for entry in children(path):  # listed through an O_NOATIME descriptor (kseg.listing)
            if entry.is_dir():
                self.subdirs.append(entry.name)
            elif entry.is_file():
                readable = os.access(entry, os.R_OK)
                self.files[entry.name] = VFile(entry.stat().st_size, entry, readable)
                self._snapshot_added(entry.name)
        #: the files as they were before the load: what files_created/changed/deleted compare with
        self.original: dict[str, VFile] = {name: VFile(v.size, v.source, v.readable) for name, v in self.files.items()}

    def names(self) -> list[str]:
        return list(self.files)

    def snapshot_offsets(self) -> dict[int, str] | None:
        """Every ``<offset>.snapshot`` by offset, in offset order (a copy); None when a name is not a
        plain number or two names give one offset: the caller's full scan then says what Kafka does."""
        if self._snapshots_irregular:
            return None
        if not self._snapshots_sorted:
            self._snapshots = dict(sorted(self._snapshots.items()))
            self._snapshots_sorted = True
        return dict(self._snapshots)

    def _snapshot_added(self, name: str) -> None:
        if not name.endswith(SNAPSHOT_SUFFIX) or self._snapshots_irregular:
            return
        stem = name[: name.index(".")]
        if not stem.lstrip("-").isdigit() or int(stem) in self._snapshots:
            self._snapshots_irregular = True
            return
        offset = int(stem)
        if self._snapshots and offset < next(reversed(self._snapshots)):
            self._snapshots_sorted = False
        self._snapshots[offset] = name

    def _snapshot_removed(self, name: str) -> None:
        if not name.endswith(SNAPSHOT_SUFFIX) or self._snapshots_irregular:
            return
        offset = int(name[: name.index(".")])
        if self._snapshots.get(offset) == name:
            del self._snapshots[offset]

    def exists(self, name: str) -> bool:
        return name in self.files

    def size(self, name: str) -> int:
        return self.files[name].size

    def source(self, name: str) -> Path | None:
        vfile = self.files.get(name)
        return None if vfile is None else vfile.source

    def rel(self, name: str) -> str:
        return f"{self.prefix}/{name}"

    def record(
        self,
        kind: str,
        name: str,
        rule: str,
        method: str,
        *,
        detail: str = "",
        target: str | None = None,
        size: int | None = None,
        changes_content: bool = True,
    ) -> None:
        self.actions.append(Action(kind, self.rel(name), rule, method, detail, target, size, changes_content))

    def create(self, name: str, size: int, rule: str, method: str, detail: str = "") -> None:
        """Kafka creates ``name`` (nothing happens if it exists: ``createNewFile`` semantics are the caller's)."""
        if name not in self.files:
            self._snapshot_added(name)
        self.files[name] = VFile(size, None)
        self.record(CREATE, name, rule, method, detail=detail, size=size)

    def current(self, name: str) -> bytes | None:
        """The file's bytes as the load leaves them so far (None: absent, or written with unknown content)."""
        vfile = self.files.get(name)
        if vfile is None:
            return None
        if vfile.source is None:
            return vfile.data
        if name in SIDE_FILES:  # a forged size is refused, never read whole (kseg.sidefile)
            return read_side_file(vfile.source)[: vfile.size]
        if vfile.size > MAX_SEGMENT_SIZE and name.endswith(INDEX_NAMES):  # never read whole
            raise LimitExceeded(f"{vfile.size} bytes: larger than Kafka can map (FileChannel.map takes at most "
                                f"{MAX_SEGMENT_SIZE} bytes); the load is not modelled", offset=MAX_SEGMENT_SIZE,
                                path=str(vfile.source))
        return read_small_file(vfile.source)[: vfile.size]

    def rewrite(self, name: str, size: int, rule: str, method: str, detail: str = "", changes: bool = True) -> None:
        """Kafka writes ``name`` again (created if it did not exist)."""
        kind = REWRITE if name in self.files else CREATE
        if kind == CREATE:
            self._snapshot_added(name)
        self.files[name] = VFile(size, None)
        self.record(kind, name, rule, method, detail=detail, size=size, changes_content=changes or kind == CREATE)

    def write(self, name: str, data: bytes, rule: str, method: str, detail: str = "") -> None:
        """Kafka writes ``data`` to ``name``; a change only if the bytes differ from what is there."""
        old = self.current(name) if name in self.files else None
        self.rewrite(name, len(data), rule, method, detail, changes=old != data)
        self.files[name].data = data

    def overwrite(self, name: str, data: bytes, rule: str, method: str, detail: str = "") -> None:
        """``FileChannel.open(CREATE, WRITE)`` then a write at 0: an existing longer file keeps its tail.

        How ``ProducerStateManager.writeSnapshot`` writes (no ``TRUNCATE_EXISTING``).  When the
        file exists with bytes the model does not know, the result is unknown too.
        """
        if name not in self.files:
            self.write(name, data, rule, method, detail)
            return
        old = self.current(name)
        if old is None:
            self.rewrite(name, max(len(data), self.files[name].size), rule, method, detail)
            return
        self.write(name, data + old[len(data) :], rule, method, detail)

    def truncate(self, name: str, size: int, rule: str, method: str, detail: str = "") -> None:
        """``FileChannel.truncate``: the first ``size`` bytes stay."""
        vfile = self.files[name]
        if size < vfile.size:
            vfile.size = size
            if vfile.data is not None:
                vfile.data = vfile.data[:size]
            self.record(TRUNCATE, name, rule, method, detail=detail, size=size)

    def delete(self, name: str, rule: str, method: str, detail: str = "") -> None:
        if self.files.pop(name, None) is not None:
            self._snapshot_removed(name)
            self.record(DELETE, name, rule, method, detail=detail)

    def rename(self, name: str, target: str, rule: str, method: str, detail: str = "") -> None:
        """``File.renameTo``: on POSIX it replaces an existing target."""
        vfile = self.files.pop(name, None)
        if vfile is None:
            return
        self._snapshot_removed(name)
        if target not in self.files:
            self._snapshot_added(target)
        self.files[target] = vfile
        self.record(RENAME, name, rule, method, detail=detail, target=self.rel(target))
