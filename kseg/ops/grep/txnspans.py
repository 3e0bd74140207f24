"""``--txn committed|aborted|open``: which transaction each transactional batch of a partition belongs to.

The partition's batches are replayed in log order through the recovery
core's :class:`~kseg.recovery.producer_state.TxnTracker` -- the bookkeeping
``kseg txn``'s replay (``kseg.ops.txn.replay``) and the loading model use, with
Kafka's ``ProducerAppendInfo`` rules: a transactional data batch of a producer
with no open transaction opens one, its COMMIT or ABORT marker closes it.
What is kept is a span per transaction: producer id, first offset, marker
offset (None while open) and how it ended.  tests/grep/test_grep_txn.py
checks the spans against ``kseg txn``'s replay on the same partitions.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field
from pathlib import Path

from kseg.errors import InvalidRecord, KsegError
from kseg.format.control import ABORT
from kseg.format.v2 import V2Batch
from kseg.recovery.producer_state import RecoveryAbort, TxnTracker, end_txn_marker
from kseg.segment import Segment


@dataclass(frozen=True, slots=True)
class Span:
    """One transaction: offsets [first, end] (end is the marker's offset; None while open)."""

    producer_id: int
    first: int
    end: int | None
    state: str  # committed | aborted | open


@dataclass(slots=True)
class TxnSpans:
    """Every transaction of one partition, by producer, for :meth:`state_of`."""

    by_producer: dict[int, list[Span]] = field(default_factory=dict)
    firsts: dict[int, list[int]] = field(default_factory=dict)  # per producer, its spans' first offsets
    stopped: str | None = None  # where the replay could not go on (later batches count as no transaction)

    def add(self, span: Span) -> None:
        self.by_producer.setdefault(span.producer_id, []).append(span)

    def state_of(self, producer_id: int, offset: int) -> str | None:
        """The state of the transaction holding ``offset`` (a data batch's base offset or a marker's)."""
        spans = self.by_producer.get(producer_id)
        if not spans:
            return None
        at = bisect.bisect_right(self.firsts[producer_id], offset) - 1
        if at < 0:
            return None
        span = spans[at]
        return span.state if span.end is None or offset <= span.end else None


def txn_spans(logs: list[Path], max_batch_bytes: int) -> TxnSpans:
    """Replay one partition's ``.log`` files (by base offset) into :class:`TxnSpans`."""
    spans = TxnSpans()
    tracker = TxnTracker(max_batch_bytes)
    try:
        for log in logs:
            _replay_caught(log, tracker, spans)
    except RecoveryAbort as abort:
        spans.stopped = str(abort)
    for producer_id, first in tracker.open_transactions.items():
        spans.add(Span(producer_id, first, None, "open"))
    for producer_id, producer_spans in spans.by_producer.items():
        producer_spans.sort(key=lambda s: s.first)
        spans.firsts[producer_id] = [s.first for s in producer_spans]
    return spans


def _replay_caught(log: Path, tracker: TxnTracker, spans: TxnSpans) -> None:
    """One segment; a record Kafka's replay cannot read stops this segment there, as ``kseg txn``'s does."""
    try:
        _replay(log, tracker, spans)
    except InvalidRecord as err:
        spans.stopped = str(err.with_path(str(log)))


def _replay(log: Path, tracker: TxnTracker, spans: TxnSpans) -> None:
    with Segment(log) as seg:
        for pos, _, _, header, _ in seg.walk(strict=False).frames():
            if header is None or header[9] < 0:  # legacy, or no producer id
                continue
            batch = V2Batch(seg.buf, pos)
            if not batch.is_control:
                tracker.append_data(batch.producer_id, batch.base_offset, batch.is_transactional)
                continue
            try:
                marker = end_txn_marker(batch, tracker.max_batch_bytes)
            except InvalidRecord:
                raise
            except KsegError as err:
                raise RecoveryAbort("KafkaException", str(err.with_path(str(log))), "") from err
            if marker is None:
                continue
            first = tracker.open_transactions.get(batch.producer_id)
            tracker.append_marker(batch.producer_id, batch.base_offset, marker[0] == ABORT)
            if first is not None:
                state = "aborted" if marker[0] == ABORT else "committed"
                spans.add(Span(batch.producer_id, first, batch.base_offset, state))
