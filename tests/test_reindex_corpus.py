"""Reindex against real broker-written indexes (the shared corpus).

Two claims are tested:

1. kseg's rebuild follows Kafka's recovery rules on every real .log: it is
   compared with a second, deliberately plain implementation of
   ``LogSegment.recover`` written below from the reference (§3.7, §4.2) on top
   of kseg's batch objects.
2. Every broker-written .index/.timeindex that the rebuild does not reproduce
   byte for byte differs for a reason a live broker has and recovery has not.
   The reasons are *derived from the data* by checking each old entry against
   the .log (which batch it points at, what the running max timestamp was
   there), never from a list of file names; an entry no rule explains fails
   the test.

The reasons (reference §3.4, §3.6):

* ``PREALLOCATED``: zero slots after the live entries -- an index that was never trimmed.
* ``MULTI_BATCH``: an offset entry pairs a later batch's last offset with an
  earlier batch's position -- one append held several batches (a follower, the
  log cleaner), so entries only fall on append boundaries.
* ``RESTARTED``: an offset entry sits later than recovery's rule puts it, and
  the time index shows a close before it -- the segment was closed and
  reopened, and the broker's in-memory byte counter started again from zero.
* ``NOT_FLUSHED``: the index stops short of what the rule gives for the end of
  the .log, with no sign of a close or of multi-batch appends -- the .log grew
  after the index was last written.
* ``EXACT_OFFSET``: a time-index entry points inside a batch, at the first
  record holding the batch's max timestamp -- the pre-3.8 broker rule.
* ``CLOSE_ENTRY``: a time-index entry written at a moment recovery does not
  index -- at a close (clean shutdown or roll) before more data came, or at a
  broker index point recovery does not share (``AT_BROKER_INDEX_POINTS`` when
  the broker's .index is known to differ).
* ``NO_FINAL``: the time index lacks the final entry a close writes -- the segment was not closed.
* ``ELSEWHERE``: (only when the broker's .index is not in the corpus) entries
  recovery makes at its index points are missing -- the broker's index points
  were elsewhere or fewer.

When the broker's .index of the same segment is in the corpus, its time
index must be exactly what those index points plus the closes produce
(:func:`simulate_time_index`).
"""

from __future__ import annotations

import bisect
import hashlib
import json
import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import pytest
from support import CORPUS_REAL, require_dir

from kseg.errors import Corrupt
from kseg.format import BatchWalk
from kseg.index import OffsetEntry, TimeEntry, read_offset_index, read_time_index
from kseg.recovery.index_compare import compare_index, index_bytes
from kseg.recovery.indexes import build_indexes
from kseg.segment import MappedFile, base_offset_from_name

INTERVAL = 4096

PREALLOCATED = "preallocated tail (never trimmed)"
MULTI_BATCH = "entry pairs a later batch's offset with an earlier batch's position: multi-batch append (follower/cleaner)"
RESTARTED = "entry later than recovery's rule after a close: segment reopened, byte counter restarted"
NOT_FLUSHED = "index has fewer entries than the rebuild and the .log grew after: not flushed"
EXACT_OFFSET = "time-index entry offset inside a batch: pre-3.8 broker exact-offset rule"
CLOSE_ENTRY = "time-index entry written at a close (or a broker index point) recovery does not share"
AT_BROKER_INDEX_POINTS = "time-index entries follow the broker's own index points (see its .index)"
NO_FINAL = "no final time-index entry: the segment was not closed"
ELSEWHERE = "time index lacks entries at recovery's index points: the broker indexed elsewhere (its .index is not in the corpus)"


# -- the corpus: which index belongs to which .log --------------------------------


@dataclass(frozen=True)
class Pair:
    index: Path  # a broker-written .index or .timeindex
    log: Path
    end: int | None  # the .log version it belongs to is this prefix of ``log`` (a dropped older version)
    snapshot: tuple[str, str, str]  # (repo, commit, path without suffix): where the broker wrote it

    @property
    def kind(self) -> str:
        return self.index.suffix[1:]


