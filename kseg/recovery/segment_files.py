"""Writing a segment's files so that a kill at any moment leaves a partition Kafka loads correctly.

Kafka 4.3.0's loader (``docs/kafka-log-loading.md``) rebuilds every index of
a segment whose ``.index`` is missing (R3.4), but it never checks the
contents of an ``.index``/``.timeindex`` that exists, and a missing
``.timeindex`` beside an existing ``.index`` becomes an empty one that is
not rebuilt (R3.3).  So the ``.index`` is the commit mark of a segment's set:

* in place (:class:`SegmentFiles` with ``in_place=True``): every new file is
  first written whole as a hidden temporary beside its destination; then the
  ``.index`` is moved aside (kept as ``.bak``, or dropped when identical to
  its rebuild, which is rewritten later), then every other stale index is
  moved aside, then the new ``.log`` replaces the old one (kept as a hard
  link ``.log.bak``), then the new ``.txnindex``, ``.timeindex`` and, last,
  ``.index`` are renamed in.  Every moment shows the old set, the new set,
  or a ``.log`` without ``.index`` (which Kafka rebuilds whole) -- never an
  index beside a ``.log`` it was not built from.
* into a new place (``in_place=False``: ``-o`` outputs, new indexes beside a
  bare ``.log``): ``.txnindex`` and ``.timeindex`` are renamed in as they are
  written, the ``.index`` after them, and the ``.log`` last, so a ``.log``
  never appears without its indexes (an index without its ``.log`` is an
  orphan Kafka deletes at load, R2.6).

Temporaries are named ``.<name>.<random>.kseg-tmp`` (Kafka ignores them) and
held under an ``flock`` while their writer lives.  A clean exit, an error and
an interrupt (the renames of a commit hold SIGINT until they are done) leave
none behind; only a killed process can, and the next in-place run on that
segment removes a stray whose lock nobody holds (:func:`remove_strays`).

The pieces below one file (:func:`~kseg.writing.copy_permissions`,
:func:`~kseg.writing.backup_path`, :func:`~kseg.writing.fsync_dir`) are
:mod:`kseg.writing`'s, whose :func:`~kseg.writing.atomic_write` writes a single file.
"""

from __future__ import annotations

import contextlib
import fcntl
import glob
import os
import signal
import stat
import tempfile
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from kseg.errors import KsegError
from kseg.segment import naming, open_read_only
from kseg.writing import TMP_SUFFIX, backup_path, copy_permissions, fsync_dir, keep_backup

#: The order new indexes are renamed in: the ``.index`` last, as it decides whether Kafka rebuilds the set.
PLACE_ORDER = ("txnindex", "timeindex", "index")


class TempFile:
    """A hidden temporary beside ``dest``, locked while open, that becomes ``dest`` by one rename."""

    def __init__(self, dest: Path, like: str | os.PathLike[str] | None) -> None:
        self.dest = dest
        fd, name = tempfile.mkstemp(prefix=f".{dest.name}.", suffix=TMP_SUFFIX, dir=dest.parent)
        self.path: Path | None = Path(name)
        self.file: BinaryIO = os.fdopen(fd, "wb")
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # proof to a later run that a writer lives
            copy_permissions(fd, like)
        except BaseException:
            self.discard()
            raise

    def seal(self) -> None:
        """Everything written is on disk (the file stays open, and locked, until it is placed)."""
        with naming(self.dest):
            self.file.flush()
            os.fsync(self.file.fileno())

    def place(self, *, replace: bool) -> None:
        """Rename over ``dest`` (which must not exist unless ``replace``)."""
        assert self.path is not None
        if not replace and os.path.lexists(self.dest):
            raise FileExistsError(f"{self.dest} exists; refusing to replace it")
        os.replace(self.path, self.dest)
        self.path = None
        self.file.close()

    def discard(self) -> None:
        """Close and remove the temporary, if it is still there."""
        self.file.close()
        if self.path is not None:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(self.path)
            self.path = None


def write_temp(dest: Path, data: bytes, like: str | os.PathLike[str] | None) -> TempFile:
    """A sealed temporary for ``dest`` holding ``data``."""
    temp = TempFile(dest, like)
    try:
        with naming(dest):
            temp.file.write(data)
        temp.seal()
    except BaseException:
        temp.discard()
        raise
    return temp


@contextlib.contextmanager
def held_interrupts() -> Iterator[None]:
    """Hold SIGINT and SIGTERM over a few renames, so a signal lands after them, not between them.

    Both end a run through an exception (Ctrl-C, and the CLI's handler for a
    ``kill``); raised between two renames it would leave an index of the other
    ``.log``.  A held signal is delivered to its own handler once the renames are done.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    caught: list[int] = []
    held = (signal.SIGINT, signal.SIGTERM)
    previous = {signum: signal.signal(signum, lambda got, frame: caught.append(got)) for signum in held}
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
    for got in dict.fromkeys(caught):
        _deliver(got, previous[signal.Signals(got)])


def _deliver(signum: int, handler: object) -> None:
    """Hand a held signal to the handler that was in place (or to the default action)."""
    if handler == signal.SIG_IGN:
        return
    if callable(handler):
        handler(signum, None)
    else:
        signal.raise_signal(signum)


def _nobody_writes(path: Path) -> bool:
    """True when ``path`` is a regular file whose ``flock`` no live process holds."""
    try:
        if not stat.S_ISREG(os.lstat(path).st_mode):
            return False
        fd = open_read_only(path)
    except (OSError, KsegError):
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return True
    except OSError:
        return False
    finally:
        os.close(fd)


def remove_strays(directory: Path, names: Iterator[str] | tuple[str, ...]) -> list[Path]:
    """Remove kseg's own temporaries for ``names`` left by a killed run: ``.<name>.*.kseg-tmp``, unlocked."""
    removed = []
    for name in names:
        for stray in sorted(directory.glob(f".{glob.escape(name)}.*{TMP_SUFFIX}")):
            if _nobody_writes(stray):
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(stray)
                removed.append(stray)
    return removed


