"""The file side of ``kseg reindex``: compare, write, back up -- never touching an input unasked.

Built on the recovery core (:func:`kseg.recovery.indexes.build_indexes`,
:func:`kseg.recovery.index_compare.compare_index`).  Modes, per segment:

* check (``--check``): compare the rebuilt bytes with the files beside the
  .log; nothing is created, locked or modified.
* output (``-o DIR``): write ``<base>.index``/``.timeindex`` (and ``.txnindex``
  when a transaction was aborted) into DIR; an existing output, or DIR being the input's directory, is refused.
* in-place (``--in-place``): replace only the files that differ, in the order
  of :class:`kseg.recovery.segment_files.SegmentFiles` (``.index`` out first, in last), each old file kept as a backup
  (:func:`backup_path`); new files take the old file's mode and owner.
* create (no option): write beside the .log only the index files that are
  missing; an existing one is left as it is (``kept``), and its comparison
  with the rebuild says whether ``--in-place`` would change it.  So
  ``kseg reindex LD/p-0 LD/q-0`` creates q-0's missing ``.index`` although
  p-0's exist.

Kafka creates ``.txnindex`` lazily, so none is written when no transaction
was aborted; recovery's reset leaves an existing one empty, so in place a
stale one becomes a zero-byte file.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from kseg.errors import KsegError, Refused
from kseg.format.compression import DEFAULT_MAX_DECOMPRESSED
from kseg.locks import refuse_in_place_while_locked
from kseg.ops.discover import file_kind, is_partition_dir, partition_dirs, segment_logs
from kseg.recovery.index_compare import ENTRY_SIZES, INDEX_KINDS, Difference, compare_index, index_bytes
from kseg.recovery.indexes import (
    DEFAULT_INDEX_INTERVAL_BYTES,
    DEFAULT_MAX_INDEX_SIZE,
    IndexBuild,
    build_indexes,
)
from kseg.recovery.producer_state import TxnTracker, replay_segments
from kseg.recovery.segment_files import SegmentFiles
from kseg.segment import MappedFile, base_offset_from_name, read_small_file, sibling
from kseg.writing import backup_path

# -- the file operation ------------------------------------------------------------

#: What happened to one index file (``FileOutcome.action``).
CREATED = "created"  # written where there was no file
REPLACED = "replaced"  # an existing file was replaced, after a backup
UNCHANGED = "unchanged"  # the existing file already holds exactly the rebuild
NOT_WRITTEN = "not-written"  # no file is needed: a .txnindex without aborted transactions
CHECKED = "checked"  # --check: compared only
SKIPPED = "skipped"  # recovery fails on this segment: Kafka writes nothing, neither do we
KEPT = "kept"  # create mode: the file exists and is left as it is

MODE_CHECK, MODE_OUTPUT, MODE_IN_PLACE, MODE_CREATE = "check", "output", "in-place", "create"
REFUSE_HINT = "use --check to compare, --in-place to replace it keeping a backup, or -o DIR"


@dataclass(frozen=True, slots=True)
class FileOutcome:
    """One of a segment's three index files: the rebuild, the file beside the .log, and what was done."""

    kind: str  # index | timeindex | txnindex
    entries: int  # entries in the rebuild
    existing: Path  # the file beside the .log the rebuild is compared with
    existed: bool
    difference: Difference | None  # against ``existing``; None: identical (or no .txnindex needed)
    action: str
    target: Path | None = None  # where the rebuild was written
    backup: Path | None = None  # where the replaced file was kept

    @property
    def same(self) -> bool:
        return self.difference is None


@dataclass(frozen=True, slots=True)
class Report:
    """The outcome of reindexing one segment."""

    log: Path
    build: IndexBuild
    files: tuple[FileOutcome, ...]
    mode: str

    @property
    def differs(self) -> bool:
        """Some existing index file is not what Kafka's recovery would write."""
        return any(not f.same for f in self.files)

    @property
    def problems(self) -> bool:
        """The .log has bytes recovery would cut, or recovery fails on it."""
        return self.build.truncated_bytes > 0 or self.build.failure is not None


