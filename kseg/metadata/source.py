"""The records of a KRaft metadata directory (``__cluster_metadata-0``), in the order Kafka replays them.

A snapshot ``<end offset>-<epoch>.checkpoint`` holds the whole image as it was
after offset ``end offset - 1``: a ``SnapshotHeader`` control batch, data
batches, a ``SnapshotFooter``.  The log segments hold every record the quorum
appended.  Kafka's metadata loader starts from the newest snapshot and reads
the log from the snapshot's end offset on (``MetadataLoader``); everything here
reads files read-only through :class:`~kseg.segment.MappedFile`.

A batch kseg cannot read is a :class:`Damage` with file, byte and offset, and
the file is read no further: Kafka's log recovery truncates a KRaft log at its
first invalid batch, and a snapshot with a damaged batch cannot be loaded at all.
"""

from __future__ import annotations

from collections.abc import Generator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

from kseg.errors import KsegError
from kseg.format.compression import DEFAULT_MAX_DECOMPRESSED, decompress_buffer
from kseg.format.control import decode_control_key
from kseg.format.internal.common import Failed
from kseg.format.internal.control_records import KRAFT_CONTROL, decode_kraft_control_value
from kseg.format.internal.kraft import (
    metadata_decoder,
    read_metadata_batch,
    read_metadata_record,
    read_metadata_run,
)
from kseg.format.layout import CODEC_MASK
from kseg.format.v2 import V2Batch
from kseg.format.walk import BatchWalk
from kseg.listing import children
from kseg.segment import MappedFile

METADATA_DIR = "__cluster_metadata-0"
#: A ``NoOpRecord`` v0: frame version 1, api key 20, version 0, no tagged fields.
NO_OP_VALUE = b"\x01\x14\x00\x00"
#: The records region of an uncompressed batch of that one NoOp (length 10, attributes 0, deltas 0,
#: null key, 4-byte value, no headers): recognised without building the batch, a few µs a batch.
NO_OP_BATCH_RECORDS = b"\x14\x00\x00\x00\x01\x08" + NO_OP_VALUE + b"\x00"
V2_HEADER_SIZE = 61
#: Base offsets below this take the core's path (no Java long arithmetic can wrap there).
FAST_OFFSETS = 1 << 62
#: KRaft control record type ids -> the name the loader knows them by.
CONTROL_NAMES = {2: "LEADER_CHANGE", 3: "SNAPSHOT_HEADER", 4: "SNAPSHOT_FOOTER", 5: "KRAFT_VERSION",
                 6: "KRAFT_VOTERS"}


class MetaRecord(NamedTuple):
    """One record: where it is, when its batch was appended, and what it says (a named tuple: one is built
    per record, and a frozen dataclass costs several times as much to build).

    ``type`` is the ``MetadataRecordType`` name (``TOPIC_RECORD``) for data
    records and the control name (``SNAPSHOT_HEADER``) for control records;
    ``data`` is its fields as Kafka's JSON converter names them.
    """

    file: str
    position: int  # byte position of the record's batch
    offset: int
    timestamp: int  # the batch's max timestamp: Kafka's appendTimestamp for a KRaft batch
    type: str
    version: int
    data: dict[str, Any]
    batch_last_offset: int
    control: bool = False


@dataclass(frozen=True, slots=True)
class Damage:
    """A batch or record Kafka would not replay: file, byte position, offset and why."""

    file: str
    position: int
    offset: int | None
    reason: str
    fatal_for_file: bool  # True: nothing after it in this file is read

    def as_json(self) -> dict[str, Any]:
        return {"type": "finding", "file": self.file, "byte": self.position, "offset": self.offset,
                "reason": self.reason}


@dataclass(frozen=True, slots=True)
class Snapshot:
    """A ``.checkpoint`` file: the image after ``end_offset - 1``."""

    path: Path
    end_offset: int
    epoch: int


