"""``--where``: conditions on a record's decoded key and value, e.g. ``value.customer.id == "C-17"``.

Grammar (whitespace between tokens is free)::

    expr   := clause ("or" clause)*
    clause := cond ("and" cond)*
    cond   := path [op literal]          (a bare path: the field is present and not null)
    path   := ("key" | "value") ("." name | "[" integer "]" | "[" string "]")*
    op     := == | != | < | <= | > | >= | =~ (regular expression search) | contains
    literal:= a JSON string, number, true, false or null

A path that does not exist makes its condition false (``!=`` included).  A
number compared with a string that spells a number compares as numbers
(Protobuf's JSON writes 64-bit integers as strings).  ``contains`` holds for a
substring of a string or an element of a list.
"""

from __future__ import annotations

import json
import operator
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

_TOKEN = re.compile(r"""\s*(?:
    (?P<string>"(?:[^"\\]|\\.)*")
  | (?P<number>-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)
  | (?P<op>==|!=|<=|>=|=~|<|>)
  | (?P<punct>[.\[\]()])
  | (?P<word>[A-Za-z_$][\w$-]*)
)""", re.VERBOSE)
_MISSING = object()
_COMPARE = {"==": operator.eq, "!=": operator.ne, "<": operator.lt, "<=": operator.le, ">": operator.gt,
            ">=": operator.ge}


class WhereError(ValueError):
    """An expression that does not parse."""


@dataclass(frozen=True, slots=True)
class Cond:
    path: tuple[str | int, ...]
    op: str | None
    literal: Any


def _tokens(text: str) -> list[tuple[str, str]]:
    out, pos = [], 0
    while pos < len(text):
        if text[pos:].strip() == "":
            break
        match = _TOKEN.match(text, pos)
        if match is None or match.end() == pos:
            raise WhereError(f"cannot read {text[pos:]!r}")
        kind = match.lastgroup or ""
        out.append((kind, match.group(kind)))
        pos = match.end()
    return out


class _Parser:
    def __init__(self, text: str) -> None:
        self.tokens = _tokens(text)
        self.at = 0

    def peek(self) -> tuple[str, str] | None:
        return self.tokens[self.at] if self.at < len(self.tokens) else None

    def take(self) -> tuple[str, str]:
        token = self.peek()
        if token is None:
            raise WhereError("the expression ends too early")
        self.at += 1
        return token

    def expr(self) -> list[list[Cond]]:
        clauses = [self.clause()]
        while self.peek() == ("word", "or"):
            self.take()
            clauses.append(self.clause())
        if self.peek() is not None:
            raise WhereError(f"unexpected {self.peek()[1]!r}")  # type: ignore[index]
        return clauses

    def clause(self) -> list[Cond]:
        conds = [self.cond()]
        while self.peek() == ("word", "and"):
            self.take()
            conds.append(self.cond())
        return conds

    def cond(self) -> Cond:
        path = self.path()
        token = self.peek()
        if token is not None and (token[0] == "op" or token == ("word", "contains")):
            self.take()
            return Cond(path, token[1], self.literal())
        return Cond(path, None, None)

    def path(self) -> tuple[str | int, ...]:
        kind, root = self.take()
        if kind != "word" or root not in ("key", "value"):
            raise WhereError(f"a path starts with key or value, not {root!r}")
        parts: list[str | int] = [root]
        while self.peek() in (("punct", "."), ("punct", "[")):
            if self.take()[1] == ".":
                kind, name = self.take()
                if kind not in ("word", "number"):
                    raise WhereError(f"a field name after '.', not {name!r}")
                parts.append(name)
            else:
                kind, index = self.take()
                parts.append(int(index) if kind == "number" else json.loads(index))
                if self.take() != ("punct", "]"):
                    raise WhereError("']' expected")
        return tuple(parts)

    def literal(self) -> Any:
        kind, text = self.take()
        if kind in ("string", "number") or text in ("true", "false", "null"):
            return json.loads(text)
        raise WhereError(f"a JSON literal expected, not {text!r}")


def compile_where(text: str) -> Callable[[dict[str, Any]], bool]:
    """The test for ``text``: takes ``{"key": ..., "value": ...}`` (decoded JSON) and says whether it holds."""
    clauses = _Parser(text).expr()
    patterns = {id(c): re.compile(c.literal) for cl in clauses for c in cl if c.op == "=~" and isinstance(c.literal, str)}

    def test(doc: dict[str, Any]) -> bool:
        return any(all(_holds(c, doc, patterns) for c in clause) for clause in clauses)

    return test


def _lookup(doc: Any, path: tuple[str | int, ...]) -> Any:
    for part in path:
        if isinstance(doc, dict) and str(part) in doc:
            doc = doc[str(part)]
        elif isinstance(doc, list) and isinstance(part, int) and -len(doc) <= part < len(doc):
            doc = doc[part]
        else:
            return _MISSING
    return doc


def _number(value: Any) -> Any:
    if isinstance(value, str):
        try:
            return float(value) if any(c in value for c in ".eE") else int(value)
        except ValueError:
            return value
    return value


def _holds(cond: Cond, doc: dict[str, Any], patterns: dict[int, re.Pattern[str]]) -> bool:
    found = _lookup(doc, cond.path)
    if found is _MISSING:
        return False
    if cond.op is None:
        return found is not None
    literal = cond.literal
    if cond.op == "=~":
        return isinstance(found, str) and id(cond) in patterns and patterns[id(cond)].search(found) is not None
    if cond.op == "contains":
        return (isinstance(found, str) and isinstance(literal, str) and literal in found) or (
            isinstance(found, list) and literal in found)
    if isinstance(literal, (int, float)) and not isinstance(literal, bool):
        found = _number(found)
    try:
        return bool(_COMPARE[cond.op](found, literal))
    except TypeError:  # a string against a number, a list against a string...
        return False
