"""Kafka writes its own image to disk: every ``.checkpoint`` is the cluster at its offset.

For every metadata directory of the real corpus and of fixtures/, kseg's replay
from the log's first record and from every earlier snapshot, through the log,
to each later snapshot's offset must equal that snapshot entity by entity.  The
snapshot is read with the same record rules, so a wrong rule for any record
type that occurs between two snapshots (partition changes, ISR/ELR, fencing,
configs, topic deletion...) shows up as a difference.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from support import CORPUS_REAL, FIXTURES, require_dir

from kseg.metadata.entities import differences
from kseg.metadata.replay import Target, image_at
from kseg.metadata.source import Snapshot, log_segments, snapshots


def _dirs() -> list[Path]:
    found = sorted(FIXTURES.glob("**/__cluster_metadata-0"))
    if CORPUS_REAL.is_dir():
        found += sorted(CORPUS_REAL.glob("**/__cluster_metadata-0"))
    return [d for d in found if snapshots(d) and log_segments(d)]


def _starts(metadata: Path, later: Snapshot) -> list[Snapshot | None]:
    earlier: list[Snapshot | None] = [s for s in snapshots(metadata) if s.end_offset < later.end_offset]
    if int(log_segments(metadata)[0].name[:-4]) == 0:
        earlier.insert(0, None)
    return earlier


def test_the_proof_covers_the_real_logs() -> None:
    require_dir(CORPUS_REAL, "the real-data corpus")
    names = {d.relative_to(CORPUS_REAL).parts[0] for d in _dirs() if CORPUS_REAL in d.parents}
    assert {"ArpithaPrakash_Real-Time-Air-Quality-Prediction-with-Apache-Kafka", "Pda-Final-Project_backend"} <= names


@pytest.mark.parametrize("metadata", _dirs(), ids=lambda d: "/".join(d.parts[-4:-1]))
def test_replay_reaches_every_snapshot(metadata: Path) -> None:
    compared = 0
    for later in snapshots(metadata):
        want = image_at(metadata, from_snapshot=later, at=Target(offset=later.end_offset - 1))
        assert want.findings == []
        for start in _starts(metadata, later):
            got = image_at(metadata, at=Target(offset=later.end_offset - 1), from_snapshot=start,
                           use_snapshots=False)
            if got.image.offset != later.end_offset - 1:
                # the log ends before this snapshot (a snapshot written after the log was cut): nothing to compare
                assert got.image.offset < later.end_offset - 1
                continue
            assert got.findings == []
            assert differences(got.image, want.image) == [], (later.path.name, start)
            compared += 1
    assert compared > 0
