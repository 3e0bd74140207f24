"""Verify walks a segment once: the recovery loop's clean prefix, taken in verify's walk, is exact.

* ``valid_v2_run_indexed`` (the core, through recovery/clean_prefix.py ``PrefixRecorder``) returns
  exactly ``BatchWalk._valid_v2_run``'s headers and end (the pure-Python reference), and
  ``build_indexes`` going on from the prefix it recorded builds exactly what the pure-Python loop
  builds from byte 0 -- every ``IndexBuild`` field, epochs and map end included, and the producer
  state left behind -- on generated logs (epochs, producer batches, transaction markers, legacy
  messages, offsets out of order, damage), cut into runs at random places, and on the real corpus.
* The epochs and map end ``build_indexes`` now collects in its own loop are those the separate
  epoch pass collected before (``_recovery_epochs``, kept below as the reference).
* ``kseg verify`` of partition directories reports the same findings with the prefix as without,
  and with it the load model does not walk the segment again.
"""

from __future__ import annotations

import mmap
import os
import random
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from segments import corpus_logs, damaged

from kseg.format import RecordSpec, encode_batch
from kseg.format import walk as walk_module
from kseg.format.control import ABORT, COMMIT, encode_control_key, encode_end_txn_marker
from kseg.format.walk import BatchWalk
from kseg.index import DEFAULT_INDEX_INTERVAL_BYTES, DEFAULT_MAX_INDEX_SIZE
from kseg.ops.verify import log_walk, verify_paths
from kseg.ops.verify import plan as plan_module
from kseg.recovery import clean_prefix
from kseg.recovery.clean_prefix import CleanPrefix, PrefixRecorder
from kseg.recovery.indexes import IndexBuild, build_indexes
from kseg.recovery.loading import segments as loading_segments
from kseg.recovery.producer_state import TxnTracker
from kseg.recovery.stops import STOP_INVALID_RECORD
from kseg.segment import MappedFile

TS = 1_700_000_000_000


def _log(seed: int, batches: int = 30, start: int | None = None) -> tuple[bytes, int]:
    """Mostly plain V2 batches with changing epochs; producer and control batches, legacy messages,
    offsets that sometimes go back (index exceptions) -- everything that sends the loop to Python."""
    rnd = random.Random(seed)
    out = bytearray()
    offset = first = rnd.choice((0, 0, 500)) if start is None else start
    epoch = rnd.choice((-1, 0, 3))
    for _ in range(batches):
        epoch += rnd.choice((0, 0, 0, 1, 2, -1))
        kind = rnd.choices(("plain", "txn", "abort", "commit", "legacy", "gzip"), weights=(20, 2, 1, 1, 1, 1))[0]
        count = 1 if kind in ("abort", "commit") else rnd.randint(1, 5)
        timestamp = TS + rnd.choice((offset, offset, -100))
        records = [RecordSpec(offset + i, timestamp + i, b"k", b"v" * rnd.randint(0, 400)) for i in range(count)]
        if kind in ("abort", "commit"):
            control = encode_control_key(ABORT if kind == "abort" else COMMIT), encode_end_txn_marker(1)
            records = [RecordSpec(offset, timestamp, *control)]
        extra: dict = {"partition_leader_epoch": epoch} if kind != "legacy" else {"magic": 1}
        if kind in ("txn", "abort", "commit"):
            extra.update(producer_id=7, producer_epoch=0, is_transactional=True, is_control=kind != "txn",
                         base_sequence=-1 if kind != "txn" else 0)
        elif kind == "gzip":
            extra["codec"] = "gzip"
        out += encode_batch(records, base_offset=offset, **extra)
        offset = max(0, offset + count + rnd.choice((0, 0, 0, 0, 0, 2, -9)))
    return bytes(out), first + rnd.choice((0, 0, 0, 3))