def snapshots(metadata: Path) -> list[Snapshot]:
    """Every snapshot file of the directory, oldest first (names that do not parse are not snapshots)."""
    found: list[Snapshot] = []
    for path in (p for p in children(metadata) if p.name.endswith(".checkpoint")):
        head, _, tail = path.name[: -len(".checkpoint")].partition("-")
        if head.isdigit() and tail.isdigit():
            found.append(Snapshot(path, int(head), int(tail)))
    return sorted(found, key=lambda s: (s.end_offset, s.epoch))


def log_segments(metadata: Path) -> list[Path]:
    """The log segments, by base offset."""
    return sorted((p for p in children(metadata) if p.name.endswith(".log") and p.name[:-4].isdigit()), key=lambda p: int(p.name[:-4]))


def _control(file: str, pos: int, batch: V2Batch, record: Any) -> MetaRecord | None:
    """A KRaft control record (leader change, snapshot header/footer, voters); None for other control types."""
    key = decode_control_key(record.key)
    if key.type_id not in KRAFT_CONTROL:
        return None
    data = decode_kraft_control_value(key.type_id, record.value)
    return MetaRecord(file, pos, record.offset, batch.max_timestamp, CONTROL_NAMES[key.type_id], key.version,
                      data, batch.last_offset, control=True)


def records(path: Path, from_offset: int = 0, *,
            cap: int = DEFAULT_MAX_DECOMPRESSED) -> Iterator[MetaRecord | Damage]:
    """Every record of one file at or after ``from_offset``, and the damage that ends or skips part of it.

    With the compiled core, runs of plain data batches are walked, checked and decoded in one call each
    (:func:`read_metadata_run`); every other batch -- compressed, control, damaged, a record the core
    leaves to Python -- is read here, batch by batch, as on the pure-Python path."""
    name = str(path)
    with MappedFile(path) as mapped:
        buf, pos = mapped.buf, 0
        while True:
            run = read_metadata_run(buf, pos, from_offset, name, MetaRecord, cap)
            if run is None:
                yield from _python_records(name, buf, pos, from_offset, cap)
                return
            items, frame, pos, end = run
            yield from items
            if frame is not None:
                if (yield from _frame_records(name, buf, frame, from_offset, cap)):
                    return
            elif end is not None:
                if end[1]:
                    yield from _python_records(name, buf, end[0], from_offset, cap)  # the end's damage
                return


def _python_records(name: str, buf: Any, start: int, from_offset: int, cap: int) -> Iterator[MetaRecord | Damage]:
    """The file from ``start`` on, batch by batch, in Python."""
    walk = BatchWalk(buf, start, None, strict=False)
    for frame in walk.frames(check_crc=True):
        if (yield from _frame_records(name, buf, frame, from_offset, cap)):
            return
    end = walk.end
    if end is not None and end.remaining:
        yield Damage(name, end.position, None, f"{end.remaining} byte(s) at the end are not a whole batch "
                     f"({end.reason})", True)


def _frame_records(name: str, buf: Any, frame: Any, from_offset: int,
                   cap: int) -> Generator[MetaRecord | Damage, None, bool]:
    """The records of one framed batch; returns True when the batch's damage ends the file."""
    pos, stop, magic, header, crc_ok = frame
    if header is None or magic != 2 or not crc_ok:
        offset = header[0] if header is not None else None
        why = "not a v2 batch" if header is None or magic != 2 else "CRC-32C does not match"
        yield Damage(name, pos, offset, f"damaged batch: {why}", True)
        return True
    if (header[12] == 1 and not header[5] & 0x27 and stop - pos == V2_HEADER_SIZE + 11
            and buf[pos + V2_HEADER_SIZE:stop] == NO_OP_BATCH_RECORDS):
        if header[0] >= from_offset:
            yield MetaRecord(name, pos, header[0], header[8], "NO_OP_RECORD", 0, {}, header[0])
        return False
    if not header[5] & 0x20 and header[12] > 0 and 0 <= header[0] < FAST_OFFSETS:
        if header[0] + header[6] < from_offset:
            return False
        decoded = _core_batch(buf, pos, stop, header, cap)
        if decoded is not None:
            yield from _decoded_records(name, pos, header, decoded, from_offset)
            return False
    try:
        batch = V2Batch(buf, pos)
        if batch.last_offset < from_offset:
            return False
        batch_records = list(batch.iter_records(cap))
    except KsegError as err:
        yield Damage(name, pos, header[0], f"damaged batch: {err}", True)
        return True
    yield from _batch_records(name, pos, batch, batch_records, from_offset)
    return False