@lru_cache(maxsize=1)
def corpus_pairs() -> tuple[Pair, ...]:
    """Pairs from manifest.json: each index names the sha256 of the .log beside it at the same commit."""
    root = require_dir(CORPUS_REAL, "real corpus")
    manifest = json.loads((root / "manifest.json").read_text())
    logs = {e["sha256"]: (root / e["file"], None) for e in manifest if e["file"].endswith(".log")}
    for dropped in json.loads((root / "manifest_dropped_prefix_versions.json").read_text()):
        for e in manifest:  # an older version dropped because it is a prefix of a newer one
            if (e["repo"], e["path"]) == (dropped["repo"], dropped["path"]):
                newer = (root / e["file"]).read_bytes()
                if hashlib.sha256(newer[: dropped["size"]]).hexdigest() == dropped["sha256"]:
                    logs[dropped["sha256"]] = (root / e["file"], dropped["size"])
    pairs = []
    for e in manifest:
        match = re.search(r"sibling \.log \(sha256 ([0-9a-f]{12})\)", e["desc"])
        if not e["file"].endswith((".index", ".timeindex")) or not match:
            continue
        found = [(sha, v) for sha, v in logs.items() if sha.startswith(match[1])]
        if len(found) == 1:
            _, (log, end) = found[0]
            stem = e["path"].rsplit(".", 1)[0]
            pairs.append(Pair(root / e["file"], log, end, (e["repo"], e["commit"], stem)))
    return tuple(pairs)


def sibling_index(pair: Pair, kind: str) -> Path | None:
    """The same broker's other index of the same segment at the same commit, when the corpus has it.

    Matched by repository, commit and path: replicas on other brokers have
    byte-identical .log files but their own indexes.
    """
    for other in corpus_pairs():
        if other.snapshot == pair.snapshot and other.kind == kind:
            return other.index
    return None


def log_bytes(log: Path, end: int | None) -> bytes:
    with MappedFile(log) as mapped:
        return bytes(mapped.buf[: end if end is not None else mapped.size])


# -- claim 1: the rebuild follows recovery's rules ---------------------------------


def plain_recover(buf: bytes, base_offset: int) -> tuple[bytes, bytes, int]:
    """LogSegment.recover written out plainly with kseg's batch objects: (.index, .timeindex, valid bytes)."""
    offsets: list[tuple[int, int]] = []
    times: list[tuple[int, int]] = []
    max_ts, max_offset = -1, -1
    valid = last_indexed = 0
    walk = BatchWalk(buf, strict=False)
    for batch in walk:
        try:
            batch.ensure_valid()
        except Corrupt:
            break
        if batch.max_timestamp > max_ts:
            max_ts, max_offset = batch.max_timestamp, batch.last_offset
        if valid - last_indexed > INTERVAL:
            offsets.append((batch.last_offset - base_offset, valid))
            if max_ts > (times[-1][0] if times else -1):
                times.append((max_ts, max_offset - base_offset))
            last_indexed = valid
        valid += batch.size
    if max_ts > (times[-1][0] if times else -1):
        times.append((max_ts, max_offset - base_offset))
    index = b"".join(rel.to_bytes(4, "big", signed=True) + pos.to_bytes(4, "big") for rel, pos in offsets)
    timeindex = b"".join(ts.to_bytes(8, "big", signed=True) + rel.to_bytes(4, "big") for ts, rel in times)
    return index, timeindex, valid


def all_corpus_logs() -> list[Path]:
    root = require_dir(CORPUS_REAL, "real corpus")
    return sorted(p for p in root.rglob("*.log") if base_offset_from_name(p) is not None)


@pytest.mark.corpus
def test_rebuild_matches_a_plain_recovery_on_every_real_log():
    logs = all_corpus_logs()
    assert len(logs) >= 200
    for log in logs:
        data = log_bytes(log, None)
        base = base_offset_from_name(log)
        build = build_indexes(data, base)
        assert build.failure is None, log
        assert (build.offset_index, build.time_index, build.valid_bytes) == plain_recover(data, base), log