class ReindexRefused(Refused):
    """A request kseg will not carry out (an output exists, options conflict): a usage error."""


def _read_existing(path: Path) -> bytes | None:
    return read_small_file(path) if path.is_file() else None


def _mode(out_dir: object, in_place: bool, check: bool) -> str:
    if sum((out_dir is not None, in_place, check)) > 1:
        raise ReindexRefused("--check, --output-dir and --in-place exclude each other")
    if check:
        return MODE_CHECK
    if out_dir is not None:
        return MODE_OUTPUT
    return MODE_IN_PLACE if in_place else MODE_CREATE


def _refuse_input_dir(target_dir: Path, directory: Path) -> None:
    """``-o`` never writes into an input directory (as recover and convert refuse)."""
    if target_dir.exists() and target_dir.resolve() == directory.resolve():
        raise ReindexRefused(
            f"{target_dir} is the input's own directory; use --in-place (keeps backups) or another -o"
        )


def _refuse_existing(target_dir: Path, log: Path) -> None:
    for kind in INDEX_KINDS:
        target = sibling(target_dir / log.name, kind)
        if target.exists():
            raise ReindexRefused(f"{target} exists; refusing to replace it ({REFUSE_HINT})")


def reindex_segment(
    log_path: str | os.PathLike[str],
    out_dir: str | os.PathLike[str] | None = None,
    in_place: bool = False,
    check: bool = False,
    *,
    index_interval_bytes: int = DEFAULT_INDEX_INTERVAL_BYTES,
    txn: TxnTracker | None = None,
    max_index_size: int = DEFAULT_MAX_INDEX_SIZE,
    max_batch_bytes: int = DEFAULT_MAX_DECOMPRESSED,
) -> Report:
    """Rebuild one segment's indexes and write them -- or, with ``check``, only compare.

    * ``check``: compare with the files beside the .log; nothing is written.
    * ``out_dir``: write ``<base>.index`` and ``<base>.timeindex`` (and
      ``<base>.txnindex`` when a transaction was aborted) there; the input
      directory is not touched.  An existing output file is refused.
    * ``in_place``: replace the files beside the .log that differ, keeping
      each old one as a backup (:func:`backup_path`); identical ones are left alone.
    * none of these: create the files missing beside the .log; existing ones are kept as they are.

    ``txn`` is the producer state at this segment's base offset (default:
    nothing open, read under ``max_batch_bytes``).  Nothing is written for a
    segment on which Kafka's recovery would fail.  A control batch past the read
    cap (the tracker's) raises LimitExceeded: one error line, exit 2, nothing written.
    """
    log = Path(log_path)
    mode = _mode(out_dir, in_place, check)
    base_offset = base_offset_from_name(log)
    if base_offset is None:
        raise ReindexRefused(
            f"{log}: cannot tell the base offset from the file name (expected <20 digits>.log)"
        )
    target_dir = Path(out_dir) if out_dir is not None else log.parent
    if mode == MODE_OUTPUT:
        _refuse_input_dir(target_dir, log.parent)
    if mode == MODE_OUTPUT:
        _refuse_existing(target_dir, log)
    if mode in (MODE_IN_PLACE, MODE_CREATE):  # both write beside the .log, in a broker's directory
        refuse_in_place_while_locked(log.parent.resolve().parent)
    try:
        with MappedFile(log, readable=True) as mapped:
            build = build_indexes(
                mapped.buf,
                base_offset,
                index_interval_bytes=index_interval_bytes,
                txn=txn if txn is not None else TxnTracker(max_batch_bytes),
                max_index_size=max_index_size,
                read_into=mapped.read_into,
            )
    except KsegError as err:
        raise err.with_path(str(log))
    compared = [_compare(kind, log, build) for kind in INDEX_KINDS]
    if mode == MODE_CHECK:
        return Report(log, build, tuple(outcome for outcome, _, _ in compared), mode)
    if build.failure is not None:
        return Report(log, build, tuple(replace(outcome, action=SKIPPED) for outcome, _, _ in compared), mode)
    return Report(log, build, _write_set(log, target_dir / log.name, mode, compared), mode)


