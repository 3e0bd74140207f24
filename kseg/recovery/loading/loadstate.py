"""What one ``LogLoader.load`` holds while it runs: its inputs, segments, epoch cache and producer state.

Kept apart from :mod:`.partition` (which runs the steps) so that the step
modules (:mod:`.startup`, :mod:`.segrecovery`, :mod:`.outcome`) can share it
while imports still point one way.
"""

from __future__ import annotations

from dataclasses import dataclass

from kseg.format.compression import DEFAULT_MAX_DECOMPRESSED
from kseg.recovery.loading.epochs import EpochCache
from kseg.recovery.loading.segments import Seg
from kseg.recovery.loading.snapshots import ProducerStates
from kseg.recovery.loading.state import PartitionDir


@dataclass(frozen=True, slots=True)
class LoadInputs:
    """What ``LogManager.loadLog`` passes to ``UnifiedLog.create`` (R1.2)."""

    clean_shutdown: bool
    recovery_point: int = 0
    log_start_offset: int = 0
    high_watermark: int | None = None
    kind: str = ""  # "", "delete", "future", "stray"
    max_batch_bytes: int = DEFAULT_MAX_DECOMPRESSED  # kseg's read cap for the control batches replayed
    now_ms: int | None = None  # the broker's wall clock at the start (None: this machine's, when loading)
    #: False when an offset checkpoint already put the log dir in the failure channel (R9.4): the broker
    #: halts without closing the dir's logs, so no R4.8 trim -- R4.7's resize stays on disk
    closes: bool = True


class Segments(dict[int, Seg]):
    """``LogSegments``' map: base offset -> segment, with its offset order kept until the map changes.

    Recovery asks for the segments in order once per segment it recovers; sorting them each
    time made a partition of thousands of segments quadratic.
    """

    _order: list[Seg] | None = None

    def ordered(self) -> list[Seg]:
        if self._order is None:
            self._order = [self[b] for b in sorted(self)]
        return self._order

    def __setitem__(self, base: int, seg: Seg) -> None:
        self._order = None
        super().__setitem__(base, seg)

    def __delitem__(self, base: int) -> None:
        self._order = None
        super().__delitem__(base)

    def pop(self, *args):
        self._order = None
        return super().pop(*args)

    def clear(self) -> None:
        self._order = None
        super().clear()

    def popitem(self) -> tuple[int, Seg]:
        self._order = None
        return super().popitem()

    def setdefault(self, *args):
        self._order = None
        return super().setdefault(*args)

    def update(self, *args, **kwargs) -> None:
        self._order = None
        super().update(*args, **kwargs)


class LoadState:
    """Segments (``LogSegments``), the epoch cache, the load's ``ProducerStateManager``, the deleted bases."""

    def __init__(self, pdir: PartitionDir, inputs: LoadInputs, epochs: EpochCache, psm: ProducerStates) -> None:
        self.pdir = pdir
        self.inputs = inputs
        self.epochs = epochs
        self.psm = psm
        self.segments: dict[int, Seg] = Segments()
        self.deleted: list[int] = []

    def ordered(self) -> list[Seg]:
        """The segments in offset order.

        The list is kept until the map changes and handed out as it is: callers read it (and may
        delete segments from the map while they go through it, which starts a new list), never
        change it.
        """
        segments = self.segments
        if isinstance(segments, Segments):
            return segments.ordered()
        return [segments[b] for b in sorted(segments)]
