"""The core's runs over V0/V1 messages give exactly what the pure-Python path gives.

* ``clean_legacy_run`` (verify's fast path for legacy segments, kseg/format/legacy_run.py): the
  core's ``LegacyRun`` against ``python_clean_legacy_run`` from many positions, floors and
  ceilings, with and without the per-message list;
* verify's whole walk of a legacy log (kseg/ops/verify/log_walk.py): findings, counts and the
  calls the index checks see, core against pure Python against the slow path alone (each message
  checked one by one, as before the runs existed);
* ``build_indexes`` over legacy logs (the core's ``legacy_index_run`` between V2 runs,
  kseg/recovery/indexes.py ``_clean_run``): the whole ``IndexBuild`` against the Python loop.

The logs hold what sends each run back to Python: unusual attributes (zstd or an unknown codec,
unused bits, the timestamp-type bit in magic 0), offsets that go back or leave the segment,
compressed wrappers, magic-0 and magic-1 messages mixed with V2 batches, and damage.
"""

from __future__ import annotations

import random
import struct
import zlib
from types import ModuleType

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from segments import damaged
from test_core_indexes import assert_same_build

from kseg.format import RecordSpec, encode_batch
from kseg.format import legacy_run as legacy_module
from kseg.format.legacy_run import clean_legacy_run, python_clean_legacy_run
from kseg.ops.verify.log_walk import LogWalk, walk_log


def _message(offset: int, magic: int, attributes: int, timestamp: int, value: bytes) -> bytes:
    """One V0/V1 message with a valid CRC-32 and any attributes (the encoder refuses odd ones)."""
    body = struct.pack(">bB", magic, attributes)
    if magic == 1:
        body += struct.pack(">q", timestamp)
    body += struct.pack(">i", -1) + struct.pack(">i", len(value)) + value
    message = struct.pack(">I", zlib.crc32(body)) + body
    return struct.pack(">qi", offset, len(message)) + message


def legacy_log(seed: int, entries: int = 60) -> bytes:
    """Mostly clean V0/V1 messages, with the entries a clean run must leave to the slow path."""
    rnd = random.Random(seed)
    out = bytearray()
    offset = rnd.choice((0, 0, 500))
    timestamp = 1_700_000_000_000
    for _ in range(entries):
        kind = rnd.choices(("plain", "odd", "wrapper", "v2"), weights=(30, 3, 2, 1))[0]
        magic = rnd.choice((1, 1, 0))
        timestamp += rnd.choice((3, 3, -20))
        if kind == "plain":
            out += _message(offset, magic, rnd.choice((0, 0, 0, 8 if magic else 0)), timestamp, b"v" * rnd.randint(0, 90))
            offset += 1
        elif kind == "odd":
            attributes = rnd.choice((4, 5, 7, 0x10, 0x80, 8))
            out += _message(offset, magic, attributes, timestamp, b"odd")
            offset += 1
        else:
            count = rnd.randint(1, 4)
            specs = [RecordSpec(offset + i, timestamp + i, b"k", b"w" * rnd.randint(0, 60)) for i in range(count)]
            if kind == "wrapper":
                out += encode_batch(specs, magic=magic, codec="gzip", base_offset=offset)
            else:
                out += encode_batch(specs, base_offset=offset)
            offset += count
        offset = max(0, offset + rnd.choice((0, 0, 0, 0, 0, 0, 2, -3)))  # sometimes back: the slow path's
    return bytes(out)


def _runs(buf: bytes, start: int, until: int, floor: int, overflow_at: int, each: bool):
    compiled = clean_legacy_run(buf, start, len(buf), until, floor, overflow_at, each)
    python = python_clean_legacy_run(buf, start, len(buf), until, max(floor, -(1 << 63)),
                                     min(overflow_at, (1 << 63) - 1), each)
    return compiled, python


@settings(deadline=None, max_examples=60)
@given(seed=st.integers(0, 2**32), damage=st.integers(-1, 2**32), floor=st.integers(-2, 600),
       ceiling=st.sampled_from((1 << 63, 1 << 31, 520)), each=st.booleans())
