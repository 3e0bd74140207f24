"""Every real segment and KRaft checkpoint in the shared corpus decodes completely.

The expected batch and record counts, offsets and CRC results come from the
corpus manifest (``shared/corpus/real/manifest.json``), written by an
independent scanner when the corpus was collected.
"""

from __future__ import annotations

import json
import re

import pytest
from support import CORPUS_REAL, require_dir

from kseg.format import END_OF_DATA
from kseg.segment import open_segment


def _segments() -> list[dict]:
    manifest = CORPUS_REAL / "manifest.json"
    if not manifest.exists():
        return []
    entries = json.loads(manifest.read_text())
    return [e for e in entries if e["file"].endswith((".log", ".checkpoint"))]


SEGMENTS = _segments()
DESC = re.compile(r"(\d+) batches/(\d+) records.*?offsets (-?\d+)\.\.(-?\d+).*CRC (?:bad (\d+)|ok)")


def test_corpus_is_present():
    require_dir(CORPUS_REAL, "the real-data corpus")
    assert len(SEGMENTS) >= 300


@pytest.mark.corpus
@pytest.mark.parametrize("entry", SEGMENTS, ids=[e["file"] for e in SEGMENTS])
def test_real_segment_decodes_to_manifest_counts(entry):
    path = require_dir(CORPUS_REAL, "the real-data corpus") / entry["file"]
    batches, records, first, last, crc_bad = (int(g or 0) for g in DESC.search(entry["desc"]).groups())
    seen_batches = seen_records = bad = 0
    offsets = []
    with open_segment(path) as seg:
        walk = seg.walk()
        for batch in walk:
            seen_batches += 1
            bad += not batch.is_valid()
            for record in batch.iter_records():
                seen_records += 1
                offsets.append(record.offset)
        assert walk.end.reason == END_OF_DATA and walk.end.remaining == 0
    assert (seen_batches, seen_records, bad) == (batches, records, crc_bad)
    assert (min(offsets), max(offsets)) == (first, last)
