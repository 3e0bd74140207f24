"""``dumpProducerIdSnapshot`` and ``dumpTxnIndex``: a partition's producer and transaction state files.

The snapshot is read with :mod:`kseg.format.snapshot` (Kafka's own messages for
a corrupt one); aborted-transaction slots have :data:`kseg.index.TXN_ENTRY`'s layout.
"""

from __future__ import annotations

from collections.abc import Iterator

from kseg.errors import KsegError
from kseg.format.snapshot import check_snapshot, read_snapshot
from kseg.index import TXN_ENTRY, zero_steps
from kseg.ops.dump.events import Event, Problem, ProducerEntryEvent, TxnEntry
from kseg.ops.dump.options import DumpOptions
from kseg.ops.dump.targets import DumpTarget, name_offset
from kseg.segment import MappedFile, read_small_file, release_pages


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


def dump_txn_index(target: DumpTarget, options: DumpOptions | None = None) -> Iterator[Event]:
    """``dumpTxnIndex``: Kafka collects every entry first, so a bad version prints none of them.

    With an offset window (``--from-offset``/``--to-offset``) only the aborted ranges that overlap it are shown.
    """
    base = name_offset(target)
    if isinstance(base, Problem):
        yield base
        return
    with MappedFile(target.path) as mapped:
        count = len(mapped.buf) // TXN_ENTRY.size
        bad = _first_bad_version(mapped, count)
        if bad is not None:
            version, position = bad
            yield Problem(
                target.display,
                position,
                f"Unexpected aborted transaction version {version} in transaction index "
                f"{target.absolute}, current version is 0",
            )
            return
        entries = _txn_entries(target, mapped, count)
        if options is not None and (options.from_offset is not None or options.to_offset is not None):
            window = options
            entries = (e for e in entries
                       if not isinstance(e, TxnEntry) or not window.outside_range(e.first_offset, e.last_offset))
        yield from entries


def _zero_steps(mapped: MappedFile, count: int) -> Iterator[tuple[int, int, bool]]:
    """(first entry, end entry, all zero) per 64 Ki-entry step, each step's pages released (and counted
    for progress) as it is passed; a short file prints as Kafka prints it."""
    return zero_steps(mapped.buf, count, TXN_ENTRY.size, release_pages)


def _first_bad_version(mapped: MappedFile, count: int) -> tuple[int, int] | None:
    """Kafka collects every entry first: the first version above 0 and its position, if any."""
    buf = mapped.buf
    for first, end, zero in _zero_steps(mapped, count):
        if zero:
            continue
        for i in range(first, end):
            version = _signed_byte(buf[i * TXN_ENTRY.size])
            if version > 0:
                return version, i * TXN_ENTRY.size
    return None


def _txn_entries(target: DumpTarget, mapped: MappedFile, count: int) -> Iterator[Event]:
    """Every entry, a run of all-zero steps as one entry with its ``repeat``."""
    buf, zero_from = mapped.buf, None
    for first, end, zero in _zero_steps(mapped, count):
        if zero:
            zero_from = first if zero_from is None else zero_from
            continue
        if zero_from is not None:
            yield TxnEntry(target.display, 0, 0, 0, 0, 0, repeat=first - zero_from)
            zero_from = None
        for i in range(first, end):
            position = i * TXN_ENTRY.size
            _, producer_id, first_offset, last, lso = TXN_ENTRY.unpack_from(buf, position)
            yield TxnEntry(target.display, _signed_byte(buf[position]), producer_id, first_offset, last, lso)
    if zero_from is not None:
        yield TxnEntry(target.display, 0, 0, 0, 0, 0, repeat=count - zero_from)


def _signed_byte(value: int) -> int:
    return value - 256 if value >= 128 else value