def _reference_epochs(buf, build: IndexBuild) -> tuple[list[tuple[int, int]], int | None]:
    """The separate epoch pass recovery/loading/segments.py ran before (``_recovery_epochs``)."""
    end = build.valid_bytes
    failure = build.failure
    if failure is not None:
        producer_failure = failure.exception not in ("LogSegmentOffsetOverflowException", "InvalidOffsetException") \
            and "index" not in failure.message
        end = failure.position
        if producer_failure:
            end = failure.position + 12 + int.from_bytes(buf[failure.position + 8 : failure.position + 12], "big")
    epochs: list[tuple[int, int]] = []
    last = before_last = None
    for _, _, _, header, _ in BatchWalk(buf, 0, end, strict=False).frames():
        if header is None:
            continue
        if not epochs or epochs[-1][0] != header[2]:
            epochs.append((header[2], header[0]))
        before_last, last = last, header
    if build.stop == STOP_INVALID_RECORD or (failure is not None and end != failure.position):
        last = before_last
    return epochs, (last[0] + last[6] + 1 if last is not None else None)


def _record(core: ModuleType, buf, base: int, interval: int, size: int, cuts: random.Random) -> CleanPrefix | None:
    """Verify's use of the recorder: runs of random length from 0, headers checked against Python."""
    limit = len(buf)
    recorder = PrefixRecorder(base, limit, interval, size)
    walk = BatchWalk(buf, 0, strict=False)
    pos = 0
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(walk_module, "CORE", core)
        while True:
            until = pos + cuts.randint(1, 3000)
            ran = recorder.valid_v2_run(buf, pos, until)  # None once the loop stopped: the walk goes on
            headers, end = ran if ran is not None else walk.valid_v2_run(pos, until)
            assert (headers, end) == walk._valid_v2_run(pos, until)
            pos = end
            if end < until:
                break
    assert recorder.position <= pos
    return recorder.prefix()


def _build(buf, base: int, interval: int, size: int, prefix: CleanPrefix | None = None):
    tracker = TxnTracker()
    build = build_indexes(buf, base, index_interval_bytes=interval, txn=tracker, max_index_size=size, prefix=prefix)
    return build, tracker.state()


def assert_prefix_exact(core: ModuleType, buf, base: int, interval: int, size: int = DEFAULT_MAX_INDEX_SIZE,
                        seed: int = 0) -> CleanPrefix | None:
    prefix = _record(core, buf, base, interval, size, random.Random(seed))
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(walk_module, "CORE", None)
        python = _build(buf, base, interval, size)
        from_prefix = _build(buf, base, interval, size, prefix)
    assert from_prefix == python
    assert (list(python[0].epochs), python[0].map_end) == _reference_epochs(buf, python[0])
    return prefix


@settings(deadline=None, max_examples=120)
@given(seed=st.integers(0, 2**32), interval=st.integers(1, 3000), entries=st.integers(0, 12),
       damage=st.integers(-1, 2**32))
@example(seed=0, interval=4096, entries=12, damage=-1)
@example(seed=3, interval=1, entries=2, damage=-1)
def test_generated_logs(core, seed, interval, entries, damage):
    data, base = _log(seed)
    if damage >= 0:
        data = damaged(data, damage)
    assert_prefix_exact(core, data, base, interval, 12 * entries if entries < 12 else 10 << 20, seed)


