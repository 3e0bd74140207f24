"""Directory listings that leave the directory's access time alone, as file reads do (O_NOATIME).

Listing a directory is a read of it: on a ``relatime`` mount the kernel moves
its access time, as it would a file's.  kseg opens the directory itself with
``O_NOATIME`` (allowed to its owner and to root, which is who runs kseg on a
broker host) and lists that descriptor; where the kernel refuses the flag
(another account's directory) the listing is an ordinary one (docs/cli.md §10).
"""

from __future__ import annotations

import os
from pathlib import Path

from kseg.segment import open_read_only


def names(directory: str | os.PathLike[str]) -> list[str]:
    """The names in ``directory`` (unsorted, as ``os.listdir``), read through an ``O_NOATIME`` descriptor."""
    fd = open_read_only(directory, directory=True)
    try:
        return os.listdir(fd)
    finally:
        os.close(fd)


def children(directory: str | os.PathLike[str]) -> list[Path]:
    """``Path(directory).iterdir()`` as a list, listed by :func:`names`."""
    return [Path(directory) / name for name in names(directory)]


def kinds(directory: str | os.PathLike[str]) -> tuple[list[str], list[str]]:
    """(names of regular files, names of directories) in ``directory``, from one ``O_NOATIME`` listing.

    ``os.scandir`` on the descriptor reads each entry's type from the listing itself, so a directory
    of thousands of partitions costs one ``getdents``, not a ``stat`` per entry (a symbolic link is
    still followed with a ``stat`` relative to the descriptor, as ``Path.is_file`` follows it).
    """
    fd = open_read_only(directory, directory=True)
    files: list[str] = []
    dirs: list[str] = []
    try:
        with os.scandir(fd) as entries:
            for entry in entries:
                if entry.is_file():
                    files.append(entry.name)
                elif entry.is_dir():
                    dirs.append(entry.name)
    finally:
        os.close(fd)
    return files, dirs
