"""verify's .index / .timeindex cross-check in the core (``OffsetCross`` / ``TimeCross``,
rust/kseg-wire/src/index_check.rs) against the Python reference (``PythonOffsetCross`` /
``PythonTimeCross`` in kseg/ops/verify/index_reference.py).

Both are built over the same index bytes (healthy, shuffled, perturbed, with zero tails, offsets near
the int64 edge), shown the same batches -- one by one, as runs of header tuples, as legacy messages,
in any mix -- and must give the same entries, the same order verdicts and the same finish verdicts.
Then whole verify runs: a healthy partition's index checks cost no Python call per batch on the
core's path, and verify's findings are the same on both paths for damaged indexes.

Size: ``KSEG_CORE_INDEX_EXAMPLES`` (default 200; fixed seed under CI).
"""

from __future__ import annotations

import os
import struct

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kseg.ops.verify import index_reference

EXAMPLES = int(os.environ.get("KSEG_CORE_INDEX_EXAMPLES", "200"))
INT64_MAX = (1 << 63) - 1


def _header(base: int, length: int, delta: int, max_ts: int) -> tuple[int, ...]:
    return (base, length, 0, 2, 0, 0, delta, 0, max_ts, -1, -1, -1, delta + 1)


@st.composite
def logs(draw):
    """(segment base, batches as (position, base, last, max timestamp, length))."""
    seg_base = draw(st.sampled_from([0, 1000, INT64_MAX - 5000, -5]))
    n = draw(st.integers(0, 40))
    pos, offset, ts, batches = 0, seg_base, 1_700_000_000_000, []
    for _ in range(n):
        offset += draw(st.integers(-2, 4))
        delta = draw(st.integers(0, 3))
        ts += draw(st.integers(-5, 10))
        length = draw(st.integers(49, 400))
        if offset + delta <= INT64_MAX:
            batches.append((pos, offset, offset + delta, ts, length))
        pos += 12 + length + draw(st.sampled_from([0, 0, 0, 7]))  # sometimes a gap
        offset += delta + 1
    return seg_base, batches


def _clip32(v: int) -> int:
    return max(-(1 << 31), min((1 << 31) - 1, v))


@st.composite
def cases(draw):
    seg_base, batches = draw(logs())
    every = draw(st.integers(1, 3))
    picked = batches[::every]
    offsets = [(_clip32(last - seg_base), pos) for pos, _, last, _, _ in picked]
    times = [(ts, _clip32(last - seg_base)) for _, _, last, ts, _ in picked]
    for entries in (offsets, times):
        if entries and draw(st.booleans()):
            i = draw(st.integers(0, len(entries) - 1))
            a, b = entries[i]
            entries[i] = (a + draw(st.integers(-3, 3)), _clip32(b + draw(st.integers(-3, 3))))
        if len(entries) > 1 and draw(st.booleans()):
            i = draw(st.integers(0, len(entries) - 2))
            entries[i], entries[i + 1] = entries[i + 1], entries[i]
    offset_data = b"".join(struct.pack(">ii", *e) for e in offsets) + bytes(8 * draw(st.integers(0, 3)))
    time_data = b"".join(struct.pack(">qi", *e) for e in times) + bytes(12 * draw(st.integers(0, 3)))
    shows = draw(st.lists(st.sampled_from(["one", "run", "messages"]), min_size=len(batches), max_size=len(batches)))
    log_size = (batches[-1][0] + 12 + batches[-1][4]) if batches else 0
    return seg_base, batches, offset_data, time_data, shows, log_size + draw(st.integers(-20, 20))


def _show(cross, batches, shows) -> None:
    """The batches, grouped as the walk would hand them over: runs of contiguous batches, or one by one."""
    i = 0
    while i < len(batches):
        pos, base, last, ts, length = batches[i]
        if shows[i] == "run":
            run = [batches[i]]
            while i + len(run) < len(batches) and batches[i + len(run)][0] == run[-1][0] + 12 + run[-1][4]:
                run.append(batches[i + len(run)])
            cross.observe_run(pos, [_header(b, ln, la - b, t) for _, b, la, t, ln in run])
            i += len(run)
        elif shows[i] == "messages" and base == last:
            cross.observe_messages([(pos, last, ts)])
            i += 1
        else:
            cross.observe(pos, base, last, ts)
            i += 1


def _both(core, kind, data, live, base):
    python = (index_reference.PythonOffsetCross if kind == "index" else index_reference.PythonTimeCross)(data, live, base)
    made = (core.OffsetCross if kind == "index" else core.TimeCross)(data, live, base)
    return made, python


