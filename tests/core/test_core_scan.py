"""The core's resynchronising scan returns exactly what the pure-Python scan returns (format/scan.py).

Compared: ``scan()``'s whole output (batches by position and magic, gaps with reason, declared size
and zero fill), ``_valid_run`` and ``find_next_batch`` from many positions -- on generated logs,
random bytes, the real corpus, and damaged variants.
"""

from __future__ import annotations

import mmap

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from segments import corpus_logs, damaged, log_of

from kseg.format import scan as scan_module
from kseg.format.scan import Gap


def _described(items):
    return [item if isinstance(item, Gap) else (type(item).__name__, item.position, item.size) for item in items]


def _python_scan(buf, start, end):
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(scan_module, "CORE", None)
        return _described(scan_module.scan(buf, start, end))


def assert_same_scan(core, buf, start=0, end=None) -> None:
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(scan_module, "CORE", core)
        compiled = _described(scan_module.scan(buf, start, end))
        limit = len(buf) if end is None else min(end, len(buf))
        for position in range(start, min(limit, start + 120), 3):
            python_next = scan_module._find_next_batch(buf, position, limit)
            core_next = scan_module.find_next_batch(buf, position, limit)
            assert _described([core_next] if core_next else []) == _described([python_next] if python_next else [])
        for position in range(start, min(limit, start + 120), 40):
            assert _described(scan_module._valid_run(buf, position, limit)) == _described(
                scan_module._python_valid_run(buf, position, limit)
            )
    assert compiled == _python_scan(buf, start, end)


@settings(deadline=None, max_examples=60)
@given(seed=st.integers(0, 2**32), damage=st.integers(0, 2**32), start=st.integers(0, 100))
def test_generated_logs_damaged_or_not(core, seed, damage, start):
    clean = log_of(seed)
    assert_same_scan(core, clean)
    once = damaged(clean, damage)
    assert_same_scan(core, once, start)
    assert_same_scan(core, damaged(once, damage + 1), 0, len(once) - start)


@settings(deadline=None, max_examples=60)
@given(st.binary(max_size=300))
def test_random_bytes(core, data):
    assert_same_scan(core, data)


@pytest.mark.corpus
def test_real_corpus_mapped_and_damaged(core):
    logs = corpus_logs(1 << 20)
    assert len(logs) > 50
    for number, path in enumerate(logs):
        data = path.read_bytes()
        with path.open("rb") as handle, mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as mapped:
            assert_same_scan(core, mapped)
        assert_same_scan(core, damaged(damaged(data, number), number + 1000))
