"""Kafka's prefix of a legacy segment kept message by message without batch objects: the same selection.

``select_batches`` (recovery/salvage.py) takes a plain V0/V1 message of the prefix in one step
(``PLAIN_LEGACY_STEP``); the whole result -- runs, losses, regions, counts, the prefix's offsets
and records -- must equal the batch path's, on legacy logs with compressed wrappers, unusual
attributes, offsets going back, V2 batches between, and damage (tests/core/test_core_legacy_run.py's
generator).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from kseg.recovery import salvage
from kseg.recovery.producer_state import TxnTracker

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "core"))
from segments import damaged  # noqa: E402
from test_core_legacy_run import legacy_log  # noqa: E402


def _selected(buf: bytes, step: bool, prefix_end: int, flush_every: int = 4096):
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(salvage, "PLAIN_LEGACY_STEP", step)
        patch.setattr(salvage._PlainRun, "FLUSH_EVERY", flush_every)  # small: runs kept in several calls
        sel, stats = salvage.select_batches(buf, 0, prefix_end, TxnTracker())
    return vars(sel), {name: getattr(stats, name) for name in stats.__slots__}


@settings(deadline=None, max_examples=40)
@given(seed=st.integers(0, 2**32), damage=st.integers(-1, 2**32), cut=st.integers(0, 100))
@example(seed=0, damage=-1, cut=100)
def test_the_plain_legacy_step_selects_what_the_batch_path_selects(seed, damage, cut):
    buf = legacy_log(seed, entries=80)
    if damage >= 0:
        buf = damaged(buf, damage)
    prefix_end = len(buf) * cut // 100
    fast = _selected(buf, True, prefix_end)
    assert fast == _selected(buf, False, prefix_end) == _selected(buf, True, prefix_end, flush_every=3)
    if damage < 0 and cut == 100:
        assert fast[1]["batches"] > 0
