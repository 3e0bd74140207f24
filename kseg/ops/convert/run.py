"""``kseg convert``: rewrite a segment, or a partition's segments, in another magic and/or codec.

This module is the file operation; the rest of the command is split by
responsibility: :mod:`~kseg.ops.convert.target` (the target and Kafka's
refusals), :mod:`~kseg.ops.convert.source` (reading the input),
:mod:`~kseg.ops.convert.batches` (the per-batch conversion, built with
:mod:`~kseg.ops.convert.build`), :mod:`~kseg.ops.convert.txn` (what becomes
of transactions) and :mod:`~kseg.ops.convert.tally` (the counts).

* Input: one ``.log`` segment or one partition directory (its segments in
  Kafka's order).  Inputs are only read, through :class:`~kseg.segment.MappedFile`.
* Output: ``OUTDIR/<same name>.log`` written to a temporary, its
  ``.index``/``.timeindex`` rebuilt from the written bytes by
  :func:`kseg.recovery.indexes.build_indexes` (Kafka's recovery rules) and a
  ``.txnindex`` when an aborted transaction survives (magic 2 only); the
  indexes are renamed in before the ``.log`` (:mod:`kseg.recovery.segment_files`).  An
  existing output, or OUTDIR being the input's own directory, is refused
  before anything is read.  If anything is refused half way, every file this
  run wrote is removed again: OUTDIR is left as it was.
* Damage: a batch that fails its CRC, cannot be decoded, or a tail that is not
  a whole batch stops the conversion (nothing is written) unless
  ``skip_corrupt``; then the damage is skipped with :func:`kseg.format.scan.scan`
  (which resynchronises past it) and reported.
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass, field
from itertools import takewhile
from pathlib import Path

from kseg.errors import KsegError
from kseg.index import MAX_SEGMENT_SIZE, refuse_oversized
from kseg.ops.convert.batches import Converter
from kseg.ops.convert.source import Skipped, first_base_offset, iter_source
from kseg.ops.convert.tally import Tally
from kseg.ops.convert.target import DEFAULT_MAX_MESSAGE_BYTES, ConvertRefused, Target, check_target
from kseg.ops.convert.txn import TxnDeliveries
from kseg.ops.discover import file_kind, is_partition_dir, segment_logs
from kseg.recovery.indexes import DEFAULT_INDEX_INTERVAL_BYTES, IndexBuild, build_indexes
from kseg.recovery.producer_state import TxnTracker, replay_segments
from kseg.recovery.segment_files import SegmentFiles
from kseg.segment import MappedFile, base_offset_from_name, sibling

OUTPUT_KINDS = ("log", "index", "timeindex", "txnindex")


@dataclass(frozen=True, slots=True)
class SegmentResult:
    """One converted segment."""

    source: Path
    output: Path
    base_offset: int
    size_in: int  # the input file's size
    tally: Tally
    skipped: tuple[Skipped, ...]
    index_entries: int
    timeindex_entries: int
    txnindex_entries: int  # 0: no .txnindex written
    index_note: str | None = None  # why no indexes were written, if so


@dataclass(frozen=True, slots=True)
class ConvertReport:
    """A whole run: the target, each segment, and what became of transactions."""

    target: Target
    out_dir: Path
    segments: tuple[SegmentResult, ...]
    txn: TxnDeliveries = field(default_factory=TxnDeliveries)

    @property
    def skipped_any(self) -> bool:
        """Damaged input was left out (``--skip-corrupt``): exit 1."""
        return any(s.skipped for s in self.segments)

    def totals(self) -> Tally:
        total = Tally()
        for segment in self.segments:
            total.add(segment.tally)
        return total


# -- choosing inputs and outputs -------------------------------------------------


def select_logs(path: Path) -> list[Path]:
    """The segments ``path`` means: itself (a .log) or a partition directory's, by base offset."""
    if path.is_dir():
        if not is_partition_dir(path):
            raise ConvertRefused(
                f"{path}: not a partition directory (convert takes one .log or one partition directory)"
            )
        logs = segment_logs(path)
        if not logs:
            raise ConvertRefused(f"{path}: no .log segments found")
        return logs
    if file_kind(path) != "log":
        raise ConvertRefused(f"{path}: not a .log segment or a partition directory")
    if not path.is_file():  # a FIFO or a device would block or mislead the walk
        raise ConvertRefused(f"{path}: not a regular file")
    return [path]


def _refuse_outputs(logs: list[Path], out_dir: Path) -> None:
    """Nothing is replaced, and the input directory is never the output."""
    if out_dir.exists() and any(out_dir.resolve() == log.parent.resolve() for log in logs):
        raise ConvertRefused(f"{out_dir} is the input's own directory; write the conversion somewhere else")
    for log in logs:
        for kind in OUTPUT_KINDS:
            target = sibling(out_dir / log.name, kind)
            if target.exists():
                raise ConvertRefused(f"{target} exists; refusing to replace it")


# -- one segment ---------------------------------------------------------------------


class _Written:
    """The files this run created, removed again if the run is refused half way."""

    def __init__(self, out_dir: Path) -> None:
        self.paths: list[Path] = []
        self.dirs: list[Path] = []  # directories mkdir will create, deepest first
        missing = out_dir.absolute()
        while not missing.exists() and missing != missing.parent:
            self.dirs.append(missing)
            missing = missing.parent

    def undo(self) -> None:
        for path in reversed(self.paths):
            with contextlib.suppress(FileNotFoundError):
                path.unlink()
        for directory in self.dirs:
            with contextlib.suppress(OSError):
                directory.rmdir()


