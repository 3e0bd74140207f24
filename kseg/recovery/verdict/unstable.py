"""Records of transactions that never committed, which the next start serves to read_committed consumers.

After a clean shutdown with no producer snapshot left, ``UnifiedLog.rebuildProducerState`` does not read
the log (R6.3a: it takes the directory for an upgrade from an old message format and writes empty
snapshots): the broker starts with no producer and no open transaction.  A transaction open in the log
is then invisible to it -- the last stable offset is the high watermark, read_committed consumers read
its records as if committed, and a marker written later completes nothing
(``ProducerAppendInfo.appendEndTxnMarker``: no transaction open), so even an ABORT leaves them readable.

This replays the log the start keeps (``[log start, log end)``) as ``rebuildProducerState`` would
have -- :class:`~kseg.recovery.producer_state.TxnTracker`, ProducerStateManager's transaction rules --
and names the transactions still open at its end.  A batch that cannot be decoded is skipped (the
other facts name the damage); the rule only applies when the model's prediction took branch R6.3a.
"""

from __future__ import annotations

from pathlib import Path

from kseg.errors import KsegError
from kseg.format.compression import DEFAULT_MAX_DECOMPRESSED
from kseg.format.v2 import V2Batch
from kseg.listing import children
from kseg.recovery.loading import PartitionPrediction
from kseg.recovery.producer_state import RecoveryAbort, TxnTracker, track_producer_batch
from kseg.segment import Segment

#: the rule of the load's producer-state branch that reads no log (docs/kafka-log-loading.md)
LOG_NOT_READ = "R6.3a"


def log_not_read(pred: PartitionPrediction) -> bool:
    """The start rebuilds no producer state from the log (clean shutdown, no snapshot: R6.3a)."""
    return pred.error is None and pred.kind != "delete" and any(a.rule == LOG_NOT_READ for a in pred.actions)


def _feed(tracker: TxnTracker, last: dict[int, int], log: Path, start: int, end: int) -> None:
    """Every magic-2 producer batch of ``log`` inside ``[start, end)``, in order, to ``tracker``; ``last``:
    each producer's last transactional data offset."""
    try:
        seg = Segment(log)
    except (KsegError, OSError):
        return  # unreadable: the load's own prediction says what it does with it
    with seg:
        for pos, _, magic, header, _ in seg.walk(strict=False).frames():
            seg.release(pos)
            if header is None or magic != 2 or header[9] < 0:
                continue  # no producer (header[9] is producerId): nothing to track, no batch object made
            try:
                batch = V2Batch(seg.buf, pos)
                if batch.producer_id < 0 or batch.last_offset < start or batch.base_offset >= end:
                    continue
                track_producer_batch(tracker, batch)
                if batch.is_transactional and not batch.is_control:
                    last[batch.producer_id] = batch.last_offset
            except (KsegError, RecoveryAbort):
                continue  # damaged: named by the verdict's other facts


def open_unseen(pred: PartitionPrediction, cap: int = DEFAULT_MAX_DECOMPRESSED) -> list[tuple[int, int, int]]:
    """(producer id, first offset, last offset) of each transaction open at the log end that the broker will
    not see, by first offset."""
    if not log_not_read(pred) or pred.log_end_offset is None:
        return []
    start, end = pred.log_start_offset or 0, pred.log_end_offset
    tracker = TxnTracker(cap)
    last: dict[int, int] = {}
    names = sorted(p.name for p in children(pred.path)
                   if p.name.endswith(".log") and len(p.name) == 24 and p.name[:20].isdigit())
    for name in names:
        _feed(tracker, last, Path(pred.path) / name, start, end)
    found = [(producer, first, max(first, last.get(producer, first)))
             for producer, first in tracker.open_transactions.items()]
    return sorted(found, key=lambda item: (item[1], item[0]))
