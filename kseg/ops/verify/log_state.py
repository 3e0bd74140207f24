"""The state of one walk over a .log (or KRaft .checkpoint), shared by the fast loop and its checks.

:class:`WalkState` holds what the walk has learnt so far (counts, offsets,
epochs, ABORT markers) and the offset floor every batch must start above.
The checks build on it one layer at a time -- ``log_deep`` (records),
``log_batches`` (headers, control and legacy batches), ``log_gaps`` (damage and
resynchronisation) -- and :class:`~kseg.ops.verify.log_walk.LogWalk` adds the
loop.  Splitting by responsibility keeps each module small; the attributes are
declared here once so every layer type-checks against them.
"""

from __future__ import annotations

from collections.abc import Callable

from kseg.format.compression import DEFAULT_MAX_DECOMPRESSED
from kseg.format.layout import (
    DELETE_HORIZON_MASK,
    MAX_RELATIVE_OFFSET,
    SIZE_OFFSET,
    TIMESTAMP_TYPE_MASK,
    TRANSACTIONAL_MASK,
    Buffer,
)
from kseg.format.walk import V2Header
from kseg.ops.verify.model import Collector
from kseg.recovery.clean_prefix import PrefixRecorder

PROGRESS_STEP = 64 << 20  # report progress every 64 MiB of a large file
NO_OFFSET = -(1 << 63) - 1  # below every int64: "no batch seen yet"

#: Attribute values the fast path takes without a closer look: a known codec, either
#: timestamp type, transactional or not, delete horizon or not -- not control, no unused bits.
USUAL_V2_ATTRIBUTES = frozenset(
    codec | timestamp_type | transactional | horizon
    for codec in range(5)
    for timestamp_type in (0, TIMESTAMP_TYPE_MASK)
    for transactional in (0, TRANSACTIONAL_MASK)
    for horizon in (0, DELETE_HORIZON_MASK)
)

Observer = Callable[[int, int, int, int], None]  # (position, base_offset, last_offset, max_timestamp)
#: ``observe`` for a run of the fast path's V2 headers at once, the first batch at the position given
RunObserver = Callable[[int, list[V2Header]], None]
#: ``observe`` for a run of clean V0/V1 messages at once: their (position, offset, timestamp)
MessagesObserver = Callable[[list[tuple[int, int, int]]], None]


class WalkState:
    """What one pass over a batch file knows; findings go to ``findings``.

    ``name_base`` is the base offset from the file name (None when the name
    does not give one, or for KRaft snapshots whose batches start at 0);
    ``observe`` is called for every valid batch, in file order, by the index
    checks; ``progress(done_bytes)`` every 64 MiB; ``release(done_bytes)`` lets
    the mapping drop the pages behind the walk (:meth:`kseg.segment.MappedFile.release`).
    """

    def __init__(
        self,
        path: str,
        buf: Buffer,
        *,
        name_base: int | None,
        deep: bool = False,
        observe: Observer | None = None,
        progress: Callable[[int], None] | None = None,
        release: Callable[[int], None] | None = None,
        max_batch_bytes: int = DEFAULT_MAX_DECOMPRESSED,
    ) -> None:
        self.path = path
        self.max_batch_bytes = max_batch_bytes  # the read cap: decompressed bytes of one batch
        self.buf = buf
        self.view = memoryview(buf)
        self.limit = len(buf)
        self.name_base = name_base
        self.deep = deep
        self.observe = observe
        self.progress = progress
        self.release = release
        self.findings = Collector(path)
        self.batches = 0
        self.records = 0
        self.skipped = 0
        self.first_offset: int | None = None
        self.last_offset: int | None = None
        self.epochs: list[tuple[int, int]] = []
        self.aborts: list[tuple[int, int]] = []  # (marker offset, producer id) of ABORT markers
        # The first damage: where LogSegment.recover would stop if it ran on this segment.  Whether the
        # next start recovers the segment, and where it really cuts, is the load model's to say
        # (kseg.recovery.loading, through load_findings): verify's walk makes no claim about it.
        self.kafka_cut: int | None = None
        # walk state shared between the fast loop and the slow paths
        self.name_floor = NO_OFFSET if name_base is None else name_base - 1
        self.floor = self.name_floor  # a batch must start above this offset
        self.prev_position: int | None = None
        self.max_epoch = -1
        self.overflow_at = (1 << 63) if name_base is None else name_base + MAX_RELATIVE_OFFSET + 1
        self.max_last = NO_OFFSET  # largest last offset of the batches the slow paths saw
        self._next_progress = PROGRESS_STEP if progress is not None else self.limit + 1
        self.recorder: PrefixRecorder | None = None  # recover's loop run along, for the load model
        #: reads the file from a position into a buffer (MappedFile.read_into): the fast path then
        #: reads windows of the file instead of walking the mapping
        self.read_into: Callable[[memoryview, int], int] | None = None
        #: ``observe`` for whole runs (the fast paths), so that the index checks cost one call per run
        self.observe_run: RunObserver | None = None
        self.observe_messages: MessagesObserver | None = None
        self._window: bytearray | None = None  # the buffer read_into fills, allocated once per walk

    def close(self) -> None:
        self.view.release()

    def _header_offset(self, start: int) -> int | None:
        """The (base) offset field of the entry at ``start``, when the file holds it."""
        if start + SIZE_OFFSET > self.limit:
            return None
        return int.from_bytes(self.buf[start : start + SIZE_OFFSET], "big", signed=True)

    def _ceiling(self) -> int:
        """Offsets at or above this cannot be in this segment (relative offsets are int32)."""
        if self.name_base is not None:
            return self.overflow_at
        return self.floor + MAX_RELATIVE_OFFSET + 1 if self.floor != NO_OFFSET else 1 << 63
