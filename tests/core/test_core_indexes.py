"""The core's clean run of ``LogSegment.recover`` builds exactly the indexes the Python loop builds.

``build_indexes`` (recovery/indexes.py) with the core (``_clean_run`` then the Python loop from
where it stopped) against the pure-Python loop alone (``walk.CORE`` set to None): the whole
``IndexBuild`` -- ``.index``, ``.timeindex`` and ``.txnindex`` bytes, batch count, valid bytes,
stop, detail, failure -- and the producer state left behind must be equal, on generated logs
(random index intervals and index sizes, timestamps that go back or are -1, producer batches,
legacy messages, offsets outside the segment, damage), on every real corpus log, and with pages
released every 64 KiB so that the run is cut into many calls.
"""

from __future__ import annotations

import mmap
import random
from types import ModuleType

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from segments import corpus_logs, damaged

from kseg.format import RecordSpec, encode_batch
from kseg.format import walk as walk_module
from kseg.recovery import indexes as indexes_module
from kseg.recovery.indexes import build_indexes
from kseg.recovery.producer_state import TxnTracker


def _log(seed: int, batches: int = 40) -> tuple[bytes, int]:
    """A log of mostly plain V2 batches, with the things that send the loop back to Python."""
    rnd = random.Random(seed)
    out = bytearray()
    offset = rnd.choice((0, 0, 1000))
    first = offset
    timestamp = 1_700_000_000_000
    for _ in range(batches):
        count = rnd.randint(1, 6)
        timestamp += rnd.choice((5, 5, 5, -50, 0))
        kind = rnd.choices(("plain", "producer", "legacy", "gzip"), weights=(20, 2, 1, 1))[0]
        records = [
            RecordSpec(offset + i, -1 if rnd.random() < 0.05 else timestamp + i, b"k", b"v" * rnd.randint(0, 300))
            for i in range(count)
        ]
        if kind == "legacy":
            out += encode_batch(records, magic=1, base_offset=offset)
        elif kind == "producer":
            out += encode_batch(records, base_offset=offset, producer_id=7, producer_epoch=0, base_sequence=offset)
        else:
            out += encode_batch(records, base_offset=offset, codec="gzip" if kind == "gzip" else "none")
        offset = max(0, offset + count + rnd.choice((0, 0, 0, 0, 0, 3, -9)))  # sometimes back: index exceptions
    base = first + rnd.choice((0, 0, 0, 0, 2))  # sometimes a segment base above the first offset
    return bytes(out), base


def assert_same_build(core: ModuleType, buf, base: int, interval: int, max_index_size: int = 10 << 20) -> None:
    def build():
        tracker = TxnTracker()
        result = build_indexes(buf, base, index_interval_bytes=interval, txn=tracker, max_index_size=max_index_size)
        return result, tracker.state()

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(walk_module, "CORE", None)
        python = build()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(walk_module, "CORE", core)
        compiled = build()
    assert compiled == python


@settings(deadline=None, max_examples=80)
@given(
    seed=st.integers(0, 2**32),
    interval=st.integers(1, 6000),
    entries=st.integers(0, 12),
    damage=st.integers(-1, 2**32),
)
@example(seed=0, interval=4096, entries=12, damage=-1)
@example(seed=1, interval=1, entries=2, damage=-1)
def test_generated_logs(core, seed, interval, entries, damage):
    data, base = _log(seed)
    if damage >= 0:
        data = damaged(data, damage)
    # a few entries (or ten megabytes') worth of index: full indexes take Kafka's exceptions
    assert_same_build(core, data, base, interval, 12 * entries if entries < 12 else 10 << 20)


@pytest.mark.parametrize(("interval", "release_every"), [(1, 1 << 16), (700, 1 << 16), (4096, 1 << 16), (700, 1), (1, 100)])
def test_runs_cut_into_many_calls(core, monkeypatch, interval, release_every):
    """Pages released every 64 KiB (or every byte, as tests/test_progress.py sets it: below a page):
    the core's run is cut there, and goes on where it stopped."""
    monkeypatch.setattr(indexes_module, "RELEASE_EVERY", release_every)
    rnd = random.Random(interval)
    data = b"".join(
        encode_batch([RecordSpec(o, 1_700_000_000_000 + o, None, bytes(rnd.randint(10, 3000)))], base_offset=o)
        for o in range(300)
    )
    assert len(data) > 4 << 16
    assert_same_build(core, data, 0, interval)


def test_a_clean_log_is_one_run_of_the_core(core, monkeypatch):
    """Not vacuous: on a clean log without producers the core takes every batch, Python none."""
    runs = []

    class Recording:
        CoreError = core.CoreError

        def __getattr__(self, name):
            return getattr(core, name)

        @staticmethod
        def index_run_at(*args):
            ran = core.index_run_at(*args)
            runs.append((args[2], ran[0]))
            return ran

    monkeypatch.setattr(walk_module, "CORE", Recording())
    data = b"".join(encode_batch([RecordSpec(o, 1000 + o, None, b"x" * 500)], base_offset=o) for o in range(50))
    build = build_indexes(data, 0, index_interval_bytes=1000)
    assert runs == [(0, len(data))]
    assert build.batches == 50 and build.valid_bytes == len(data)
    assert len(build.offset_index_bytes()) == 8 * 24  # an entry every second batch of 576 bytes, from the third



@pytest.mark.corpus
def test_real_corpus(core):
    logs = corpus_logs(min_size=0)  # empty logs too
    assert len(logs) > 50
    for number, path in enumerate(logs):
        data = path.read_bytes()
        name = path.name.split(".")[0]
        base = int(name) if name.isdigit() else 0
        if data:
            with path.open("rb") as handle, mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as mapped:
                assert_same_build(core, mapped, base, 4096)
        for interval in (1, 333):
            assert_same_build(core, data, base, interval)
        if len(data) <= 1 << 20:
            assert_same_build(core, damaged(data, number), base, 4096)


@pytest.mark.parametrize(
    ("batches", "interval"),
    [
        # (last offset, max timestamp); an interval of one batch: entries at batches 2, 4, 6 ...
        # the time index's offset goes back at the entry of batch 4 (largest timestamp at offset 15)
        ([(10, 50), (11, 60), (20, 100), (15, 200), (30, 50)], 0),
        # the offset index's offset goes back at the third batch's entry
        ([(20, 100), (25, 200), (22, 300)], 1),
        # timestamps that do not grow: an offset entry without a time entry
        ([(1, 100), (2, 100), (3, 90), (4, 100)], 1),
        # no timestamps at all (-1)
        ([(1, -1), (2, -1), (3, -1)], 1),
        # an offset below the segment's base (5) in the middle
        ([(5, 1), (6, 2), (4, 3), (7, 4)], 1),
    ],
)
def test_the_index_exceptions(core, batches, interval):
    encoded = [encode_batch([RecordSpec(o, ts, None, b"x" * 80)], base_offset=o) for o, ts in batches]
    data = b"".join(encoded)
    interval = interval or len(encoded[0])
    assert_same_build(core, data, 5 if batches[0][0] == 5 else 0, interval)
    assert_same_build(core, data, 0, interval, max_index_size=16)
