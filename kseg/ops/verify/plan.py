"""Which files verify checks, grouped how: the arguments expanded into units of work.

A unit is what one worker verifies at once: the requested files of one
segment (so its .log is walked once for all its indexes), or one other file.
Partition directories are kept together so the cross-segment checks can run
on the driver after the units come back.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from kseg.listing import children
from kseg.ops.discover import (
    file_kind,
    is_partition_dir,
    parse_partition_dir,
    partition_dirs,
    partition_files,
)
from kseg.ops.verify.model import LoadScope, PartitionPlan, Plan, Unit
from kseg.segment import base_offset_from_name

SEGMENT_KINDS = ("log", "index", "timeindex", "txnindex")


def segment_base(path: str) -> int | None:
    """The base offset Kafka's ``offsetFromFileName`` reads from a segment file's name, or None.

    :func:`kseg.segment.base_offset_from_name` also reads a KRaft snapshot's
    ``<offset>-<epoch>`` stem; a segment file (.log, indexes, .snapshot, leftovers)
    named so is one ``Long.parseLong`` refuses, so it has no base offset here.
    """
    if "-" in os.path.basename(path).split(".", 1)[0]:
        return None
    return base_offset_from_name(path)


def _stem(path: str) -> str:
    """The name without its segment-file suffix: ``00000000000000000042`` of ``00000000000000000042.index``."""
    name = os.path.basename(path)
    return name.rsplit(".", 1)[0]


class _Planner:
    """Collects units and partitions while the arguments are expanded."""

    def __init__(self) -> None:
        self.units: list[Unit] = []
        self.partitions: list[PartitionPlan] = []
        self.missing: list[str] = []
        self.loads: list[LoadScope] = []
        self._marker: dict[Path, bool] = {}

    def add_load(self, kind: str, directory: Path, only: tuple[str, ...] | None = None, known: bool = False) -> None:
        """Ask the log-loading model about ``directory`` -- only where Kafka would load it as a partition.

        ``known``: the caller has already found it a partition directory (``is_partition_dir``)."""
        if kind == "partition" and (parse_partition_dir(directory) is None
                                    or not (known or is_partition_dir(directory))):
            return  # Kafka loads no such directory as a partition: verify says nothing about the next start
        self.loads.append(LoadScope(kind, str(directory), only))

    def add_given(self, files: list[Path]) -> None:
        """Files named one by one; the model is asked about the partition directories they are in."""
        self.add_files(files, None, explicit=True)
        by_dir: dict[Path, list[str]] = {}
        for path in files:
            by_dir.setdefault(path.parent, []).append(str(path))
        for directory, paths in by_dir.items():
            self.add_load("partition", directory, tuple(paths))

    def add_files(self, files: list[Path], directory: str | None, explicit: bool = False) -> list[int]:
        """Group the files of each segment into one unit; other files get a unit each."""
        units = self.units
        added: list[int] = []
        segments: dict[tuple[str, str], int] = {}
        for path in files:
            kind = file_kind(path)
            text = str(path)
            if kind in SEGMENT_KINDS:
                key = (str(path.parent), _stem(text))
                if key in segments:
                    i = segments[key]
                    old = units[i]
                    units[i] = Unit("segment", (*old.paths, text), old.log, directory, old.order, old.explicit)
                    continue
                log = path if kind == "log" else path.with_name(_stem(text) + ".log")
                log_text = str(log) if log.is_file() else None
                segments[key] = len(units)
                unit = Unit("segment", (text,), log_text, directory, len(units), explicit)
            else:
                unit = Unit(kind, (text,), None, directory, len(units), explicit)
            added.append(len(units))
            units.append(unit)
        return added

    def add_partition(self, directory: Path) -> None:
        """A directory ``is_partition_dir`` has said is a partition: its files, its units, its load."""
        files = partition_files(directory)
        units = self.add_files(files, str(directory))
        self._ask_recovery_prefixes(units, {str(f) for f in files}, directory)
        self.partitions.append(PartitionPlan(str(directory), [str(f) for f in files], units))
        self.add_load("partition", directory, known=True)

    def _unclean(self, log_dir: Path) -> bool:
        """No clean-shutdown marker in ``log_dir``: looked up once per log directory, not per partition."""
        from kseg.recovery.loading.logdir import CLEAN_SHUTDOWN  # a directory: the model loads it anyway

        found = self._marker.get(log_dir)
        if found is None:
            found = self._marker[log_dir] = not (log_dir / CLEAN_SHUTDOWN).exists()
        return found

    def _ask_recovery_prefixes(self, added: list[int], files: set[str], directory: Path) -> None:
        """Mark the segments the next start is likely to recover, so their walk runs recover's loop too.

        The load model then goes on from that loop instead of walking the .log again
        (kseg.recovery.clean_prefix): a .log without its .index (recovered while the files are
        loaded), and the last .log of a log directory without the clean-shutdown marker (recovered
        from the recovery point, which is most often in the last segment).  Other segments the
        model recovers are walked again, as before; the marks only bound what the walks keep.
        """
        units = self.units
        logs = [i for i in added if units[i].kind == "segment" and units[i].log in units[i].paths]
        if not logs:
            return
        unclean = self._unclean(directory.parent)
        last = max(logs, key=lambda i: segment_base(units[i].paths[0]) or -1)
        for i in logs:
            log = units[i].log
            assert log is not None
            if log[: -len(".log")] + ".index" not in files or (unclean and i == last):
                units[i] = units[i]._replace(recovery_prefix=True)

    def add_directory(self, path: Path) -> None:
        """A partition directory, or a log directory: each partition in it, then its own files."""
        if is_partition_dir(path):
            self.add_partition(path)
            return
        self.add_load("log-dir", path)
        for part in partition_dirs(path):
            self.add_partition(part)
        self.add_files(sorted(p for p in children(path) if p.is_file()), None)


def plan_paths(paths: Sequence[str | os.PathLike[str]]) -> Plan:
    """Expand the arguments into units, keeping partition directories together.

    Files given one by one are verified as given; a partition directory means
    all its files plus the cross-segment checks; a log directory means each
    partition directory in it (by topic, then partition) and its own files.
    """
    planner = _Planner()
    given: list[Path] = []  # consecutive file arguments: grouped, so a .log and its .index share one walk
    for raw in [*paths, None]:
        path = Path(raw) if raw is not None else None
        if path is not None and path.is_file():
            given.append(path)
            continue
        if given:
            planner.add_given(given)
            given = []
        if path is None:
            break
        if path.is_dir():
            planner.add_directory(path)
        else:
            planner.missing.append(str(path))
    return Plan(planner.units, planner.partitions, planner.missing, tuple(planner.loads))


def unit_bytes(unit: Unit) -> int:
    """The bytes a unit reads (its files and its .log), for progress and for dealing units to workers."""
    return sum(_file_size(path) for path in {*unit.paths, *([unit.log] if unit.log else [])})


def _file_size(path: str) -> int:
    try:
        return os.stat(path).st_size
    except OSError:
        return 0
