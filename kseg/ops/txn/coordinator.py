"""What the coordinators' own logs say: ``__transaction_state`` per transactional id, ``__consumer_offsets`` per group.

Both are compacted topics whose newest record for a key is the state (a
tombstone removes the key); the transaction and group coordinators rebuild
their memory that way when they load a partition
(``TransactionStateManager.loadTransactionMetadata`` in
transaction-coordinator, ``GroupMetadataManager`` / ``OffsetMetadataManager.replay``
in group-coordinator, Kafka 4.3.0).  Records are decoded by the same decoders
as ``kseg dump --transaction-log-decoder`` / ``--offsets-decoder``
(:mod:`kseg.format.internal`).

Offsets committed inside a transaction (``TxnOffsetCommit``) sit in
``__consumer_offsets`` as transactional batches: the group coordinator holds
them pending and applies them only when the COMMIT marker comes
(``OffsetMetadataManager.replayEndTransactionMarker``); an ABORT drops them.
The same is done here.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kseg.errors import KsegError, LimitExceeded
from kseg.format.compression import DEFAULT_MAX_DECOMPRESSED
from kseg.format.control import ABORT
from kseg.format.internal import decode_offsets_record, decode_transaction_record
from kseg.format.v2 import V2Batch
from kseg.recovery.producer_state import end_txn_marker
from kseg.segment import Segment

TRANSACTION_TOPIC = "__transaction_state"
OFFSETS_TOPIC = "__consumer_offsets"
OFFSET_COMMIT_TYPES = (0, 1)  # OffsetCommitKey versions 0 and 1 (GroupCoordinatorRecordSerde)
#: ``served(first, last)``: whether the next start serves the batch of offsets ``first``-``last``.
Served = Callable[[int, int], bool]


@dataclass(frozen=True, slots=True)
class CoordinatorTxn:
    """The transaction coordinator's newest record for one transactional id (``TransactionLogValue``)."""

    transactional_id: str
    producer_id: int | None  # None: a tombstone (the id was expired and removed)
    producer_epoch: int | None
    state: str  # TransactionState name, or "Deleted" for a tombstone
    partitions: tuple[tuple[str, int], ...]
    last_update_ms: int | None
    timeout_ms: int | None
    path: str  # the __transaction_state segment and offset it came from
    offset: int

    def as_json(self) -> dict[str, object]:
        return {"transactional_id": self.transactional_id, "producer_id": self.producer_id,
                "producer_epoch": self.producer_epoch, "state": self.state,
                "partitions": [f"{t}-{p}" for t, p in self.partitions], "last_update_ms": self.last_update_ms,
                "timeout_ms": self.timeout_ms, "source": f"{self.path} offset {self.offset}"}


@dataclass(slots=True)
class CoordinatorView:
    """Everything read from the internal topics found in the paths given."""

    transactions: dict[str, CoordinatorTxn] = field(default_factory=dict)  # by transactional id
    offsets: dict[tuple[str, str, int], int] = field(default_factory=dict)  # (group, topic, partition) -> offset
    transaction_partitions: int = 0
    offsets_partitions: int = 0
    undecodable: int = 0  # records the decoders could not read (left out)
    damaged: list[str] = field(default_factory=list)  # batches that cannot be decoded: file, byte, why (skipped)

    def by_producer(self, producer_id: int) -> CoordinatorTxn | None:
        """``ListTransactions`` filtered by producer id, as ``find-hanging`` looks a producer's transactional id up."""
        found = [t for t in self.transactions.values() if t.producer_id == producer_id]
        return max(found, key=lambda t: (t.last_update_ms or -1, t.offset)) if found else None


def _records(
    view: CoordinatorView, logs: list[Path], max_batch_bytes: int, served: Served
) -> Iterator[tuple[Path, V2Batch, Any]]:
    """(log, batch, record) of every magic-2 batch the next start serves, control batches with no records once.

    The coordinator replays its partition as the start leaves it: a batch at offsets the start cuts,
    deletes or leaves beyond the log end is not read (``served``).  A batch that cannot be decoded is a
    finding (``view.damaged``, file and byte) and is skipped, as the verdict's commands count it and go
    on.  Records are decompressed under the read cap ``max_batch_bytes``; past it the error (file, byte,
    cap) ends the command: a coordinator view missing a batch would mislead.
    """
    for log in logs:
        try:
            with Segment(log) as seg:
                for pos, _, magic, header, _ in seg.walk(strict=False).frames():
                    seg.release(pos)
                    if header is None or magic != 2:
                        continue
                    yield from _batch_records(view, log, seg, pos, max_batch_bytes, served)
        except LimitExceeded as err:
            raise err.with_path(str(log)) from None
        except KsegError as err:
            view.damaged.append(str(err.with_path(str(log))))  # the file itself cannot be read: nothing of it is replayed


