"""What Kafka 4.3.0 keeps of a partition after its next start, written into ``-o OUTDIR`` (the default mode).

The loading model (:mod:`kseg.recovery.loading`) lists every change the
load makes as an :class:`~kseg.recovery.loading.Action` in order; replaying
those actions on the directory's listing (:func:`kafka_files`) gives the
files Kafka keeps, each as "the first ``size`` bytes of this input file" or
"written by Kafka".  :func:`write_kept_segments` writes that set:

* a ``.log`` Kafka keeps -- the first ``size`` bytes of its source, which is
  the input ``.log`` (cut where Kafka's recovery cuts it; whole, damage and
  all, where Kafka does not recover it: clean shutdown, below the recovery
  point) or a ``.swap`` Kafka renames over the segments it replaces (R2.2-R2.4);
  an empty ``.log`` Kafka creates (R4.6, after R8.2 deleted every segment);
* its indexes: rebuilt by Kafka's recovery rules (:mod:`kseg.recovery.indexes`)
  where Kafka recovers the segment or writes the index itself; otherwise
  the input's own, byte for byte, since Kafka keeps them as they are (R3.3);
* no segment Kafka deletes (R4.3, R8.2) and no ``.log`` a swap replaces.

Each segment goes in through :class:`~kseg.recovery.segment_files.SegmentFiles`
(indexes before the ``.log``).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, replace
from pathlib import Path

from kseg.listing import children
from kseg.ops.recover.report import CREATED, NOT_WRITTEN, Written
from kseg.recovery.index_compare import ENTRY_SIZES, INDEX_KINDS, index_bytes
from kseg.recovery.indexes import IndexBuild, build_indexes
from kseg.recovery.loading import PartitionPrediction
from kseg.recovery.loading.model import CREATE, DELETE, RENAME, REWRITE, TRUNCATE
from kseg.recovery.producer_state import TxnTracker
from kseg.recovery.segment_files import SegmentFiles
from kseg.segment import MappedFile, read_small_file

COPY_CHUNK = 1 << 20
_RECOVER = "LogSegment.recover"


@dataclass(frozen=True, slots=True)
class KeptFile:
    """One file of the partition directory after Kafka's load."""

    name: str
    source: Path | None  # the input file whose first ``size`` bytes it holds; None: Kafka wrote it
    size: int


def kafka_files(directory: Path, prediction: PartitionPrediction) -> dict[str, KeptFile]:
    """The regular files of ``directory`` as Kafka's load leaves them (the model's actions replayed)."""
    files = {p.name: KeptFile(p.name, p, p.stat().st_size) for p in children(directory) if p.is_file()}
    prefix = directory.name + "/"
    for action in prediction.actions:
        if not action.path.startswith(prefix):
            continue
        name = action.path[len(prefix) :]
        if action.kind in (CREATE, REWRITE):
            files[name] = KeptFile(name, None, action.size or 0)
        elif action.kind == TRUNCATE and name in files and action.size is not None:
            files[name] = replace(files[name], size=min(action.size, files[name].size))
        elif action.kind == DELETE:
            files.pop(name, None)
        elif action.kind == RENAME and name in files and action.target is not None:
            target = action.target.rsplit("/", 1)[-1]
            files[target] = replace(files.pop(name), name=target)
    return {name: kept for name, kept in files.items() if not name.endswith(".deleted")}


def recovered_bases(prediction: PartitionPrediction) -> set[int]:
    """Base offsets of the segments ``LogSegment.recover`` runs on during the load (R3.4, R4.3)."""
    found = set()
    for action in prediction.actions:
        name = action.path.rsplit("/", 1)[-1]
        if action.method == _RECOVER and name[:20].isdigit():
            found.add(int(name[:20]))
    return found


def kept_logs(files: dict[str, KeptFile]) -> list[KeptFile]:
    """The ``.log`` files Kafka keeps, in offset order (their 20-digit names sort so)."""
    return [files[name] for name in sorted(files) if name.endswith(".log") and name[:20].isdigit()]


def _copy(source: MappedFile, size: int, out: object) -> None:
    with memoryview(source.buf) as view:
        for pos in range(0, size, COPY_CHUNK):
            end = min(size, pos + COPY_CHUNK)
            out.write(view[pos:end])  # type: ignore[attr-defined]
            source.release(end)


def _index_data(kind: str, log: KeptFile, files: dict[str, KeptFile], recovered: bool, build: IndexBuild) -> bytes | None:
    """The index Kafka leaves beside ``log``: the input's own when kept as is, else Kafka's rebuild; None: none."""
    kept = files.get(log.name[:-4] + "." + kind)
    if kind == "txnindex" and kept is None and not (recovered and build.aborted):
        return None  # Kafka creates a .txnindex only when it has an entry
    if recovered or kept is None:
        return index_bytes(build, kind)
    if kept.source is None:
        return b"" if kept.size == 0 else index_bytes(build, kind)
    return read_small_file(kept.source)[: kept.size]


def write_kept_segment(
    log: KeptFile, files: dict[str, KeptFile], recovered: bool, out_dir: Path, tracker: TxnTracker, interval: int
) -> tuple[tuple[Written, ...], TxnTracker]:
    """One ``.log`` Kafka keeps, with its indexes, into ``out_dir``; the producer state after it.

    Nothing is written (no files returned) where Kafka's recovery of the segment throws.
    """
    base = int(log.name[:20])
    after = copy.deepcopy(tracker)
    dest = out_dir / log.name
    with SegmentFiles(dest, in_place=False) as seg:
        mapped = MappedFile(log.source) if log.source is not None and log.size else None
        try:
            buf = b"" if mapped is None else mapped.buf
            build = build_indexes(buf, base, index_interval_bytes=interval, end=len(buf) and log.size, txn=after)
            if recovered and build.failure is not None:
                return (), tracker  # Kafka's recovery throws (at this index.interval.bytes): nothing written
            if recovered and build.valid_bytes != log.size:
                raise RuntimeError(  # a kseg bug: the model says Kafka's recovery keeps these bytes whole
                    f"{log.source}: Kafka's recovery of the kept {log.size} bytes stops at {build.valid_bytes}"
                )
            with seg.log_file(like=None) as out:
                if mapped is not None:
                    _copy(mapped, log.size, out)
        finally:
            if mapped is not None:
                mapped.close()
        written = [Written("log", dest, CREATED, log.size)]
        for kind in INDEX_KINDS:
            data = _index_data(kind, log, files, recovered, build)
            target = out_dir / f"{log.name[:-4]}.{kind}"
            if data is None:
                written.append(Written(kind, target, NOT_WRITTEN, 0, 0))
                continue
            seg.index(kind, data, like=None)
            written.append(Written(kind, target, CREATED, len(data), len(data) // ENTRY_SIZES[kind]))
        seg.commit()
    return tuple(written), after


def write_kept_segments(
    directory: Path, out_dir: Path, prediction: PartitionPrediction, interval: int, max_batch_bytes: int
) -> tuple[dict[str, KeptFile], dict[str, tuple[Written, ...]]]:
    """Every segment Kafka keeps, written into ``out_dir``; (the kept files, what was written per ``.log``)."""
    files = kafka_files(directory, prediction)
    recovered = recovered_bases(prediction)
    tracker = TxnTracker(max_batch_bytes)
    written: dict[str, tuple[Written, ...]] = {}
    for log in kept_logs(files):
        written[log.name], tracker = write_kept_segment(
            log, files, int(log.name[:20]) in recovered, out_dir, tracker, interval
        )
    return files, written


__all__ = ["KeptFile", "kafka_files", "kept_logs", "recovered_bases", "write_kept_segments"]
