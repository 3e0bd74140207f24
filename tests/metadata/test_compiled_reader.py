"""The compiled metadata record readers (kseg/format/messages/compiled.py) against the generic reader.

The replay reads every record through the compiled reader of its type and version and asks the generic
reader only when the compiled one does not take the bytes.  So the compiled reader must return exactly what
the generic reader returns, and must never take bytes the generic reader rejects:

* every data record of every metadata log and snapshot of fixtures/, the real corpus and a log
  GenMetadataLog.java wrote with Kafka's record classes: the compiled reader takes it (no silent fallback
  that would make the replay slow) and gives the generic reader's type, version and fields;
* those records with bytes changed, cut or appended (seeded; ``KSEG_METADATA_MUTATIONS`` of them, default
  3000): where the compiled reader takes them, the generic reader gives the same; where the generic reader
  rejects them, the compiled one does too.
"""

from __future__ import annotations

import os
import random
from pathlib import Path
from typing import Any

import pytest
from kafka_image import KafkaImage
from support import CORPUS_REAL, FIXTURES

from kseg.format.internal.common import Failed
from kseg.format.internal.kraft import _read_fast, _read_frame, metadata_type_name, read_metadata_record
from kseg.format.v2 import V2Batch
from kseg.format.walk import BatchWalk

MUTATIONS = int(os.environ.get("KSEG_METADATA_MUTATIONS", "3000"))


def _values(path: Path) -> list[bytes]:
    """The value of every data record of one file (control batches and unreadable batches left out)."""
    data = path.read_bytes()
    out: list[bytes] = []
    for pos, _, magic, header, crc_ok in BatchWalk(data, 0, None, strict=False).frames(check_crc=True):
        if header is None or magic != 2 or not crc_ok:
            break
        batch = V2Batch(data, pos)
        if batch.is_control:
            continue
        out += [bytes(r.value) for r in batch.iter_records(1 << 26) if r.value is not None]
    return out


def _generic(value: bytes) -> tuple[str, int, dict[str, Any]] | None:
    """The generic reader's answer (None: it rejects the bytes, or only a historical layout fits)."""
    try:
        schema, version, data = _read_frame(value, "metadata")
    except Failed:
        return None
    return None if schema.revision is not None else (metadata_type_name(schema.name), version, data)


def _real_values() -> list[bytes]:
    roots = [FIXTURES] + ([CORPUS_REAL] if CORPUS_REAL.is_dir() else [])
    files = sorted(p for root in roots for p in root.glob("**/__cluster_metadata-0/*")
                   if p.suffix in (".log", ".checkpoint"))
    return [v for f in files for v in _values(f)]


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> list[bytes]:
    log = tmp_path_factory.mktemp("gen") / "00000000000000000000.log"
    KafkaImage.create().generate(log, 5, 1500)
    return _values(log)


def test_every_real_and_generated_record_reads_the_same_compiled(generated: list[bytes]) -> None:
    values = _real_values() + generated
    assert len(values) > 3000
    types = set()
    for value in values:
        want = _generic(value)
        got = _read_fast(value)
        if want is None:  # a record Kafka cannot read (fixtures/internal has one): the generic reader decides
            assert got is None, value.hex()
            continue
        assert got == want, value.hex()
        assert list(got[2]) == list(want[2]), value.hex()  # the same field order too
        types.add(got[0])
    assert len(types) >= 15, types  # the generator and the corpus cover most record types


def test_mutated_records_are_taken_only_where_the_generic_reader_takes_them(generated: list[bytes]) -> None:
    rng = random.Random(26)
    values = _real_values() + generated
    taken = rejected = slow = 0
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
        got, want = _read_fast(bytes(value)), _generic(bytes(value))
        if got is None:
            rejected += 1
            slow += want is not None
            continue
        assert got == want, value.hex()
        taken += 1
    # most changed bytes leave a record Kafka cannot read; of those it can, the compiled reader takes nearly all
    assert taken > MUTATIONS // 30 and rejected > MUTATIONS // 2 and slow < taken // 10, (taken, rejected, slow)


def test_the_replay_reads_a_record_the_compiled_reader_refuses_with_kafkas_words() -> None:
    """A string longer than the bytes left: the compiled reader gives up, the generic reader says why."""
    config = bytes.fromhex("010400" "02" "7f") + b"x"  # ConfigRecord v0, a topic, its name 126 bytes long
    assert _read_fast(config) is None
    with pytest.raises(Failed) as failed:
        read_metadata_record(config)
    assert failed.value.kafka_message == "Failed to deserialize record with type 4"
    assert (str(failed.value), failed.value.offset, failed.value.field) == (
        "Error reading byte array of 126 byte(s): only 1 byte(s) available", 5, "resourceName")
