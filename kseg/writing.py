"""Writing beside evidence: temporaries renamed in whole, directory fsyncs, backups.

Split from :mod:`kseg.segment` (which reads): every file kseg writes goes through a
temporary named ``.<name>.<random>.kseg-tmp`` -- a name Kafka's loader ignores --
fsynced, then renamed over its destination, so a kill leaves the old file or the new
one, never half of either (docs/cli.md, section 5).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import stat
from collections.abc import Iterator
from datetime import datetime, timezone
from pathlib import Path
from typing import BinaryIO

from kseg.segment import naming

#: The suffix of every temporary kseg writes (``.<name>.<random>.kseg-tmp``): Kafka's loader ignores it.
TMP_SUFFIX = ".kseg-tmp"


def copy_permissions(fd: int, like: str | os.PathLike[str] | None) -> None:
    """Give an open file the mode (and, when allowed, the owner) of ``like``.

    A broker running as its own user must still be able to open a segment or
    index someone else rebuilt; without ``like`` the file gets the usual
    ``0666 & ~umask`` instead of ``mkstemp``'s private 0600.
    """
    if like is None:
        umask = os.umask(0)
        os.umask(umask)
        os.fchmod(fd, 0o666 & ~umask)
        return
    info = os.stat(like)
    os.fchmod(fd, stat.S_IMODE(info.st_mode))
    if (info.st_uid, info.st_gid) != (os.getuid(), os.getgid()):
        with contextlib.suppress(PermissionError):
            os.fchown(fd, info.st_uid, info.st_gid)


@contextlib.contextmanager
def atomic_write(
    dest: str | os.PathLike[str], *, replace: bool = False, like: str | os.PathLike[str] | None = None
) -> Iterator[BinaryIO]:
    """Write ``dest`` all at once: a temp file beside it, fsync, rename, fsync the directory.

    Refuses to replace an existing ``dest`` unless ``replace`` is true.  If the
    body raises, the temporary file is removed and ``dest`` is untouched.  The
    new file takes the permissions of ``like`` (see :func:`copy_permissions`).
    """
    dest = Path(dest)
    if dest.exists() and not replace:
        raise FileExistsError(f"{dest} exists; refusing to replace it")
    import tempfile  # only writers need it (it imports random): the reading commands start without it

    directory = dest.parent
    fd, tmp_name = tempfile.mkstemp(prefix=f".{dest.name}.", suffix=TMP_SUFFIX, dir=directory)
    try:
        with naming(dest), os.fdopen(fd, "wb") as out:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # held while we live: not a stray (kseg.recovery.segment_files)
            copy_permissions(out.fileno(), like)
            yield out
            out.flush()
            os.fsync(out.fileno())
            os.replace(tmp_name, dest)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp_name)
        raise
    fsync_dir(directory)


def fsync_dir(directory: str | os.PathLike[str]) -> None:
    """Make the renames in ``directory`` durable, in the order they were made."""
    dir_fd = os.open(directory, os.O_RDONLY)
    try:
        with naming(directory):
            os.fsync(dir_fd)
    finally:
        os.close(dir_fd)


def backup_path(path: Path, now: datetime | None = None) -> Path:
    """Where a replaced index is kept: ``<name>.bak``, or ``<name>.<UTC time>.bak`` if that exists.

    Kafka's loader ignores both (it only looks at names ending in .log,
    .index, .timeindex, .txnindex, .snapshot and the temp suffixes), so
    backups can stay in the partition directory.
    """
    first = path.with_name(path.name + ".bak")
    if not first.exists():
        return first
    stamp = (now or datetime.now(timezone.utc)).strftime("%Y%m%dT%H%M%SZ")
    candidate = path.with_name(f"{path.name}.{stamp}.bak")
    n = 1
    while candidate.exists():
        candidate = path.with_name(f"{path.name}.{stamp}-{n}.bak")
        n += 1
    return candidate


def keep_backup(path: Path) -> Path:
    """Keep ``path`` under its backup name (:func:`backup_path`): a hard link when the filesystem allows, else a copy."""
    target = backup_path(path)
    try:
        os.link(path, target)
    except OSError:
        import shutil  # only here: it imports bz2 and lzma, which no reading command needs at start-up

        shutil.copy2(path, target)
    return target
