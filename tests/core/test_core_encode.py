"""``kseg convert`` through the compiled core writes exactly what the pure-Python path writes.

The core (``kseg.format.convert_core``: rust/kseg-wire encode.rs and legacy.rs) sums up a
source batch's records, cuts it by estimated size and re-encodes its records; Python does
the rest.  Each case converts the same input twice in-process -- the core switched on, and
off (``convert_core.CORE = None``: the pure path, the reference) -- and compares every output
file byte for byte, the report, and any refusal (type, message, position).  Inputs: hypothesis-built
segments of every source magic and codec (keys and values null or not, headers, LogAppendTime,
producer fields, transactional batches, delete horizons), every target magic and codec,
``--max-message-bytes`` small enough to split, the drop options; damaged copies of them; the
real corpus.  Cases also check the core was used, not declined throughout.
"""

from __future__ import annotations

import random
from dataclasses import asdict
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from segments import corpus_logs, damaged

from kseg.errors import KsegError
from kseg.format import RecordSpec, convert_core, encode_batch
from kseg.format.compression import CODEC_NONE, CODEC_ZSTD, compress
from kseg.format.model import LOG_APPEND_TIME
from kseg.format.v0v1_encode import encode_entry, encode_message
from kseg.ops.convert.run import Target, convert_path

NAME = "00000000000000000000.log"
ENCODED = [0]  # runs of records the core encoded, over the session
TS = 1_700_000_000_000


def _run(core, monkeypatch, source: Path, out: Path, target: Target, skip: bool) -> tuple[object, dict, int]:
    """(report or the refusal, the output files' bytes, batches the core took)."""
    taken = 0
    real, real_encode = convert_core.open_records, convert_core.CoreRecords.encode

    def counting(batch, cap):
        nonlocal taken
        records = real(batch, cap)
        taken += records is not None
        return records

    def encoding(self, *args):
        done = real_encode(self, *args)
        ENCODED[0] += done is not None
        return done

    monkeypatch.setattr(convert_core, "CORE", core)
    monkeypatch.setattr("kseg.ops.convert.source.open_records", counting)
    monkeypatch.setattr(convert_core.CoreRecords, "encode", encoding)
    try:
        report = convert_path(source, out, target, skip_corrupt=skip)
    except KsegError as err:
        outcome: object = (type(err).__name__, err.message, err.offset, err.field)
    else:
        outcome = [
            (s.output.name, asdict(s.tally) if hasattr(s.tally, "__dataclass_fields__") else vars(s.tally),
             s.skipped, s.index_entries, s.timeindex_entries, s.txnindex_entries, s.index_note)
            for s in report.segments
        ]
    files = {p.name: p.read_bytes() for p in sorted(out.iterdir())} if out.exists() else {}
    return outcome, files, taken


def assert_same(core, tmp_path: Path, data: bytes, target: Target, skip: bool = False) -> int:
    """Convert ``data`` with and without the core; returns how many batches the core took."""
    return convert_both(core, tmp_path, data, target, skip)[1]


def convert_both(core, tmp_path: Path, data: bytes, target: Target, skip: bool = False) -> tuple[object, int]:
    """(the outcome both paths agree on, batches the core took)."""
    source = tmp_path / "src-0" / NAME
    source.parent.mkdir(parents=True, exist_ok=True)
    source.write_bytes(data)
    runs = []
    for label, module in (("core", core), ("pure", None)):
        out = tmp_path / f"out-{label}-{random.random()}"
        with pytest.MonkeyPatch.context() as patch:
            runs.append(_run(module, patch, source, out, target, skip))
    (core_outcome, core_files, taken), (pure_outcome, pure_files, pure_taken) = runs
    assert pure_taken == 0
    assert core_outcome == pure_outcome
    assert core_files == pure_files
    return core_outcome, taken


# -- building sources ---------------------------------------------------------------------------

key_or_value = st.one_of(st.none(), st.binary(max_size=40), st.binary(min_size=200, max_size=600))
header = st.tuples(st.binary(max_size=8), st.one_of(st.none(), st.binary(max_size=12)))


@st.composite
def batch_spec(draw):
    """(magic, codec, record specs without offsets, options) of one source batch."""
    magic = draw(st.sampled_from((2, 2, 2, 1, 1, 0)))
    codec = draw(st.sampled_from(("none", "gzip", "snappy", "lz4", "zstd") if magic == 2 else ("none", "gzip", "snappy", "lz4")))
    count = draw(st.integers(1, 1 if magic < 2 and codec == "none" else 40))
    headers = magic == 2 and draw(st.booleans())
    items = draw(st.lists(st.tuples(key_or_value, key_or_value, st.lists(header, max_size=2 if headers else 0),
                                    st.sampled_from((0, 1, 7, -5000, 10**6, None))), min_size=count, max_size=count))
    options = {}
    if magic > 0 and draw(st.integers(0, 4)) == 0:
        options.update(timestamp_type=LOG_APPEND_TIME, log_append_time=TS + 99)
    if magic == 2:
        choice = draw(st.integers(0, 5))
        if choice == 0:
            options.update(producer_id=7, producer_epoch=1, base_sequence=draw(st.sampled_from((0, 2**31 - 3))))
        elif choice == 1:
            options.update(producer_id=9, producer_epoch=0, base_sequence=5, is_transactional=True)
        elif choice == 2:
            options.update(delete_horizon_ms=TS + 5)
        elif choice == 3:
            options.update(partition_leader_epoch=3)
    gap = draw(st.sampled_from((1, 1, 1, 3)))
    return magic, codec, items, options, gap