def _core_batch(buf: Any, pos: int, stop: int, header: tuple[int, ...], cap: int) -> list[Any] | None:
    """A data batch's records decoded by the compiled core (:func:`read_metadata_batch`), an LZ4, gzip,
    Snappy or zstd batch decompressed first; None: the Python way reads the batch (no core, a batch the
    core's scanner does not take, a codec error -- which the Python way then reports)."""
    if metadata_decoder() is None:  # the pure-Python path: never decompress a batch twice
        return None
    codec = header[5] & CODEC_MASK
    start = pos + V2_HEADER_SIZE
    if codec == 0:
        return read_metadata_batch(buf, start, stop, header[12])
    try:
        data = decompress_buffer(codec, memoryview(buf)[start:stop], magic=2, max_size=cap)
    except (KsegError, MemoryError):
        return None
    return read_metadata_batch(data, 0, len(data), header[12])


def _decoded_records(name: str, pos: int, header: tuple[int, ...], decoded: list[Any],
                     from_offset: int) -> Iterator[MetaRecord | Damage]:
    """The records of a batch the core decoded; a record it left to Python is read as
    :func:`_batch_records` reads it."""
    base, timestamp, last = header[0], header[8], header[0] + header[6]
    for delta, type_name, version, data in decoded:
        offset = base + delta
        if offset < from_offset:
            continue
        if type_name is not None:
            yield MetaRecord(name, pos, offset, timestamp, type_name, version, data, last)
            continue
        try:
            type_name, version, data = read_metadata_record(data)
        except Failed as failed:
            yield Damage(name, pos, offset, f"undecodable record: {failed.kafka_message}", False)
            continue
        yield MetaRecord(name, pos, offset, timestamp, type_name, version, data, last)


def _batch_records(name: str, pos: int, batch: V2Batch, batch_records: list[Any],
                   from_offset: int) -> Iterator[MetaRecord | Damage]:
    """The records of one readable batch; an undecodable data record is a finding and is skipped."""
    for record in batch_records:
        if record.offset < from_offset:
            continue
        if batch.is_control:
            try:
                control = _control(name, pos, batch, record)
            except KsegError as err:
                yield Damage(name, pos, record.offset, f"unreadable control record: {err}", False)
                continue
            if control is not None:
                yield control
            continue
        value = record.value
        if value == NO_OP_VALUE:  # most of an idle cluster's log: a NoOp every 500 ms
            yield MetaRecord(name, pos, record.offset, batch.max_timestamp, "NO_OP_RECORD", 0, {},
                             batch.last_offset)
            continue
        try:
            type_name, version, data = read_metadata_record(value)
        except Failed as failed:
            yield Damage(name, pos, record.offset, f"undecodable record: {failed.kafka_message}", False)
            continue
        yield MetaRecord(name, pos, record.offset, batch.max_timestamp, type_name, version, data,
                         batch.last_offset)


def snapshot_header(snapshot: Snapshot) -> MetaRecord | None:
    """The snapshot's ``SnapshotHeader`` (its ``lastContainedLogTimestamp``), None when unreadable."""
    try:
        for item in records(snapshot.path):
            if isinstance(item, MetaRecord) and item.type == "SNAPSHOT_HEADER":
                return item
            return None
    except (KsegError, OSError):
        return None
    return None
