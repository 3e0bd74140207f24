"""``dumpLog``: a .log (or KRaft .checkpoint) file, batch by batch, with kseg's windows.

The walk goes through :class:`kseg.format.BatchWalk` (lenient, as Kafka's
``FileRecords`` iterator); with deep iteration each batch's records follow it
(:mod:`kseg.ops.dump.records`).  It stops where Kafka's tool would die, after
yielding what Kafka would have printed up to there.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from kseg.errors import KsegError
from kseg.format import BAD_SIZE, Batch, LegacyBatch
from kseg.ops.dump.events import (
    BatchEvent,
    BootstrapStart,
    Event,
    LogStart,
    Notice,
    Problem,
    SnapshotStart,
    TrailingBytes,
)
from kseg.ops.dump.options import INT_MAX, DumpOptions
from kseg.ops.dump.records import RecordState, records_events
from kseg.ops.dump.summaries import Summaries
from kseg.ops.dump.targets import DumpTarget, name_offset
from kseg.segment import Segment, open_segment

BOOTSTRAP_CHECKPOINT = "bootstrap.checkpoint"
_SNAPSHOT_NAME = re.compile(r"^(\d{20})-(\d{10})")


def dump_log(target: DumpTarget, options: DumpOptions, summaries: Summaries) -> Iterator[Event]:
    for notice in options.decoder_notices:
        yield Notice(notice)
    yield from _log_header(target)
    with open_segment(target.path) as segment:
        yield from _walk_log(segment, target, options, summaries)


def _log_header(target: DumpTarget) -> Iterator[Event]:
    name = target.path.name
    if name.endswith(".log"):
        base = name_offset(target)
        yield base if isinstance(base, Problem) else LogStart(target.display, base)
    elif name == BOOTSTRAP_CHECKPOINT:
        yield BootstrapStart(target.display)
    else:
        match = _SNAPSHOT_NAME.match(name)
        epoch = int(match[2]) if match else None
        if match and epoch is not None and epoch < 2**31:
            yield SnapshotStart(target.display, int(match[1]), epoch)
        else:
            yield Problem(
                target.display,
                None,
                "not a KRaft snapshot name (<20-digit end offset>-<10-digit epoch>.checkpoint)",
            )


def _window_start(segment: Segment, options: DumpOptions) -> int | None:
    """Where the window starts (0 without one); None when no batch reaches it."""
    start = 0
    if options.from_offset is not None:
        position = segment.position_of_offset(options.from_offset)
        if position is None:
            return None
        start = max(start, position)
    if options.from_time is not None:
        position = segment.position_of_timestamp(options.from_time)
        if position is None:
            return None
        start = max(start, position)
    return start


def _first_offset(batch: Batch) -> int:
    """The batch's first offset without failing: a legacy wrapper that cannot be read counts from its last."""
    if isinstance(batch, LegacyBatch):
        try:
            return batch.base_offset
        except KsegError:
            return batch.last_offset
    return batch.base_offset


def _walk_log(segment: Segment, target: DumpTarget, options: DumpOptions, summaries: Summaries) -> Iterator[Event]:
    """Each batch, then (deep iteration) its records; the trailing-bytes line."""
    display = target.display
    end = segment.size if options.max_bytes is None else min(options.max_bytes, segment.size)
    try:
        start = _window_start(segment, options)
    except KsegError as err:
        yield Problem(display, err.offset, err.message)
        return
    if start is None:
        return
    walk = segment.walk(start, end, strict=False)
    deep = options.deep
    state = RecordState(summaries, target.absolute)
    valid_bytes = 0
    for shown, batch in enumerate(walk, 1):
        segment.release(batch.position)
        if options.to_offset is not None and _first_offset(batch) > options.to_offset:
            break
        if isinstance(batch, LegacyBatch) and batch.magic not in (0, 1):
            # Kafka's iterator takes any magic below 2 for a legacy batch; printBatchLevel prints "offset: N",
            # then LegacyRecord.headerSize refuses the magic (a negative one: a damaged magic byte)
            yield BatchEvent(display, batch, deep, codec_error=True)
            yield Problem(display, batch.position, f"Invalid magic used in LegacyRecord: {batch.magic}")
            return
        if batch.codec_id > 4:
            yield BatchEvent(display, batch, deep, codec_error=True)
            yield Problem(display, batch.position, f"Unknown compression type id: {batch.codec_id}")
            return
        yield BatchEvent(display, batch, deep)
        valid_bytes += batch.size
        if deep and (yield from records_events(batch, display, options, state)):
            return
        if _window_done(batch, shown, options):
            break
    segment.check_size()  # the stop may be the zeros past a cut inside a page: then it is not the file's
    if walk.end is not None and walk.end.reason == BAD_SIZE:
        yield Problem(
            display,
            walk.end.position,
            f"Found record size {walk.end.declared_size} smaller than minimum record overhead (14)",
        )
        return
    if options.max_bytes in (None, INT_MAX) and not options.windowed:
        trailing = segment.size - valid_bytes
        if trailing > 0:
            yield TrailingBytes(display, target.path.name, valid_bytes, trailing)


def _window_done(batch: Batch, shown: int, options: DumpOptions) -> bool:
    if options.max_batches is not None and shown >= options.max_batches:
        return True
    if options.to_offset is not None and batch.last_offset >= options.to_offset:
        return True
    return options.to_time is not None and batch.max_timestamp >= options.to_time
