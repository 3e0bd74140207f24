"""Which files a PATH argument means: a file, a partition directory, or a whole log directory.

Kafka names a partition directory ``<topic>-<partition>`` and the files in it
by base offset (20 digits) and suffix.  Commands accept any mix of files and
directories; directories expand to their files in the order Kafka loads them:
partitions by topic then partition number, files by base offset then suffix.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from kseg.errors import KsegError
from kseg.listing import children, kinds
from kseg.segment import base_offset_from_name, check_regular

#: Kinds of file, by name.  Order within one base offset follows this tuple.
SEGMENT_SUFFIXES = (".log", ".index", ".timeindex", ".txnindex", ".snapshot")
CHECKPOINT_SUFFIX = ".checkpoint"
TEMP_SUFFIXES = (".deleted", ".cleaned", ".swap")
PLAIN_FILES = (
    "leader-epoch-checkpoint",
    "partition.metadata",
    "recovery-point-offset-checkpoint",
    "replication-offset-checkpoint",
    "log-start-offset-checkpoint",
    "cleaner-offset-checkpoint",
    "meta.properties",
    "quorum-state",
)

_PARTITION_DIR = re.compile(r"^(?P<topic>.+)-(?P<partition>\d+)(?:\.[0-9a-f]{32}-(?:delete|future|stray))?$")
_OFFSET_NAME = re.compile(r"^(?P<offset>\d{20})(?:-(?P<epoch>\d{10}))?(?P<suffix>\..+)$")


@dataclass(frozen=True, slots=True)
class PartitionName:
    """A partition directory's name, ``<topic>-<partition>``, as parsed."""

    topic: str
    partition: int


def parse_partition_dir(path: Path) -> PartitionName | None:
    """``<topic>-<partition>`` (split at the last ``-``), or None for other names."""
    match = _PARTITION_DIR.match(path.name)
    if not match:
        return None
    return PartitionName(match["topic"], int(match["partition"]))


#: The file ``recover -o`` and ``convert -o`` keep in OUTDIR until their last file is on disk
#: (kseg.commands.paths): found anywhere, it says a run was killed part-way.
UNFINISHED_OUTPUT = "KSEG-UNFINISHED"


def file_kind(path: Path) -> str:
    """log | index | timeindex | txnindex | snapshot | checkpoint | temp | <plain file name> | unknown."""
    return _name_kind(path.name)


def _name_kind(name: str) -> str:
    """:func:`file_kind` of a bare file name."""
    if name in PLAIN_FILES:
        return name
    if name.endswith(TEMP_SUFFIXES):
        return "temp"
    if name.endswith(CHECKPOINT_SUFFIX):
        return "checkpoint"
    for suffix in SEGMENT_SUFFIXES:
        if name.endswith(suffix):
            return suffix[1:]
    return "unknown"


def _file_order(path: Path) -> tuple:
    match = _OFFSET_NAME.match(path.name)
    if match and match["suffix"] in SEGMENT_SUFFIXES:
        return (0, int(match["offset"]), SEGMENT_SUFFIXES.index(match["suffix"]), path.name)
    if match:
        return (1, int(match["offset"]), 0, path.name)
    return (2, 0, 0, path.name)


#: Files only a log directory's root holds: KRaft's bootstrap snapshot and the broker's identity.
LOG_DIR_ONLY_FILES = ("bootstrap.checkpoint", "meta.properties")


def _holds_segments(directory: Path) -> bool:
    return _segment_files(kinds(directory)[0])


def _segment_files(files: Iterable[str]) -> bool:
    """Any of these file names a segment (``.log``) or a checkpoint a partition keeps."""
    return any(_name_kind(name) in ("log", "checkpoint") and name not in LOG_DIR_ONLY_FILES for name in files)


def is_partition_dir(path: Path) -> bool:
    """A directory holding segment files, or named ``<topic>-<partition>`` with no partitions inside.

    The second test matters because brokers' log directories are often named
    like partitions (``kafka-logs-0``, ``kafka-logs-1``): a directory whose
    subdirectories hold segments is a log directory, whatever its name.  So is
    one holding ``meta.properties`` or KRaft's ``bootstrap.checkpoint`` (a
    ``.checkpoint``, but only ever at a log directory's root).
    """
    files, dirs = kinds(path)  # one listing for the three tests
    if any(name in LOG_DIR_ONLY_FILES for name in files):
        return False
    if _segment_files(files):
        return True
    if any(_holds_segments(path / sub) for sub in dirs):
        return False
    return parse_partition_dir(path) is not None


def partition_files(directory: Path) -> list[Path]:
    """The files of one partition directory in Kafka's load order."""
    return sorted((directory / name for name in kinds(directory)[0]), key=_file_order)


def _partition_order(path: Path) -> tuple:
    name = parse_partition_dir(path)
    return (name.topic, name.partition) if name else (path.name, -1)


def partition_dirs(log_dir: Path) -> list[Path]:
    """Partition directories under a log directory, by topic then partition number."""
    dirs = [p for p in (log_dir / name for name in kinds(log_dir)[1]) if is_partition_dir(p)]
    return sorted(dirs, key=_partition_order)


def expand_paths(paths: list[Path]) -> list[Path]:
    """Files meant by ``paths``: files as given, directories expanded in Kafka's order."""
    out: list[Path] = []
    for path in paths:
        if path.is_dir():
            if is_partition_dir(path):
                out.extend(partition_files(path))
            else:
                for part in partition_dirs(path):
                    out.extend(partition_files(part))
                out.extend(sorted(p for p in children(path) if p.is_file()))
        else:
            out.append(path)
    return out


def segment_logs(directory: Path) -> list[Path]:
    """The .log segments of a directory, by base offset (Kafka's load order)."""
    files = partition_files(directory)
    return [p for p in files if file_kind(p) == "log" and base_offset_from_name(p) is not None]


class NotAKafkaFile(KsegError):
    """A file named on the command line is no kind of file a Kafka broker writes: an error, not a finding."""


def check_named_inputs(paths: Iterable[Path], known: Callable[[Path], bool] = lambda p: file_kind(p) != "unknown") -> None:
    """Refuse, before anything is read, a named input that is not a directory or a Kafka file.

    A FIFO, device or socket raises :class:`~kseg.segment.NotARegularFile`
    (opening a FIFO would block); a regular file whose name is no kind
    ``known`` accepts raises :class:`NotAKafkaFile`.  Files found inside a
    directory are not checked here: commands list or skip those as before.
    """
    for path in paths:
        try:
            mode = os.stat(path).st_mode
        except OSError:
            continue  # missing or unreadable: the reader says so, naming the file
        if stat.S_ISDIR(mode):
            continue
        check_regular(path, mode)
        if not known(path):
            raise NotAKafkaFile(
                "not a Kafka file (a segment .log, .index, .timeindex, .txnindex, .snapshot, .checkpoint, "
                "or a checkpoint or metadata file by Kafka's name)",
                path=str(path),
            )
