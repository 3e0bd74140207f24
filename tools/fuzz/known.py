"""Failures already known and documented in an open issue: reported, but they do not fail CI.

A campaign fails on any bucket that no entry here matches, so a new kind of failure is caught the
day it appears while the open ones stay visible in the summary.  Each entry matches a failure's
bucket (command, kind, exception type, innermost kseg frame) with shell-style patterns and names
the issue that will fix it.  When the fix lands, tests/fuzz/test_regressions.py starts to XPASS
(strict), and the entry and the xfail mark are removed together.  Keep the patterns as narrow as
the evidence allows: a pattern that matches everything hides the next bug.
"""

from __future__ import annotations

from dataclasses import dataclass
from fnmatch import fnmatchcase

from tools.fuzz.contract import Failure


@dataclass(frozen=True)
class Known:
    """One open failure: the patterns of its bucket, the issue and why it happens."""

    command: str
    kind: str
    exception: str
    frame: str
    issue: int
    why: str

    def matches(self, failure: Failure) -> bool:
        return all(
            fnmatchcase(value, pattern)
            for value, pattern in zip(failure.key, (self.command, self.kind, self.exception, self.frame), strict=True)
        )


KNOWN: tuple[Known, ...] = (
    Known(
        "*", "traceback", "MemoryError", "*", 14,
        "issue 14 (memory): whole decompressed batches, record lists and header lists are materialised; "
        "a hostile length or a compression bomb runs into the address-space cap",
    ),
    Known(
        "*", "memory", "", "", 14,
        "issue 14 (memory): the same materialisation, seen as the peak RSS over the cap",
    ),
)


def known_for(failure: Failure) -> Known | None:
    """The open issue that explains ``failure``, or None for a new failure."""
    return next((known for known in KNOWN if known.matches(failure)), None)
