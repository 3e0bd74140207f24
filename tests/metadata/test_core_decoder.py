"""The compiled core's metadata decoder (``kseg._core.MetadataDecoder``, schema programs from
kseg/format/messages/core_program.py) against the Python readers it stands in for.

* every record value of the fixtures, the corpus and a generated log (GenMetadataLog.java, seed 5): the core's
  answer is the generic reader's, field order included, or it declines (None) and Python decides;
* the same records mutated (seeded; ``KSEG_METADATA_MUTATIONS``, default 3000): never an answer the generic
  reader would not give;
* ``records()`` of every metadata file, with the core and on the pure-Python path: the same records and
  findings, in the same order (the run of plain batches in one core call included).
"""

from __future__ import annotations

import os
import random
from pathlib import Path

import pytest
from metadata.kafka_image import KafkaImage
from metadata.test_compiled_reader import _generic, _real_values, _values
from support import CORPUS_REAL, FIXTURES

from kseg.format.internal import kraft
from kseg.metadata.source import records

MUTATIONS = int(os.environ.get("KSEG_METADATA_MUTATIONS", "3000"))
DECODER = kraft.metadata_decoder()
pytestmark = pytest.mark.skipif(DECODER is None, reason="no compiled core (KSEG_PURE=1): nothing to compare")


@pytest.fixture(scope="module")
def generated_log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    log = tmp_path_factory.mktemp("gen") / "__cluster_metadata-0" / "00000000000000000000.log"
    KafkaImage.create().generate(log, 5, 1500)
    return log


def _files(generated_log: Path) -> list[Path]:
    roots = [FIXTURES] + ([CORPUS_REAL] if CORPUS_REAL.is_dir() else [])
    found = sorted(p for root in roots for p in root.glob("**/__cluster_metadata-0/*")
                   if p.suffix in (".log", ".checkpoint"))
    return [*found, generated_log]


def test_every_record_decodes_as_the_generic_reader_reads_it(generated_log: Path) -> None:
    values = _real_values() + _values(generated_log)
    declined = 0
    types = set()
    for value in values:
        got, want = DECODER.read(value), _generic(value)
        if got is None:
            declined += 1
            continue
        assert want is not None, value.hex()
        assert tuple(got) == want and list(got[2]) == list(want[2]), value.hex()
        types.add(got[0])
    assert len(values) > 3000 and declined < len(values) // 100, (len(values), declined)
    assert len(types) >= 15, types


def test_mutated_records_are_decoded_only_as_the_generic_reader_decodes_them(generated_log: Path) -> None:
    rng = random.Random(27)
    values = _real_values() + _values(generated_log)
    taken = 0
    for _ in range(MUTATIONS):
        value = bytearray(rng.choice(values))
        how = rng.randrange(4)
        if how == 0:
            value[rng.randrange(len(value))] = rng.randrange(256)
        elif how == 1:
            del value[rng.randrange(1, len(value)):]
        elif how == 2:
            value += bytes(rng.randrange(256) for _ in range(rng.randrange(1, 4)))
        else:
            at = rng.randrange(3, len(value)) if len(value) > 3 else 0
            value[at:at] = bytes([rng.choice((0x00, 0x01, 0x7F, 0x80, 0xFF))])
        got = DECODER.read(bytes(value))
        if got is not None:
            assert tuple(got) == _generic(bytes(value)), value.hex()
            taken += 1
    assert taken > MUTATIONS // 30, taken


def test_records_with_the_core_and_in_pure_python_are_the_same(generated_log: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    files = _files(generated_log)
    with_core = {f: list(records(f)) for f in files}
    monkeypatch.setattr(kraft, "metadata_decoder", lambda: None)
    total = 0
    for f in files:
        pure = list(records(f))
        assert with_core[f] == pure, f
        total += len(pure)
    assert total > 3000


def test_a_damaged_batch_in_the_middle_of_a_run_ends_the_file_the_same_way(generated_log: Path, tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    data = bytearray(generated_log.read_bytes())
    data[len(data) // 2] ^= 0x40  # inside some batch: its CRC fails
    data += b"\x00\x00\x00"  # and a tail that is no whole batch (never reached)
    damaged = tmp_path / "00000000000000000000.log"
    damaged.write_bytes(bytes(data))
    with_core = list(records(damaged))
    monkeypatch.setattr(kraft, "metadata_decoder", lambda: None)
    assert with_core == list(records(damaged))
    assert with_core[-1].reason.startswith("damaged batch") and with_core[-1].fatal_for_file  # type: ignore[union-attr]
