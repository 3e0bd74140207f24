"""A partition built for ``kseg grep``'s tests: every kind of batch the search treats differently.

Made here from kseg's own encoder (``encode_batch`` writes what Kafka's
MemoryRecordsBuilder writes: tests/interop checks it against kafka-clients),
with its .index and .timeindex from the loading model's ``build_indexes``
(``LogSegment.recover``'s loop) at a small index interval, so windows go
through real index entries.  Two segments:

* 0: plain batches (text keys and values, headers, a binary key, a null key,
  a null value), a gzip batch, a magic-1 message set, producer 7's committed
  transaction, producer 8's aborted one, each with its marker;
* 40: producer 9's transaction that is still open, plain batches after it,
  timestamps that go backwards inside a batch (CreateTime is the producer's).
"""

from __future__ import annotations

from pathlib import Path

from kseg.format import RecordSpec, encode_batch
from kseg.format.control import ABORT, COMMIT, encode_control_key, encode_end_txn_marker
from kseg.recovery.indexes import build_indexes

T0 = 1_700_000_000_000


def _plain(first: int, n: int, ts: int, **kw: object) -> bytes:
    records = [RecordSpec(first + i, ts + i, f"k{first + i}".encode(), f"value {first + i}".encode())
               for i in range(n)]
    return encode_batch(records, **kw)  # type: ignore[arg-type]


def _marker(offset: int, pid: int, kind: int, ts: int) -> bytes:
    return encode_batch([RecordSpec(offset, ts, encode_control_key(kind), encode_end_txn_marker(3))],
                        producer_id=pid, producer_epoch=0, is_transactional=True, is_control=True)


def _txn(first: int, n: int, pid: int, ts: int) -> bytes:
    records = [RecordSpec(first + i, ts + i, f"t{pid}-{i}".encode(), f"txn value {pid}/{i}".encode())
               for i in range(n)]
    return encode_batch(records, producer_id=pid, producer_epoch=0, base_sequence=0, is_transactional=True)


def segment_0() -> bytes:
    parts = [
        _plain(0, 5, T0),
        encode_batch([
            RecordSpec(5, T0 + 10, b"order-17", b'{"customer":{"id":"C-17"}}', ((b"trace-id", b"4bf92f35"),)),
            RecordSpec(6, T0 + 11, b"\x00\xffbin", b"binary key", ((b"trace-id", b"aaaa"), (b"flag", None))),
            RecordSpec(7, T0 + 12, None, b"no key here"),
            RecordSpec(8, T0 + 13, b"tombstone", None),
        ]),
        _plain(9, 4, T0 + 20, codec="gzip"),
        _plain(13, 3, T0 + 30, magic=1),
        _txn(16, 3, 7, T0 + 40),
        _txn(19, 2, 8, T0 + 50),
        _marker(21, 7, COMMIT, T0 + 60),
        _plain(22, 6, T0 + 70, producer_id=5, producer_epoch=0, base_sequence=0),
        _marker(28, 8, ABORT, T0 + 80),
        _plain(29, 11, T0 + 90),
    ]
    return b"".join(parts)


def segment_40() -> bytes:
    backwards = encode_batch([RecordSpec(46, T0 + 300, b"late-a", b"x"), RecordSpec(47, T0 + 150, b"late-b", b"y")])
    return b"".join([_txn(40, 3, 9, T0 + 200), _plain(43, 3, T0 + 210), backwards, _plain(48, 2, T0 + 400)])


def write_partition(parent: Path, name: str = "orders-0") -> Path:
    """The two segments with their indexes under ``parent/name``; returns the partition directory."""
    part = parent / name
    part.mkdir(parents=True)
    for base, data in ((0, segment_0()), (40, segment_40())):
        stem = part / f"{base:020d}"
        stem.with_suffix(".log").write_bytes(data)
        built = build_indexes(data, base, index_interval_bytes=100)
        stem.with_suffix(".index").write_bytes(built.offset_index)
        stem.with_suffix(".timeindex").write_bytes(built.time_index)
    return part
