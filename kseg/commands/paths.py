"""Where a writing command may write, and what it must hold while it does: real paths, not the names typed.

Every check here looks at real paths (symlinks and ``..`` resolved), because
the name on the command line can hide where a file lives: ``cd orders-0 &&
kseg recover --in-place 00000000000000080000.log`` names a file whose lexical
parent is ``.``, and a symlink to a partition directory puts its segments in
another log directory than the link's.

* :func:`in_place_locks`: for ``--in-place``, Kafka's ``.lock`` of the real
  log directory of every segment touched, held until the run ends
  (:func:`kseg.locks.holding_log_dir_locks`).
* :func:`refuse_output_dir`: ``-o OUTDIR`` is never inside an input, nor
  inside a Kafka log directory (a broker would find a directory that is not
  ``<topic>-<partition>`` and refuse to start).
* :func:`marked_unfinished`: an OUTDIR being written holds ``KSEG-UNFINISHED``
  until the last file is on disk, so a killed run leaves nothing that looks
  complete.  (Not a hidden directory beside OUTDIR renamed at the end: when
  OUTDIR is a partition of a log directory, Kafka refuses to start on any
  directory there that is not ``<topic>-<partition>``, hidden or not.)
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterable, Iterator
from pathlib import Path

from kseg.commands.unfinished import removed_unless_finished
from kseg.errors import Refused
from kseg.locks import holding_log_dir_locks, is_kafka_log_dir
from kseg.ops.discover import UNFINISHED_OUTPUT, expand_paths, file_kind
from kseg.segment import open_new_private
from kseg.writing import fsync_dir


def real(path: Path) -> Path:
    """``path`` with every symlink and ``..`` resolved (as far as it exists)."""
    return Path(os.path.realpath(path))


def touched_log_dirs(paths: Iterable[Path]) -> set[Path]:
    """The real log directory of every ``.log`` the inputs name or hold: the parent of its real partition directory.

    In place, files are renamed in the directory a segment's name sits in
    (a segment that is a symlink is replaced, never written through), so
    that directory's real path decides.
    """
    return {real(path.parent).parent for path in expand_paths(list(paths)) if file_kind(path) == "log"}


@contextlib.contextmanager
def in_place_locks(paths: Iterable[Path], in_place: bool) -> Iterator[None]:
    """For ``--in-place``, hold the ``.lock`` of every log directory touched for the whole run (else nothing)."""
    if not in_place:
        yield
        return
    with holding_log_dir_locks(touched_log_dirs(paths)):
        yield


# -- -o OUTDIR: where it may be, and how it appears ------------------------------------------------


def _input_dirs(paths: Iterable[Path]) -> set[Path]:
    """The real directories the inputs are: a directory itself; for a file, the directory its name is in and its target's."""
    found: set[Path] = set()
    for path in paths:
        found |= {real(path)} if path.is_dir() else {real(path.parent), real(path).parent}
    return found


def _within(path: Path, directory: Path) -> bool:
    return path == directory or directory in path.parents


def refuse_output_dir(inputs: Iterable[Path], out_dir: Path) -> None:
    """Refuse an OUTDIR inside an input (the evidence) or inside a Kafka log directory, before anything is written.

    Inside a log directory a broker finds a directory that is not
    ``<topic>-<partition>`` and refuses to start (``KafkaException: Found
    directory ..., '...' is not in the form of topic-partition``), or, for a
    log directory itself, takes what kseg writes for its own.
    """
    target = real(out_dir)
    for directory in sorted(_input_dirs(inputs)):
        if target == directory:
            raise Refused(f"{out_dir} is the input's own directory; choose an -o outside the evidence")
        if _within(target, directory):
            raise Refused(f"{out_dir} is inside the input {directory}: choose an -o outside the evidence")
    for directory in (target, *target.parents):
        if directory.is_dir() and is_kafka_log_dir(directory):
            where = "is" if directory == target else f"is inside {directory}, which is"
            raise Refused(f"{out_dir} {where} a Kafka log directory (a broker there would refuse to start, or "
                          "load what kseg writes): choose an -o outside it")


#: The file an unfinished ``-o OUTDIR`` holds: written first, removed last.  Kafka ignores it (a
#: regular file in a log directory, a file of no known kind in a partition directory); verify reports it.
UNFINISHED = UNFINISHED_OUTPUT
_UNFINISHED_TEXT = (
    "kseg was writing this directory and did not finish (it was killed, or the machine stopped).\n"
    "What is here may be incomplete: remove the directory and run the command again.\n"
)


@contextlib.contextmanager
def marked_unfinished(out_dir: Path | None) -> Iterator[None]:
    """Run the body with ``OUTDIR/KSEG-UNFINISHED`` in place; remove it (last) only when the body ends well.

    A run that raises takes away what it added, the marker included
    (:func:`~kseg.commands.unfinished.removed_unless_finished`); a run that is
    killed (``kill -9``, a power cut) leaves the marker, so its OUTDIR never
    looks complete.  Every file before it is fsynced when it is written, so
    the marker goes only after everything else is on disk.  An OUTDIR that
    already holds a marker is refused.
    """
    if out_dir is None:
        yield
        return
    marker = out_dir / UNFINISHED
    if os.path.lexists(out_dir) and not out_dir.is_dir():
        raise Refused(f"{out_dir}: not a directory")
    if os.path.lexists(marker):
        raise Refused(f"{marker} exists: a kseg run writing {out_dir} did not finish; remove it and run again")
    with removed_unless_finished(out_dir):
        out_dir.mkdir(parents=True, exist_ok=True)
        fd = open_new_private(marker, 0o644)
        with os.fdopen(fd, "w", encoding="utf-8") as note:
            note.write(_UNFINISHED_TEXT)
            note.flush()
            os.fsync(note.fileno())
        fsync_dir(out_dir)
        yield
        os.unlink(marker)
        fsync_dir(out_dir)
