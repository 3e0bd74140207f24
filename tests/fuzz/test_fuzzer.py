"""The fuzzer's own machinery: reproducible mutants, field maps, the contract checks, known buckets.

The campaign itself is CI's separate step (``python -m tools.fuzz``, see docs/fuzzing.md); these
tests keep it honest and take a few seconds.
"""

from __future__ import annotations

import random
import struct

from kseg.format import BatchWalk
from tools.fuzz import fields, hostile
from tools.fuzz.atheris_harness import TARGETS, one_input
from tools.fuzz.campaign import Config, plan, run_campaign
from tools.fuzz.commands import commands_for, lay_out
from tools.fuzz.contract import Failure, Limits, Run, check, parse_traceback, snapshot
from tools.fuzz.known import KNOWN, Known, known_for
from tools.fuzz.mutate import Context, fix_crcs, mutate
from tools.fuzz.seeds import discover

SEEDS = discover()
TRACE = """Traceback (most recent call last):
  File "/x/.venv/lib/python3.11/site-packages/click/core.py", line 1, in invoke
  File "/work/main/kseg/ops/dump/records.py", line 52, in track
    self.x = y
  File "/x/.venv/lib/python3.11/site-packages/foo/kseg/bar.py", line 3, in inner
OverflowError: Python int too large to convert to C long
"""


def _seed(origin_tail: str):
    return next(s for s in SEEDS if s.origin.endswith(origin_tail))


def test_seeds_cover_every_kind_and_the_kafka_written_files():
    assert {s.suffix for s in SEEDS} >= {".log", ".index", ".timeindex", ".txnindex", ".snapshot", ".checkpoint"}
    assert any(s.origin.startswith("fixtures/real/") for s in SEEDS)
    assert len({s.data for s in SEEDS}) == len(SEEDS)


def test_a_mutant_depends_only_on_the_campaign_seed_and_its_number():
    one, two = plan(SEEDS, 14, 7), plan(SEEDS, 14, 7)
    assert (one.mutant, [c.args for c in one.commands]) == (two.mutant, [c.args for c in two.commands])
    assert plan(SEEDS, 14, 8).mutant != one.mutant


def test_field_map_finds_v2_header_and_record_varints():
    seed = _seed("fixtures/real/kafka-logs/nikhilDemo-0/00000000000000000000.log")
    found = fields.log_fields(seed.data)
    counts = [f for f in found if f.name == "records_count"]
    assert len(counts) == 3 and all(struct.unpack_from(f.code, seed.data, f.position)[0] == 1 for f in counts)
    assert {"record_length", "key_length", "value_length", "headers_count"} <= {f.name for f in found}


def test_fixed_crcs_make_a_mutated_batch_valid_again():
    seed = _seed("fixtures/real/kafka-logs/foo-0/00000000000000000000.log")
    buf = bytearray(seed.data)
    buf[34] ^= 0xFF  # inside the first message's value (it ends at byte 36)
    assert not next(iter(BatchWalk(bytes(buf), strict=False))).is_valid()
    fix_crcs(buf)
    assert all(batch.is_valid() for batch in BatchWalk(bytes(buf), strict=False))


def test_mutants_of_every_kind_are_bounded_bytes():
    rng = random.Random(3)
    for seed in SEEDS * 5:
        mutant = mutate(seed.data, Context(seed.suffix, [s.data for s in SEEDS[:5]]), rng)
        assert isinstance(mutant.data, bytes) and len(mutant.data) <= 1 << 20 and mutant.steps
    for _ in range(500):  # the empty seed and a one-byte index: every operator copes
        assert mutate(b"", Context(".log", []), rng).steps
        assert mutate(b"\x01", Context(".index", [b""]), rng).steps


def test_a_hostile_record_length_does_not_stall_the_field_map():
    seed = _seed("fixtures/real/kafka-logs/nikhilDemo-0/00000000000000000000.log")
    buf = bytearray(seed.data)
    length = next(f for f in fields.log_fields(buf) if f.name == "record_length")
    buf[length.position] = 0x01  # zigzag -1: a record that ends before it starts
    assert fields.log_fields(bytes(buf))


def test_traceback_bucket_is_exception_and_innermost_kseg_frame():
    exception, frame, detail = parse_traceback("noise\n" + TRACE)
    assert (exception, frame) == ("OverflowError", "kseg/ops/dump/records.py:track")
    assert detail.startswith("kseg/ops/dump/records.py:52 Python int too large")


def test_contract_flags_every_clause(tmp_path):
    (tmp_path / "a.log").write_bytes(b"x")
    before = snapshot(tmp_path)
    (tmp_path / "a.log").write_bytes(b"y")
    (tmp_path / "new.index").write_bytes(b"")
    run = Run(exit_code=None, signal=9, timed_out=True, max_rss_mb=900, seconds=11, stderr=TRACE)
    kinds = {f.kind for f in check("dump", run, before, snapshot(tmp_path), Limits(512, 10))}
    assert kinds == {"traceback", "timeout", "memory", "input-changed", "input-created"}
    clean = Run(exit_code=1, signal=None, timed_out=False, max_rss_mb=20, seconds=0.1, stderr="kseg: error: x")
    assert check("dump", clean, before, before, Limits()) == []