@example(seed=0, damage=-1, floor=-1, ceiling=1 << 63, each=True)
def test_clean_run_is_the_same_from_every_position(core, seed, damage, floor, ceiling, each):
    buf = legacy_log(seed)
    if damage >= 0:
        buf = damaged(buf, damage)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(legacy_module, "CORE", core)
        for start in range(0, len(buf), max(1, len(buf) // 40)):
            for until in (start + 1, start + 300, len(buf)):
                compiled, python = _runs(buf, start, until, floor, ceiling, each)
                assert compiled == python


def test_a_clean_run_takes_the_usual_messages_and_stops_at_the_first_other(core):
    """Exact values: two clean messages, then one with an unused attribute bit."""
    buf = _message(5, 1, 0, 1005, b"ab") + _message(6, 0, 0, -1, b"") + _message(7, 1, 0x10, 1007, b"")
    second, third = len(_message(5, 1, 0, 1005, b"ab")), len(buf) - len(_message(7, 1, 0x10, 1007, b""))
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(legacy_module, "CORE", core)
        compiled, python = _runs(buf, 0, len(buf), 4, 1 << 63, True)
    assert compiled == python
    assert (compiled.end, compiled.count, compiled.first_offset, compiled.last_offset, compiled.last_position) == (
        third, 2, 5, 6, second)
    assert compiled.messages == [(0, 5, 1005), (second, 6, -1)]
    assert _runs(buf, 0, len(buf), 5, 1 << 63, False)[0].count == 0  # offset 5 is not above the floor


def _verify_walk(buf: bytes, core: ModuleType | None, name_base: int | None, runs: bool = True):
    """The walk's results; ``runs=False``: every V0/V1 message through the slow path, one by one."""
    seen: list[tuple[int, int, int, int]] = []
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(legacy_module, "CORE", core)
        if not runs:
            patch.setattr(LogWalk, "_legacy", lambda self, start: start)
        walk = LogWalk("x.log", buf, name_base=name_base, observe=lambda *a: seen.append(a)).run()
    findings = list(walk.findings.close())
    walk.close()
    return findings, seen, walk.batches, walk.first_offset, walk.last_offset, walk.skipped, walk.kafka_cut


@settings(deadline=None, max_examples=40)
@given(seed=st.integers(0, 2**32), damage=st.integers(-1, 2**32), base=st.sampled_from((None, 0, 3)))
@example(seed=0, damage=-1, base=0)
def test_verify_walk_of_a_legacy_log_is_the_same(core, seed, damage, base):
    buf = legacy_log(seed)
    if damage >= 0:
        buf = damaged(buf, damage)
    one_by_one = _verify_walk(buf, None, base, runs=False)
    assert _verify_walk(buf, core, base) == _verify_walk(buf, None, base) == one_by_one


@settings(deadline=None, max_examples=40)
@given(seed=st.integers(0, 2**32), interval=st.integers(1, 3000), damage=st.integers(-1, 2**32))
@example(seed=0, interval=1, damage=-1)
def test_build_indexes_over_legacy_logs_is_the_same(core, seed, interval, damage):
    buf = legacy_log(seed, entries=120)
    if damage >= 0:
        buf = damaged(buf, damage)
    assert_same_build(core, buf, 0, interval)
    assert_same_build(core, buf, 0, interval, max_index_size=8 * 3)  # a full index: the loop throws


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_walk_log_reading_windows_is_the_same(core, tmp_path, seed):
    """The whole file walk (windows read for the V2 batches, legacy runs over the mapping)."""
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(legacy_log(seed, entries=200))

    def walk(with_core):
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(legacy_module, "CORE", with_core)
            done, size = walk_log(str(path), name_base=0)
        return list(done.findings.close()), done.batches, done.first_offset, done.last_offset, done.skipped, size

    assert walk(core) == walk(None)
