"""``kseg diff`` on two replicas of a real unclean leader election, held against what Kafka then did.

fixtures/diff/unclean-election/ (tools/make_diff_fixture.py, PROVENANCE.md): a three-node Kafka 4.3.0
quorum; node 1 led and acknowledged offsets 10..14 alone, was SIGKILLed, node 2 was elected uncleanly and
took 10..16 under its new epoch; group ``g`` had read 0..14 from node 1. ``node1/`` and ``node2/`` are their log directories before node 1
returned; ``kafka-after.json`` holds node 1's own log lines about the truncation it did when it came back
as node 2's follower, and both logs' batches afterwards.
"""

from __future__ import annotations

import hashlib
import json
import re

import pytest
from support import FIXTURES

from kseg.ops.diff.run import diff, view_of
from kseg.ops.diff.truncation import end_offset_for, leader_view

ROOT = FIXTURES / "diff" / "unclean-election"
AFTER = json.loads((ROOT / "kafka-after.json").read_text())


def test_the_fixture_is_what_its_provenance_lists():
    doc = (ROOT / "PROVENANCE.md").read_text()
    rows = re.findall(r"^\| `([^`]+)` \| (\d+) \| `([0-9a-f]{64})` \|", doc, re.MULTILINE)
    on_disk = {p.relative_to(ROOT).as_posix() for p in ROOT.rglob("*") if p.is_file()} - {"PROVENANCE.md"}
    assert {name for name, _, _ in rows} == on_disk
    for name, size, digest in rows:
        data = (ROOT / name).read_bytes()
        assert (len(data), hashlib.sha256(data).hexdigest()) == (int(size), digest), name


@pytest.fixture(scope="module")
def result():
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(ROOT)  # replica paths as an operator in the fixture directory spells them
        yield diff(["node1/u-0", "node2/u-0"])


def _kafka_line(pattern: str) -> re.Match[str]:
    found = [m for m in (re.search(pattern, line) for line in AFTER["kafka_log"]) if m]
    assert len(found) == 1, AFTER["kafka_log"]
    return found[0]


def test_node1_truncates_where_kafka_truncated_it(result):
    t = next(t for t in result.truncations if t.leader.path == "node2/u-0")
    fetcher = _kafka_line(r"TruncationState\(offset=(\d+), completed=true\) due to leader epoch and offset "
                          r"EpochEndOffset\(errorCode=0, partition=0, leaderEpoch=(\d+), endOffset=(\d+)\)")
    offset, epoch, end = map(int, fetcher.groups())
    assert t.truncation.truncate_to == offset == 10
    leader = result.replicas[1]
    lead = leader_view(view_of(leader), result.new_epoch)
    assert end_offset_for(lead.epochs, t.follower.epochs[-1][0], lead.log_end) == (epoch, end)
    warn = _kafka_line(r"Truncating u-0 to offset (\d+) below high watermark (\d+)")
    assert (t.truncation.truncate_to, t.follower.high_watermark) == tuple(map(int, warn.groups()))


def test_what_node1_lost_is_what_kafka_removed(result):
    t = next(t for t in result.truncations if t.leader.path == "node2/u-0")
    assert t.lost_offsets == [[10, 14]] and t.lost_below_high_watermark == 5
    assert AFTER["step2_offsets"] == list(range(10, 15))  # acknowledged to the producer, then thrown away
    assert AFTER["node1_after"] == AFTER["node2_after"] == [[0, 9], [10, 16]]  # node 2's batch replaced them


def test_the_group_that_read_node1s_records(result):
    """Group g read 0..14 from node 1 and committed 15 at epoch 0; node 2's epoch 0 ends at 10."""
    assert AFTER["group_committed"] == 15
    groups = [(c.leader.path, commit.group, commit.offset, commit.leader_epoch, what)
              for c in result.choices for commit, what in c.groups]
    assert groups == [("node2/u-0", "g", 15, 0,
                       "truncation detected: epoch 0 ends at 10 on this leader, below the committed 15: the consumer "
                       "moves back to 10 and re-reads other records there (LogTruncationException with "
                       "auto.offset.reset=none)")]


def test_the_recommendation_and_the_divergence(result):
    assert [(c.leader.path, c.committed_lost, c.lost) for c in result.choices] == [
        ("node2/u-0", 5, 5), ("node1/u-0", 7, 7)]
    [pair] = result.pairs
    assert [(r.first, r.last, r.kind) for r in pair.divergent] == [(10, 16, "different records")]
    assert result.exit_code() == 1