def test_a_clean_log_is_taken_whole_by_the_prefix(core):
    """Not vacuous: without producers or damage the prefix covers the log, and the loop has nothing left."""
    data = b"".join(encode_batch([RecordSpec(o, TS + o, None, b"x" * 500)], base_offset=o,
                                 partition_leader_epoch=o // 10) for o in range(50))
    prefix = assert_prefix_exact(core, data, 0, 1000)
    assert prefix is not None and prefix.position == len(data)
    assert prefix.epochs == tuple((e, e * 10) for e in range(5))
    assert prefix.state[15] == 50  # the map end
    assert len(prefix.offsets) == 8 * 24


def test_a_prefix_of_other_bytes_or_settings_is_not_used(core):
    data, base = b"".join(encode_batch([RecordSpec(o, TS, None, b"x" * 300)], base_offset=o) for o in range(20)), 0
    prefix = _record(core, data, base, 100, DEFAULT_MAX_INDEX_SIZE, random.Random(1))
    assert prefix is not None
    assert prefix.fits(len(data), 0, 100, DEFAULT_MAX_INDEX_SIZE)
    assert not prefix.fits(len(data) - 1, 0, 100, DEFAULT_MAX_INDEX_SIZE)
    assert not prefix.fits(len(data), 1, 100, DEFAULT_MAX_INDEX_SIZE)
    assert not prefix.fits(len(data), 0, 4096, DEFAULT_MAX_INDEX_SIZE)
    assert not prefix.fits(len(data), 0, 100, 1 << 20)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(walk_module, "CORE", None)
        assert _build(data[:-1], base, 100, DEFAULT_MAX_INDEX_SIZE, prefix) == \
            _build(data[:-1], base, 100, DEFAULT_MAX_INDEX_SIZE)


def test_the_pure_python_path_records_nothing():
    data = encode_batch([RecordSpec(0, TS, None, b"x")], base_offset=0)
    recorder = PrefixRecorder(0, len(data), 4096, DEFAULT_MAX_INDEX_SIZE)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(walk_module, "CORE", None)
        assert recorder.valid_v2_run(data, 0, 1 << 20) is None
    assert recorder.prefix() is None and not recorder.running


def test_a_run_that_does_not_start_where_the_loop_stands_ends_the_prefix(core):
    data = b"".join(encode_batch([RecordSpec(o, TS, None, b"x")], base_offset=o) for o in range(3))
    recorder = PrefixRecorder(0, len(data), 4096, DEFAULT_MAX_INDEX_SIZE)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(walk_module, "CORE", core)
        first = recorder.valid_v2_run(data, 0, 1)
        assert first is not None and len(first[0]) == 1
        assert recorder.valid_v2_run(data, first[1] + 1, 1 << 20) is None  # a gap: the walk's slow path
        assert recorder.valid_v2_run(data, first[1], 1 << 20) is None  # never resumes
    prefix = recorder.prefix()
    assert prefix is not None and prefix.position == first[1] and prefix.state[3] == 1


@pytest.mark.corpus
def test_real_corpus(core):
    logs = corpus_logs()
    assert len(logs) > 50
    for number, path in enumerate(logs):
        name = path.name.split(".")[0]
        base = int(name) if name.isdigit() else 0
        with path.open("rb") as handle, mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as mapped:
            assert_prefix_exact(core, mapped, base, DEFAULT_INDEX_INTERVAL_BYTES, seed=number)
        data = path.read_bytes()
        assert_prefix_exact(core, data, base, 333, seed=number)
        if len(data) <= 1 << 20:
            assert_prefix_exact(core, damaged(data, number), base, DEFAULT_INDEX_INTERVAL_BYTES, seed=number)


# -- verify: the same findings, one walk -------------------------------------------------------------


def _partition(root: Path, seed: int, damage: bool, index: bool) -> Path:
    """Two generated segments (the second maybe damaged), the first with or without its indexes."""
    part = root / "logs" / f"orders-{seed % 3}"
    part.mkdir(parents=True)
    for number, base in enumerate((0, 10_000)):
        data, _ = _log(seed * 7 + number, 25, start=base)
        if number and damage:
            data = damaged(data, seed)
        (part / f"{base:020d}.log").write_bytes(data)
        if index and number == 0:
            (part / f"{base:020d}.index").write_bytes(b"")
            (part / f"{base:020d}.timeindex").write_bytes(b"")
    (part / "leader-epoch-checkpoint").write_text("0\n2\n0 0\n4 12\n")
    return part


def _findings(result) -> list[tuple]:
    return [(f.path, [(x.kind, x.severity, x.position, x.offset, x.message) for x in f.findings]) for f in result.files]


@pytest.mark.parametrize("seed", range(12))
def test_verify_findings_are_the_same_with_the_prefix(core, tmp_path, monkeypatch, seed):
    monkeypatch.setattr(walk_module, "CORE", core)  # whatever KSEG_PURE says: the prefix needs the core
    part = _partition(tmp_path, seed, damage=seed % 2 == 1, index=seed % 3 == 0)
    if seed % 4 == 0:
        (part.parent / ".kafka_cleanshutdown").write_text("")
    with_prefix = _findings(verify_paths([part], jobs=1))
    with_log_dir = _findings(verify_paths([part.parent], jobs=1))
    monkeypatch.setattr(plan_module._Planner, "_ask_recovery_prefixes", lambda *args: None)
    assert _findings(verify_paths([part], jobs=1)) == with_prefix
    assert _findings(verify_paths([part.parent], jobs=1)) == with_log_dir
    monkeypatch.setattr(walk_module, "CORE", None)  # and the pure-Python path, which records no prefix
    assert _findings(verify_paths([part], jobs=1)) == with_prefix


def test_the_model_goes_on_from_the_prefix_and_walks_nothing_again(core, tmp_path, monkeypatch):
    monkeypatch.setattr(walk_module, "CORE", core)
    part = tmp_path / "orders-0"
    part.mkdir()
    data = b"".join(encode_batch([RecordSpec(o, TS + o, None, b"x" * 2000)], base_offset=o,
                                 partition_leader_epoch=o // 40) for o in range(200))
    (part / "00000000000000000000.log").write_bytes(data)  # no .index: Kafka recovers it while loading
    (part / "leader-epoch-checkpoint").write_text("0\n1\n0 0\n")
    seen: list[CleanPrefix | None] = []
    original = loading_segments.build_indexes

    def recording(buf, base, **kw):
        seen.append(kw.get("prefix"))
        return original(buf, base, **kw)

    monkeypatch.setattr(loading_segments, "build_indexes", recording)
    runs: list[int] = []
    monkeypatch.setattr(walk_module, "core_index_run", lambda *a: runs.append(a[1]))  # a walk from byte 0 would call it
    result = verify_paths([part], jobs=1)
    assert seen and all(p is not None and p.position == len(data) for p in seen)
    assert runs == []
    kinds = {(f.kind, f.offset) for r in result.files for f in r.findings}
    assert ("leader-epoch", 40) in kinds  # epochs 1..4 start at 40, 80, ...: the checkpoint has only epoch 0


@pytest.mark.parametrize("read_windows", [True, False])
def test_memory_stays_flat_and_pages_go_behind_the_walk(core, tmp_path, read_windows):
    """A 96 MiB segment without .index in a partition directory, read in windows or walked on the
    mapping: the walk (and the prefix) keep the resident set to a window or two of the file plus
    the interpreter, never the file."""
    part = tmp_path / "orders-0"
    part.mkdir()
    with (part / "00000000000000000000.log").open("wb") as out:
        for o in range(96 * 2**20 // 16_100):
            out.write(encode_batch([RecordSpec(o, TS + o, None, bytes(16_000))], base_offset=o))
    code = (
        "from kseg.ops.verify import log_walk, verify_paths\n"
        f"log_walk.READ_WINDOWS = {read_windows}\n"
        f"result = verify_paths([{str(part)!r}], jobs=1)\n"
        "assert result.files[0].batches > 6000\n"
        "status = dict(l.split(':', 1) for l in open('/proc/self/status'))\n"
        "print(int(status['RssAnon'].split()[0]), int(status['VmHWM'].split()[0]))\n"
    )
    # VmHWM, not ru_maxrss: the latter keeps the peak of the pytest process the child was forked from
    env = {k: v for k, v in os.environ.items() if k != "KSEG_PURE"}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    anon_kib, peak_kib = map(int, done.stdout.split())
    assert anon_kib < 100 * 1024
    assert peak_kib < 100 * 1024  # the file is 96 MiB: a walk that kept its pages would not stay below


# -- the fast path reads windows of the file: the same findings as walking the mapping ----------------


def _walk_findings(path: Path, deep: bool = False):
    walk, size = log_walk.walk_log(str(path), name_base=0, deep=deep)
    facts = (walk.batches, walk.first_offset, walk.last_offset, walk.skipped, walk.epochs, walk.aborts, walk.kafka_cut)
    prefix = walk.recorder.prefix() if walk.recorder is not None else None
    return [(f.kind, f.severity, f.position, f.offset, f.message) for f in walk.findings.close()], facts, size, prefix


def _both_ways(path: Path, monkeypatch, window: int) -> None:
    """The walk on the mapping and in windows of ``window`` bytes (on whichever path ``walk.CORE`` names)."""
    monkeypatch.setattr(log_walk, "READ_WINDOWS", False)
    mapped = _walk_findings(path)
    monkeypatch.setattr(log_walk, "READ_WINDOWS", True)
    monkeypatch.setattr(log_walk, "WINDOW_BYTES", window)
    assert _walk_findings(path) == mapped


@settings(deadline=None, max_examples=60)
@given(seed=st.integers(0, 2**32), damage=st.integers(-1, 2**32), window=st.sampled_from([61, 200, 777, 4096, 1 << 20]))
@example(seed=1, damage=-1, window=61)
def test_windows_give_the_walk_of_the_mapping(core, tmp_path_factory, seed, damage, window):
    """Windows smaller than a batch, cutting batches and headers anywhere, on damaged logs too."""
    data, _ = _log(seed, 20, start=0)
    if damage >= 0:
        data = damaged(data, damage)
    path = tmp_path_factory.mktemp("w") / "00000000000000000000.log"
    path.write_bytes(data)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(walk_module, "CORE", core)
        _both_ways(path, patch, window)
        patch.setattr(walk_module, "CORE", None)  # the pure-Python path reads windows too
        _both_ways(path, patch, window)


def test_windows_carry_the_recovery_prefix(core, tmp_path, monkeypatch):
    monkeypatch.setattr(walk_module, "CORE", core)
    data = b"".join(encode_batch([RecordSpec(o, TS + o, None, b"x" * 700)], base_offset=o,
                                 partition_leader_epoch=o // 7) for o in range(60))
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(data)
    monkeypatch.setattr(log_walk, "WINDOW_BYTES", 1000)  # about one batch per window, some in none
    walk, _ = log_walk.walk_log(str(path), name_base=0, recovery_prefix=True)
    prefix = walk.recorder.prefix()
    assert prefix is not None and prefix.position == len(data)
    monkeypatch.setattr(walk_module, "CORE", None)
    assert _build(data, 0, DEFAULT_INDEX_INTERVAL_BYTES, DEFAULT_MAX_INDEX_SIZE, prefix) == \
        _build(data, 0, DEFAULT_INDEX_INTERVAL_BYTES, DEFAULT_MAX_INDEX_SIZE)


@pytest.mark.corpus
def test_windows_on_the_real_corpus(core, monkeypatch):
    monkeypatch.setattr(walk_module, "CORE", core)
    for path in corpus_logs(max_size=4 << 20)[::3]:
        _both_ways(path, monkeypatch, 4096)


# -- reindex (and the load model) read the leading clean batches in windows too -------------------------


def _read_build(path: Path, base: int, interval: int, size: int = DEFAULT_MAX_INDEX_SIZE):
    tracker = TxnTracker()
    with MappedFile(path, readable=True) as mapped:
        build = build_indexes(mapped.buf, base, index_interval_bytes=interval, txn=tracker, max_index_size=size,
                              read_into=mapped.read_into)
    return build, tracker.state()


@settings(deadline=None, max_examples=60)
@given(seed=st.integers(0, 2**32), damage=st.integers(-1, 2**32), interval=st.integers(1, 3000),
       window=st.sampled_from([61, 300, 2048, 1 << 20]))
@example(seed=0, damage=-1, interval=4096, window=61)
def test_windows_build_the_indexes_the_python_loop_builds(core, tmp_path_factory, seed, damage, interval, window):
    data, base = _log(seed)
    if damage >= 0:
        data = damaged(data, damage)
    path = tmp_path_factory.mktemp("r") / "00000000000000000000.log"
    path.write_bytes(data)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(clean_prefix, "WINDOW_BYTES", window)
        patch.setattr(walk_module, "CORE", core)
        read = _read_build(path, base, interval)
        patch.setattr(walk_module, "CORE", None)
        assert read == _build(data, base, interval, DEFAULT_MAX_INDEX_SIZE)


@pytest.mark.corpus
def test_windows_build_the_corpus_indexes(core, monkeypatch):
    monkeypatch.setattr(clean_prefix, "WINDOW_BYTES", 4096)
    for path in corpus_logs(max_size=4 << 20)[::2]:
        name = path.name.split(".")[0]
        base = int(name) if name.isdigit() else 0
        read = _read_build(path, base, DEFAULT_INDEX_INTERVAL_BYTES)
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(walk_module, "CORE", None)
            assert read == _build(path.read_bytes(), base, DEFAULT_INDEX_INTERVAL_BYTES, DEFAULT_MAX_INDEX_SIZE)
