"""A batch's records for deep iteration: decoded, described (control batches) or handed over encoded.

Here are Kafka's per-record rules that the dump follows: the non-consecutive
offsets check across a file (:class:`RecordState`), when an internal-topic
decoder runs and what it means when it throws, how a control record is
described and when Kafka's tool dies on one.
"""

from __future__ import annotations

from collections.abc import Generator, Iterator, Sequence
from typing import TYPE_CHECKING

from kseg.errors import KsegError
from kseg.format import Batch, LegacyBatch
from kseg.format.model import Record
from kseg.format.records_render import check_parts
from kseg.format.v2 import V2Batch
from kseg.ops.dump.decode import decode_records, hands_out_none
from kseg.ops.dump.events import (
    AnyRecord,
    ControlRecord,
    DecodedRecord,
    EncodedRecords,
    Event,
    Problem,
    RecordsEvent,
)
from kseg.ops.dump.legacy import LazyMessage, lazy_message
from kseg.ops.dump.options import DumpOptions
from kseg.ops.dump.summaries import Summaries

if TYPE_CHECKING:
    from kseg.format.internal import Decoded



class RecordState:
    """Per-file deep-iteration state: Kafka's ``lastOffset`` for the non-consecutive check.

    Scala (<= 4.2) takes -1 for "none yet"; 4.3's ``dumpBatchRecords`` compares the first
    record with -1 + 1 as well, so a log that does not start at offset 0 reports ``-1 is followed by N``.
    """

    __slots__ = ("java", "last", "pairs", "path", "summaries")

    def __init__(self, summaries: Summaries, path: str) -> None:
        self.last = -1  # Kafka's lastOffset: -1 means "none yet" (and a record at -1 resets it)
        self.java = summaries.java
        self.summaries = summaries
        self.path = path
        self.pairs = summaries.non_consecutive_for(path)

    def track(self, offsets: Sequence[int]) -> None:
        """Kafka's check, record by record; a run of consecutive offsets takes the short way."""
        if not offsets:
            return
        first = offsets[0]
        count = len(offsets)
        if (
            ((self.last == -1 and not self.java) or first == self.last + 1)
            and offsets[-1] == first + count - 1
            and (count < 3 or type(offsets) is range or offsets == list(range(first, first + count)))
        ):
            self.last = offsets[-1]
            return
        for offset in offsets:
            if self.last == -1 and not self.java:
                self.last = offset
            elif offset != self.last + 1:
                self.pairs.append(self.last)
                self.pairs.append(offset)
                self.summaries.note_non_consecutive(self.path)
            self.last = offset


def _problem(display: str, batch: Batch, err: KsegError) -> Problem:
    return Problem(display, err.offset if err.offset is not None else batch.position, err.message)


def records_events(
    batch: Batch, display: str, options: DumpOptions, state: RecordState
) -> Generator[Event, None, bool]:
    """The records of one batch as one event, then the problems; returns True when Kafka's tool would
    stop the file here (the records were cut short).  Records an internal-topic decoder reports Kafka
    would have died on are problems too, but the dump goes on after those."""
    if (options.json_records or options.encoded_records) and options.decoder is None and not batch.is_control and isinstance(batch, V2Batch):
        # a large batch goes encoded only when the compiled core has read it whole (else: in chunks, below)
        small = _small(batch)
        parts = None if small else check_parts(batch, options.max_batch_bytes)
        if small or parts is not None:
            encoded = EncodedRecords(batch, options.max_batch_bytes, parts)
            yield RecordsEvent(display, [], encoded)
            offsets, err = encoded.outcome()  # the consumer has read them by now (or they are decoded here)
            state.track(offsets)
            if err is not None:
                yield _problem(display, batch, err)
            return err is not None
    return (yield from _decoded_events(batch, display, options, state))