# -- claim 2: why a broker's index differs ---------------------------------------------


class Unexplained(AssertionError):
    pass


@dataclass
class Log:
    """The batches of one .log, with what an index entry can be checked against."""

    positions: list[int]
    last_offsets: list[int]
    max_timestamps: list[int]
    batches: list
    holder: list[int] = field(default_factory=list)  # per batch: index of the first batch reaching the running max
    running_max: list[int] = field(default_factory=list)

    @classmethod
    def read(cls, data: bytes) -> Log:
        batches = list(BatchWalk(data))
        log = cls([b.position for b in batches], [b.last_offset for b in batches], [b.max_timestamp for b in batches], batches)
        best, holder = -1, -1
        for i, ts in enumerate(log.max_timestamps):
            if ts > best:
                best, holder = ts, i
            log.holder.append(holder)
            log.running_max.append(best)
        return log

    def at_position(self, position: int) -> int:
        i = bisect.bisect_left(self.positions, position)
        if i == len(self.positions) or self.positions[i] != position:
            raise Unexplained(f"position {position} is not a batch boundary")
        return i

    def containing(self, offset: int) -> int:
        i = bisect.bisect_left(self.last_offsets, offset)
        if i == len(self.last_offsets):
            raise Unexplained(f"offset {offset} is beyond the .log")
        return i

    def greedy_next(self, last_indexed: int) -> int | None:
        """Position of the batch recovery would index next after ``last_indexed``."""
        i = bisect.bisect_right(self.positions, last_indexed + INTERVAL)
        return self.positions[i] if i < len(self.positions) else None


def time_entry_batch(log: Log, entry: TimeEntry) -> tuple[int, bool]:
    """(batch holding the entry's max, whether the offset is an exact record offset inside it)."""
    i = log.containing(entry.offset)
    if log.max_timestamps[i] != entry.timestamp or log.holder[i] != i:
        raise Unexplained(f"time entry {entry} is not the running max of the batch it points at")
    if entry.offset == log.last_offsets[i]:
        return i, False
    first_max = next(r.offset for r in log.batches[i].iter_records() if r.timestamp == entry.timestamp)
    if first_max != entry.offset:
        raise Unexplained(f"time entry {entry} points inside a batch, but not at its first max-timestamp record")
    return i, True


def close_positions(log: Log, old_time: tuple[TimeEntry, ...], old_offsets: tuple[OffsetEntry, ...] | None) -> list[int]:
    """Positions of batches after which the time index shows a close (an entry no index point explains)."""
    at_index_points = set()
    if old_offsets is not None:
        for entry in old_offsets:
            end = log.containing(entry.offset)  # the last batch of that append
            at_index_points.add(log.holder[end])
    final = log.holder[-1] if log.holder else None
    out = []
    for entry in old_time:
        i, _ = time_entry_batch(log, entry)
        if i not in at_index_points and i != final:
            out.append(log.positions[i])
    return out


def explain_offset_index(old: bytes, log: Log, base: int, rebuilt: bytes, closes: list[int]) -> set[str]:
    slots = read_offset_index(old, base)
    reasons = {PREALLOCATED} if slots.live < len(slots.entries) else set()
    last_indexed, multi, later = 0, False, []
    for entry in slots.live_entries:
        i = log.at_position(entry.position)
        if entry.offset != log.last_offsets[i]:
            if entry.offset not in log.last_offsets[i + 1 :]:
                raise Unexplained(f"{entry}: offset is no batch's last offset at or after position {entry.position}")
            multi = True
        if entry.position - last_indexed <= INTERVAL:
            raise Unexplained(f"{entry}: only {entry.position - last_indexed} bytes after the previous entry")
        if entry.position > log.greedy_next(last_indexed):
            later.append((last_indexed, entry.position))
        last_indexed = entry.position
    if multi:
        reasons.add(MULTI_BATCH)
    for start, stop in later:
        if not multi:
            if not any(start <= c < stop for c in closes):
                raise Unexplained(f"entry at {stop} is later than recovery's rule with no close before it")
            reasons.add(RESTARTED)
    if log.greedy_next(last_indexed) is not None and not multi:
        reasons.add(RESTARTED if any(c >= last_indexed for c in closes) else NOT_FLUSHED)
    if not reasons and read_offset_index(rebuilt, base).entries != slots.live_entries:
        raise Unexplained("differs, but no rule says why")
    return reasons


