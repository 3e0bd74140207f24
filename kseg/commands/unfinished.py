"""What a writing command leaves when it cannot finish: nothing that looks complete.

The contract (docs/cli.md): a command that fails, is refused part-way or is
interrupted removes the output it started.  :func:`atomic_write` already
removes its own temporary file; what is left to the edge is the output
*directory*: if the command created ``-o OUTDIR`` it removes it whole, and if
OUTDIR existed it removes only the entries this run added (a partition
directory, a segment and its indexes), never anything that was there before.
``--in-place`` is not covered here: there the ops keep backups and order
their renames themselves.

Also here, because every writing command wants it for its progress bar: how
many bytes of ``.log`` the inputs hold.
"""

from __future__ import annotations

import contextlib
import os
import shutil
from collections.abc import Iterable, Iterator
from pathlib import Path

from kseg.ops.discover import expand_paths, file_kind


def _first_missing(path: Path) -> Path | None:
    """The outermost directory of ``path`` that does not exist yet (what ``mkdir -p`` would create)."""
    missing = None
    for candidate in (path, *path.parents):
        if os.path.lexists(candidate):
            break
        missing = candidate
    return missing


def _remove(path: Path) -> None:
    with contextlib.suppress(OSError):
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
        else:
            path.unlink()


@contextlib.contextmanager
def removed_unless_finished(out_dir: Path | None) -> Iterator[None]:
    """Run the body; if it raises anything (Ctrl-C and SIGTERM included), take away what it added under ``out_dir``."""
    if out_dir is None:
        yield
        return
    created = _first_missing(out_dir.absolute())
    before = set(os.listdir(out_dir)) if created is None and out_dir.is_dir() else None
    try:
        yield
    except BaseException:
        if created is not None:
            _remove(created)
        elif before is not None:
            with contextlib.suppress(OSError):
                for name in set(os.listdir(out_dir)) - before:
                    _remove(out_dir / name)
        raise


def log_bytes(paths: Iterable[Path]) -> int:
    """The size of every ``.log`` the inputs name or hold (the bytes a writing command walks)."""
    total = 0
    with contextlib.suppress(OSError):
        for path in expand_paths(list(paths)):
            if file_kind(path) == "log":
                with contextlib.suppress(OSError):
                    total += path.stat().st_size
    return total
