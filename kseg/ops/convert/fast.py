"""A source batch's records as builder input, re-encoded by the compiled core (docs/core.md).

:class:`~kseg.ops.convert.batches.Converter` encodes an output batch from a
source batch's records.  In Python that reads each record as a ``Record`` and
a ``RecordSpec`` on every pass; :class:`CoreSpecs` hands the same records to
the core instead (:mod:`kseg.format.convert_core`): it writes runs of
:data:`~kseg.ops.convert.source.CHUNK` records in the target's layout into the
same builders (``BatchEncoder`` / ``MessageSetEncoder.add_encoded``), which
compress and frame them, and it makes the greedy cut of ``Converter._split``.
Where the core declines (records it does not take, or data Kafka's builder
refuses) the converter encodes that part in Python, which gives the same
bytes or raises Kafka's message: tests/core/test_core_encode.py.
"""

from __future__ import annotations

from collections.abc import Iterator

from kseg.format.convert_core import CoreRecords
from kseg.format.model import RecordSpec
from kseg.format.v0v1_encode import MessageSetEncoder
from kseg.format.v2_write import BatchEncoder
from kseg.ops.convert.build import LEGACY_ENTRY_OVERHEAD, estimate_total, record_specs
from kseg.ops.convert.source import CHUNK, BatchSummary, SourceRecords

#: A target that only reads the first record (its offset and timestamp): any magic-2 record passes it.
_PEEK = (2, None, None, None, -1, False, None)


class CoreSpecs:
    """The records of one source batch the core has read (``source.core``), encoded by the core.

    ``chunks`` reads them in Python (the reference), for what the core declines.
    """

    def __init__(self, source: SourceRecords, summary: BatchSummary, magic: int, core: CoreRecords) -> None:
        self.source, self.magic, self.core = source, magic, core
        self.count = summary.count
        self.estimated = estimate_total(summary, magic)
        self._first = (summary.first_offset, summary.first_timestamp)
        self._key_value_bytes = summary.key_value_bytes
        self._positions = {0: core.start}  # record index -> where it starts in the records

    def chunks(self, start: int = 0, stop: int | None = None) -> Iterator[list[RecordSpec]]:
        for chunk in self.source.chunks(start, stop):
            yield record_specs(chunk, self.magic)

    def largest_estimate(self) -> int:
        """A bound of any one record's ``estimate_size`` in a magic 0/1 target: all keys and values in one."""
        return LEGACY_ENTRY_OVERHEAD[self.magic] + self._key_value_bytes

    def plain_entries(self, encoder: MessageSetEncoder) -> Iterator[bytes]:
        """Every record as an uncompressed V0/V1 entry, a chunk at a time (``Converter._plain_messages``).

        Entries stand alone, so where the core declines Python goes on from that chunk with the same encoder.
        """
        position: int | None = self.core.start
        at = 0
        while at < self.count and position is not None:
            count = min(CHUNK, self.count - at)
            done = self.core.encode(position, count, encoder.core_target())
            if done is None:
                break
            body, first_offset, first_timestamp, last_offset, max_timestamp, position = done
            yield encoder.add_encoded(body, count, (first_offset, first_timestamp), last_offset, max_timestamp)
            at += count
        if at < self.count:
            for chunk in self.chunks(at):
                yield encoder.add(chunk)

    def cuts(self, budget: int) -> list[int] | None:
        """``Converter._split``'s cut: the first index of every part after the first."""
        return self.core.cuts(budget, self.magic)

    def position(self, index: int) -> int | None:
        """Where record ``index`` starts, from the nearest known position before it."""
        known = self._positions.get(index)
        if known is not None:
            return known
        below = max(i for i in self._positions if i < index)
        found = self.core.seek(self._positions[below], index - below)
        if found is not None:
            self._positions[index] = found
        return found

    def first(self, index: int) -> tuple[int, int] | None:
        """(offset, timestamp) of record ``index``: what an output batch starting there is built from."""
        if index == 0:
            return self._first
        position = self.position(index)
        done = None if position is None else self.core.encode(position, 1, _PEEK)
        return None if done is None else (done[1], done[2])

    def encode_into(self, encoder: BatchEncoder | MessageSetEncoder, start: int, end: int) -> bool:
        """Feed records ``[start, end)`` to ``encoder``; False (the encoder is then spoilt) where the core declines."""
        position = self.position(start)
        at = start
        while at < end and position is not None:
            count = min(CHUNK, end - at)
            done = self.core.encode(position, count, encoder.core_target())
            if done is None:
                return False
            body, first_offset, first_timestamp, last_offset, max_timestamp, position = done
            encoder.add_encoded(body, count, (first_offset, first_timestamp), last_offset, max_timestamp)
            at += count
        if position is None:
            return False
        self._positions[end] = position
        return True


__all__ = ["CoreSpecs"]
