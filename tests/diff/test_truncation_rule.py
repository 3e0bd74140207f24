"""The truncation rule of docs/diff.md, branch by branch (tests/interop/test_diff_truncation_vs_kafka.py
checks whole replica sets against Kafka's own classes)."""

from __future__ import annotations

import pytest

from kseg.ops.diff.truncation import LogView, end_offset_for, leader_view, truncate_follower

CACHE = [(1, 10), (3, 20), (5, 40)]


@pytest.mark.parametrize(("requested", "expected"), [
    (-1, (-1, -1)),  # UNDEFINED_EPOCH asked: undefined
    (5, (5, 55)),  # the latest epoch: the log end offset
    (6, (-1, -1)),  # above every epoch: undefined
    (0, (0, 10)),  # below every epoch: the asked epoch, ending where the first known one starts
    (3, (3, 40)),  # a known epoch: ends where the next starts
    (4, (3, 40)),  # an unknown epoch between two: the floor epoch, ending where the next starts
])
def test_end_offset_for_is_leader_epoch_file_caches(requested, expected):
    assert end_offset_for(CACHE, requested, 55) == expected


def test_the_new_leader_appends_its_epoch_at_its_log_end():
    lead = leader_view(LogView(0, 50, 50, 0, [(1, 10), (3, 20), (5, 50)]), 9)
    assert lead.epochs == [(1, 10), (3, 20), (9, 50)]  # (5, 50) started at the log end: assign drops it


def test_a_follower_that_knows_the_epoch_cuts_at_the_smaller_end():
    t = truncate_follower(LogView(0, 30, 30, 0, [(0, 0), (1, 10)]), LogView(0, 40, 40, 0, [(0, 0), (1, 10)]), 2)
    assert (t.truncate_to, t.restarted_at) == (30, None)


def test_a_follower_goes_one_epoch_back_then_cuts_again():
    leader = LogView(0, 10, 10, 0, [(0, 0), (1, 4)])
    follower = LogView(0, 12, 6, 0, [(0, 0), (2, 7)])
    t = truncate_follower(leader, follower, 3)
    assert t.truncate_to == 4
    assert "one epoch back: truncateTo(7)" in t.steps[0] and "truncateTo(4)" in t.steps[1]


def test_a_follower_without_epochs_truncates_to_its_high_watermark():
    t = truncate_follower(LogView(0, 10, 10, 0, [(0, 0)]), LogView(0, 13, 7, 0, []), 1)
    assert (t.truncate_to, t.steps) == (7, ["no leader epochs: truncateToHighWatermark(7)"])


def test_a_follower_below_the_leaders_log_start_starts_over():
    t = truncate_follower(LogView(40, 50, 50, 40, [(1, 40)]), LogView(0, 15, 15, 0, [(0, 0)]), 2)
    assert (t.truncate_to, t.restarted_at) == (15, 40)


def test_an_identical_follower_keeps_everything():
    same = LogView(0, 20, 20, 0, [(0, 0), (4, 8)])
    t = truncate_follower(same, LogView(0, 20, 20, 0, [(0, 0), (4, 8)]), 5)
    assert (t.truncate_to, t.steps) == (20, [])