def simulate_time_index(log: Log, old_offsets: tuple[OffsetEntry, ...], closes: set[int]) -> list[TimeEntry]:
    """The time index a live broker writes with these index points and closes after these batches.

    At each offset-index entry (the append ends at the batch holding its
    offset) and at each close, ``TimeIndex.maybeAppend(running max, holder)``;
    then the final entry.  Offsets are batch last offsets (normalized).
    """
    index_points = {log.containing(entry.offset) for entry in old_offsets}
    out: list[TimeEntry] = []

    def maybe_append(i: int) -> None:
        ts = log.running_max[i]
        if ts > (out[-1].timestamp if out else -1):
            out.append(TimeEntry(ts, log.last_offsets[log.holder[i]]))

    for i in range(len(log.positions)):
        if i in index_points or i in closes:
            maybe_append(i)
    if log.positions:
        maybe_append(len(log.positions) - 1)
    return out


def explain_time_index(
    old: bytes, log: Log, base: int, rebuilt: bytes, old_offsets: tuple[OffsetEntry, ...] | None, offsets_differ: bool
) -> set[str]:
    slots = read_time_index(old, base)
    reasons = {PREALLOCATED} if slots.live < len(slots.entries) else set()
    normalized, holders = [], []
    for entry in slots.live_entries:
        i, exact = time_entry_batch(log, entry)
        if exact:
            reasons.add(EXACT_OFFSET)
        normalized.append(TimeEntry(entry.timestamp, log.last_offsets[i]))
        holders.append(i)
    rebuilt_entries = list(read_time_index(rebuilt, base).entries)
    if normalized == rebuilt_entries:
        return reasons
    final = TimeEntry(log.running_max[-1], log.last_offsets[log.holder[-1]]) if log.positions else None
    if final not in normalized:
        reasons.add(NO_FINAL)
    if old_offsets is not None:
        # the broker's own .index is known: its index points plus closes must give exactly this time index
        at_points = {log.holder[log.containing(e.offset)] for e in old_offsets}
        closes = {i for i, entry in zip(holders, normalized) if i not in at_points and entry != final}
        if simulate_time_index(log, old_offsets, closes) != normalized and NO_FINAL not in reasons:
            raise Unexplained("time entries are not what the broker's own index points and closes give")
        if closes:
            reasons.add(CLOSE_ENTRY)
        if offsets_differ:
            reasons.add(AT_BROKER_INDEX_POINTS)
    else:
        if any(entry not in rebuilt_entries for entry in normalized):
            reasons.add(CLOSE_ENTRY)
        if any(entry not in normalized for entry in rebuilt_entries[:-1]):
            reasons.add(ELSEWHERE)
    if not reasons - {PREALLOCATED, EXACT_OFFSET}:
        raise Unexplained("time entries differ, but no rule says why")
    return reasons


