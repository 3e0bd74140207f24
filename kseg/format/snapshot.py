"""Producer-state snapshot files (``<offset>.snapshot``, ``ProducerStateManager``).

Layout, big-endian::

     0  version            int16   1
     2  crc                uint32  CRC-32C of bytes [6, end of file)
     6  entry count        int32
    10  entries            46 bytes each:

        producer_id               int64
        epoch                     int16
        last_sequence             int32
        last_offset               int64   >= 0: a last-batch record exists
        offset_delta              int32
        timestamp                 int64
        coordinator_epoch         int32
        current_txn_first_offset  int64   -1: no open transaction

Entries are in HashMap order, not sorted.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

from kseg.errors import CrcMismatch, IndexCorrupt, Truncated
from kseg.format.crc import crc32c
from kseg.format.model import increment_sequence

SNAPSHOT_HEADER = struct.Struct(
    ">h"  # version
    "I"  # crc
    "i"  # entry count
)
SNAPSHOT_ENTRY = struct.Struct(
    ">q"  # producer_id
    "h"  # epoch
    "i"  # last_sequence
    "q"  # last_offset
    "i"  # offset_delta
    "q"  # timestamp
    "i"  # coordinator_epoch
    "q"  # current_txn_first_offset
)
CRC_COVERS_FROM = struct.calcsize(">hI")  # 6
SNAPSHOT_VERSION = 1


@dataclass(frozen=True, slots=True)
class ProducerEntry:
    producer_id: int
    epoch: int
    last_sequence: int
    last_offset: int
    offset_delta: int
    timestamp: int
    coordinator_epoch: int
    current_txn_first_offset: int

    @property
    def first_sequence(self) -> int:
        """``lastSeq - offsetDelta`` with Kafka's wrap-around (``decrementSequence``)."""
        if self.last_sequence < self.offset_delta:
            return 0x7FFFFFFF - (self.offset_delta - self.last_sequence) + 1
        return self.last_sequence - self.offset_delta

    @property
    def first_offset(self) -> int:
        return self.last_offset - self.offset_delta


@dataclass(frozen=True, slots=True)
class ProducerSnapshot:
    version: int
    crc: int
    computed_crc: int
    entries: tuple[ProducerEntry, ...]

    @property
    def crc_ok(self) -> bool:
        return self.crc == self.computed_crc


def read_snapshot(data: bytes | memoryview) -> ProducerSnapshot:
    """Decode a snapshot; the CRC is reported, not enforced (see :func:`check_snapshot`)."""
    if len(data) < SNAPSHOT_HEADER.size:
        raise Truncated(f"snapshot of {len(data)} bytes is shorter than its {SNAPSHOT_HEADER.size}-byte header", offset=0, field="snapshot")
    version, crc, count = SNAPSHOT_HEADER.unpack_from(data, 0)
    if version != SNAPSHOT_VERSION:
        raise IndexCorrupt(
            f"Snapshot failed schema validation: Snapshot contained an unknown file version {version}",
            offset=0,
            field="snapshot.version",
        )
    computed = crc32c(memoryview(data)[CRC_COVERS_FROM:])
    if count < 0 or SNAPSHOT_HEADER.size + count * SNAPSHOT_ENTRY.size > len(data):
        raise IndexCorrupt(
            f"Snapshot failed schema validation: {count} entries do not fit in {len(data)} bytes",
            offset=CRC_COVERS_FROM,
            field="snapshot.count",
        )
    entries = tuple(
        ProducerEntry(*SNAPSHOT_ENTRY.unpack_from(data, SNAPSHOT_HEADER.size + i * SNAPSHOT_ENTRY.size))
        for i in range(count)
    )
    return ProducerSnapshot(version, crc, computed, entries)


def check_snapshot(snapshot: ProducerSnapshot) -> None:
    """Raise Kafka's CRC error for a snapshot whose checksum does not match."""
    if not snapshot.crc_ok:
        raise CrcMismatch(
            f"Snapshot is corrupt (CRC is no longer valid). Stored crc: {snapshot.crc}. Computed crc: {snapshot.computed_crc}",
            stored=snapshot.crc,
            computed=snapshot.computed_crc,
            offset=2,
            field="snapshot.crc",
        )


def encode_snapshot(entries: list[ProducerEntry]) -> bytes:
    body = struct.pack(">i", len(entries)) + b"".join(
        SNAPSHOT_ENTRY.pack(
            e.producer_id, e.epoch, e.last_sequence, e.last_offset, e.offset_delta,
            e.timestamp, e.coordinator_epoch, e.current_txn_first_offset,
        )
        for e in entries
    )
    return struct.pack(">hI", SNAPSHOT_VERSION, crc32c(body)) + body


__all__ = ["ProducerEntry", "ProducerSnapshot", "check_snapshot", "encode_snapshot", "increment_sequence", "read_snapshot"]
