"""``dumpProducerIdSnapshot`` and ``dumpTxnIndex``: a partition's producer and transaction state files.

The snapshot is read with :mod:`kseg.format.snapshot` (Kafka's own messages for
a corrupt one); aborted-transaction slots have :data:`kseg.index.TXN_ENTRY`'s layout.
"""

from __future__ import annotations

from collections.abc import Iterator

from kseg.errors import KsegError
from kseg.format.snapshot import check_snapshot, read_snapshot
from kseg.index import TXN_ENTRY
from kseg.ops.dump.events import Event, Problem, ProducerEntryEvent, TxnEntry
from kseg.ops.dump.targets import DumpTarget, name_offset
from kseg.segment import MappedFile, read_small_file


def dump_producer_snapshot(target: DumpTarget) -> Iterator[Event]:
    """``dumpProducerIdSnapshot``: a corrupt snapshot is reported with Kafka's own message (stderr)."""
    data = read_small_file(target.path)
    try:
        snapshot = read_snapshot(data)
        check_snapshot(snapshot)
    except KsegError as err:
        yield Problem(target.display, err.offset, err.message, kafka_text=err.message.startswith("Snapshot "))
        return
    for entry in snapshot.entries:
        yield ProducerEntryEvent(target.display, entry)


def dump_txn_index(target: DumpTarget) -> Iterator[Event]:
    """``dumpTxnIndex``: Kafka collects every entry first, so a bad version prints none of them."""
    base = name_offset(target)
    if isinstance(base, Problem):
        yield base
        return
    with MappedFile(target.path) as mapped:
        buf = mapped.buf
        count = len(buf) // TXN_ENTRY.size
        for i in range(count):
            version = _signed_byte(buf[i * TXN_ENTRY.size])
            if version > 0:
                yield Problem(
                    target.display,
                    i * TXN_ENTRY.size,
                    f"Unexpected aborted transaction version {version} in transaction index "
                    f"{target.absolute}, current version is 0",
                )
                return
        for i in range(count):
            position = i * TXN_ENTRY.size
            _, producer_id, first, last, lso = TXN_ENTRY.unpack_from(buf, position)
            yield TxnEntry(target.display, _signed_byte(buf[position]), producer_id, first, last, lso)


def _signed_byte(value: int) -> int:
    return value - 256 if value >= 128 else value
