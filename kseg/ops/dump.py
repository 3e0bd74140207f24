"""``kseg dump``: what ``kafka-dump-log.sh`` (``kafka.tools.DumpLogSegments``) reports, as data.

:func:`iter_dump` walks the files in order and yields plain events -- a file
header, a batch, a record, an index entry, a problem, the closing summaries
-- one at a time; nothing here prints.  ``kseg.render.dump`` turns the events
into Kafka's exact text, JSON lines or a table.

Kafka's rules are followed to the letter (reference §6): which suffix gets
which handler, when a record is decoded, what is compared with what, and in
which order the summary sections list their findings.  Where Kafka's tool
crashes -- a size field below 14, a record it cannot decode, a missing
sibling file, a name it cannot parse -- kseg yields what Kafka would have
printed up to that point, then a :class:`Problem` with the byte position, and
goes on with the next file.  Everything streams: one batch (and, with deep
iteration, its records) at a time, whatever the segment size.

With one of kafka-dump-log's internal-topic decoders (``DumpOptions.decoder``),
data records come as :class:`DecodedRecord` (kseg.format.internal does the
decoding, only then); where Kafka's decoder throws, kseg reports the record and
goes on with the next one.  Control records are always described by
:func:`kseg.format.internal.describe_control_record`.  The small files beside
the segments, which Kafka's tool ignores or crashes on (checkpoints,
partition.metadata, meta.properties, quorum-state, .kafka_cleanshutdown), are
dumped by kseg.ops.dump_sidefiles.
"""

from __future__ import annotations

import os
import re
from array import array
from collections.abc import Callable, Iterable, Iterator
from contextlib import nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from kseg.errors import KsegError
from kseg.format import BAD_SIZE, Batch, BatchWalk, LegacyBatch
from kseg.format.control import CONTROL_KEY
from kseg.format.model import Record
from kseg.format.snapshot import ProducerEntry, check_snapshot, read_snapshot
from kseg.format.v2 import V2Batch
from kseg.format.v2_json import records_json_utf8
from kseg.index import OFFSET_ENTRY, TIME_ENTRY, TXN_ENTRY
from kseg.ops.discover import PLAIN_FILES, expand_paths
from kseg.segment import MappedFile, Segment, open_segment

if TYPE_CHECKING:  # imported lazily at run time: only control batches and --*-decoder need them
    from kseg.format.internal import ControlRecord as DescribedControl
    from kseg.format.internal import Decoded

INT_MAX = 2**31 - 1  # Kafka's default --max-bytes (Integer.MAX_VALUE)
DEFAULT_MAX_MESSAGE_SIZE = 5 * 1024 * 1024
BOOTSTRAP_CHECKPOINT = "bootstrap.checkpoint"
_SNAPSHOT_NAME = re.compile(r"^(\d{20})-(\d{10})")
_JAVA_LONG = re.compile(r"^[+-]?\d+$")

#: suffix (text from the last ".") -> handler kind, as DumpLogSegments.main dispatches
HANDLED_SUFFIXES = {
    ".log": "log",
    ".checkpoint": "log",
    ".index": "index",
    ".timeindex": "timeindex",
    ".snapshot": "snapshot",
    ".txnindex": "txnindex",
}
CLEAN_SHUTDOWN_FILE = ".kafka_cleanshutdown"
#: Files kafka-dump-log ignores or crashes on and kseg dumps (kseg.ops.dump_sidefiles), by exact name.
SIDE_FILE_NAMES = (*PLAIN_FILES, CLEAN_SHUTDOWN_FILE)
#: kafka-dump-log's internal-topic decoders (option names without ``--`` and ``-decoder``), in the order
#: ``DumpLogSegmentsOptions.messageParser`` tests them: the first one given wins.
DECODER_PRECEDENCE = ("offsets", "transaction-log", "cluster-metadata", "remote-log-metadata", "share-group-state")
LEADER_CHANGE = 2  # the control type kafka-dump-log names without reading its value


# --------------------------------------------------------------------------- options and targets


