"""Property: on random batches and random predicates, kseg.ops.grep finds exactly what plain comparisons find.

Batches of random records (keys, values and headers from a small alphabet so that predicates hit,
nulls, gzip or none, a magic-1 message set now and then) and a random query of exact, prefix, regex
(anchored or not, case-insensitive or not) and header predicates with an offset window.  The
reference reads every record with ``iter_records`` and applies ``Query.record_matches`` (itself held
against plain comparisons in test_grep.py).  The needles, the window logic and
the column tests are what is under test: a batch wrongly skipped is a missed record.

Examples: ``KSEG_GREP_EXAMPLES`` (default 40; derandomized under CI by tests/conftest.py).
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kseg.format import RecordSpec, encode_batch
from kseg.ops.grep import search
from kseg.ops.grep.query import Query
from kseg.ops.grep.search import Match, search_segment
from kseg.segment import Segment

EXAMPLES = int(os.environ.get("KSEG_GREP_EXAMPLES", "40"))
ALPHABET = b"ab^c.\t"
payload = st.one_of(st.none(), st.binary(max_size=6).map(lambda b: bytes(ALPHABET[x % len(ALPHABET)] for x in b)))
header = st.tuples(st.sampled_from([b"h", b"trace", b"x"]), st.one_of(st.none(), st.sampled_from([b"a", b"ab", b""])))
record = st.tuples(payload, payload, st.lists(header, max_size=2))
batch = st.tuples(st.lists(record, min_size=1, max_size=6), st.sampled_from(["none", "none", "gzip", "magic1"]))
regex = st.sampled_from(["ab", "^a", "b$", "a.c", "(?i)AB", "c|b", "^$", r"\^", "a+b", "[bc]a"])
literal = st.sampled_from([b"a", b"ab", b"", b"c.", b"\t"])


@st.composite
def queries(draw: st.DrawFn) -> Query:
    kw: dict = {}
    if draw(st.booleans()):
        kw["key"] = draw(literal)
    if draw(st.booleans()):
        kw["key_prefix"] = draw(literal)
    if draw(st.booleans()):
        kw["key_regex"] = re.compile(draw(regex).encode(), re.DOTALL)
    if draw(st.booleans()):
        kw["value_regex"] = re.compile(draw(regex).encode(), re.DOTALL)
    if draw(st.booleans()):
        kw["value"] = draw(literal)
    if draw(st.booleans()):
        kw["headers"] = (draw(header),)
    if draw(st.booleans()):
        kw["from_offset"] = draw(st.integers(0, 20))
    return Query(**kw)


def _write(path: Path, batches: list) -> None:
    data, offset = b"", 0
    for records, kind in batches:
        if kind == "magic1":
            records = [(k, v, []) for k, v, _ in records]
        specs = [RecordSpec(offset + i, 1_700_000_000_000 + offset + i, k, v, tuple(h)) for i, (k, v, h) in enumerate(records)]
        data += encode_batch(specs, magic=1 if kind == "magic1" else 2, codec="gzip" if kind == "gzip" else "none")
        offset += len(records)
    path.write_bytes(data)


def _reference(path: Path, query: Query) -> list[int]:
    with Segment(path) as seg:
        return [r.offset for b in seg.iter_batches() for r in b.iter_records() if query.record_matches(r)]


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(batches=st.lists(batch, min_size=1, max_size=5), query=queries(), window=st.sampled_from([1 << 20, 200, 97]),
       cut=st.sampled_from([0, 0, 1, 9, 30]))
def test_search_finds_what_plain_comparisons_find(tmp_path: Path, batches: list, query: Query, window: int,
                                                  cut: int, monkeypatch) -> None:
    """``window``: the bytes read at once; small ones cut batches at window ends and hold batches larger
    than a window, so the re-reading of a cut batch and the grown buffer (or mapping) are exercised too.  ``cut``: bytes
    torn off the end (a partial last batch, as a crash leaves it: Kafka's reader stops there quietly)."""
    monkeypatch.setattr(search, "WINDOW", window)
    monkeypatch.setattr(search, "MAPPED_WINDOW", window)  # a literal-only query's mapped windows (from a page)
    path = tmp_path / "00000000000000000000.log"
    _write(path, batches)
    if cut:
        path.write_bytes(path.read_bytes()[:-cut])
    found = [f.record.offset for f in search_segment(path, query, None, 1 << 20) if isinstance(f, Match)]
    assert found == _reference(path, query)
    counted = sum(getattr(f, "records", 0) for f in search_segment(path, query, None, 1 << 20, count_only=True))
    counted += sum(1 for f in search_segment(path, query, None, 1 << 20, count_only=True) if isinstance(f, Match))
    assert counted == len(found)