def _decoded_events(
    batch: Batch, display: str, options: DumpOptions, state: RecordState
) -> Generator[Event, None, bool]:
    """:func:`records_events` for records decoded here: control batches, decoders, the chunked reader."""
    if batch.is_control:
        records, err = decode_records(batch, options.max_batch_bytes)
        problem = None if err is None else _problem(display, batch, err)
        return (yield from _control_events(records, display, batch, options, state, problem))
    if isinstance(batch, LegacyBatch) and options.kafka_text:
        lazy = lazy_message(batch, options.max_batch_bytes)
        if lazy is not None:
            return (yield from _lazy_message_events(lazy, display, batch, options, state))
    aborts: list[Problem] = []
    chunks = _record_chunks(batch, options.max_batch_bytes)
    for records, last in chunks:
        state.track([r[0] for r in records])
        if options.decoder is None:
            yield RecordsEvent(display, records, last=last)
        else:
            decoded, chunk_aborts = _decode_data_records(records, options, display, batch.position)
            aborts += chunk_aborts
            yield RecordsEvent(display, decoded, last=last)
    yield from aborts
    if chunks.error is not None:
        yield _problem(display, batch, chunks.error)
    return chunks.error is not None


#: Records per :class:`RecordsEvent`: a batch larger than this comes in several events.
CHUNK_RECORDS = 4096
#: Largest batch whose records go to the JSON writer encoded (its one-pass writer reads a batch whole).
_ENCODED_MAX_BYTES = 1 << 20


def _small(batch: V2Batch) -> bool:
    """A batch small enough to be written whole by the one-pass JSON writer."""
    return batch.count <= CHUNK_RECORDS and batch.size <= _ENCODED_MAX_BYTES


class _RecordChunks:
    """A batch's records as Kafka's iterator hands them out, ``CHUNK_RECORDS`` at a time, then what it threw.

    Iterating gives (records, last) pairs, the last one flagged (possibly empty); :attr:`error` is then
    set.  One record is held back: Kafka's V2 iterator notices left-over bytes only when asked for the
    last record and throws instead of returning it, so on "records still remaining" (field
    ``batch.records``) the record read last is dropped, as :func:`decode_records` does; a compressed
    batch that fails hands out no record at all (:func:`~kseg.ops.dump.decode.hands_out_none`).
    """

    __slots__ = ("batch", "error", "max_batch_bytes")

    def __init__(self, batch: Batch, max_batch_bytes: int) -> None:
        self.batch = batch
        self.max_batch_bytes = max_batch_bytes
        self.error: KsegError | None = None

    def __iter__(self) -> Iterator[tuple[list[Record], bool]]:
        chunk: list[Record] = []
        pending: Record | None = None
        if hands_out_none(self.batch) and (self.batch.count or 0) > CHUNK_RECORDS and not self._reads_whole():
            yield [], True  # Kafka reads a compressed batch whole first: it hands out none of these
            return
        try:
            for record in self.batch.iter_records(self.max_batch_bytes):
                if pending is not None:
                    chunk.append(pending)
                    if len(chunk) >= CHUNK_RECORDS:
                        yield chunk, False
                        chunk = []
                pending = record
        except KsegError as err:
            self.error = err
            if err.field == "batch.records":
                pending = None
            if hands_out_none(self.batch):
                chunk, pending = [], None
        if pending is not None:
            chunk.append(pending)
        yield chunk, True

    def _reads_whole(self) -> bool:
        """Read a large compressed batch's records once without keeping them (chunks are handed out before
        the last record is read); False, with :attr:`error` set, when one fails."""
        try:
            for _ in self.batch.iter_records(self.max_batch_bytes):
                pass
        except KsegError as err:
            self.error = err
            return False
        return True