@dataclass(frozen=True, slots=True)
class DumpOptions:
    """Kafka's options (snake_cased) plus kseg's windows.

    ``max_bytes`` None means Kafka's default (Integer.MAX_VALUE).  Windows
    select whole batches: the first batch shown is the first whose last offset
    reaches ``from_offset`` (found through the .index) and whose max timestamp
    reaches ``from_time`` (through the .timeindex); the last one shown is the
    first whose last offset reaches ``to_offset`` or whose max timestamp
    reaches ``to_time``; ``max_batches`` caps the batches shown per file.
    """

    deep_iteration: bool = False
    print_data_log: bool = False
    skip_record_metadata: bool = False
    max_bytes: int | None = None
    max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE
    index_sanity_check: bool = False
    verify_index_only: bool = False
    decoder_notices: tuple[str, ...] = ()
    from_offset: int | None = None
    to_offset: int | None = None
    from_time: int | None = None
    to_time: int | None = None
    max_batches: int | None = None
    json_records: bool = False  # hot-path hint for the JSON renderer: see RecordsEvent.json
    decoder: str | None = None  # one of DECODER_PRECEDENCE: records are decoded as that internal topic's

    @property
    def deep(self) -> bool:
        """``isDeepIteration``: asked for, or implied by printing data."""
        return self.deep_iteration or self.print_data_log

    @property
    def windowed(self) -> bool:
        return any(
            v is not None for v in (self.from_offset, self.to_offset, self.from_time, self.to_time, self.max_batches)
        )


@dataclass(frozen=True, slots=True)
class DumpTarget:
    """One file to dump: ``display`` is the path as Kafka would print it, ``path`` where it is."""

    display: str
    path: Path

    @property
    def absolute(self) -> str:
        """``File.getAbsolutePath``: the cwd joined on, nothing resolved (Kafka keys summaries by it)."""
        return java_absolute_path(self.display)


def java_path(text: str) -> str:
    """How ``new File(text).toString()`` prints a path: repeated and trailing ``/`` removed."""
    text = re.sub(r"/+", "/", text)
    return text[:-1] if len(text) > 1 and text.endswith("/") else text


def java_absolute_path(display: str) -> str:
    if display.startswith("/"):
        return display
    cwd = os.getcwd()
    return f"{cwd}/{display}" if display else cwd


def targets_for(args: Iterable[str]) -> list[DumpTarget]:
    """Files meant by the arguments: files as given, directories expanded in Kafka's load order."""
    out: list[DumpTarget] = []
    for arg in args:
        path = Path(arg)
        shown = java_path(arg)
        if path.is_dir():
            for child in expand_paths([path]):
                relative = child.relative_to(path).as_posix()
                out.append(DumpTarget(f"{shown.rstrip('/')}/{relative}", child))
        else:
            out.append(DumpTarget(shown, path))
    return out


def handler_kind(name: str) -> str | None:
    """The handler for a file name: a side file by its exact name (the kind is the name), else, as
    Kafka dispatches, by the text from the last ``.`` (None: ignored)."""
    if name in SIDE_FILE_NAMES:
        return name
    dot = name.rfind(".")
    return None if dot < 0 else HANDLED_SUFFIXES.get(name[dot:])


