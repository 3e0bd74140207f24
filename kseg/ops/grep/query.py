"""What ``kseg grep`` looks for: the predicates, parsed once, and the tests a batch and a record must pass.

Every predicate given must hold (they are ANDed).  Byte arguments are text
(its UTF-8) or, for binary, ``hex:0a0b`` or ``base64:...``.  Regular
expressions are compiled as *bytes* patterns over the raw key or value (so
``é`` matches its UTF-8 bytes, and ``.`` is one byte); ``(?i)`` and the other
inline flags work as in Python's ``re``.

Speed comes from :meth:`Query.needles`: what must occur somewhere in a
batch's record bytes for any of its records to match -- an exact key, a
header key or value, a regular expression that does not look at its
surroundings.  :mod:`kseg.ops.grep.search` looks for those in the file's
bytes at C speed, and batches without them never have their records read.
"""

from __future__ import annotations

import base64
import binascii
import re
from dataclasses import dataclass
from typing import Any

from kseg.errors import KsegError
from kseg.format.model import Record
from kseg.format.records import RecordScan

#: ``--txn`` states: a transactional batch's transaction, as the producer-state replay closes it.
TXN_STATES = ("committed", "aborted", "open")

#: Regex constructs whose match depends on what lies around the matched bytes; a pattern holding one
#: cannot be looked for in a whole batch's bytes in place of each value (it would match differently).
_CONTEXT = re.compile(rb"\^|\$|\\[AZbBz]|\(\?<?[=!]|\(\?[a-zA-Z]*m")


class BadQuery(KsegError):
    """A predicate that cannot be used (bad hex, a regular expression that does not compile)."""


def parse_bytes(text: str, what: str) -> bytes:
    """``--key`` and friends: text as UTF-8, ``hex:...`` or ``base64:...`` for binary."""
    try:
        if text.startswith("hex:"):
            return binascii.unhexlify(text[4:])
        if text.startswith("base64:"):
            return base64.b64decode(text[7:], validate=True)
    except (binascii.Error, ValueError) as err:
        raise BadQuery(f"{what} {text!r}: {err}") from None
    return text.encode("utf-8", "surrogateescape")


def compile_regex(text: str, what: str) -> re.Pattern[bytes]:
    """A bytes pattern from the argument's UTF-8."""
    try:
        return re.compile(text.encode("utf-8", "surrogateescape"), re.DOTALL)
    except re.error as err:
        raise BadQuery(f"{what} {text!r}: {err}") from None


def context_free(pattern: re.Pattern[bytes]) -> bool:
    """True when a match inside a value is a match inside any bytes holding that value.

    Anchors, word boundaries, lookarounds and multi-line mode break that; the
    test is on the pattern's text and errs on the safe side (an escaped ``\\^``
    is refused too, which only costs speed).
    """
    return _CONTEXT.search(pattern.pattern) is None


def _regex_parser() -> Any:
    """CPython's own regular-expression parser: ``re._parser`` (3.11+), ``sre_parse`` before."""
    try:
        from re import _parser  # type: ignore[attr-defined]
    except ImportError:  # Python 3.10
        import sre_parse as _parser
    return _parser


def required_literal(pattern: re.Pattern[bytes]) -> bytes | None:
    """The longest run of plain characters every match of ``pattern`` contains, or None.

    Read from the parsed pattern's top level (Python's own parser): consecutive ``LITERAL`` items are
    matched exactly, in order, by every match; anything else (a class, a repeat, a group, an anchor)
    ends a run.  An alternation at the top, or case-insensitive matching, gives None.  Anchored
    patterns have one too (``^k30$`` needs ``k30``): the needle is only the bytes, the record test the
    whole pattern.
    """
    _parser = _regex_parser()
    if pattern.flags & re.IGNORECASE:
        return None
    try:
        parsed = _parser.parse(pattern.pattern, pattern.flags)
    except (re.error, TypeError):
        return None
    state = getattr(parsed, "state", None)
    if state is None or state.flags & re.IGNORECASE:
        return None
    best, run = b"", bytearray()
    for op, value in parsed:
        if op is _parser.LITERAL:
            run.append(value)
            continue
        best, run = max(best, bytes(run), key=len), bytearray()
    best = max(best, bytes(run), key=len)
    return best or None


#: Query.needles's answers, per query (a query is frozen and hashable; a run holds one or two).
_NEEDLES: dict[Query, tuple[bytes | re.Pattern[bytes], ...]] = {}


