"""compare_index decodes only the slots it names: the same Difference as decoding both files whole.

The reference below is the comparison as it was written before (decode every slot of both files
with kseg.index's readers, walk them in Python); compare_index now finds the slot by comparing
bytes and decodes only the entries it reports.  Hypothesis builds pairs of index files that share
a prefix and then differ (changed slots, extra or missing slots, preallocated zero tails, partial
trailing bytes, .txnindex entries that differ only in the version's ignored second byte).
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from kseg.index import read_offset_index, read_time_index, read_txn_index
from kseg.recovery import index_compare
from kseg.recovery.index_compare import ENTRY_SIZES, Difference, compare_index


def _decoded(kind: str, data: bytes, base_offset: int) -> tuple[tuple, int, int]:
    if kind == "index":
        slots = read_offset_index(data, base_offset)
        return slots.entries, slots.live, slots.trailing_bytes
    if kind == "timeindex":
        slots = read_time_index(data, base_offset)
        return slots.entries, slots.live, slots.trailing_bytes
    entries = tuple(read_txn_index(data))
    return entries, len(entries), len(data) % ENTRY_SIZES["txnindex"]


def reference(kind: str, old: bytes | None, new: bytes, base_offset: int) -> Difference | None:
    """Every slot of both files decoded, compared entry by entry."""
    new_entries = _decoded(kind, new, base_offset)[0]
    if old is None:
        if kind == "txnindex" and not new:
            return None
        return Difference(0, None, new_entries[0] if new_entries else None, 0, len(new_entries), 0, 0,
                          old_missing=True)
    if old == new:
        return None
    old_entries, old_live, trailing = _decoded(kind, old, base_offset)
    slot = 0
    while slot < len(old_entries) and slot < len(new_entries) and old_entries[slot] == new_entries[slot]:
        slot += 1
    return Difference(slot, old_entries[slot] if slot < len(old_entries) else None,
                      new_entries[slot] if slot < len(new_entries) else None,
                      len(old_entries), len(new_entries), old_live, trailing)


KINDS = st.sampled_from(["index", "timeindex", "txnindex"])


@st.composite
def index_pair(draw: st.DrawFn) -> tuple[str, bytes | None, bytes, int]:
    kind = draw(KINDS)
    size = ENTRY_SIZES[kind]
    slot = st.one_of(st.binary(min_size=size, max_size=size), st.just(bytes(size)))
    new = b"".join(draw(st.lists(slot, max_size=40)))
    old = bytearray(new)
    for _ in range(draw(st.integers(0, 3))):  # change a byte of a slot
        if old:
            where = draw(st.integers(0, len(old) - 1))
            old[where] = draw(st.integers(0, 255))
    if kind == "txnindex" and len(old) >= size and draw(st.booleans()):  # the ignored version byte
        old[(draw(st.integers(0, len(old) // size - 1))) * size + 1] ^= 0x5A
    cut = draw(st.integers(0, len(old)))
    old = old[:cut] if draw(st.booleans()) else old
    old += bytes(size * draw(st.integers(0, 5)))  # a preallocated tail
    old += draw(st.binary(max_size=size - 1))  # trailing bytes
    missing = draw(st.integers(0, 9)) == 0
    return kind, None if missing else bytes(old), new, draw(st.integers(0, 1 << 40))


@settings(max_examples=600, deadline=None)
@given(index_pair())
def test_the_first_difference_is_the_one_decoding_everything_finds(case):
    kind, old, new, base_offset = case
    assert compare_index(kind, old, new, base_offset) == reference(kind, old, new, base_offset)


def test_a_difference_far_into_a_long_file_is_found_across_compare_steps(monkeypatch):
    monkeypatch.setattr(index_compare, "_COMPARE_STEP", 64)
    new = b"".join((i + 1).to_bytes(4, "big") + (i * 100).to_bytes(4, "big") for i in range(5000))
    for slot in (0, 7, 8, 9, 4095, 4999):
        old = bytearray(new)
        old[slot * 8 + 5] ^= 1
        diff = compare_index("index", bytes(old), new, 10)
        assert diff == reference("index", bytes(old), new, 10)
        assert diff.slot == slot


def test_txn_entries_differing_only_in_the_ignored_version_byte_are_the_same_entry():
    size = ENTRY_SIZES["txnindex"]
    new = b"".join(bytes([0, 0]) + bytes(range(i, i + size - 2)) for i in range(4))
    old = bytearray(new)
    old[1] = old[size + 1] = 7  # slots 0 and 1: only the second version byte
    old[2 * size + 3] ^= 1  # slot 2: the producer id
    diff = compare_index("txnindex", bytes(old), new, 0)
    assert diff is not None and diff.slot == 2 and diff == reference("txnindex", bytes(old), new, 0)
    old[2 * size + 3] ^= 1
    diff = compare_index("txnindex", bytes(old), new, 0)  # the same entries, other bytes: slot at the end
    assert diff is not None and (diff.slot, diff.old, diff.new) == (4, None, None)