# --------------------------------------------------------------------------- events


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
    when the codec id is one Kafka cannot name (5-7): Kafka dies half-way
    through printing this batch's line.
    """

    path: str
    batch: Batch
    deep: bool
    codec_error: bool = False


@dataclass(frozen=True, slots=True)
class RecordsEvent:
    """The records of the batch just yielded (deep iteration), in order.

    Data records are :class:`~kseg.format.model.Record` tuples, or
    :class:`DecodedRecord` with an internal-topic decoder; records of a
    control batch come as :class:`ControlRecord`.  When Kafka would have died
    part-way through the batch, these are the records it printed first, and a
    :class:`Problem` follows.
    """

    path: str
    records: list
    json: list[str] | None = None  # with DumpOptions.json_records: the records as JSON text instead


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
        return None if self.key_unreadable else CONTROL_KEY.unpack_from(self.record.key)[1]  # type: ignore[arg-type]


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


Event = (
    FileStart | LogStart | SnapshotStart | BootstrapStart | Notice | BatchEvent | RecordsEvent
    | TrailingBytes | IndexStatus | IndexEntry | TimeIndexEntry | TxnEntry | ProducerEntryEvent | Ignored
    | Problem | Summary
)


# --------------------------------------------------------------------------- summaries


def java_string_hash(text: str) -> int:
    """``String.hashCode()`` as a signed 32-bit int (over UTF-16 code units)."""
    h = 0
    data = text.encode("utf-16-be", "surrogatepass")
    for i in range(0, len(data), 2):
        h = (31 * h + ((data[i] << 8) | data[i + 1])) & 0xFFFFFFFF
    return h - (1 << 32) if h & 0x80000000 else h


class ScalaHashMapOrder:
    """The iteration order of a Scala 2.13 ``mutable.HashMap[String, _]`` after a sequence of puts.

    Kafka keeps its summary findings in such maps and prints them in their
    iteration order: buckets in index order (``improveHash(h) & (capacity-1)``,
    ``improveHash(h) = h ^ (h >>> 16)``), within a bucket by ascending hash.
    The table starts at 16 slots and doubles whenever a put -- even one that
    only replaces a value -- finds ``size + 1 >= capacity * 0.75``.
    """

    def __init__(self) -> None:
        self.capacity = 16
        self.keys: dict[str, int] = {}

    def put(self, key: str) -> None:
        if len(self.keys) + 1 >= int(self.capacity * 0.75):
            self.capacity *= 2
        if key not in self.keys:
            h = java_string_hash(key) & 0xFFFFFFFF
            improved = h ^ (h >> 16)
            self.keys[key] = improved - (1 << 32) if improved & 0x80000000 else improved

    def order(self) -> list[str]:
        mask = self.capacity - 1
        return sorted(self.keys, key=lambda k: (self.keys[k] & mask, self.keys[k]))


class Summaries:
    """What DumpLogSegments collects across files and prints at the end (stderr)."""

    def __init__(self) -> None:
        self.index_mismatch: dict[str, list[tuple[int, int]]] = {}
        self.index_order = ScalaHashMapOrder()
        self.time_lists: dict[str, dict[str, list[tuple[int, int]]]] = {
            "time_index_mismatch": {},
            "time_index_out_of_order": {},
            "time_index_offset_not_found": {},
        }
        self.time_orders = {kind: ScalaHashMapOrder() for kind in self.time_lists}
        self.non_consecutive: dict[str, array] = {}
        self.non_consecutive_order = ScalaHashMapOrder()

    def add_index_mismatch(self, path: str, index_offset: int, log_offset: int) -> None:
        self.index_mismatch.setdefault(path, []).append((index_offset, log_offset))
        self.index_order.put(path)  # Kafka puts the (prepended) list back on every finding

    def add_time(self, kind: str, path: str, first: int, second: int) -> None:
        found = self.time_lists[kind]
        if path not in found:  # Kafka puts the buffer only when it is new
            found[path] = []
            self.time_orders[kind].put(path)
        found[path].append((first, second))

    def non_consecutive_for(self, path: str) -> array:
        return self.non_consecutive.setdefault(path, array("q"))

    def note_non_consecutive(self, path: str) -> None:
        self.non_consecutive_order.put(path)

    def events(self) -> Iterator[Summary]:
        """The summary sections in Kafka's order (mismatch and non-consecutive lists newest first)."""
        for path in self.index_order.order():
            yield Summary("index_mismatch", path, tuple(reversed(self.index_mismatch[path])))
        for kind, found in self.time_lists.items():
            for path in self.time_orders[kind].order():
                yield Summary(kind, path, tuple(found[path]))
        for path in self.non_consecutive_order.order():
            flat = self.non_consecutive[path]
            if flat:
                pairs = tuple((flat[i], flat[i + 1]) for i in range(len(flat) - 2, -1, -2))
                yield Summary("non_consecutive_offsets", path, pairs)


# --------------------------------------------------------------------------- the walk over files


