"""Failures already known and documented in an open issue: reported, but they do not fail CI.

A campaign fails on any bucket that no entry here matches, so a new kind of failure is caught the
day it appears while the open ones stay visible in the summary.  Each entry matches a failure's
bucket (command, kind, exception type, innermost kseg frame) with shell-style patterns and names
the document that states the limit.  When the fix lands, tests/fuzz/test_regressions.py starts to XPASS
(strict), and the entry and the xfail mark are removed together.  Keep the patterns as narrow as
the evidence allows: a pattern that matches everything hides the next bug.
"""

from __future__ import annotations

from dataclasses import dataclass
from fnmatch import fnmatchcase

from tools.fuzz.contract import Failure


@dataclass(frozen=True)
class Known:
    """One open failure: the patterns of its bucket, the document that describes it, and why it happens."""

    command: str
    kind: str
    exception: str
    frame: str
    doc: str
    why: str

    def matches(self, failure: Failure) -> bool:
        return all(
            fnmatchcase(value, pattern)
            for value, pattern in zip(failure.key, (self.command, self.kind, self.exception, self.frame), strict=True)
        )


#: None open today: every failure a campaign finds is new and fails it (docs/fuzzing.md#known-failures).
KNOWN: tuple[Known, ...] = ()


def known_for(failure: Failure) -> Known | None:
    """The open issue that explains ``failure``, or None for a new failure."""
    return next((known for known in KNOWN if known.matches(failure)), None)
