"""The core's ``find_bytes`` (rust/kseg-py/src/grep.rs, memchr's memmem) answers what ``bytes.find`` answers.

kseg grep skips every batch its needles are not in (kseg/ops/grep/search.py); a wrong "not found" would hide
matching records, so the core is compared with Python's ``find`` on every start and end, on bytes, bytearray
and a mapped file, and with needles longer than the range.
"""

from __future__ import annotations

import mmap
import random

from kseg.format.find import find_bytes


def _cases(data: bytes) -> list[tuple[bytes, int, int]]:
    needles = [b"abc", b"XYZ", b"cX", b"zz", b"c" * 40, data[5:37], data[-3:], b"\x00"]
    return [(n, s, e) for n in needles for s in range(0, len(data) + 3, 5) for e in range(s, len(data) + 4, 7)]


def test_find_bytes_is_bytes_find(core):
    rng = random.Random(28)
    data = b"abcabcXYZabc" * 3 + bytes(rng.randrange(256) for _ in range(200)) + b"\x00zz"
    for needle, start, end in _cases(data):
        expected = data.find(needle, start, end)
        got = core.find_bytes(data, needle, start, end)
        assert (-1 if got is None else got) == expected, (needle, start, end)
        assert find_bytes(bytearray(data), needle, start, end) == expected


def test_find_bytes_in_a_mapped_file(core, tmp_path):
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(b"x" * 70_000 + b"needle" + b"y" * 10)
    with open(path, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as mapped:
        assert core.find_bytes(mapped, b"needle", 0, len(mapped)) == 70_000
        assert core.find_bytes(mapped, b"needle", 0, 70_005) is None
        assert core.find_bytes(mapped, b"needle", 70_001, len(mapped)) is None


def _window_of_batches() -> bytearray:
    """V2 data batches (uncompressed, gzip, transactional), a control batch, a magic-1 entry, a zero tail."""
    from kseg.format import RecordSpec, encode_batch

    parts = []
    for base in range(0, 60, 6):
        specs = [RecordSpec(base + i, 1_700_000_000_000 + i, b"k%d" % (base + i), b"v-%d-abc" % (base + i))
                 for i in range(6)]
        parts.append(encode_batch(specs, base_offset=base, codec="gzip" if base == 30 else "none"))
    parts.append(encode_batch([RecordSpec(60, 1_700_000_000_100, b"\x00\x00\x00\x01", b"\x00\x00\x00\x00\x00\x00")],
                              base_offset=60, producer_id=7, producer_epoch=0, is_transactional=True,
                              is_control=True))
    parts.append(encode_batch([RecordSpec(61, 1_700_000_000_200, b"k61", b"v-61-abc")], base_offset=61, magic=1))
    return bytearray(b"".join(parts) + bytes(40))


def test_grep_candidates_is_the_reference(core):
    """Every window cut and needle set: the core keeps the batches, and ends the walk, as the Python loop does."""
    from kseg.format.find import _candidates

    buf = _window_of_batches()
    needles_sets = [(), (b"abc",), (b"v-12-abc",), (b"k13", b"v-13"), (b"v-17-abc", b"k12"), (b"nowhere",),
                    (b"abck",), (b"-abc\x00",)]
    second = _frame_spans(buf)[1][0]
    for limit in [*range(0, len(buf) + 1, 37), len(buf)]:
        for needles in needles_sets:
            for control in (False, True):
                for legacy, start in ((False, 0), (True, 0), (True, second), (False, second + 3), (True, limit + 1)):
                    kept, end = core.grep_candidates(buf, limit, list(needles), control, legacy, start)
                    want_kept, want_end = _candidates(buf, limit, needles, control, legacy, start)
                    assert kept == want_kept, (limit, needles, control, legacy, start)
                    assert end == (want_end.position, want_end.remaining, want_end.reason, want_end.declared_size)


def _frame_spans(buf: bytearray) -> list[tuple[int, int]]:
    from kseg.format import BatchWalk

    return [(pos, nxt) for pos, nxt, *_ in BatchWalk(buf, 0, len(buf), strict=False).frames()]


def test_grep_candidates_from_a_start_inside_the_buffer():
    """A window mapped from a page boundary: the walk starts at the first batch, positions stay the buffer's."""
    from kseg.format.find import grep_candidates

    buf = _window_of_batches()
    spans = _frame_spans(buf)
    kept, end = grep_candidates(buf, len(buf), (b"abc",), False, False, spans[4][0])
    assert kept == spans[4:10]  # batches 4..9 (the gzip one too), not the control batch, not the magic-1 entry
    assert (end.reason, end.position) == ("bad-size", spans[-1][1])
    # v-2-abc is in batch 0, before the start: only the gzip batch (compressed: never searched) is kept
    assert grep_candidates(buf, len(buf), (b"v-2-abc",), False, False, spans[1][0])[0] == [spans[5]]


def test_grep_candidates_keeps_what_holds_the_needles():
    """Exact answers on a known window: batch 2 alone holds v-12-abc, gzip and legacy entries are always kept."""
    from kseg.format.find import grep_candidates
    from kseg.format.walk import BatchWalk

    buf = _window_of_batches()
    frames = list(BatchWalk(buf, 0, len(buf), strict=False).frames())
    spans = [(pos, nxt) for pos, nxt, *_ in frames]
    kept, end = grep_candidates(buf, len(buf), (b"v-12-abc",), False, True)
    assert kept == [spans[2], spans[5], spans[11]]  # the batch holding it, the gzip batch, the magic-1 entry
    assert (end.reason, end.position) == ("bad-size", spans[-1][1])
    assert grep_candidates(buf, len(buf), (b"k13", b"v-13"), True, False)[0] == []  # no control batch holds them
    assert grep_candidates(buf, len(buf), (b"\x00\x00\x00\x01",), True, False)[0] == [spans[10]]
    assert grep_candidates(buf, len(buf), (b"k13", b"v-13"), False, False)[0] == [spans[2], spans[5]]
