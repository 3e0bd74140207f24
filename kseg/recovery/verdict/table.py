"""Fact kind -> severity -> exit code: the table of docs/cli.md ("One verdict"), as code.

Errors exit 1: each is a reason not to start the broker as it is, or to start it knowing data
is gone or unreadable -- a script gating on the exit code of any reading command must not start
a broker that stops, goes offline, serves less than was committed, or serves uncommitted records
as committed.  Warnings and infos exit 0
(``verify --strict`` makes warnings 1).  Unreadable input and usage errors are 2, at the edge.
"""

from __future__ import annotations

from collections.abc import Iterable

from kseg.recovery.verdict.facts import (
    BROKER_RUNNING,
    BROKER_STOPS,
    COMMITTED_LOST,
    GROUP_COMMITS_LOST,
    LOG_DIR_OFFLINE,
    NOT_MODELLED,
    NOT_SERVED,
    OFFSETS_LOST,
    PARTITION_MISSING,
    REBUILT,
    TAIL_CUT,
    UNCOMMITTED_SERVED,
    UNREADABLE_SERVED,
    Fact,
)

ERROR, WARNING, INFO = "error", "warning", "info"

#: kind -> severity, in the order the headline names them (worst first).
SEVERITY: dict[str, str] = {
    BROKER_STOPS: ERROR,
    LOG_DIR_OFFLINE: ERROR,
    NOT_SERVED: ERROR,
    PARTITION_MISSING: ERROR,
    COMMITTED_LOST: ERROR,
    GROUP_COMMITS_LOST: ERROR,
    OFFSETS_LOST: ERROR,
    UNREADABLE_SERVED: ERROR,
    UNCOMMITTED_SERVED: ERROR,
    BROKER_RUNNING: WARNING,
    NOT_MODELLED: WARNING,
    TAIL_CUT: INFO,
    REBUILT: INFO,
}
EXIT = {ERROR: 1, WARNING: 0, INFO: 0}
_LOG_DIR_KINDS = {LOG_DIR_OFFLINE, PARTITION_MISSING, BROKER_RUNNING}

#: kind -> the headline's words for it (with the count of places).
HEADLINE = {
    BROKER_STOPS: "the broker stops",
    LOG_DIR_OFFLINE: "a log directory goes offline",
    NOT_SERVED: "not served (renamed -stray)",
    PARTITION_MISSING: "a checkpointed partition has no directory",
    COMMITTED_LOST: "committed offsets lost",
    GROUP_COMMITS_LOST: "consumer group commits lost",
    OFFSETS_LOST: "uncommitted offsets lost",
    UNREADABLE_SERVED: "damaged offsets served as they are",
    UNCOMMITTED_SERVED: "uncommitted records served as committed",
    BROKER_RUNNING: "a running broker holds .lock",
    NOT_MODELLED: "the model stops short",
    TAIL_CUT: "tails cut that held no batch",
    REBUILT: "files rebuilt, nothing lost",
}


def severity(kind: str) -> str:
    return SEVERITY[kind]


def exit_code(facts: Iterable[Fact], strict: bool = False) -> int:
    """1 when any fact is an error (or, ``strict``, a warning); else 0."""
    worst = {SEVERITY[f.kind] for f in facts}
    return 1 if ERROR in worst or (strict and WARNING in worst) else 0


def headline(facts: list[Fact]) -> str:
    """``verdict: <severity>: ...``: each error and warning kind once, worst first, with how many places.

    Infos (a tail that framed no batch, rebuilt files) lose nothing and are not named here.
    """
    kinds = [k for k in SEVERITY if SEVERITY[k] != INFO and any(f.kind == k for f in facts)]
    if not kinds:
        return "verdict: ok: the broker starts; nothing lost"
    pieces = []
    for kind in kinds:
        places = len({f.where for f in facts if f.kind == kind})
        unit = "log directories" if kind in _LOG_DIR_KINDS else "partitions"
        pieces.append(HEADLINE[kind] + (f" ({places} {unit})" if places > 1 and kind != BROKER_STOPS else ""))
    worst = SEVERITY[kinds[0]]
    lead = "the broker starts; " if BROKER_STOPS not in kinds else ""
    return f"verdict: {worst}: {lead}" + "; ".join(pieces)


class Verdict:
    """The facts of one broker's next start, with the exit code and headline every command prints."""

    __slots__ = ("facts", "scope")

    def __init__(self, facts: list[Fact], scope: frozenset[str] = frozenset()) -> None:
        self.facts = facts
        self.scope = scope  # absolute paths of the directories it speaks for (verify: what the model predicted)

    def exit_code(self, strict: bool = False) -> int:
        return exit_code(self.facts, strict)

    def headline(self) -> str:
        return headline(self.facts)

    def errors(self) -> list[Fact]:
        return [f for f in self.facts if SEVERITY[f.kind] == ERROR]

    def as_json(self) -> dict[str, object]:
        """The ``verdict`` object of every command's JSON summary."""
        return {"exit_code": self.exit_code(), "headline": self.headline(),
                "facts": [fact_json(f) for f in self.facts]}


def fact_json(fact: Fact) -> dict[str, object]:
    """One fact as JSON, with its severity from the table."""
    return {"kind": fact.kind, "severity": SEVERITY[fact.kind], "where": fact.where, "text": fact.text,
            "offsets": [list(r) for r in fact.offsets]}
