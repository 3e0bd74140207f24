"""The core's batch walker returns exactly what the pure-Python walker returns (format/walk.py).

Compared: every frame tuple ``BatchWalk.frames`` yields (with and without CRC checks), the walk's
end (position, remaining, reason, declared size) or the ``Corrupt`` a strict walk raises, and
``valid_v2_run``'s headers and stop -- on hypothesis-built logs, the real corpus, and damaged
variants of both (bit flips, truncations, zeroed runs, inserted garbage).
"""

from __future__ import annotations

import mmap
from types import ModuleType

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from segments import corpus_logs, damaged, log_of

from kseg.errors import Corrupt, KsegError
from kseg.format import walk as walk_module
from kseg.format.walk import BatchWalk


def _walk(buf, start, end, strict, check_crc, runner):
    walk = BatchWalk(buf, start, end, strict=strict)
    frames = []
    try:
        for frame in runner(walk, check_crc):
            frames.append(frame)
    except Corrupt as err:
        return frames, str(err), walk.end
    return frames, None, walk.end


def assert_same_walk(core: ModuleType, buf, start=0, end=None) -> None:
    """Both walkers, strict and lenient, with and without CRCs; then valid_v2_run from every frame."""
    for strict in (False, True):
        for check_crc in (False, True):
            python = _walk(buf, start, end, strict, check_crc, lambda w, c: w._frames(c))
            with pytest.MonkeyPatch.context() as patch:
                patch.setattr(walk_module, "CORE", core)
                compiled = _walk(buf, start, end, strict, check_crc, lambda w, c: w.frames(check_crc=c))
            assert compiled == python
    frames = python[0]
    for position in [start, *(f[0] for f in frames[:20]), *(f[0] + 1 for f in frames[:3])]:
        for until in (position + 1, position + 20_000, 1 << 62 if position == start else position):
            walk = BatchWalk(buf, start, end, strict=False)
            assert core.valid_v2_run(buf, position, walk.limit, until) == walk._valid_v2_run(position, until)


@settings(deadline=None, max_examples=60)
@given(seed=st.integers(0, 2**32), damage=st.integers(0, 2**32), start=st.integers(0, 300),
       cut=st.integers(-1, 5000))
@example(seed=0, damage=0, start=0, cut=-1)
def test_generated_logs_damaged_or_not(core, seed, damage, start, cut):
    clean = log_of(seed)
    end = None if cut < 0 else cut
    assert_same_walk(core, clean, 0, end)
    assert_same_walk(core, damaged(clean, damage), start, end)


@settings(deadline=None, max_examples=60)
@given(st.binary(max_size=400), st.integers(0, 40))
def test_random_bytes(core, data, start):
    assert_same_walk(core, data, start)
    assert_same_walk(core, bytearray(data), 0)
    assert_same_walk(core, memoryview(data), start)


@pytest.mark.parametrize(
    "data",
    [
        b"",
        bytes(17),
        bytes(18),  # size 0: bad size
        bytes(8) + (13).to_bytes(4, "big") + bytes(6),  # size 13
        bytes(8) + (0x7FFFFFFF).to_bytes(4, "big") + bytes(60),  # a huge size: partial
        bytes(8) + (0x80000000).to_bytes(4, "big") + bytes(60),  # a negative size
        bytes(8) + (49).to_bytes(4, "big") + bytes(4) + b"\x02" + bytes(44),  # a V2 batch of 61 bytes, CRC 0
        bytes(8) + (20).to_bytes(4, "big") + bytes(4) + b"\xff" + bytes(15),  # magic -1: framed as "V2", no header
    ],
)
def test_edges(core, data):
    assert_same_walk(core, data)
    assert_same_walk(core, data, 0, 10)
    assert_same_walk(core, data, 100)



@pytest.mark.corpus
def test_real_corpus_mapped_and_damaged(core):
    logs = corpus_logs(min_size=0)  # empty logs too
    assert len(logs) > 50
    for number, path in enumerate(logs):
        data = path.read_bytes()
        if data:
            with path.open("rb") as handle, mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as mapped:
                assert_same_walk(core, mapped)
        if len(data) <= 1 << 20:
            for seed in range(3):
                assert_same_walk(core, damaged(data, number * 7 + seed))


def test_a_panic_in_the_core_is_one_kseg_error(core, monkeypatch):
    """A panic becomes CoreError in the core, and kseg's one-line KsegError in the walker."""
    with pytest.raises(core.CoreError, match="boom"):
        core._panic_for_tests("boom")

    class Panicking:
        CoreError = core.CoreError

        @staticmethod
        def walk_frames(*args):
            if args[3:] == (False, 1, 1):  # the probe
                return core.walk_frames(*args)
            core._panic_for_tests("index out of bounds")

        @staticmethod
        def valid_v2_run(*args):
            core._panic_for_tests("index out of bounds")

    monkeypatch.setattr(walk_module, "CORE", Panicking)
    monkeypatch.setattr("kseg.format._core.CORE", Panicking)
    data = log_of(1)
    with pytest.raises(KsegError) as raised:
        list(BatchWalk(data, 0).frames())
    assert str(raised.value) == (
        "byte 0: internal error in kseg's compiled core (index out of bounds); KSEG_PURE=1 runs the pure-Python path"
    )
    with pytest.raises(KsegError, match="internal error in kseg's compiled core"):
        BatchWalk(data, 0).valid_v2_run(0, 100)


def test_what_the_core_cannot_take_goes_the_python_path(core, monkeypatch):
    """A buffer the core cannot borrow (BufferError/TypeError) or a negative start: Python answers."""
    calls = []

    class Refusing:
        CoreError = core.CoreError

        @staticmethod
        def walk_frames(*args):
            calls.append(args[1:])
            raise BufferError("not contiguous")

        @staticmethod
        def valid_v2_run(*args):
            calls.append(args[1:])
            raise TypeError("no buffer")

    monkeypatch.setattr(walk_module, "CORE", Refusing)
    data = log_of(2)
    walk = BatchWalk(data, 0, strict=False)
    assert list(walk.frames(check_crc=True)) == list(BatchWalk(data, 0)._frames(True))
    assert walk.end is not None and walk.end.reason == "end"
    assert walk.valid_v2_run(0, 1 << 30) == walk._valid_v2_run(0, 1 << 30)
    assert calls == [(0, 0, False, 1, 1), (0, len(data), 1 << 30)]
    calls.clear()
    with pytest.raises(Exception):  # what Python does with a negative position (no caller passes one)
        BatchWalk(data, -3, strict=False).valid_v2_run(-3, 100)  # is never sent to the core
    assert calls == []
