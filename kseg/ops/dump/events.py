"""What ``kseg dump`` yields: one small typed event per thing Kafka's tool would print (or die on).

The walk (kseg.ops.dump) yields these and never prints; kseg.render.dump turns
them into Kafka's text, JSON lines or a table, dispatching on the type.  Events
carry data only -- batches, decoded records, entries, findings -- never text.
The side files' events live in :mod:`kseg.ops.dump.side_events`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from kseg.errors import KsegError
from kseg.format import Batch
from kseg.format.control import CONTROL_KEY
from kseg.format.model import Record
from kseg.format.records_render import BatchParts
from kseg.format.snapshot import ProducerEntry
from kseg.format.v2 import V2Batch
from kseg.ops.dump.decode import decode_records
from kseg.ops.dump.side_events import SideEvent

if TYPE_CHECKING:  # imported lazily at run time: only control batches and --*-decoder need them
    from kseg.format.internal import ControlRecord as DescribedControl
    from kseg.format.internal import Decoded


@dataclass(frozen=True, slots=True)
class FileStart:
    """``Dumping <path>``; ``kind`` is the handler (log, index, ...) or None for an ignored file."""

    path: str
    kind: str | None


@dataclass(frozen=True, slots=True)
class LogStart:
    path: str
    base_offset: int


@dataclass(frozen=True, slots=True)
class SnapshotStart:
    """A KRaft snapshot ``<end offset>-<epoch>.checkpoint``."""

    path: str
    end_offset: int
    epoch: int


@dataclass(frozen=True, slots=True)
class BootstrapStart:
    path: str


@dataclass(frozen=True, slots=True)
class Notice:
    """A line Kafka prints on stdout outside the dump proper (deprecated decoder class names)."""

    text: str


@dataclass(frozen=True, slots=True)
class BatchEvent:
    """One batch as Kafka's iterator yields it; ``batch`` is the format layer's view (read lazily).

    With deep iteration a :class:`RecordsEvent` with its records follows.  ``codec_error`` is set
    when the codec id is one Kafka cannot name (5-7), or a legacy batch's magic is neither 0 nor 1:
    Kafka dies half-way through printing this batch's line.
    """

    path: str
    batch: Batch
    deep: bool
    codec_error: bool = False


class EncodedRecords:
    """The records of a magic-2 data batch, handed over still encoded (``DumpOptions.json_records``).

    A JSON writer reads them once, straight from the batch's bytes, and tells
    :meth:`written` their offsets; any other consumer asks for them
    :meth:`decoded`.  Whichever happens first is kept, so the walk -- which
    resumes after the event was handled -- learns the offsets for Kafka's
    non-consecutive check and, where the records do not decode, what Kafka's
    iterator throws (:meth:`outcome`), without reading the records twice.
    """

    __slots__ = ("_decoded", "_offsets", "batch", "max_batch_bytes", "parts")

    def __init__(self, batch: V2Batch, max_batch_bytes: int, parts: BatchParts | None = None) -> None:
        self.batch = batch
        self.max_batch_bytes = max_batch_bytes  # the read cap (--max-batch-bytes)
        #: A large batch the compiled core has read whole: rendered a part at a time (its offsets known).
        self.parts = parts
        self._offsets: Sequence[int] | None = None if parts is None else parts.offsets
        self._decoded: tuple[list[Record], KsegError | None] | None = None

    def written(self, offsets: Sequence[int]) -> None:
        """A writer read every record cleanly; these are their offsets."""
        self._offsets = offsets

    def decoded(self) -> tuple[list[Record], KsegError | None]:
        """The records Kafka's iterator hands out, and what it throws (decoded once)."""
        if self._decoded is None:
            self._decoded = decode_records(self.batch, self.max_batch_bytes)
        return self._decoded

    def outcome(self) -> tuple[Sequence[int], KsegError | None]:
        """The offsets of the records handed out and the error that cut them short, if any."""
        if self._offsets is not None:
            return self._offsets, None
        records, err = self.decoded()
        return [r[0] for r in records], err


@dataclass(frozen=True, slots=True)
class ControlRecord:
    """A record of a control batch, described as the dump tool describes it.

    ``control`` is :func:`kseg.format.internal.describe_control_record`'s
    answer: ``.text`` is what kafka-dump-log prints after the record metadata
    (``endTxnMarker: COMMIT coordinatorEpoch: 5``, ``SnapshotHeader {...}``,
    ``controlType: LEADER_CHANGE(2)``), ``.data`` the decoded value.
    ``failed`` means Kafka's tool would have died on this record (its key, or
    the value of a marker or KRaft record it reads, does not decode); the
    record's metadata was printed first, and a :class:`Problem` follows.
    """

    record: Record
    control: DescribedControl
    failed: bool = False

    @property
    def key_unreadable(self) -> bool:
        return self.control.type_id == -1 and self.control.problem is not None

    @property
    def type_name(self) -> str | None:
        """COMMIT, ABORT, ..., UNKNOWN; None when the key itself cannot be read."""
        return None if self.key_unreadable else self.control.name

    @property
    def error(self) -> str | None:
        return self.control.problem

    @property
    def type_id(self) -> int | None:
        """The type id stored in the key (9 for ``UNKNOWN(9)``); None when the key cannot be read."""
        key = self.record.key
        if self.key_unreadable or key is None:
            return None
        type_id: int = CONTROL_KEY.unpack_from(key)[1]
        return type_id


