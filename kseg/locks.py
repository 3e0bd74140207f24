"""Kafka's log-directory lock, as kseg asks about it and takes it for a change in place.

A broker holds ``<log dir>/.lock`` for as long as it runs: Kafka's
``FileLock`` opens the file (creating it) and calls ``FileChannel.tryLock``,
which on Linux is ``fcntl(F_SETLK)``, a whole-file POSIX write lock.  kseg
asks the same question (:func:`log_dir_locked`) and, for ``--in-place``,
takes the same lock and keeps it until the last rename
(:func:`holding_log_dir_locks`): a broker that starts meanwhile cannot take
it, and so does not open files kseg is replacing.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import struct
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path

from kseg.errors import LogDirLocked
from kseg.segment import open_existing_for_lock, open_new_private, open_read_only

#: ``struct flock`` as the kernel lays it out -- an OS structure, not a Kafka byte layout (Linux:
#: type, whence, start, len, pid; BSD/macOS: start, len, pid, type, whence).
_BSD_FLOCK = sys.platform.startswith(("darwin", "freebsd", "openbsd", "netbsd"))
_FLOCK_FORMAT = "@qqihh" if _BSD_FLOCK else "@hhqqi4x"
LOCK_FILE = ".lock"


def _flock_query() -> bytes:
    """A whole-file write lock, the question ``F_GETLK`` answers."""
    if _BSD_FLOCK:
        return struct.pack(_FLOCK_FORMAT, 0, 0, 0, fcntl.F_WRLCK, os.SEEK_SET)
    return struct.pack(_FLOCK_FORMAT, fcntl.F_WRLCK, os.SEEK_SET, 0, 0, 0)


def log_dir_locked(log_dir: str | os.PathLike[str]) -> bool:
    """True while another process holds a lock on ``<log_dir>/.lock``, as a running broker does.

    Kafka's ``FileLock`` takes ``FileChannel.tryLock`` on that file: a POSIX
    ``fcntl`` lock.  This only asks (``F_GETLK`` for a whole-file write lock):
    the file is opened read-only if it exists, nothing is created or locked.
    A lock held by this very process is not reported (POSIX locks never
    conflict with their owner).
    """
    path = Path(log_dir) / LOCK_FILE
    if not path.is_file():
        return False
    if _held_key(path) in _HELD:  # ours: opening and closing it here would drop the lock (POSIX)
        return False
    fd = open_read_only(path)
    try:
        answer = fcntl.fcntl(fd, fcntl.F_GETLK, _flock_query())
    finally:
        os.close(fd)
    fields = struct.unpack(_FLOCK_FORMAT, answer)
    lock_type = fields[3] if _BSD_FLOCK else fields[0]
    return lock_type != fcntl.F_UNLCK


def refuse_in_place_while_locked(log_dir: str | os.PathLike[str]) -> None:
    """Raise :class:`~kseg.errors.LogDirLocked` while a broker (any process) holds ``<log_dir>/.lock``.

    Every command that changes files in place asks this first: a running broker
    holds its log directory's lock, and changing its files under it loses data.
    """
    if log_dir_locked(log_dir):
        raise LogDirLocked(
            f"{Path(log_dir) / LOCK_FILE} is locked by another process (a running broker?); "
            "refusing to change files in place (stop the broker, or use -o OUTDIR)"
        )


#: (device, inode) of each ``.lock`` this process holds -> the descriptor holding it.  POSIX locks
#: belong to the process and end when *any* descriptor of the file is closed, so nothing else in
#: kseg may open a held ``.lock`` (:func:`log_dir_locked` looks here first).
_HELD: dict[tuple[int, int], int] = {}


def _held_key(path: Path) -> tuple[int, int] | None:
    try:
        info = os.stat(path)
    except OSError:
        return None
    return (info.st_dev, info.st_ino)


#: Files only a Kafka log directory holds: where one of them is, a broker may start and take ``.lock``.
LOG_DIR_MARKERS = ("meta.properties", "recovery-point-offset-checkpoint")


def is_kafka_log_dir(directory: str | os.PathLike[str]) -> bool:
    """True for a directory a broker has used as a log directory (it holds ``meta.properties`` or a checkpoint)."""
    return any(os.path.lexists(os.path.join(directory, name)) for name in LOG_DIR_MARKERS)


def _open_lock_file(log_dir: Path) -> int | None:
    """``<log_dir>/.lock`` opened for writing, never through a symlink; None when there is none to take.

    A missing ``.lock`` is created (owned like its log directory, so the
    broker's account can still lock it) only in a Kafka log directory: a
    copy of a partition elsewhere gets no new file beside it.
    """
    path = log_dir / LOCK_FILE
    try:
        return open_existing_for_lock(path)
    except PermissionError:  # the broker's file, not ours to write: a read lock conflicts with its tryLock too
        return open_read_only(path)
    except FileNotFoundError:
        if not is_kafka_log_dir(log_dir):
            return None
    fd = open_new_private(path, 0o644)
    umask = os.umask(0)
    os.umask(umask)
    os.fchmod(fd, 0o666 & ~umask)  # as Kafka's FileLock creates it
    info = os.stat(log_dir)
    if (info.st_uid, info.st_gid) != (os.getuid(), os.getgid()):
        with contextlib.suppress(PermissionError):  # the broker's account must still be able to lock it
            os.fchown(fd, info.st_uid, info.st_gid)
    return fd


def _lock_or_refuse(log_dir: Path) -> int | None:
    """Take the lock a broker takes on ``<log_dir>/.lock``; raise :class:`LogDirLocked` if it is held."""
    fd = _open_lock_file(log_dir)
    if fd is None:
        return None
    writable = fcntl.fcntl(fd, fcntl.F_GETFL) & os.O_ACCMODE != os.O_RDONLY
    try:  # F_SETLK on the whole file: a write lock, Kafka's tryLock (a read lock where kseg may not write)
        fcntl.lockf(fd, (fcntl.LOCK_EX if writable else fcntl.LOCK_SH) | fcntl.LOCK_NB)
    except OSError as err:
        os.close(fd)
        if err.errno in (errno.EACCES, errno.EAGAIN):
            raise LogDirLocked(
                f"{log_dir / LOCK_FILE} is locked by another process (a running broker?); "
                "refusing to change files in place (stop the broker, or use -o OUTDIR)"
            ) from None
        raise OSError(err.errno, err.strerror, str(log_dir / LOCK_FILE)) from None
    return fd


@contextlib.contextmanager
def holding_log_dir_locks(log_dirs: Iterable[str | os.PathLike[str]]) -> Iterator[None]:
    """Hold Kafka's lock on every ``<log_dir>/.lock`` for the length of the body (a change in place).

    A broker starting meanwhile fails to take its lock and does not open the
    files kseg is changing; one already running makes this raise
    :class:`~kseg.errors.LogDirLocked` before anything is written.  Each
    directory is resolved to its real path first; a ``.lock`` that does not
    exist is created, as the broker would create it, in a Kafka log directory
    (:func:`is_kafka_log_dir`).
    """
    taken: list[tuple[tuple[int, int], int]] = []
    try:
        for log_dir in sorted({Path(os.path.realpath(d)) for d in log_dirs}):
            key = _held_key(log_dir / LOCK_FILE)
            if key is not None and key in _HELD:
                continue  # held already (a nested run in this process)
            fd = _lock_or_refuse(log_dir)
            if fd is None:
                continue
            info = os.fstat(fd)
            _HELD[(info.st_dev, info.st_ino)] = fd
            taken.append(((info.st_dev, info.st_ino), fd))
        yield
    finally:
        for key, fd in reversed(taken):
            _HELD.pop(key, None)
            os.close(fd)  # closing releases the lock
