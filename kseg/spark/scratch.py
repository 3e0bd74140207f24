"""The files kseg writes for Spark: in one private directory per run, never at a name another user can guess.

kseg runs as root on broker hosts, where other accounts share ``/tmp``.  A
file at a fixed name there (``/tmp/kseg-spark-0.log``) is a file another user
can create first: as a symlink (kseg then truncates whatever it points at) or
as a log4j configuration the JVM, started as root, would load (and log4j can
be told to run code).  So every file here lives in a directory made by
:func:`tempfile.mkdtemp` (mode 0700, a random name, created atomically), and
is created with ``O_EXCL | O_NOFOLLOW``: it is new, it is a regular file, and
it is ours.

The directory is removed when the process ends, unless a failure named the
log in it (:func:`keep`) and the log holds something: then the user can read
what Spark said.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import shutil
import tempfile
from pathlib import Path

from kseg.segment import open_new_private

#: The log file's name inside the private directory.
LOG_NAME = "spark.log"
_state: dict[str, object] = {"dir": None, "keep": False}


def scratch_dir() -> Path:
    """This run's private directory (``$TMPDIR/kseg-spark-XXXXXXXX``, mode 0700), made on first use."""
    made = _state["dir"]
    if isinstance(made, Path) and made.is_dir():
        return made
    made = Path(tempfile.mkdtemp(prefix="kseg-spark-"))
    _state["dir"], _state["keep"] = made, False
    atexit.register(_remove, made)
    return made


def keep() -> None:
    """Leave the directory behind at exit: an error message names the log in it."""
    _state["keep"] = True


def _remove(directory: Path) -> None:
    """At exit: the directory goes, unless an error named its log and there is something in it to read."""
    log = directory / LOG_NAME
    named = _state["keep"] and _state["dir"] == directory
    if not (named and log.is_file() and log.stat().st_size > 0):
        shutil.rmtree(directory, ignore_errors=True)


def create_private(name: str, *, replace: bool = False) -> int:
    """A new regular file ``name`` in the private directory, opened for writing (0600); its descriptor.

    ``O_EXCL | O_NOFOLLOW``: an existing name (even a dangling symlink) is an
    error, never followed.  ``replace`` first unlinks an earlier file of this
    run (the directory is ours alone, so the name can only be one we made).
    """
    path = scratch_dir() / name
    if replace:
        with contextlib.suppress(FileNotFoundError):
            path.unlink()
    return open_new_private(path, 0o600)


def write_private(name: str, text: str) -> Path:
    """Write ``text`` to a new private file ``name`` (an earlier one of this run is replaced); its path."""
    fd = create_private(name, replace=True)
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        out.write(text)
    return scratch_dir() / name


def append_to_log(text: str) -> None:
    """Add ``text`` to Spark's log in the private directory (nobody else can have made a name there)."""
    with contextlib.suppress(OSError), open(log_file(), "a", encoding="utf-8") as log:
        log.write(text)


def log_file() -> Path:
    """Where the JVM's stderr goes (see :mod:`kseg.spark.session`)."""
    return scratch_dir() / LOG_NAME
