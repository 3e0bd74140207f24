"""The batches of a loaded replica in offset order: one light tuple per batch, read from the mapped segments.

Only the batches Kafka would serve after its next start count: those ending at
or after the log start offset and starting before the log end offset the
loading model predicts (a damaged tail the load cuts is not part of the replica).
Segments are walked one at a time through :class:`kseg.segment.Segment`
(read-only mappings), and the pages behind the walk are released as it goes
(:func:`kseg.segment.release_pages`), so the resident set holds a window of
each log, not the log.  The walk is :func:`kseg.format.digest.batch_digests`: with
the compiled core one call per window of batches gives each batch's header
fields and its content and records digests (docs/diff.md §3).
"""

from __future__ import annotations

from collections.abc import Iterator
from hashlib import blake2b
from pathlib import Path
from typing import NamedTuple

from kseg.format.compression import DEFAULT_MAX_DECOMPRESSED
from kseg.format.digest import batch_digests, flags_of
from kseg.format.layout import Buffer
from kseg.format.model import NO_PARTITION_LEADER_EPOCH, Record
from kseg.format.v0v1 import LegacyBatch
from kseg.format.v2 import V2Batch
from kseg.segment import RELEASE_EVERY, Segment, base_offset_from_name, release_pages


class BatchRef(NamedTuple):
    """Where one batch is and what its header says; ``crc`` is the batch's stored checksum.

    ``content``: the content digest (V2: of the CRC-covered bytes; V0/V1: of the whole entry);
    ``digest``: the records digest, or None where the records must be decoded first
    (:func:`kseg.format.digest.records_digest` of :meth:`records`).
    """

    base: int
    last: int
    epoch: int
    crc: int
    magic: int
    segment: Path
    position: int
    size: int
    buf: Buffer  # the segment's mapping: valid while the walk that yielded this batch stays in its segment
    attributes: int
    producer_id: int
    content: bytes
    digest: bytes | None

    @property
    def flags(self) -> int:
        """The canonical record's flags (transactional, control) of this batch's records."""
        return flags_of(self.attributes) if self.magic >= 2 else 0

    def data(self) -> bytes:
        """The batch's bytes exactly as stored."""
        return bytes(self.buf[self.position : self.position + self.size])

    def records(self, max_batch_bytes: int = DEFAULT_MAX_DECOMPRESSED) -> Iterator[Record]:
        """The batch's records (decompressed under the read cap)."""
        if self.magic >= 2:
            return V2Batch(self.buf, self.position).iter_records(max_batch_bytes)
        return LegacyBatch(self.buf, self.position).iter_records(max_batch_bytes)

    def is_control(self) -> bool:
        return self.magic >= 2 and V2Batch(self.buf, self.position).is_control

    def producer(self) -> tuple[int, bool]:
        """(producer id, transactional) of a V2 batch; (-1, False) for V0/V1."""
        if self.magic < 2:
            return -1, False
        batch = V2Batch(self.buf, self.position)
        return batch.producer_id, batch.is_transactional


def iter_batches(logs: list[Path], log_start: int, log_end: int, *, digests: bool = True) -> Iterator[BatchRef]:
    """Every batch of ``logs`` (by base offset) with ``last >= log_start`` and ``base < log_end``.

    ``digests=False``: a walk that only needs offsets and headers skips the hashing (``content``
    is empty and ``digest`` None).
    """
    make = BatchRef._make
    for log in logs:
        with Segment(log) as seg:
            buf, mark = seg.buf, 0
            entries = batch_digests(buf, len(buf)) if digests else _frames(seg)
            for pos, nxt, magic, header, content, digest in entries:
                if pos - mark >= RELEASE_EVERY:  # pages behind the walk: re-read from the page cache if needed
                    mark = release_pages(buf, mark, pos)
                if header is not None:
                    base = header[0]
                    epoch, crc, last, attributes, producer = header[2], header[4], base + header[6], header[5], header[9]
                else:
                    legacy = LegacyBatch(buf, pos)
                    base, last, epoch, crc = legacy.base_offset, legacy.last_offset, NO_PARTITION_LEADER_EPOCH, legacy.crc
                    attributes, producer = legacy.attributes, -1
                    if digests:
                        content = blake2b(buf[pos:nxt], digest_size=16).digest()
                if base >= log_end:
                    return
                if last >= log_start:
                    yield make((base, last, epoch, crc, magic, log, pos, nxt - pos, buf, attributes, producer,
                                content, digest))


def _frames(seg: Segment) -> Iterator[tuple[int, int, int, tuple[int, ...] | None, bytes, None]]:
    for pos, nxt, magic, header, _ in seg.walk(strict=False).frames():
        yield pos, nxt, magic, header, b"", None


def logs_from(logs: list[Path], offset: int) -> list[Path]:
    """The segments that may hold ``offset`` or later ones: a segment whose successor starts at or below
    ``offset`` holds only lower offsets (a segment's batches end before the next segment's base)."""
    bases = [base_offset_from_name(p) for p in logs]
    first = 0
    for index in range(1, len(logs)):
        base = bases[index]
        if base is None or base > offset:
            break
        first = index
    return logs[first:]


def epochs_of_batches(batches: Iterator[BatchRef]) -> list[tuple[int, int]]:
    """The epoch lineage the batches carry: each epoch above every earlier one, at its first batch (R7.3's rule)."""
    lineage: list[tuple[int, int]] = []
    for ref in batches:
        if ref.magic >= 2 and ref.epoch >= 0 and (not lineage or ref.epoch > lineage[-1][0]):
            lineage.append((ref.epoch, ref.base))
    return lineage
