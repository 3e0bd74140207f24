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

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

from kseg.errors import KsegError
from kseg.format.compression import DEFAULT_MAX_DECOMPRESSED
from kseg.format.control import decode_control_key
from kseg.format.internal.common import Failed
from kseg.format.internal.control_records import KRAFT_CONTROL, decode_kraft_control_value
from kseg.format.internal.kraft import read_metadata_record
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
    """Every record of one file at or after ``from_offset``, and the damage that ends or skips part of it."""
    name = str(path)
    with MappedFile(path) as mapped:
        buf = mapped.buf
        walk = BatchWalk(buf, 0, None, strict=False)
        for pos, stop, magic, header, crc_ok in walk.frames(check_crc=True):
            if header is None or magic != 2 or not crc_ok:
                offset = header[0] if header is not None else None
                why = "not a v2 batch" if header is None or magic != 2 else "CRC-32C does not match"
                yield Damage(name, pos, offset, f"damaged batch: {why}", True)
                return
            if (header[12] == 1 and not header[5] & 0x27 and stop - pos == V2_HEADER_SIZE + 11
                    and buf[pos + V2_HEADER_SIZE:stop] == NO_OP_BATCH_RECORDS):
                if header[0] >= from_offset:
                    yield MetaRecord(name, pos, header[0], header[8], "NO_OP_RECORD", 0, {}, header[0])
                continue
            try:
                batch = V2Batch(buf, pos)
                if batch.last_offset < from_offset:
                    continue
                batch_records = list(batch.iter_records(cap))
            except KsegError as err:
                yield Damage(name, pos, header[0], f"damaged batch: {err}", True)
                return
            yield from _batch_records(name, pos, batch, batch_records, from_offset)
        end = walk.end
        if end is not None and end.remaining:
            yield Damage(name, end.position, None, f"{end.remaining} byte(s) at the end are not a whole batch "
                         f"({end.reason})", True)


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