@dataclass(frozen=True, slots=True)
class Query:
    """The predicates of one ``kseg grep`` run; None (or empty) means "any"."""

    key: bytes | None = None
    key_prefix: bytes | None = None
    key_regex: re.Pattern[bytes] | None = None
    value: bytes | None = None
    value_regex: re.Pattern[bytes] | None = None
    headers: tuple[tuple[bytes, bytes | None], ...] = ()
    from_offset: int | None = None
    to_offset: int | None = None
    from_time: int | None = None
    to_time: int | None = None
    producer_id: int | None = None
    txn: str | None = None
    control: bool = False

    def needles(self) -> tuple[bytes | re.Pattern[bytes], ...]:
        """Literals and patterns each of which a matching record's bytes contain (see the module's note).

        Asked once per window of every segment: the answer is kept per query, since finding a pattern's
        required literal runs Python's regular-expression parser (a tenth of a no-match search's time).
        """
        known = _NEEDLES.get(self)
        if known is None:
            known = _NEEDLES[self] = self._needles()
        return known

    def _needles(self) -> tuple[bytes | re.Pattern[bytes], ...]:
        literals = [self.key, self.key_prefix, self.value, *(part for pair in self.headers for part in pair)]
        out: list[bytes | re.Pattern[bytes]] = [literal for literal in literals if literal]
        for pattern in (self.key_regex, self.value_regex):
            if pattern is None:
                continue
            literal = required_literal(pattern)
            if literal:
                out.append(literal)
            elif context_free(pattern) and pattern.search(b"") is None:
                out.append(pattern)
        return tuple(out)

    @property
    def batch_level(self) -> bool:
        """Whether any predicate but the control flag is tested on batch headers."""
        return any(v is not None for v in (self.from_offset, self.to_offset, self.from_time, self.producer_id, self.txn))

    @property
    def looks_at_records(self) -> bool:
        """Whether any predicate reads a record's own fields (else a batch's header decides)."""
        return bool(
            self.key is not None or self.key_prefix is not None or self.key_regex is not None
            or self.value is not None or self.value_regex is not None or self.headers
            or self.from_offset is not None or self.to_offset is not None
            or self.from_time is not None or self.to_time is not None
        )

    def scan_matches(self, scan: RecordScan, log_append_time: int | None) -> list[int]:
        """The indexes of a scanned batch's records that pass the record-level predicates.

        Column by column (:class:`~kseg.format.records.RecordScan`): only the columns a predicate
        reads are sliced, and records are narrowed one predicate at a time, so a batch whose records
        mostly fail costs a comprehension per predicate, not a tuple per record.
        """
        keep = list(range(scan.count))
        if self.from_offset is not None or self.to_offset is not None:
            low, high = self.from_offset, self.to_offset
            offsets = scan.offsets()
            keep = [i for i in keep if (low is None or offsets[i] >= low) and (high is None or offsets[i] <= high)]
        if keep and (self.from_time is not None or self.to_time is not None):
            times = scan.timestamps() if log_append_time is None else [log_append_time] * scan.count
            low, high = self.from_time, self.to_time
            keep = [i for i in keep if (low is None or times[i] >= low) and (high is None or times[i] <= high)]
        if keep and (self.key is not None or self.key_prefix is not None or self.key_regex is not None):
            keep = _narrow(keep, scan.keys(), self.key, self.key_prefix, self.key_regex)
        if keep and (self.value is not None or self.value_regex is not None):
            keep = _narrow(keep, scan.values(), self.value, None, self.value_regex)
        if keep and self.headers:
            headers = scan.headers()
            keep = [i for i in keep if self._headers_match(headers[i])]
        return keep

    def record_matches(self, record: Record) -> bool:
        """The record-level predicates (the batch-level ones were checked on its batch)."""
        offset, timestamp, key, value = record[0], record[1], record[2], record[3]
        if self.from_offset is not None and offset < self.from_offset:
            return False
        if self.to_offset is not None and offset > self.to_offset:
            return False
        if self.from_time is not None and timestamp < self.from_time:
            return False
        if self.to_time is not None and timestamp > self.to_time:
            return False
        return self._key_matches(key) and self._value_matches(value) and self._headers_match(record[4])

    def _key_matches(self, key: bytes | None) -> bool:
        if self.key is not None and key != self.key:
            return False
        if self.key_prefix is not None and (key is None or not key.startswith(self.key_prefix)):
            return False
        return self.key_regex is None or (key is not None and self.key_regex.search(key) is not None)

    def _value_matches(self, value: bytes | None) -> bool:
        if self.value is not None and value != self.value:
            return False
        return self.value_regex is None or (value is not None and self.value_regex.search(value) is not None)

    def _headers_match(self, headers: tuple[tuple[bytes, bytes | None], ...]) -> bool:
        """Each ``--header K[=V]`` is matched by some header of the record (its key, and value when given)."""
        for want_key, want_value in self.headers:
            if not any(k == want_key and (want_value is None or v == want_value) for k, v in headers):
                return False
        return True


def _narrow(keep: list[int], column: list[bytes | None], exact: bytes | None, prefix: bytes | None,
            pattern: re.Pattern[bytes] | None) -> list[int]:
    """``keep`` without the records whose key (or value) ``column`` fails: one comprehension per test."""
    if exact is not None:
        keep = [i for i in keep if column[i] == exact]
    if prefix is not None:
        keep = [i for i in keep if (c := column[i]) is not None and c.startswith(prefix)]
    if pattern is not None:
        search = pattern.search
        keep = [i for i in keep if (c := column[i]) is not None and search(c) is not None]
    return keep


def parse_header(text: str) -> tuple[bytes, bytes | None]:
    """``--header KEY[=VALUE]``: both parts as :func:`parse_bytes` reads them."""
    key, sep, value = text.partition("=")
    return parse_bytes(key, "--header"), (parse_bytes(value, "--header") if sep else None)