def iter_dump(targets: Iterable[DumpTarget], options: DumpOptions) -> Iterator[Event]:
    """Every event of dumping ``targets`` in order, then the summary sections."""
    summaries = Summaries()
    handlers: dict[str, Callable[[DumpTarget], Iterator]] = {
        "log": lambda t: _dump_log(t, options, summaries),
        "index": lambda t: _dump_index(t, options, summaries),
        "timeindex": lambda t: _dump_time_index(t, options, summaries),
        "snapshot": _dump_producer_snapshot,
        "txnindex": _dump_txn_index,
    }
    for target in targets:
        kind = handler_kind(target.path.name)
        yield FileStart(target.display, kind)
        if kind is None:
            yield Ignored(target.display)
            continue
        try:
            if kind in SIDE_FILE_NAMES:
                from kseg.ops.dump_sidefiles import dump_side_file

                yield from dump_side_file(target, kind)
                continue
            yield from handlers[kind](target)
        except OSError as err:  # unreadable, vanished, a directory named like a segment
            yield Problem(target.display, None, f"cannot read: {err.strerror or err}")
    yield from summaries.events()


def parse_java_long(text: str) -> int | None:
    """``Long.parseLong``, or None where it would throw."""
    if not _JAVA_LONG.match(text):
        return None
    value = int(text)
    return value if -(2**63) <= value < 2**63 else None


def _name_offset(target: DumpTarget) -> tuple[int | None, Problem | None]:
    """The number before the first ``.`` of the name, or the problem Kafka's NumberFormatException is."""
    stem = target.path.name.split(".")[0]
    value = parse_java_long(stem)
    if value is None:
        return None, Problem(
            target.display, None, f"cannot read a base offset from the file name: {stem!r} is not a number"
        )
    return value, None


def _log_header(target: DumpTarget) -> Iterator[Event]:
    name = target.path.name
    if name.endswith(".log"):
        base, problem = _name_offset(target)
        yield problem if problem is not None else LogStart(target.display, base)  # type: ignore[arg-type]
    elif name == BOOTSTRAP_CHECKPOINT:
        yield BootstrapStart(target.display)
    else:
        match = _SNAPSHOT_NAME.match(name)
        epoch = int(match[2]) if match else None
        if match and epoch is not None and epoch < 2**31:
            yield SnapshotStart(target.display, int(match[1]), epoch)
        else:
            yield Problem(
                target.display,
                None,
                "not a KRaft snapshot name (<20-digit end offset>-<10-digit epoch>.checkpoint)",
            )


def _dump_log(target: DumpTarget, options: DumpOptions, summaries: Summaries) -> Iterator[Event]:
    for notice in options.decoder_notices:
        yield Notice(notice)
    yield from _log_header(target)
    with open_segment(target.path) as segment:
        yield from _walk_log(segment, target, options, summaries)


def _window_start(segment: Segment, options: DumpOptions) -> int | None:
    """Where the window starts (0 without one); None when no batch reaches it."""
    start = 0
    if options.from_offset is not None:
        position = segment.position_of_offset(options.from_offset)
        if position is None:
            return None
        start = max(start, position)
    if options.from_time is not None:
        position = segment.position_of_timestamp(options.from_time)
        if position is None:
            return None
        start = max(start, position)
    return start


def _first_offset(batch: Batch) -> int:
    """The batch's first offset without failing: a legacy wrapper that cannot be read counts from its last."""
    if isinstance(batch, LegacyBatch):
        try:
            return batch.base_offset
        except KsegError:
            return batch.last_offset
    return batch.base_offset


