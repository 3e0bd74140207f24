"""``--decode`` and ``--where``: a matching record's key and value through the offline schema registry.

A payload in the registry's framing is decoded with the schema its id names
(:mod:`kseg.decode.payload`); any other payload is taken as JSON when it
parses as JSON, else left out of ``--where`` (a path into it does not exist).
``--where`` expressions (:mod:`kseg.decode.where`) are compiled once per
process: a :class:`Decoding` travels to ``--jobs`` workers as its registry
and expression texts.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from kseg.decode.payload import Decoded, PayloadDecoder
from kseg.decode.registry import Registry
from kseg.decode.where import compile_where
from kseg.format.model import Record


class Decoding:
    """What ``--decode``/``--where`` need: the registry, the expressions, whether to show the decoding."""

    def __init__(self, registry: Registry, wheres: tuple[str, ...] = (), show: bool = True) -> None:
        self.registry = registry
        self.wheres = wheres
        self.show = show
        self._decoder: PayloadDecoder | None = None
        self._tests: list[Callable[[dict[str, Any]], bool]] | None = None

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        return Decoding, (self.registry, self.wheres, self.show)

    def check(self) -> None:
        """Compile the expressions now, so that a bad one is a usage error before any file is read."""
        self._compiled()

    def _compiled(self) -> list[Callable[[dict[str, Any]], bool]]:
        if self._tests is None:
            self._tests = [compile_where(text) for text in self.wheres]
        return self._tests

    def record(self, record: Record) -> tuple[bool, dict[str, Any] | None]:
        """Whether the record passes every ``--where``, and its ``decoded`` object (None unless shown)."""
        if self._decoder is None:
            self._decoder = PayloadDecoder(self.registry)
        key = self._decoder.decode(record[2])
        value = self._decoder.decode(record[3])
        tests = self._compiled()
        if tests:
            doc = {"key": _document(key, record[2]), "value": _document(value, record[3])}
            if not all(test(doc) for test in tests):
                return False, None
        if not self.show:
            return True, None
        return True, {"key": None if key is None else key.as_json(), "value": None if value is None else value.as_json()}


def _document(decoded: Decoded | None, raw: bytes | None) -> Any:
    """What ``--where`` sees of a key or value: the decoded value, or the raw bytes as JSON, or as text."""
    if decoded is not None:
        return decoded.value
    if raw is None:
        return None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return None
    try:
        return json.loads(text)
    except ValueError:
        return text