def _write_log(
    log: Path, files: SegmentFiles, target: Target, txn: TxnDeliveries, skip_corrupt: bool
) -> tuple[Tally, list[Skipped], int]:
    """Convert ``log`` into the new ``.log``'s temporary; returns (tally, skipped, input size)."""
    tally, skipped = Tally(), []
    converter = Converter(target, tally, txn)
    with MappedFile(log) as mapped:
        size = mapped.size
        try:
            with files.log_file(like=None) as out:
                for item in iter_source(mapped, skip_corrupt, target.max_batch_bytes):
                    if isinstance(item, Skipped):
                        skipped.append(item)
                        continue
                    for chunk in converter.feed(*item):
                        out.write(chunk)
                        tally.bytes_out += len(chunk)
                    if tally.bytes_out > MAX_SEGMENT_SIZE:  # Kafka opens no larger segment: refuse now
                        refuse_oversized(tally.bytes_out, item[0].position)
                for chunk in converter.finish():
                    out.write(chunk)
                    tally.bytes_out += len(chunk)
        except KsegError as err:
            raise err.with_path(str(log))
    return tally, skipped, size


def _write_indexes(
    files: SegmentFiles, base_offset: int | None, tracker: TxnTracker, interval: int, written: _Written
) -> tuple[int, IndexBuild, str | None]:
    """Build the output's indexes from its written bytes (Kafka's recovery rules) and hand them to ``files``."""
    assert files.log_temp is not None
    with MappedFile(files.log_temp) as mapped:
        if base_offset is None:  # a name Kafka would not give: index relative to the first batch
            base_offset = first_base_offset(mapped)
        build = build_indexes(mapped.buf, base_offset, index_interval_bytes=interval, txn=tracker)
    if build.failure is not None:
        return base_offset, build, f"{build.failure.exception}: {build.failure.message}"
    indexes = {"timeindex": build.time_index, "index": build.offset_index}
    if build.aborted:
        indexes["txnindex"] = build.txn_index_bytes()
    for kind, data in indexes.items():
        written.paths.append(sibling(files.log_dest, kind))
        files.index(kind, data, like=None)
    return base_offset, build, None


def convert_segment(
    log: Path,
    out_dir: Path,
    target: Target,
    *,
    txn: TxnDeliveries,
    tracker: TxnTracker,
    skip_corrupt: bool,
    index_interval_bytes: int,
    written: _Written,
) -> SegmentResult:
    """Convert one segment into ``out_dir`` and index it.

    The new ``.log`` is written to a temporary and indexed from it; its
    indexes land first and the ``.log`` last (:class:`~kseg.recovery.segment_files.SegmentFiles`),
    so a ``.log`` in OUTDIR never lacks its indexes.
    """
    out_log = out_dir / log.name
    named_base = base_offset_from_name(log)
    with SegmentFiles(out_log, in_place=False) as files:
        tally, skipped, size = _write_log(log, files, target, txn, skip_corrupt)
        base, build, note = _write_indexes(files, named_base, tracker, index_interval_bytes, written)
        written.paths.append(out_log)
        files.commit()
    entries = (0, 0, 0) if note else (len(build.offset_entries), len(build.time_entries), len(build.aborted))
    return SegmentResult(log, out_log, base, size, tally, tuple(skipped), *entries, index_note=note)


# -- the run ---------------------------------------------------------------------------


def _earlier_producer_state(log: Path, max_batch_bytes: int) -> TxnTracker:
    """Transactions begun in earlier segments of the input's directory (for the output's .txnindex)."""
    mine = base_offset_from_name(log)
    if mine is None:
        return TxnTracker(max_batch_bytes)

    def earlier(segment: Path) -> bool:
        base = base_offset_from_name(segment)
        return base is not None and base < mine

    return replay_segments(takewhile(earlier, segment_logs(log.parent)), max_batch_bytes=max_batch_bytes)


def convert_path(
    path: str | os.PathLike[str],
    out_dir: str | os.PathLike[str],
    target: Target,
    *,
    skip_corrupt: bool = False,
    index_interval_bytes: int = DEFAULT_INDEX_INTERVAL_BYTES,
) -> ConvertReport:
    """Convert a .log or a partition directory into ``out_dir``; see the module docstring.

    Raises :class:`ConvertRefused` (or another :class:`~kseg.errors.KsegError`
    for damaged input without ``skip_corrupt``) with nothing left in ``out_dir``.
    """
    source, out = Path(path), Path(out_dir)
    check_target(target)
    logs = select_logs(source)
    _refuse_outputs(logs, out)
    cap = target.max_batch_bytes
    tracker = _earlier_producer_state(logs[0], cap) if source.is_file() else TxnTracker(cap)
    txn = TxnDeliveries()
    written = _Written(out)
    try:
        out.mkdir(parents=True, exist_ok=True)
        results = [
            convert_segment(
                log,
                out,
                target,
                txn=txn,
                tracker=tracker,
                skip_corrupt=skip_corrupt,
                index_interval_bytes=index_interval_bytes,
                written=written,
            )
            for log in logs
        ]
    except BaseException:
        written.undo()
        raise
    return ConvertReport(target, out, tuple(results), txn)


__all__ = [
    "DEFAULT_MAX_MESSAGE_BYTES",
    "ConvertRefused",
    "ConvertReport",
    "SegmentResult",
    "Skipped",
    "Target",
    "convert_path",
    "convert_segment",
    "select_logs",
]