def _walk_log(segment: Segment, target: DumpTarget, options: DumpOptions, summaries: Summaries) -> Iterator[Event]:
    """``dumpLog``: each batch, then (deep iteration) its records; the trailing-bytes line."""
    display = target.display
    end = segment.size if options.max_bytes is None else min(options.max_bytes, segment.size)
    try:
        start = _window_start(segment, options)
    except KsegError as err:
        yield Problem(display, err.offset, err.message)
        return
    if start is None:
        return
    walk = BatchWalk(segment.buf, start, end, strict=False)
    deep = options.deep
    state = _RecordState(summaries, target.absolute)
    valid_bytes = shown = 0
    for batch in walk:
        if options.to_offset is not None and _first_offset(batch) > options.to_offset:
            break
        if batch.codec_id > 4:
            yield BatchEvent(display, batch, deep, codec_error=True)
            yield Problem(display, batch.position, f"Unknown compression type id: {batch.codec_id}")
            return
        yield BatchEvent(display, batch, deep)
        valid_bytes += batch.size
        if deep:
            records, problem, decoder_problems = _batch_records(batch, display, options, state)
            yield records
            yield from decoder_problems
            if problem is not None:
                yield problem
                return
        shown += 1
        if _window_done(batch, shown, options):
            break
    if walk.end is not None and walk.end.reason == BAD_SIZE:
        yield Problem(
            display,
            walk.end.position,
            f"Found record size {walk.end.declared_size} smaller than minimum record overhead (14)",
        )
        return
    if options.max_bytes in (None, INT_MAX) and not options.windowed:
        trailing = segment.size - valid_bytes
        if trailing > 0:
            yield TrailingBytes(display, target.path.name, valid_bytes, trailing)


def _window_done(batch: Batch, shown: int, options: DumpOptions) -> bool:
    if options.max_batches is not None and shown >= options.max_batches:
        return True
    if options.to_offset is not None and batch.last_offset >= options.to_offset:
        return True
    return options.to_time is not None and batch.max_timestamp >= options.to_time


class _RecordState:
    """Per-file deep-iteration state: Kafka's ``lastOffset`` for the non-consecutive check."""

    __slots__ = ("last", "pairs", "path", "summaries")

    def __init__(self, summaries: Summaries, path: str) -> None:
        self.last = -1  # Kafka's lastOffset: -1 means "none yet" (and a record at -1 resets it)
        self.summaries = summaries
        self.path = path
        self.pairs = summaries.non_consecutive_for(path)

    def track(self, offsets: list[int] | range) -> None:
        """Kafka's check, record by record; a run of consecutive offsets takes the short way."""
        if not offsets:
            return
        first = offsets[0]
        count = len(offsets)
        if (self.last == -1 or first == self.last + 1) and offsets[-1] == first + count - 1:
            if count < 3 or type(offsets) is range or offsets == list(range(first, first + count)):
                self.last = offsets[-1]
                return
        for offset in offsets:
            if self.last == -1:
                self.last = offset
            elif offset != self.last + 1:
                self.pairs.append(self.last)
                self.pairs.append(offset)
                self.summaries.note_non_consecutive(self.path)
            self.last = offset


def decode_records(batch: Batch) -> tuple[list[Record], KsegError | None]:
    """The records Kafka's iterator hands out before it throws, and what it throws.

    Kafka's V2 iterator notices left-over bytes only when asked for the last
    record, and then throws instead of returning it: so when kseg's decoder
    reports "records still remaining" after the last record, that record is
    dropped.  One batch is decoded at a time.
    """
    try:
        return list(batch.iter_records()), None
    except KsegError:
        pass
    records: list[Record] = []
    try:
        for record in batch.iter_records():
            records.append(record)
    except KsegError as err:
        if err.field == "batch.records" and records:
            records.pop()
        return records, err
    return records, None


def _batch_records(
    batch: Batch, display: str, options: DumpOptions, state: _RecordState
) -> tuple[RecordsEvent, Problem | None, list[Problem]]:
    """The records of one batch as one event; the problem that cut them short, if any; and the records
    an internal-topic decoder reports Kafka would have died on (the dump goes on after those)."""
    if options.json_records and options.decoder is None and not batch.is_control and isinstance(batch, V2Batch):
        fast = records_json_utf8(batch)
        if fast is not None:
            state.track(fast[0])
            return RecordsEvent(display, [], fast[1]), None, []
    records, err = decode_records(batch)
    problem = None
    if err is not None:
        problem = Problem(display, err.offset if err.offset is not None else batch.position, err.message)
    if not batch.is_control:
        state.track([r[0] for r in records])
        if options.decoder is None:
            return RecordsEvent(display, records), problem, []
        decoded, aborts = _decode_data_records(records, options.decoder, display, batch.position)
        return RecordsEvent(display, decoded), problem, aborts
    described: list[Record | ControlRecord | DecodedRecord] = []
    for record in records:
        state.track([record[0]])
        event = _control_event(record, options)
        described.append(event)
        if event.failed:
            return RecordsEvent(display, described), Problem(
                display, batch.position, f"control record at offset {record.offset}: {event.error}"
            ), []
    return RecordsEvent(display, described), problem, []