@dataclass
class _Index:
    data: bytes
    like: str | os.PathLike[str] | None
    changed: bool  # False: the file beside the .log already holds exactly ``data``
    temp: TempFile | None = None


def index_path(log: Path, kind: str) -> Path:
    """``<base>.<kind>`` beside ``<base>.log``."""
    return log.with_name(log.name.split(".", 1)[0] + "." + kind)


class SegmentFiles:
    """One segment's new ``.log`` and/or indexes, put in place in the order described above.

    Use as a context manager: write with :meth:`log_file` and :meth:`index`,
    then :meth:`commit`.  Leaving the block without a commit (an error, an
    interrupt) removes every temporary and changes nothing.
    """

    def __init__(self, log_dest: Path, *, in_place: bool) -> None:
        self.log_dest = log_dest
        self.in_place = in_place
        self._log: TempFile | None = None
        self._indexes: dict[str, _Index] = {}
        self.strays_removed = (
            remove_strays(log_dest.parent, (log_dest.name, *(index_path(log_dest, k).name for k in PLACE_ORDER)))
            if in_place
            else []
        )

    def __enter__(self) -> SegmentFiles:
        return self

    def __exit__(self, *exc: object) -> None:
        self.abort()

    @property
    def log_temp(self) -> Path | None:
        """The temporary the new ``.log`` is written to (to read it back before the commit)."""
        return None if self._log is None else self._log.path

    @contextlib.contextmanager
    def log_file(self, like: str | os.PathLike[str] | None) -> Iterator[BinaryIO]:
        """The new ``.log``, written to a temporary; sealed (fsynced) when the block ends."""
        self._log = TempFile(self.log_dest, like)
        with naming(self.log_dest):  # a write that fails (a full disk) names the segment being written
            yield self._log.file
        self._log.seal()

    def index(self, kind: str, data: bytes, *, like: str | os.PathLike[str] | None, changed: bool = True) -> None:
        """A new index (``changed=False``: the existing file already holds ``data``, in place only).

        Into a new place, ``.timeindex``/``.txnindex`` land at once and the ``.index`` is written at
        the commit, so no more than two temporaries (the ``.log`` and one index) exist at a time.
        """
        entry = _Index(data, like, changed)
        self._indexes[kind] = entry
        if changed and (self.in_place or kind != "index"):
            entry.temp = write_temp(index_path(self.log_dest, kind), data, like)
            if not self.in_place:
                entry.temp.place(replace=False)

    def commit(self) -> dict[str, Path]:
        """Put everything in place; returns the backups kept (kind -> path; in place only)."""
        with held_interrupts():
            if not self.in_place:
                self._place_new()
                return {}
            if self._log is None and not any(e.changed for e in self._indexes.values()):
                return {}
            return self._swap_in_place()

    def _place_new(self) -> None:
        index = self._indexes.get("index")
        if index is not None:
            index.temp = write_temp(index_path(self.log_dest, "index"), index.data, index.like)
            index.temp.place(replace=False)
        if self._log is not None:
            self._log.place(replace=False)
        fsync_dir(self.log_dest.parent)

    def _swap_in_place(self) -> dict[str, Path]:
        directory = self.log_dest.parent
        index = self._indexes.get("index")  # an identical .index leaves too: its absence is the safe state
        if index is not None and index.temp is None:
            index.temp = write_temp(index_path(self.log_dest, "index"), index.data, index.like)
        backups: dict[str, Path] = {}
        for kind in ("index", "timeindex", "txnindex"):  # stale indexes aside, the .index first
            self._move_aside(kind, backups)
            if kind == "index":
                fsync_dir(directory)
        if self._log is not None:
            backups["log"] = keep_backup(self.log_dest)
            self._log.place(replace=True)
            fsync_dir(directory)
        for kind in PLACE_ORDER:
            entry = self._indexes.get(kind)
            if entry is not None and entry.temp is not None:
                entry.temp.place(replace=True)
        fsync_dir(directory)
        return backups

    def _move_aside(self, kind: str, backups: dict[str, Path]) -> None:
        """An existing index leaves before the ``.log`` changes: kept as ``.bak`` unless identical."""
        path = index_path(self.log_dest, kind)
        entry = self._indexes.get(kind)
        if not os.path.lexists(path):
            return
        if entry is not None and not entry.changed:
            if kind == "index":
                os.unlink(path)  # its bytes wait in a temporary, and come back last
            return
        if entry is None and self._log is None and kind != "index":
            return  # neither it nor its .log changes
        target = backup_path(path)
        os.rename(path, target)
        backups[kind] = target

    def abort(self) -> None:
        """Remove every temporary not yet in place."""
        for entry in self._indexes.values():
            if entry.temp is not None:
                entry.temp.discard()
        if self._log is not None:
            self._log.discard()