@dataclass(frozen=True, slots=True)
class DecodedRecord:
    """A data record with key and value decoded by an internal-topic decoder (``--offsets-decoder`` ...).

    ``decoded`` is :class:`kseg.format.internal.Decoded`: kafka-dump-log's key
    and payload texts and the structured JSON.  When ``decoded.kafka_aborts``
    Kafka's tool would have died on this record after printing its metadata;
    kseg prints that, reports a :class:`Problem` and goes on with the next record.
    """

    record: Record
    decoded: Decoded


AnyRecord = Record | ControlRecord | DecodedRecord


@dataclass(frozen=True, slots=True)
class RecordsEvent:
    """The records of the batch just yielded (deep iteration), in order.

    Data records are :class:`~kseg.format.model.Record` tuples, or
    :class:`DecodedRecord` with an internal-topic decoder; records of a
    control batch come as :class:`ControlRecord`.  When Kafka would have died
    part-way through the batch, these are the records it printed first, and a
    :class:`Problem` follows.  With ``DumpOptions.json_records`` a magic-2 data
    batch's records come ``encoded`` instead (``records`` is then empty):
    :meth:`items` decodes them for a consumer that wants them as tuples.
    """

    path: str
    records: Sequence[AnyRecord]
    encoded: EncodedRecords | None = None
    #: False when more of this batch's records follow in the next event: a large batch comes in
    #: chunks, so that memory holds one chunk of records, never the whole batch.
    last: bool = True

    @property
    def json(self) -> EncodedRecords | None:
        """The records left for the JSON writer's one-pass path (None: ``records`` holds them)."""
        return self.encoded

    def items(self) -> Sequence[AnyRecord]:
        """The records, decoded where they came encoded."""
        return self.records if self.encoded is None else self.encoded.decoded()[0]


@dataclass(frozen=True, slots=True)
class TrailingBytes:
    """``Found <count> invalid bytes at the end of <name>``: bytes after the last whole batch."""

    path: str
    name: str
    position: int
    count: int


@dataclass(frozen=True, slots=True)
class IndexStatus:
    """``<path> is empty.`` (status ``empty``) or ``<path> passed sanity check.`` (``sanity_check_passed``)."""

    path: str
    status: str


@dataclass(frozen=True, slots=True)
class IndexEntry:
    path: str
    offset: int
    position: int


@dataclass(frozen=True, slots=True)
class TimeIndexEntry:
    path: str
    timestamp: int
    offset: int


@dataclass(frozen=True, slots=True)
class TxnEntry:
    """One aborted transaction; ``version`` is the signed first byte, as ``AbortedTxn.version()`` reads it."""

    path: str
    version: int
    producer_id: int
    first_offset: int
    last_offset: int
    last_stable_offset: int
    #: This entry stands for itself and ``repeat - 1`` all-zero entries after it: a run of
    #: all-zero slots (a preallocated or sparse file) is summarised, not printed slot by slot.
    repeat: int = 1


@dataclass(frozen=True, slots=True)
class ProducerEntryEvent:
    path: str
    entry: ProducerEntry


@dataclass(frozen=True, slots=True)
class Ignored:
    """``Ignoring unknown file <path>`` (stderr)."""

    path: str


@dataclass(frozen=True, slots=True)
class Problem:
    """Something Kafka's tool would have died on (or, ``kafka_text``, printed on stderr verbatim)."""

    path: str
    position: int | None
    message: str
    kafka_text: bool = False


@dataclass(frozen=True, slots=True)
class Summary:
    """One file's part of a closing summary section, pairs in the order Kafka prints them.

    kinds: ``index_mismatch`` (index offset, log offset), ``time_index_mismatch``
    (index timestamp, log timestamp), ``time_index_out_of_order`` (index
    timestamp, previous timestamp), ``time_index_offset_not_found`` (indexed
    offset, log offset found or -1), ``non_consecutive_offsets`` (offset, next
    offset).  ``path`` is absolute, as Kafka keys them.
    """

    kind: str
    path: str
    pairs: tuple[tuple[int, int], ...]


LogEvent = (
    FileStart | LogStart | SnapshotStart | BootstrapStart | Notice | BatchEvent | RecordsEvent
    | TrailingBytes | IndexStatus | IndexEntry | TimeIndexEntry | TxnEntry | ProducerEntryEvent | Ignored
    | Problem | Summary
)
Event = LogEvent | SideEvent
