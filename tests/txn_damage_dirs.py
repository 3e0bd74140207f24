"""Log directories with damaged transactions, shared by tests/txn and tests/interop (see tests/txn/test_txn_damage.py).

* :func:`torn_marker`: ``ld/pay-0``, producer 7's transaction at offsets 0-4 (one transactional batch of
  151 bytes), then its COMMIT or ABORT control batch at 5 (78 bytes) of which only ``kept`` bytes are on disk;
  no ``.kafka_cleanshutdown``, no snapshot, recovery point 0, ``replication-offset-checkpoint`` 6.
* :func:`marker_in_deleted_segment`: ``ld/pay-0``, producer 7's transaction at 0-4 and a plain batch at 5 in
  segment 0, whose last byte but four is flipped (a CRC failure at offset 5), then segment 6 with producer
  7's intact COMMIT at 6 and a plain batch at 7; no ``.kafka_cleanshutdown``, recovery point 0: the start
  truncates segment 0 at the damage and deletes segment 6 (R4.3), COMMIT and all.
* :func:`clean_without_snapshots`: ``ld/open-0``, producer 8's transaction at 0-2 with no marker, plain
  records 3-4, a clean shutdown and no ``.snapshot`` at all.

Written with kseg's encoder (``tests/logdirs.py``; byte-checked against Kafka's classes in tests/interop).
"""

from __future__ import annotations

from pathlib import Path

from logdirs import LogDir, batch, control_batch

from kseg.format import encode_batch
from kseg.format.model import RecordSpec

T0 = 1_700_000_000_000
COMMIT, ABORT = b"\x00\x00\x00\x01", b"\x00\x00\x00\x00"  # ControlRecordType key: version 0, type
DATA_BYTES, MARKER_BYTES = 151, 78


def txn_batch(first: int, count: int, producer_id: int) -> bytes:
    """``count`` transactional records from ``first`` by ``producer_id`` (epoch 0, sequence 0)."""
    records = [RecordSpec(first + i, T0 + first + i, b"k", b"v" * 10) for i in range(count)]
    return encode_batch(records, producer_id=producer_id, producer_epoch=0, base_sequence=0, is_transactional=True)


def torn_marker(root: Path, key: bytes, kept: int, name: str = "ld") -> Path:
    """``root/name``: pay-0 with its marker torn after ``kept`` of its 78 bytes."""
    ld = LogDir(root / name)
    data, marker = txn_batch(0, 5, 7), control_batch(5, key, producer_id=7)
    assert (len(data), len(marker)) == (DATA_BYTES, MARKER_BYTES)
    part = ld.partition("pay", 0, {0: [data, marker]}, snapshot=False)
    ld.finish(clean=False, recovery_points={("pay", 0): 0}, high_watermarks={("pay", 0): 6})
    part.file(".log").write_bytes(data + marker[:kept])
    return ld.path


def clean_without_snapshots(root: Path, name: str = "ld") -> Path:
    """``root/name``: open-0, an open transaction and a clean shutdown without any snapshot."""
    ld = LogDir(root / name)
    ld.partition("open", 0, {0: [txn_batch(0, 3, 8), batch(3, 2)]}, snapshot=False)
    return ld.finish(clean=True)


def marker_in_deleted_segment(root: Path, name: str = "ld") -> Path:
    """``root/name``: pay-0 whose COMMIT is intact in a segment the start deletes after damage before it."""
    ld = LogDir(root / name)
    part = ld.partition("pay", 0, {0: [txn_batch(0, 5, 7), batch(5, 1)],
                                   6: [control_batch(6, COMMIT, producer_id=7), batch(7, 1)]}, snapshot=False)
    ld.finish(clean=False, recovery_points={("pay", 0): 0})
    log = part.file(".log")
    data = bytearray(log.read_bytes())
    data[-5] ^= 0xFF
    log.write_bytes(bytes(data))
    return ld.path