def _decode_data_records(
    records: list[Record], decoder: str, display: str, position: int
) -> tuple[list[Record | ControlRecord | DecodedRecord], list[Problem]]:
    """Run an internal-topic decoder over a batch's data records (only when asked: it is the slow path)."""
    from kseg.format.internal import DECODERS

    decode = DECODERS[decoder]
    out: list[Record | ControlRecord | DecodedRecord] = []
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
    markers and of the KRaft records it prints as JSON -- not LEADER_CHANGE's,
    which it names only; where that read throws, the tool dies.  With
    --skip-record-metadata it does not look at control records at all, so
    nothing can fail then.
    """
    from kseg.format.internal import describe_control_record

    described = describe_control_record(record.key, record.value)
    kafka_dies = described.problem is not None and described.type_id != LEADER_CHANGE
    return ControlRecord(record, described, failed=kafka_dies and not options.skip_record_metadata)


# --------------------------------------------------------------------------- .index and .timeindex


def _siblings(target: DumpTarget, *suffixes: str) -> tuple[list[Path], Problem | None]:
    """The sibling files Kafka opens (``<stem><suffix>`` beside the index); a missing one is a problem."""
    stem = target.path.name.split(".")[0]
    paths = [target.path.parent / f"{stem}{suffix}" for suffix in suffixes]
    for path in paths:
        if not path.is_file():
            return paths, Problem(target.display, None, f"{path.name} not found beside it (Kafka needs it to dump this file)")
    return paths, None


def _first_batch_last_offset(segment: Segment, position: int, max_size: int) -> int:
    """``fileRecords.slice(position, maxMessageSize).batches.iterator.next().lastOffset``."""
    if position < 0 or position > segment.size:
        raise KsegError(
            f"index points at position {position}, outside the log ({segment.size} bytes)", offset=position
        )
    end = min(position + max_size, segment.size)
    walk = BatchWalk(segment.buf, position, end, strict=False)
    for batch in walk:
        return batch.last_offset
    if walk.end is not None and walk.end.reason == BAD_SIZE:
        raise KsegError(
            f"Found record size {walk.end.declared_size} smaller than minimum record overhead (14) "
            f"in the log at byte {walk.end.position}",
            offset=walk.end.position,
        )
    raise KsegError(
        f"no whole batch at log position {position} within --max-message-size ({max_size} bytes)", offset=position
    )


def _dump_index(target: DumpTarget, options: DumpOptions, summaries: Summaries) -> Iterator[Event]:
    """``dumpIndex``: entries up to the preallocated tail, each checked against the first batch it points at."""
    base, problem = _name_offset(target)
    if problem is not None:
        yield problem
        return
    (log_path,), problem = _siblings(target, ".log")
    if problem is not None:
        yield problem
        return
    with MappedFile(target.path) as index, open_segment(log_path) as segment:
        entries = index.size // OFFSET_ENTRY.size
        if entries == 0:
            yield IndexStatus(target.display, "empty")
            return
        if options.index_sanity_check:
            yield _offset_index_sanity(target, index, entries, base)
            return
        for i in range(entries):
            relative, position = OFFSET_ENTRY.unpack_from(index.buf, i * OFFSET_ENTRY.size)
            offset = base + relative
            if i > 0 and offset == base:
                return
            try:
                log_offset = _first_batch_last_offset(segment, position, options.max_message_size)
            except KsegError as err:
                yield Problem(target.display, i * OFFSET_ENTRY.size, f"entry {i} (offset {offset}): {err.message}")
                return
            if log_offset != offset:
                summaries.add_index_mismatch(target.absolute, offset, log_offset)
            if not options.verify_index_only:
                yield IndexEntry(target.display, offset, position)


def _offset_index_sanity(target: DumpTarget, index: MappedFile, entries: int, base: int) -> Event:
    """``OffsetIndex.sanityCheck`` (after the empty check, so ``entries`` > 0)."""
    relative, _ = OFFSET_ENTRY.unpack_from(index.buf, (entries - 1) * OFFSET_ENTRY.size)
    last_offset = base + relative
    where = target.absolute
    if last_offset < base:
        return Problem(
            target.display,
            (entries - 1) * OFFSET_ENTRY.size,
            f"Corrupt index found, index file {where} has non-zero size but the last offset is {last_offset} "
            f"which is less than the base offset {base}",
        )
    if index.size % OFFSET_ENTRY.size:
        return Problem(
            target.display,
            entries * OFFSET_ENTRY.size,
            f"Index file {where} is corrupt, found {index.size} bytes which is neither positive nor a multiple of 8",
        )
    return IndexStatus(target.display, "sanity_check_passed")


def kafka_offset_lookup(buf: bytes, entries: int, base: int, target: int) -> int:
    """``OffsetIndex.lookup(target).position`` over *every* slot, warm-section binary search included.

    Kafka trusts all ``entries`` slots of an existing file (a preallocated
    zero tail too), so the search is reproduced exactly rather than over the
    live entries only.
    """

    def offset_at(slot: int) -> int:
        return base + OFFSET_ENTRY.unpack_from(buf, slot * OFFSET_ENTRY.size)[0]

    if entries == 0:
        return 0
    first_hot = max(0, entries - 1 - 8192 // OFFSET_ENTRY.size)
    if offset_at(first_hot) < target:
        lo, hi = first_hot, entries - 1
    elif offset_at(0) > target:
        return 0
    else:
        lo, hi = 0, first_hot
    while lo < hi:
        mid = (lo + hi + 1) >> 1
        found = offset_at(mid)
        if found > target:
            hi = mid - 1
        elif found < target:
            lo = mid
        else:
            lo = mid
            break
    return OFFSET_ENTRY.unpack_from(buf, lo * OFFSET_ENTRY.size)[1]


@dataclass(frozen=True, slots=True)
class _EmptyFile:
    """Stands in for a missing .index: no bytes, so every lookup answers position 0, as an empty index does."""

    buf: bytes = b""
    size: int = 0


_EMPTY_FILE = _EmptyFile()


def _dump_time_index(target: DumpTarget, options: DumpOptions, summaries: Summaries) -> Iterator[Event]:
    """``dumpTimeIndex``: each entry checked against the batch its offset names and that batch's records."""
    base, problem = _name_offset(target)
    if problem is not None:
        yield problem
        return
    (log_path, index_path), problem = _siblings(target, ".log", ".index")
    index_missing = problem is not None and log_path.is_file() and not index_path.exists()
    if problem is not None and not index_missing:
        yield problem
        return
    if index_missing:  # Kafka's tool creates it empty, then dies; the entries still mean something
        yield Problem(target.display, None, f"{index_path.name} not found beside it (Kafka's tool creates it empty "
                                            "and dies; kseg checks the entries against an empty index)")
    index_file = nullcontext(_EMPTY_FILE) if index_missing else MappedFile(index_path)
    with MappedFile(target.path) as tindex, index_file as index, open_segment(log_path) as segment:
        entries = tindex.size // TIME_ENTRY.size
        if options.index_sanity_check:
            yield _time_index_sanity(target, tindex, entries, base)
            return
        offset_entries = index.size // OFFSET_ENTRY.size
        previous = -1
        for i in range(entries):
            timestamp, relative = TIME_ENTRY.unpack_from(tindex.buf, i * TIME_ENTRY.size)
            offset = base + relative
            if i > 0 and offset == base:
                return
            position = kafka_offset_lookup(index.buf, offset_entries, base, offset)
            try:
                _check_time_entry(segment, position, timestamp, offset, previous, target.absolute, summaries)
            except KsegError as err:
                yield Problem(target.display, i * TIME_ENTRY.size, f"entry {i} (offset {offset}): {err.message}")
                return
            if not options.verify_index_only:
                yield TimeIndexEntry(target.display, timestamp, offset)
            previous = timestamp