def _batch_records(
    view: CoordinatorView, log: Path, seg: Segment, pos: int, cap: int, served: Served
) -> Iterator[tuple[Path, V2Batch, Any]]:
    """One batch's records, or nothing when it is not served or cannot be decoded (a finding)."""
    try:
        batch = V2Batch(seg.buf, pos)
        if not served(batch.base_offset, batch.last_offset):
            return
        if batch.is_control:
            records: list[Any] = [None]
        else:
            records = list(batch.iter_records(cap))
    except LimitExceeded:
        raise
    except KsegError as err:
        view.damaged.append(str(err.with_path(str(log))))
        return
    for record in records:
        yield log, batch, record


def _everything(first: int, last: int) -> bool:
    return True


def read_transaction_state(
    view: CoordinatorView, logs: list[Path], max_batch_bytes: int = DEFAULT_MAX_DECOMPRESSED,
    served: Served = _everything,
) -> None:
    """Fold one ``__transaction_state`` partition into ``view.transactions`` (newest record wins)."""
    view.transaction_partitions += 1
    for log, _, record in _records(view, logs, max_batch_bytes, served):
        if record is None:
            continue
        decoded = decode_transaction_record(record.key, record.value, record.offset)
        if decoded.problem is not None or decoded.key is None:
            view.undecodable += 1
            continue
        txn_id = decoded.key["data"]["transactionalId"]
        view.transactions[txn_id] = _coordinator_txn(txn_id, decoded.value, str(log), record.offset)


def _coordinator_txn(txn_id: str, value: dict[str, Any] | None, path: str, offset: int) -> CoordinatorTxn:
    if value is None:
        return CoordinatorTxn(txn_id, None, None, "Deleted", (), None, None, path, offset)
    data = value["data"]
    groups = data.get("transactionPartitions") or []
    partitions = tuple(sorted((g["topic"], p) for g in groups for p in g["partitionIds"]))
    return CoordinatorTxn(txn_id, data["producerId"], data["producerEpoch"], value["state"], partitions,
                          data["transactionLastUpdateTimestampMs"], data["transactionTimeoutMs"], path, offset)


def read_consumer_offsets(
    view: CoordinatorView, logs: list[Path], max_batch_bytes: int = DEFAULT_MAX_DECOMPRESSED,
    served: Served = _everything,
) -> None:
    """Fold one ``__consumer_offsets`` partition into ``view.offsets``; transactional commits wait for COMMIT."""
    view.offsets_partitions += 1
    pending: dict[int, list[tuple[tuple[str, str, int], int | None]]] = {}
    for log, batch, record in _records(view, logs, max_batch_bytes, served):
        if record is None:
            try:
                marker = end_txn_marker(batch, max_batch_bytes)
            except LimitExceeded:
                raise
            except KsegError as err:  # a damaged marker: a finding, and the pending commits stay unapplied
                view.damaged.append(str(err.with_path(str(log))))
                continue
            commits = pending.pop(batch.producer_id, [])
            if marker is not None and marker[0] != ABORT:
                _apply(view, commits)
            continue
        commit = _offset_commit(view, record)
        if commit is None:
            continue
        if batch.is_transactional:
            pending.setdefault(batch.producer_id, []).append(commit)
        else:
            _apply(view, [commit])


def _offset_commit(view: CoordinatorView, record: Any) -> tuple[tuple[str, str, int], int | None] | None:
    """((group, topic, partition), offset or None for a tombstone) of an OffsetCommit record, else None."""
    decoded = decode_offsets_record(record.key, record.value, record.offset)
    if decoded.problem is not None or decoded.key is None:
        view.undecodable += 1
        return None
    if decoded.key["type"] not in OFFSET_COMMIT_TYPES:
        return None
    key = decoded.key["data"]
    offset = None if decoded.value is None else decoded.value["data"]["offset"]
    return (key["group"], key["topic"], key["partition"]), offset


def _apply(view: CoordinatorView, commits: list[tuple[tuple[str, str, int], int | None]]) -> None:
    for key, offset in commits:
        if offset is None:
            view.offsets.pop(key, None)
        else:
            view.offsets[key] = offset