def _lazy_message_events(
    lazy: LazyMessage, display: str, batch: Batch, options: DumpOptions, state: RecordState
) -> Generator[Event, None, bool]:
    """A V0/V1 message whose key or value length runs past it: the line Kafka prints (its stored sizes), then
    kseg's problem.  Kafka dies before the line when ``printRecordMetadata`` cannot read a size, or (metadata
    skipped) when the data it prints needs one; after it when it prints the key and value; else it goes on."""
    state.track([lazy.record.offset])
    problem = _problem(display, batch, lazy.error)
    skip = options.skip_record_metadata
    if (not skip and not lazy.sizes_readable) or (skip and options.print_data_log):
        yield problem
        return True
    yield RecordsEvent(display, [lazy.record])  # no key or value: with --print-data-log only the metadata
    yield problem
    return options.print_data_log


def _record_chunks(batch: Batch, max_batch_bytes: int) -> _RecordChunks:
    return _RecordChunks(batch, max_batch_bytes)


def _control_events(
    records: list[Record], display: str, batch: Batch, options: DumpOptions, state: RecordState,
    problem: Problem | None,
) -> Generator[Event, None, bool]:
    """A control batch's records, described; Kafka's tool dies at the first it cannot read."""
    described: list[AnyRecord] = []
    for record in records:
        state.track([record[0]])
        event = _control_event(record, options)
        described.append(event)
        if event.failed:
            yield RecordsEvent(display, described)
            yield Problem(display, batch.position, f"control record at offset {record.offset}: {event.error}")
            return True
    yield RecordsEvent(display, described)
    if problem is not None:
        yield problem
    return problem is not None


def _decode_data_records(
    records: list[Record], options: DumpOptions, display: str, position: int
) -> tuple[list[AnyRecord], list[Problem]]:
    """Run an internal-topic decoder over a batch's data records (only when asked: it is the slow path),
    in the text of the release ``options.dialect`` names."""
    from kseg.format.internal import dialect_decoder

    dialect = options.dialect
    assert options.decoder is not None
    decode = dialect_decoder(options.decoder, coordinator_json=dialect.coordinator_json_4_1,
                             offsets_known=dialect.offsets_known_types, txn_idx_empty=dialect.remote_txn_idx_empty,
                             record_internal=dialect.record_internal_package)
    out: list[AnyRecord] = []
    aborts: list[Problem] = []
    for record in records:
        decoded = decode(record[2], record[3], record[0])
        out.append(DecodedRecord(record, decoded))
        if decoded.kafka_aborts:
            aborts.append(Problem(display, position, _abort_message(record, decoded)))
    return out, aborts


def _abort_message(record: Record, decoded: Decoded) -> str:
    """``record at offset O: <key|value> byte N (field): <why>; kafka-dump-log stops here: <its exception>``."""
    kafka_text = decoded.key_text or ""
    prefix = f"Error at offset {record.offset}, skipping. "
    kafka_text = kafka_text.removeprefix(prefix)
    problem = decoded.problem
    where = ""
    if problem is not None and problem.offset is not None:
        where = f"{problem.part} byte {problem.offset}" + (f" ({problem.field})" if problem.field else "") + ": "
    why = problem.message if problem is not None else "cannot be decoded"
    return f"record at offset {record.offset}: {where}{why}; kafka-dump-log stops here: {kafka_text}"


def _control_event(record: Record, options: DumpOptions) -> ControlRecord:
    """Describe a control record the way the dump tool does.

    Kafka reads the key of every control record and the value of COMMIT/ABORT
    markers and of the KRaft records it prints as JSON -- which those are
    depends on the release (``Dialect.reads_control_value``: before 4.1 not
    LEADER_CHANGE's, which it named only); where that read throws, the tool dies.  With --skip-record-metadata it does not
    look at control records at all, so nothing can fail then.
    """
    from kseg.format.internal import KRAFT_CONTROL, describe_control_record

    described = describe_control_record(record.key, record.value)
    read_by_kafka = described.type_id not in KRAFT_CONTROL or options.dialect.reads_control_value(described.type_id)
    kafka_dies = described.problem is not None and read_by_kafka
    return ControlRecord(record, described, failed=kafka_dies and not options.skip_record_metadata)