def classify(pair: Pair) -> tuple[set[str], bool]:
    """(reasons, identical) for one broker-written index."""
    data = log_bytes(pair.log, pair.end)
    base = base_offset_from_name(pair.log)
    build = build_indexes(data, base)
    old = pair.index.read_bytes()
    rebuilt = index_bytes(build, pair.kind)
    if compare_index(pair.kind, old, rebuilt, base) is None:
        return set(), True
    log = Log.read(data)
    index_path, time_path = sibling_index(pair, "index"), sibling_index(pair, "timeindex")
    old_offsets = read_offset_index(index_path.read_bytes(), base).live_entries if index_path else None
    if pair.kind == "index":
        old_time = read_time_index(time_path.read_bytes(), base).live_entries if time_path else ()
        return explain_offset_index(old, log, base, rebuilt, close_positions(log, old_time, old_offsets)), False
    offsets_differ = index_path is not None and index_path.read_bytes() != build.offset_index
    return explain_time_index(old, log, base, rebuilt, old_offsets, offsets_differ), False


@pytest.mark.corpus
def test_every_real_index_is_reproduced_or_its_difference_explained():
    pairs = corpus_pairs()
    assert len(pairs) >= 150
    seen: dict[str, int] = {}
    identical = 0
    for pair in pairs:
        try:
            reasons, same = classify(pair)
        except Unexplained as err:
            pytest.fail(f"{pair.index}: {err}")
        identical += same
        assert same or reasons, pair.index
        for reason in reasons:
            seen[reason] = seen.get(reason, 0) + 1
    assert identical >= 50  # most closed segments are reproduced byte for byte
    # the corpus shows each of these broker behaviours at least once
    for reason in (MULTI_BATCH, RESTARTED, EXACT_OFFSET, CLOSE_ENTRY, AT_BROKER_INDEX_POINTS):
        assert seen.get(reason, 0) > 0, reason


# -- the reasons themselves, on hand-made indexes over one real .log --------------


@pytest.fixture(scope="module")
def real_log() -> tuple[Log, bytes, int]:
    pair = next(p for p in corpus_pairs() if "__cluster_metadata-0" in str(p.log) and p.kind == "index")
    data = log_bytes(pair.log, pair.end)
    return Log.read(data), data, base_offset_from_name(pair.log)


def _entries(log: Log, base: int, rebuilt: bytes) -> list[OffsetEntry]:
    return list(read_offset_index(rebuilt, base).entries)


def test_a_preallocated_tail_is_recognised(real_log):
    log, data, base = real_log
    rebuilt = build_indexes(data, base).offset_index
    assert explain_offset_index(rebuilt + bytes(80), log, base, rebuilt, []) == {PREALLOCATED}


def test_a_shortened_index_is_not_flushed_unless_a_close_explains_it(real_log):
    log, data, base = real_log
    rebuilt = build_indexes(data, base).offset_index
    short = rebuilt[: len(rebuilt) - 16]
    assert explain_offset_index(short, log, base, rebuilt, []) == {NOT_FLUSHED}
    last = read_offset_index(short, base).entries[-1].position
    assert explain_offset_index(short, log, base, rebuilt, [last + 1]) == {RESTARTED}


def test_a_multi_batch_entry_is_recognised(real_log):
    log, data, base = real_log
    rebuilt = build_indexes(data, base).offset_index
    entries = read_offset_index(rebuilt, base).entries
    i = log.at_position(entries[0].position)
    merged = OffsetEntry(log.last_offsets[i + 1], entries[0].position)  # the append also held the next batch
    old = b"".join(
        (e.offset - base).to_bytes(4, "big") + e.position.to_bytes(4, "big") for e in (merged, *entries[1:])
    )
    assert MULTI_BATCH in explain_offset_index(old, log, base, rebuilt, [])


def test_an_entry_too_close_to_the_previous_one_is_unexplained(real_log):
    log, data, base = real_log
    rebuilt = build_indexes(data, base).offset_index
    entries = read_offset_index(rebuilt, base).entries
    early = OffsetEntry(log.last_offsets[1], log.positions[1])  # recovery never indexes the second batch
    old = b"".join((e.offset - base).to_bytes(4, "big") + e.position.to_bytes(4, "big") for e in (early, *entries))
    with pytest.raises(Unexplained, match="bytes after the previous entry"):
        explain_offset_index(old, log, base, rebuilt, [])
