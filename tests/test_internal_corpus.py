"""Every internal-topic file of the real corpus decodes completely; fixtures and goldens stay as reviewed.

Counts records present (every record of every whole batch) against records decoded with
nothing left over; any record a decoder could not fully read fails the test with its file,
offset and reason.  Producer snapshots are decoded through the ProducerSnapshot schema and
cross-checked field by field with kseg.format.snapshot.
"""

from __future__ import annotations

import hashlib
import importlib.util
import re
from collections.abc import Callable
from dataclasses import astuple, dataclass, field
from pathlib import Path

import pytest
from support import CORPUS_REAL, FIXTURES, require_dir

from kseg.format import BatchWalk
from kseg.format.internal import (
    Decoded,
    decode_metadata_record,
    decode_offsets_record,
    decode_producer_snapshot,
    describe_control_record,
)
from kseg.format.snapshot import read_snapshot

INTERNAL = FIXTURES / "internal"


def load_make_fixtures():
    spec = importlib.util.spec_from_file_location("make_internal_fixtures", INTERNAL / "make_fixtures.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


@dataclass
class Tally:
    """Records present in whole batches vs records decoded completely, and what failed where."""

    files: int = 0
    present: int = 0
    decoded: int = 0
    control: int = 0
    failures: list[str] = field(default_factory=list)


Decoder = Callable[[bytes | None, bytes | None, int], Decoded]


def tally_file(path: Path, decode: Decoder, tally: Tally) -> None:
    data = path.read_bytes()
    tally.files += 1
    for batch in BatchWalk(data, 0, len(data)):
        records = list(batch.iter_records())
        assert batch.count in (None, len(records)), f"{path}: batch at {batch.position}"
        tally.present += len(records)
        for record in records:
            if batch.is_control:
                tally.control += 1
                result = describe_control_record(record.key, record.value)
                ok, why = result.problem is None, result.problem
            else:
                decoded = decode(record.key, record.value, record.offset)
                ok, why = decoded.complete, decoded.problem and decoded.problem.message
            if ok:
                tally.decoded += 1
            else:
                tally.failures.append(f"{path.relative_to(CORPUS_REAL)} offset {record.offset}: {why}")


def corpus_files(matches: Callable[[Path], bool]) -> list[Path]:
    root = require_dir(CORPUS_REAL, "shared real corpus")
    return sorted(p for p in root.rglob("*") if p.is_file() and p.stat().st_size > 0 and matches(p))


def is_offsets_log(path: Path) -> bool:
    return path.suffix == ".log" and re.fullmatch(r"__consumer_offsets-\d+", path.parent.name) is not None


def is_metadata_file(path: Path) -> bool:
    in_metadata_dir = re.fullmatch(r"__cluster_metadata-\d+", path.parent.name) is not None
    return path.name == "bootstrap.checkpoint" or (in_metadata_dir and path.suffix in (".log", ".checkpoint"))


def test_every_consumer_offsets_segment_decodes_completely() -> None:
    tally = Tally()
    for path in corpus_files(is_offsets_log):
        tally_file(path, decode_offsets_record, tally)
    assert tally.failures == []
    assert tally.files > 100 and tally.present > 20000
    assert tally.decoded == tally.present


def test_every_metadata_log_and_checkpoint_decodes_completely() -> None:
    tally = Tally()
    paths = corpus_files(is_metadata_file)
    for path in paths:
        tally_file(path, decode_metadata_record, tally)
    assert tally.failures == []
    assert any(p.suffix == ".log" for p in paths) and any(p.name == "bootstrap.checkpoint" for p in paths)
    assert sum(p.suffix == ".checkpoint" for p in paths) > 90 and tally.control > 200
    assert tally.decoded == tally.present > 100000


def test_every_producer_snapshot_decodes_completely() -> None:
    paths = corpus_files(lambda p: p.suffix == ".snapshot")
    assert len(paths) > 10
    for path in paths:
        data = path.read_bytes()
        decoded = decode_producer_snapshot(data)
        independent = read_snapshot(data)  # kseg.format.snapshot: a fixed-layout reader written separately
        entries = decoded["data"]["producerEntries"]
        assert decoded["crcValid"] and independent.crc_ok, path
        assert (decoded["version"], decoded["data"]["crc"]) == (independent.version, independent.crc)
        assert 10 + 46 * len(entries) == len(data), path  # nothing left over
        assert [tuple(e.values()) for e in entries] == [astuple(e) for e in independent.entries], path


# --------------------------------------------------------------------------- fixtures and goldens


def test_synthetic_segments_regenerate_to_their_recorded_sha256() -> None:
    make = load_make_fixtures()
    rows = re.findall(r"^\| `(segments/[^`]+)` \| (\d+) \| `([0-9a-f]{64})` \|",
                      (INTERNAL / "PROVENANCE.md").read_text(), re.MULTILINE)
    assert {name for name, _, _ in rows} == set(make.SYNTHETIC)
    for name, size, digest in rows:
        built = make.SYNTHETIC[name]()
        assert (len(built), hashlib.sha256(built).hexdigest()) == (int(size), digest), name
        assert (INTERNAL / name).read_bytes() == built, name


def test_goldens_match_the_decoders() -> None:
    make = load_make_fixtures()
    expected = make.expected_files()
    for path, data in expected.items():
        assert path.read_bytes() == data, f"{path} differs: review, then run make_fixtures.py"
    goldens_on_disk = {p for p in (INTERNAL / "golden").iterdir()}
    rendered = {p for p in expected if p.parent.name == "golden"}
    assert rendered <= goldens_on_disk
    if CORPUS_REAL.is_dir():
        assert rendered == goldens_on_disk
    assert len(goldens_on_disk) == 2 * len(make.GOLDEN_SAMPLES)


def test_every_synthetic_record_is_either_decoded_or_a_deliberate_failure() -> None:
    make = load_make_fixtures()
    text = (INTERNAL / "golden" / "synthetic-consumer-offsets.txt").read_text()
    # type 0 (LegacyOffsetCommitKey) is in synthetic-older-offsets; 9 and 18 are unknown to 4.3.0
    for record_type in (*range(1, 9), *range(10, 17)):
        assert f'key: {{"type":"{record_type}"' in text, record_type
    assert "Unknown record type 9 at offset 9, skipping." in text
    assert "Unknown record type 18 at offset 18, skipping." in text
    streams = (INTERNAL / "golden" / "synthetic-streams-groups.txt").read_text()
    for record_type in (17, 19, 20, 21, 22, 23):
        assert f'key: {{"type":"{record_type}"' in streams, record_type
    older = (INTERNAL / "golden" / "synthetic-older-offsets.txt").read_text()
    assert older.startswith('offset: 0 key: {"type":"0","data":{"group":"old","topic":"orders","partition":0}} '
                            'payload: {"version":"0","data":{"offset":7,"metadata":"","commitTimestamp":1700000000000}}')
    # Kafka 4.0's ShareSnapshotValue layout, read by 4.3's: the generated reader's text, wrapped by
    # CoordinatorRecordSerde.readMessage (coordinator-common/.../CoordinatorRecordSerde.java)
    assert (INTERNAL / "golden" / "synthetic-share-snapshot-4-0.txt").read_text() == (
        "offset: 0 key: Error at offset 0, skipping. Could not read record with version 0 from value's buffer "
        "due to: non-nullable field stateBatches was serialized as null.\n")
    assert len(make.GOLDEN_SAMPLES) == 20


@pytest.mark.parametrize("name", ["real-consumer-offsets-12", "real-metadata-checkpoint",
                                  "real-producer-snapshot"])
def test_bundled_real_samples_have_goldens(name: str) -> None:
    assert (INTERNAL / "golden" / f"{name}.txt").stat().st_size > 0