def _check_time_entry(
    segment: Segment, position: int, timestamp: int, offset: int, previous: int, where: str, summaries: Summaries
) -> None:
    """Find the batch holding ``offset`` from ``position`` on and compare timestamps, as Kafka does."""
    if position < 0 or position > segment.size:
        raise KsegError(f"the offset index gives position {position}, outside the log", offset=position)
    walk = BatchWalk(segment.buf, position, segment.size, strict=False)
    found = None
    for batch in walk:
        if batch.last_offset >= offset:
            found = batch
            break
    if found is None:
        if walk.end is not None and walk.end.reason == BAD_SIZE:
            raise KsegError(
                f"Found record size {walk.end.declared_size} smaller than minimum record overhead (14) "
                f"in the log at byte {walk.end.position}",
                offset=walk.end.position,
            )
        summaries.add_time("time_index_offset_not_found", where, offset, -1)
    elif found.last_offset != offset:
        summaries.add_time("time_index_offset_not_found", where, offset, found.last_offset)
    else:
        max_timestamp = -1
        for record in found.iter_records():
            max_timestamp = max(max_timestamp, record.timestamp)
        if max_timestamp != timestamp:
            summaries.add_time("time_index_mismatch", where, timestamp, max_timestamp)
        if previous >= timestamp:
            summaries.add_time("time_index_out_of_order", where, timestamp, previous)