def _compare(kind: str, log: Path, build: IndexBuild) -> tuple[FileOutcome, bytes | None, bytes]:
    """The file beside the .log against the rebuild: (outcome so far, old bytes, new bytes)."""
    existing = sibling(log, kind)
    old = _read_existing(existing)
    new = index_bytes(build, kind)
    difference = compare_index(kind, old, new, build.base_offset)
    outcome = FileOutcome(kind, len(new) // ENTRY_SIZES[kind], existing, old is not None, difference, CHECKED)
    return outcome, old, new


def _write_set(
    log: Path, dest: Path, mode: str, compared: list[tuple[FileOutcome, bytes | None, bytes]]
) -> tuple[FileOutcome, ...]:
    """Write the segment's new indexes together (:class:`~kseg.recovery.segment_files.SegmentFiles`).

    In place, the stale ``.index`` leaves first and the new one comes last, so
    a kill leaves the old set, the new set, or no ``.index`` (Kafka rebuilds all).
    """
    with SegmentFiles(dest, in_place=mode == MODE_IN_PLACE) as files:
        planned = [_plan_file(outcome, old, new, mode, log, sibling(dest, outcome.kind), files)
                   for outcome, old, new in compared]
        backups = files.commit()
    return tuple(replace(o, backup=backups.get(o.kind)) if o.action == REPLACED else o for o in planned)


def _plan_file(
    outcome: FileOutcome, old: bytes | None, new: bytes, mode: str, log: Path, target: Path, files: SegmentFiles
) -> FileOutcome:
    kind, existing = outcome.kind, outcome.existing
    if mode == MODE_IN_PLACE:
        if outcome.difference is None:
            if old is not None:  # left as it is (an identical .index leaves and comes back while others change)
                files.index(kind, old, like=existing, changed=False)
            return replace(outcome, action=UNCHANGED if old is not None else NOT_WRITTEN)
        # an emptied .txnindex stays as a zero-byte file, as Kafka's reset leaves it
        files.index(kind, new, like=existing if old is not None else log)
        return replace(outcome, action=REPLACED if old is not None else CREATED, target=target)
    if mode == MODE_CREATE and old is not None:
        return replace(outcome, action=KEPT)  # only what is missing is created
    if kind == "txnindex" and not new:
        return replace(outcome, action=NOT_WRITTEN)
    files.index(kind, new, like=log if mode == MODE_CREATE else None)
    return replace(outcome, action=CREATED, target=target)


# -- many segments: partitions and log directories ------------------------------


@dataclass(frozen=True, slots=True)
class Selection:
    """The segments chosen in one directory, by base offset."""

    directory: Path
    logs: tuple[Path, ...]


def select_segments(paths: Sequence[Path]) -> tuple[list[Selection], bool]:
    """The .log files meant by ``paths``, grouped by directory, and whether ``-o`` nests per partition.

    A .log file selects itself; a partition directory its segments; a log
    directory the segments of every partition under it.  Outputs nest as
    ``OUTDIR/<partition dir>/`` when a log directory or several directories are involved.
    """
    chosen: dict[Path, set[Path]] = {}
    nest = False
    for path in paths:
        if path.is_dir():
            dirs = [path] if is_partition_dir(path) else partition_dirs(path)
            nest = nest or not is_partition_dir(path)
            if not any(segment_logs(d) for d in dirs):
                raise ReindexRefused(f"{path}: no .log segments found")
            for directory in dirs:
                chosen.setdefault(directory, set()).update(segment_logs(directory))
        elif file_kind(path) == "log":
            if not path.is_file():  # a FIFO or device would block or mislead the walk
                raise ReindexRefused(f"{path}: not a regular file")
            chosen.setdefault(path.parent, set()).add(path)
        else:
            raise ReindexRefused(f"{path}: not a .log segment, a partition directory or a log directory")
    selections = [
        Selection(directory, tuple(sorted(logs, key=_segment_order)))
        for directory, logs in chosen.items()
        if logs
    ]
    return selections, nest or len(selections) > 1


def _segment_order(path: Path) -> tuple[int, str]:
    return (base_offset_from_name(path) or 0, path.name)


def reindex_paths(
    paths: Sequence[Path],
    *,
    out_dir: Path | None = None,
    in_place: bool = False,
    check: bool = False,
    index_interval_bytes: int = DEFAULT_INDEX_INTERVAL_BYTES,
    max_index_size: int = DEFAULT_MAX_INDEX_SIZE,
    max_batch_bytes: int = DEFAULT_MAX_DECOMPRESSED,
) -> Iterator[Report]:
    """Reindex every selected segment, partition by partition, carrying producer state across segments.

    Refusals (an output exists, two inputs would write the same output) are
    raised for all segments before anything is read or written.  Earlier
    segments of a directory that were not selected are replayed for their
    transactions only, so a transaction that began before the selected
    segment is still found.  ``max_batch_bytes`` is the read cap (``--max-batch-bytes``)
    for the control batches decompressed on the way.
    """
    mode = _mode(out_dir, in_place, check)
    selections, nest = select_segments(paths)
    targets = {s.directory: _target_dir(s.directory, out_dir, nest) for s in selections}
    if mode == MODE_OUTPUT:
        for selection in selections:
            _refuse_input_dir(targets[selection.directory], selection.directory)
    if mode == MODE_OUTPUT:
        _refuse_outputs(selections, targets)
    if mode in (MODE_IN_PLACE, MODE_CREATE):  # both write beside the .log, in a broker's directory
        for selection in selections:
            refuse_in_place_while_locked(selection.directory.resolve().parent)
    for selection in selections:
        yield from _reindex_directory(
            selection,
            targets[selection.directory] if out_dir is not None else None,
            in_place=in_place,
            check=check,
            index_interval_bytes=index_interval_bytes,
            max_index_size=max_index_size,
            max_batch_bytes=max_batch_bytes,
        )


def _target_dir(directory: Path, out_dir: Path | None, nest: bool) -> Path:
    """Beside the .log, in OUTDIR, or in OUTDIR/<partition dir>."""
    if out_dir is None:
        return directory
    return out_dir / directory.name if nest else out_dir


def _refuse_outputs(selections: list[Selection], targets: dict[Path, Path]) -> None:
    written: dict[Path, Path] = {}
    for selection in selections:
        for log in selection.logs:
            _refuse_existing(targets[selection.directory], log)
            for kind in INDEX_KINDS:
                target = sibling(targets[selection.directory] / log.name, kind)
                if target in written:
                    raise ReindexRefused(f"{log} and {written[target]} would both write {target}")
                written[target] = log


def _reindex_directory(
    selection: Selection,
    out_dir: Path | None,
    *,
    in_place: bool,
    check: bool,
    index_interval_bytes: int,
    max_index_size: int,
    max_batch_bytes: int,
) -> Iterator[Report]:
    tracker = TxnTracker(max_batch_bytes)
    wanted = set(selection.logs)
    last = _segment_order(selection.logs[-1])
    if out_dir is not None:
        out_dir.mkdir(parents=True, exist_ok=True)
    for log in segment_logs(selection.directory):
        if _segment_order(log) > last:
            break
        if log not in wanted:
            replay_segments([log], tracker)
            continue
        yield reindex_segment(
            log,
            out_dir,
            in_place,
            check,
            index_interval_bytes=index_interval_bytes,
            txn=tracker,
            max_index_size=max_index_size,
        )


__all__ = [
    "CHECKED",
    "CREATED",
    "KEPT",
    "NOT_WRITTEN",
    "REPLACED",
    "SKIPPED",
    "UNCHANGED",
    "FileOutcome",
    "ReindexRefused",
    "Report",
    "Selection",
    "backup_path",
    "reindex_paths",
    "reindex_segment",
    "select_segments",
]