def build(batches) -> bytes:
    out, offset = bytearray(), 0
    for magic, codec, items, options, gap in batches:
        specs = []
        for key, value, headers, ts in items:
            timestamp = -1 if ts is None else TS + ts
            specs.append(RecordSpec(offset, timestamp, key, value, tuple(headers)))
            offset += gap
        out += encode_batch(specs, magic=magic, codec=codec, **options)
    return bytes(out)


target = st.builds(
    lambda magic, codec, limit, drops: Target(
        magic, None if codec is None or (codec == CODEC_ZSTD and magic < 2) else codec,
        max_message_bytes=limit, drop_control=drops, drop_headers=drops,
    ),
    st.sampled_from((2, 2, 1, 0)),
    st.sampled_from((None, None, CODEC_NONE, 1, 2, 3, 4)),
    st.sampled_from((1_048_588, 1_048_588, 2000, 600, 150)),
    st.booleans(),
)


@settings(deadline=None, max_examples=120, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.data_too_large])
@given(st.lists(batch_spec(), min_size=1, max_size=6), target)
def test_built_segments_convert_identically(core, tmp_path_factory, batches, to):
    data = build(batches)
    assert_same(core, tmp_path_factory.mktemp("c"), data, to)


@settings(deadline=None, max_examples=60, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.data_too_large])
@given(st.lists(batch_spec(), min_size=1, max_size=4), target, st.integers(0, 2**32))
def test_damaged_segments_convert_or_refuse_identically(core, tmp_path_factory, batches, to, seed):
    data = damaged(build(batches), seed)
    assert_same(core, tmp_path_factory.mktemp("d"), data, to, skip=seed % 2 == 0)


@pytest.mark.parametrize("to", [Target(2, 4), Target(2, 3, max_message_bytes=3000), Target(1, 1), Target(0, None)])
def test_large_batches_split_identically_and_through_the_core(core, tmp_path, to):
    """Batches of more records than a chunk (4096), split by a small limit: every part through the core."""
    rnd = random.Random(5)
    specs = [RecordSpec(i, TS + rnd.randrange(-3, 900), None if i % 7 == 0 else b"k%d" % i,
                        rnd.randbytes(rnd.randrange(0, 60)))
             for i in range(9000)]
    data = encode_batch(specs, codec="gzip") + encode_batch(
        [RecordSpec(9000 + s.offset, s.timestamp, s.key, s.value) for s in specs[:5000]], magic=1, codec="lz4")
    before = ENCODED[0]
    assert assert_same(core, tmp_path, data, to) == 2
    assert ENCODED[0] - before >= 2  # 4096 records at a time (a V2 batch changing only its codec is recompressed)


def test_refusals_come_from_python_with_kafka_words(core, tmp_path):
    """A wrapper whose records Kafka's builder refuses in V2 (an offset span past Integer.MAX_VALUE)."""
    inner = b"".join(encode_entry(o, encode_message(0, 0, -1, b"k", b"v")) for o in (0, 2**31 + 5))
    data = encode_entry(2**31 + 5, encode_message(0, 1, -1, None, compress(1, inner, magic=0)))
    for to in (Target(2, 4), Target(1, 1), Target(0, 2)):
        outcome, taken = convert_both(core, tmp_path / str(to.magic), data, to)
        assert taken == 1
        assert outcome == ("ConvertRefused", f"Kafka's builder refuses this data in magic {to.magic}: "
                           "Maximum offset delta exceeded, base offset: 0, last offset: 2147483653", 0, "batch")


def test_the_corpus_converts_identically(core, tmp_path):
    """Every real .log up to 1 MiB, to V2-zstd (split at 20 kB) or V1-gzip, and a damaged copy to the other."""
    targets = (Target(2, 4, max_message_bytes=20_000), Target(1, 1, drop_control=True, drop_headers=True))
    taken = 0
    for i, log in enumerate(corpus_logs(max_size=1 << 20)):
        data = log.read_bytes()
        taken += assert_same(core, tmp_path / f"{i}", data, targets[i % 2], skip=True)
        taken += assert_same(core, tmp_path / f"{i}-damaged", damaged(data, i), targets[1 - i % 2], skip=i % 3 == 0)
    assert taken > 1000
