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
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterable, Iterator
from pathlib import Path

from kseg.locks import holding_log_dir_locks
from kseg.ops.discover import expand_paths, file_kind


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