def _time_index_sanity(target: DumpTarget, tindex: MappedFile, entries: int, base: int) -> Event:
    """``TimeIndex.sanityCheck``."""
    where = target.absolute
    if entries:
        first_timestamp, _ = TIME_ENTRY.unpack_from(tindex.buf, 0)
        last_timestamp, last_relative = TIME_ENTRY.unpack_from(tindex.buf, (entries - 1) * TIME_ENTRY.size)
        last_offset = base + last_relative
        if last_timestamp < first_timestamp:
            return Problem(
                target.display,
                (entries - 1) * TIME_ENTRY.size,
                f"Corrupt time index found, time index file ({where}) has non-zero size but the last timestamp "
                f"is {last_timestamp} which is less than the first timestamp {first_timestamp}",
            )
        if last_offset < base:
            return Problem(
                target.display,
                (entries - 1) * TIME_ENTRY.size,
                f"Corrupt time index found, time index file ({where}) has non-zero size but the last offset "
                f"is {last_offset} which is less than the first offset {base}",
            )
    if tindex.size % TIME_ENTRY.size:
        return Problem(
            target.display,
            entries * TIME_ENTRY.size,
            f"Time index file {where} is corrupt, found {tindex.size} bytes which is neither positive nor a "
            f"multiple of 12",
        )
    return IndexStatus(target.display, "sanity_check_passed")


# --------------------------------------------------------------------------- .snapshot and .txnindex


def _dump_producer_snapshot(target: DumpTarget) -> Iterator[Event]:
    """``dumpProducerIdSnapshot``: a corrupt snapshot is reported with Kafka's own message (stderr)."""
    data = target.path.read_bytes()
    try:
        snapshot = read_snapshot(data)
        check_snapshot(snapshot)
    except KsegError as err:
        yield Problem(target.display, err.offset, err.message, kafka_text=err.message.startswith("Snapshot "))
        return
    for entry in snapshot.entries:
        yield ProducerEntryEvent(target.display, entry)


def _dump_txn_index(target: DumpTarget) -> Iterator[Event]:
    """``dumpTxnIndex``: Kafka collects every entry first, so a bad version prints none of them."""
    _, problem = _name_offset(target)
    if problem is not None:
        yield problem
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


__all__ = [
    "DECODER_PRECEDENCE",
    "SIDE_FILE_NAMES",
    "BatchEvent",
    "BootstrapStart",
    "ControlRecord",
    "DecodedRecord",
    "DumpOptions",
    "DumpTarget",
    "Event",
    "FileStart",
    "Ignored",
    "IndexEntry",
    "IndexStatus",
    "LogStart",
    "Notice",
    "Problem",
    "ProducerEntryEvent",
    "RecordsEvent",
    "SnapshotStart",
    "Summary",
    "TimeIndexEntry",
    "TrailingBytes",
    "TxnEntry",
    "handler_kind",
    "iter_dump",
    "java_path",
    "targets_for",
]