def test_known_buckets_are_narrow():
    entry = Known("*", "traceback", "MemoryError", "*", "docs/fuzzing.md#known-failures", "an example")
    assert entry.matches(Failure("verify", "traceback", "MemoryError", "kseg/format/compression/gzip.py:x"))
    assert not entry.matches(Failure("verify", "traceback", "IndexError", "kseg/format/v2.py:x"))
    assert not entry.matches(Failure("dump", "memory"))


def test_no_failure_is_known_today():
    """The last open one (a V0/V1 wrapper's inner messages held as records) is fixed: a MemoryError or a
    peak RSS over the cap is a new failure again."""
    assert KNOWN == ()
    assert known_for(Failure("verify", "traceback", "MemoryError", "kseg/format/compression/gzip.py:x")) is None
    assert known_for(Failure("dump", "memory")) is None
    assert known_for(Failure("dump", "traceback", "OverflowError", "kseg/ops/dump/records.py:track")) is None


def test_harness_accepts_every_seed_for_every_target():
    for seed in SEEDS:
        for target in range(len(TARGETS)):
            one_input(bytes([target]) + seed.data)


def test_one_mutant_end_to_end_keeps_the_contract():
    result = run_campaign(SEEDS, Config(seed=14, only=0, jobs=1, budget_s=60))
    assert result.mutants == 1 and result.runs >= 10
    assert [f.failure for f in result.findings if not known_for(f.failure)] == []


def test_every_command_but_spark_runs_on_mutants():
    """Every kseg command (spark needs a JVM per run: tests/spark) is on some mutant's command lines."""
    from kseg.cli import COMMANDS
    from tools.fuzz.commands import METADATA

    rng = random.Random(0)
    metadata_seed = next(s for s in SEEDS if s.partition.startswith("__cluster_metadata-") and s.suffix == ".log")
    lines = [*commands_for(_seed("fixtures/dump/txn/00000000000000000000.log"), rng), *commands_for(metadata_seed, rng)]
    assert {c.args[0] for c in lines} == set(COMMANDS) - {"spark"}
    assert set(METADATA) <= set(lines)


def _laid_out(tmp_path, attack):
    seed = _seed("fixtures/dump/txn/00000000000000000000.log")
    return seed, lay_out(seed, seed.data, tmp_path, attack, random.Random(3))


def test_side_file_and_index_bombs_are_sparse_64_mib(tmp_path):
    for number, attack in enumerate(("side-bomb:leader-epoch-checkpoint", "side-bomb:recovery-point-offset-checkpoint",
                                     "index-bomb")):
        _, paths = _laid_out(tmp_path / str(number), attack)
        bomb = {"side-bomb:leader-epoch-checkpoint": paths["part"] / "leader-epoch-checkpoint",
                "side-bomb:recovery-point-offset-checkpoint": paths["logdir"] / "recovery-point-offset-checkpoint",
                "index-bomb": paths["file"].with_suffix(".index")}[attack]
        assert bomb.stat().st_size == hostile.BOMB_BYTES
        assert bomb.stat().st_blocks * 512 < 1 << 20  # a hole, not 64 MiB written


def test_a_forged_index_points_inside_the_segment_where_no_batch_starts(tmp_path):
    seed, paths = _laid_out(tmp_path, "forged-index")
    relative, position = struct.unpack(">ii", paths["file"].with_suffix(".index").read_bytes())
    assert relative == 1 and 0 < position < len(seed.data)
    assert position not in {b.position for b in BatchWalk(seed.data)}  # random.Random(3) lands inside a batch


def test_a_hostile_name_and_a_large_value(tmp_path):
    seed, paths = _laid_out(tmp_path / "name", "hostile-name")
    assert paths["part"].name == hostile.HOSTILE_TOPIC + "-0" and (paths["part"] / seed.name).read_bytes() == seed.data
    assert paths["replica"].name == seed.partition  # the other replica keeps its name
    seed, paths = _laid_out(tmp_path / "value", "large-value")
    data = paths["file"].read_bytes()
    assert data[: len(seed.data)] == seed.data
    last = list(BatchWalk(data))[-1]
    [record] = last.iter_records()
    assert (last.base_offset, record[3]) == (1 << 20, b"\x1b" * hostile.LARGE_VALUE)


def test_attacks_are_drawn_for_a_fifth_of_the_mutants_and_log_only_ones_for_logs():
    rng = random.Random(1)
    draws = [hostile.draw(rng, ".index") for _ in range(2000)]
    assert 300 < sum(d is not None for d in draws) < 500
    assert not {"forged-index", "large-value"} & set(draws)
    assert {hostile.draw(random.Random(n), ".log") for n in range(3000)} == {None, *hostile.ATTACKS}
