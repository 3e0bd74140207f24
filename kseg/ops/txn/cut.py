"""The batches the next start cuts off the log, read from what is still on disk behind the cut.

A crash that tears the COMMIT or ABORT marker of a transaction leaves its
bytes on disk, and the next start truncates them (``LogSegment.recover``, R4.3
in docs/kafka-log-loading.md): the broker then holds the transaction open
although its marker was written.  Before the start those bytes are still
there, so kseg reads what can be read of each batch the load removes: its
base offset, whether it is a control batch, its producer, and -- when the
first record's key survived -- COMMIT or ABORT.  This is evidence, not the
model: a header torn before a field leaves that field unknown (None).

V2 batch header (DefaultRecordBatch): baseOffset 0-8, length 8-12, partition
leader epoch 12-16, magic 16, crc 17-21, attributes 21-23 (bit 5 control, bit 4
transactional), lastOffsetDelta 23-27, timestamps 27-43, producerId 43-51,
producerEpoch 51-53, baseSequence 53-57, record count 57-61; then the first
record: length, attributes, timestamp delta, offset delta, key length (varints)
and, for a control record, the key's version (int16) and type (int16: 0 ABORT,
1 COMMIT; ``ControlRecordType``).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from kseg.recovery.loading import PartitionPrediction
from kseg.recovery.loading.model import DELETE, RENAME, TRUNCATE
from kseg.segment import base_offset_from_name, open_read_only

HEADER = 61
#: Past the header: the first record's five varints (at most 5 bytes each) and a control key's 4 bytes.
READ_AHEAD = HEADER + 5 * 5 + 4
CONTROL_TYPES = {0: "ABORT", 1: "COMMIT"}
#: Batches read behind one cut: enough for the markers at a torn tail, bounded on a huge deleted segment.
MAX_BATCHES = 10_000


@dataclass(frozen=True, slots=True)
class CutBatch:
    """One batch the next start removes, as much of it as is on disk."""

    file: str  # the .log, as the partition's path names it
    byte: int  # where the batch starts in it
    on_disk: int  # bytes of it on disk
    declared: int | None  # 12 + its length field, when readable
    base_offset: int | None
    control: bool | None  # None: cut before its attributes
    transactional: bool | None
    producer_id: int | None
    producer_epoch: int | None
    marker: str | None  # "COMMIT" or "ABORT" when the control record's key survived
    in_deleted_segment: bool = False  # in a later segment the start deletes, not behind a truncation

    @property
    def why(self) -> str:
        """Why the start cuts it: torn by the crash, behind damage it truncates at, or in a deleted segment."""
        if self.declared is None or self.on_disk < self.declared:
            return "a torn tail"
        if self.in_deleted_segment:
            return "in a later segment the start deletes after damage"
        return "behind damage the start truncates at"

    @property
    def where(self) -> str:
        torn = "" if self.declared is None or self.on_disk >= self.declared else \
            f", {self.on_disk} of its {self.declared} bytes on disk"
        return f"{self.file} byte {self.byte}{torn}"


def _varint(data: bytes, pos: int) -> tuple[int, int] | None:
    """A zigzag varint at ``pos``: (value, next position), or None when the bytes end first."""
    shift = raw = 0
    while pos < len(data) and shift < 35:
        byte = data[pos]
        raw |= (byte & 0x7F) << shift
        pos += 1
        if not byte & 0x80:
            return (raw >> 1) ^ -(raw & 1), pos
        shift += 7
    return None


def _marker_type(data: bytes) -> str | None:
    """COMMIT or ABORT from the first control record's key, if its bytes are there."""
    step = _varint(data, HEADER)  # the record's length
    if step is None:
        return None
    pos = step[1] + 1  # its attributes (one byte)
    for _ in range(3):  # timestamp delta, offset delta, key length
        step = _varint(data, pos)
        if step is None:
            return None
        pos = step[1]
    if pos + 4 > len(data):
        return None
    return CONTROL_TYPES.get(int.from_bytes(data[pos + 2 : pos + 4], "big", signed=True))


def _field(data: bytes, start: int, size: int, signed: bool = True) -> int | None:
    return int.from_bytes(data[start : start + size], "big", signed=signed) if len(data) >= start + size else None


def _parse(name: str, byte: int, data: bytes, on_disk: int, deleted: bool) -> CutBatch:
    length = _field(data, 8, 4)
    attributes = _field(data, 21, 2)
    control = None if attributes is None else bool(attributes & 0x20)
    return CutBatch(name, byte, on_disk, None if length is None else 12 + length, _field(data, 0, 8), control,
                    None if attributes is None else bool(attributes & 0x10), _field(data, 43, 8),
                    _field(data, 51, 2), _marker_type(data) if control else None, deleted)


def batches_behind(log: Path, start: int, name: str, deleted: bool = False) -> list[CutBatch]:
    """The V2 batches of ``log`` from byte ``start`` while they frame (the last one may be torn)."""
    fd = open_read_only(log)
    try:
        size = os.fstat(fd).st_size
        found: list[CutBatch] = []
        pos = start
        while pos < size and len(found) < MAX_BATCHES:
            head = os.pread(fd, READ_AHEAD, pos)
            if len(head) > 16 and head[16] != 2:
                break  # not a V2 batch (zeros, garbage): nothing more to read as batches
            batch = _parse(name, pos, head, min(size - pos, (12 + (_field(head, 8, 4) or 0))), deleted)
            found.append(batch)
            if batch.declared is None or batch.declared < HEADER:
                break
            pos += batch.declared
        return found
    finally:
        os.close(fd)


def cut_batches(pred: PartitionPrediction) -> list[CutBatch]:
    """Every batch the next start cuts from ``pred``'s partition: behind each truncation, in each deleted segment.

    Read while they frame: a batch whose CRC fails still has its length, so the walk goes on past it.
    """
    directory = Path(pred.path)
    found: list[CutBatch] = []
    for action in pred.actions:
        deleted = action.kind == DELETE or (action.kind == RENAME and (action.target or "").endswith(".deleted"))
        if not action.path.endswith(".log") or not (action.kind == TRUNCATE or deleted):
            continue  # a later segment the load deletes is renamed *.deleted first (R4.3, R8.2)
        log = directory / Path(action.path).name
        if not log.is_file() or base_offset_from_name(log) is None:
            continue
        start = action.size if action.kind == TRUNCATE and action.size is not None else 0
        found.extend(batches_behind(log, start, str(log), deleted))
    return sorted(found, key=lambda b: (b.base_offset is None, b.base_offset or 0, b.file, b.byte))


__all__ = ["CutBatch", "batches_behind", "cut_batches"]
