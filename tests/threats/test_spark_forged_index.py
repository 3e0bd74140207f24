"""``spark export`` and a forged ``.index``: split points come from the log's own walk, never from the index alone.

The attack as found: one 8-byte ``.index`` entry pointing into a record's
value -- where the attacker had put a whole, CRC-valid batch of three records
-- made ``spark export`` cut the segment there: the task from that cut read
the three forged records, the real batch holding them was lost across the cut,
and an intact log was reported with two damaged regions.  Now a cut is a batch
start the header walk of the log found (kseg.spark.splits.cut_positions).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from logdirs import batch
from threatkit import kseg

from kseg.format import RecordSpec, encode_batch
from kseg.index import OFFSET_ENTRY

pa = pytest.importorskip("pyarrow")

from kseg.spark import rows  # noqa: E402  (needs pyarrow)

SPLIT = 4096
FORGED_OFFSETS = [900, 901, 902]


@pytest.fixture
def forged(tmp_path: Path) -> tuple[Path, int]:
    """``orders-0``: 40 real batches; batch 20's value holds a valid batch of offsets 900-902; the index points at it."""
    part = tmp_path / "orders-0"
    part.mkdir()
    planted = encode_batch([RecordSpec(o, 1_700_000_000_000, b"evil", b"forged") for o in FORGED_OFFSETS])
    batches = [batch(i, 1, size=300) for i in range(40)]
    batches[20] = encode_batch([RecordSpec(20, 1_700_000_000_020, b"k", b"A" * 64 + planted + b"B" * 2000)])
    data = b"".join(batches)
    position = data.index(planted)
    assert position > SPLIT  # the first cut's target, 4096, is below it: the forged entry serves the second
    log = part / "00000000000000000000.log"
    log.write_bytes(data)
    starts, pos = [], 0
    for offset, one in enumerate(batches):
        starts.append((offset, pos))
        pos += len(one)
    entries = []  # a whole index, one entry per cut target, as the planner wants it ...
    for target in range(SPLIT, len(data), SPLIT):
        offset, start = max(e for e in starts if e[1] <= target)
        if start < position <= target:  # ... but where the forged batch lies below a target, the entry points at it
            offset, start = 20, position
        entries.append(OFFSET_ENTRY.pack(offset, start))
    assert OFFSET_ENTRY.pack(20, position) in entries
    (part / "00000000000000000000.index").write_bytes(b"".join(entries))
    return log, position


def test_splits_are_cut_only_where_the_log_has_batches(forged):
    log, position = forged
    splits = rows.plan_splits([log], split_bytes=SPLIT)
    starts = {b.position for b in _real_batches(log)}
    assert position not in {s.start for s in splits}
    assert {s.start for s in splits} <= starts
    table = pa.Table.from_batches([b for s in splits for b in rows.read_split(s, mode="PERMISSIVE")])
    assert table.column("offset").to_pylist() == list(range(40))
    assert set(table.column("problem").to_pylist()) == {None}


def _real_batches(log: Path):
    from kseg.segment import open_segment

    with open_segment(log) as segment:
        return list(segment.iter_batches())


def test_spark_export_exports_the_real_records_only(forged, tmp_path):
    pytest.importorskip("pyspark")
    log, _ = forged
    out = tmp_path / "out"
    result = kseg("spark", "export", str(log), "--to", str(out), "--format", "json", "--split-bytes", str(SPLIT),
                  timeout=600)
    assert (result.returncode, result.stderr) == (0, ""), result.stderr[-3000:]
    assert result.stdout == f"exported 40 records from 1 file to {out} (json)\n"
    exported = [json.loads(line) for part in sorted(out.glob("part-*")) for line in part.read_text().splitlines()]
    assert sorted(r["offset"] for r in exported) == list(range(40))
