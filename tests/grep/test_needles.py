"""The needle search that lets ``kseg grep`` skip batches without reading their records (kseg.ops.grep.search)."""

from __future__ import annotations

import re

import pytest

from kseg.ops.grep import search
from kseg.ops.grep.query import Query, compile_regex, context_free


@pytest.mark.parametrize(("pattern", "free"), [
    ("abc", True), ("a.c", True), ("(?i)abc", True), ("[0-9]+x", True),
    ("^abc", False), ("abc$", False), (r"\babc", False), (r"\Aabc", False), ("a(?=b)", False),
    ("(?<=a)b", False), ("(?m)abc", False),
])
def test_context_free_patterns(pattern, free):
    assert context_free(compile_regex(pattern, "--value-regex")) is free


def test_needles_are_the_literals_and_the_context_free_patterns():
    q = Query(key=b"k", headers=((b"h", b"v"), (b"only-key", None)), key_regex=compile_regex("^x", ""),
              value_regex=compile_regex("y+", ""))
    assert q.needles() == (b"k", b"h", b"v", b"only-key", b"x", q.value_regex)  # "^x" needs the byte x
    assert Query(value_regex=compile_regex("z*", "")).needles() == ()  # matches the empty string: no help


def test_within_answers_per_batch_and_reuses_a_search(monkeypatch):
    buf = b"....AAAA....BBBB...." * 4  # 80 bytes; "AB" never occurs, "BBBB" at 12, 32, 52, 72
    calls = []
    real = search.Needles._search

    def counted(self, needle, start):
        calls.append(start)
        return real(self, needle, start)

    monkeypatch.setattr(search.Needles, "_search", counted)
    needles = search.Needles(buf, (b"BBBB",))
    assert [needles.within(p, p + 10) for p in range(0, 80, 10)] == [
        False, True, False, True, False, True, False, True]
    assert calls == [0, 20, 40, 60]  # a search serves the batches up to its hit
    assert search.Needles(buf, (re.compile(b"AB"),)).within(0, 80) is False
    assert search.Needles(buf, (re.compile(b"A+\\.+B"),)).within(0, 20) is True


def test_a_needle_across_two_batches_makes_only_the_first_a_candidate():
    """Only where a needle starts counts: the first batch is read (and its records do not match: harmless),
    the second is skipped -- and no record lying wholly inside either could hold the needle."""
    buf = b"xxxxNEE" + b"DLExxxx"
    needles = search.Needles(buf, (b"NEEDLE",))
    assert (needles.within(0, 7), needles.within(7, 14), needles.within(0, 14)) == (True, False, True)


@pytest.mark.parametrize(("pattern", "literal"), [
    ("value 1[0-5]", b"value 1"), ("^k30$", b"k30"), ("(?i)abc", None), ("a|bcd", None), ("ab*cde", b"cde"),
    ("x(yz)+w", b"x"), (r"\.json$", b".json"), ("no-such-value", b"no-such-value"), (".*", None),
])
def test_required_literal(pattern, literal):
    from kseg.ops.grep.query import required_literal

    assert required_literal(compile_regex(pattern, "")) == literal
    if literal is not None:  # every match holds it
        for text in (b"value 12", b"k30", b"abcde", b"xyzw", b"a.json", b"no-such-value"):
            match = re.search(pattern.encode(), text)
            assert match is None or literal in match.group(0)