@settings(max_examples=EXAMPLES, deadline=None)
@given(case=cases())
def test_the_core_cross_check_is_the_python_one(core, case) -> None:
    seg_base, batches, offset_data, time_data, shows, log_size = case
    for kind, data, size in (("index", offset_data, 8), ("timeindex", time_data, 12)):
        live = len(data.rstrip(b"\0")) // size + (1 if len(data.rstrip(b"\0")) % size else 0)
        made, python = _both(core, kind, data, live, seg_base)
        assert len(made) == len(python)
        assert [made.entry(i) for i in range(len(made))] == python.entries
        assert made.order() == python.order()
        _show(made, batches, shows)
        _show(python, batches, shows)
        if kind == "index":
            assert made.finish(log_size) == python.finish(log_size)
        else:
            assert made.finish() == python.finish()


def test_offsets_past_int64(core) -> None:
    data = struct.pack(">ii", (1 << 31) - 1, 0)
    made, python = _both(core, "index", data, 1, INT64_MAX)
    assert made.entry(0) == python.entries[0] == (INT64_MAX + (1 << 31) - 1, 0)
    made.observe(0, INT64_MAX, INT64_MAX + 3, 5)
    python.observe(0, INT64_MAX, INT64_MAX + 3, 5)
    assert made.finish(100) == python.finish(100)


def _partition(tmp_path, batches: int):
    """A partition of ``batches`` one-record batches of 5 kB with increasing timestamps, indexed by kseg reindex."""
    from click.testing import CliRunner

    from kseg.cli import cli
    from kseg.format import RecordSpec, encode_batch

    part = tmp_path / "orders-0"
    part.mkdir()
    (part / "00000000000000000000.log").write_bytes(b"".join(
        encode_batch([RecordSpec(o, 1_700_000_000_000 + o, b"k", b"v" * 5000)], base_offset=o) for o in range(batches)
    ))
    assert CliRunner().invoke(cli, ["reindex", str(part)]).exit_code == 0
    return part


def _verify(part):
    from kseg.ops.verify import verify_paths

    result = verify_paths([str(part)], jobs=1)
    return [(f.path, f.kind, f.severity, f.position, f.offset, f.message, f.field, f.size) for f in result.findings()]


def test_a_healthy_partition_costs_no_python_call_per_batch(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    from kseg.ops.verify import segment_unit

    part = _partition(tmp_path, 300)
    assert len((part / "00000000000000000000.index").read_bytes()) == 299 * 8  # an entry per batch after the first
    assert len((part / "00000000000000000000.timeindex").read_bytes()) == 299 * 12
    calls = []
    combine = segment_unit._combine

    def counted(observers):
        observe = combine(observers)
        return None if observe is None else (lambda *a: (calls.append(a), observe(*a)))

    monkeypatch.setattr(segment_unit, "_combine", counted)
    assert [f[1] for f in _verify(part)] == []
    assert calls == []  # before: one call per batch (300), each calling both index checks


def _damaged(part, name: str, change) -> None:
    path = part / name
    data = bytearray(path.read_bytes())
    change(data)
    path.write_bytes(bytes(data))


DAMAGE = {
    "swapped entries": ("00000000000000000000.index", lambda d: d.__setitem__(slice(8, 24), d[16:24] + d[8:16])),
    "position off": ("00000000000000000000.index", lambda d: d.__setitem__(slice(44, 48), struct.pack(">i", 12345))),
    "offset inside": ("00000000000000000000.index", lambda d: d.__setitem__(slice(80, 84), struct.pack(">i", 1))),
    "stale tail": ("00000000000000000000.index", lambda d: d.extend(struct.pack(">ii", 900, 9_000_000))),
    "zero tail": ("00000000000000000000.index", lambda d: d.extend(bytes(80))),
    "time swapped": ("00000000000000000000.timeindex", lambda d: d.__setitem__(slice(12, 36), d[24:36] + d[12:24])),
    "time off": ("00000000000000000000.timeindex", lambda d: d.__setitem__(slice(60, 68), struct.pack(">q", 5))),
    "time stale": ("00000000000000000000.timeindex", lambda d: d.extend(struct.pack(">qi", 1_800_000_000_000, 900))),
    "time short": ("00000000000000000000.timeindex", lambda d: d.__delitem__(slice(len(d) - 24, len(d)))),
    "log cut": ("00000000000000000000.log", lambda d: d.__delitem__(slice(len(d) - 50_000, len(d)))),
}


@pytest.mark.parametrize("damage", sorted(DAMAGE))
def test_verify_reports_the_same_findings_on_both_paths(tmp_path, monkeypatch: pytest.MonkeyPatch, damage) -> None:
    from kseg.format import index_cross

    part = _partition(tmp_path, 60)
    name, change = DAMAGE[damage]
    _damaged(part, name, change)
    with_core = _verify(part)
    monkeypatch.setattr(index_cross, "CORE", None)
    python = _verify(part)
    assert with_core == python
    assert any(f[1] in ("index-entry", "index-order", "timeindex-entry", "index-preallocated", "index-sanity")
               for f in python), python
