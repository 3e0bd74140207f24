"""What becomes of transactional records when ``kseg convert`` drops their markers.

Below magic 2 there are no transactions: Kafka's down-conversion (the fetch
path) drops the markers, and old consumers see every record, aborted or not.
The report says how many such records there were; this module counts them,
per producer, across the segments of a partition.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kseg.errors import KsegError
from kseg.format import Batch
from kseg.format.control import ABORT, COMMIT, decode_control_key


@dataclass(slots=True)
class TxnDeliveries:
    """What becomes of transactional records once their markers are gone (down-conversion).

    Counts converted transactional records per producer until that producer's
    next COMMIT or ABORT marker; records of an aborted transaction are then
    delivered to old consumers as ordinary records -- exactly what Kafka's
    down-conversion does.  Carried across the segments of a partition.
    """

    open_records: dict[int, int] = field(default_factory=dict)  # producer id -> records since its last marker
    aborted: int = 0
    committed: int = 0

    @property
    def undecided(self) -> int:
        """Transactional records whose marker is not in the converted data."""
        return sum(self.open_records.values())

    def observe(self, batch: Batch, records: int, first_key: bytes | None) -> None:
        """Count a batch of ``records`` records (``first_key``: its first record's, a marker's type)."""
        if batch.is_control:
            kind = _marker_kind(records, first_key)
            if kind in (ABORT, COMMIT):
                finished = self.open_records.pop(batch.producer_id, 0)
                if kind == ABORT:
                    self.aborted += finished
                else:
                    self.committed += finished
        elif batch.is_transactional and records:
            self.open_records[batch.producer_id] = self.open_records.get(batch.producer_id, 0) + records


def _marker_kind(records: int, first_key: bytes | None) -> int | None:
    """ABORT or COMMIT for an end-transaction marker; None for other control records."""
    if not records:
        return None
    try:
        return decode_control_key(first_key).type_id
    except KsegError:
        return None


__all__ = ["TxnDeliveries"]
