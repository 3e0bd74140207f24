"""Repeated findings folded into one row for the text report.

A segment written under a wrong name gives one ``offset-below-base`` per
batch; thirty identical rows would push every other finding out of a table
capped at ``--max-findings``.  Findings of one file with the same kind,
severity and message pattern (the message with its numbers blanked) are
therefore shown as one :class:`FindingGroup` -- a count and the range of
positions and offsets -- once there are at least :data:`GROUP_AT` of them.
Fewer stay separate rows: two CRC errors are two faults worth seeing apart.

Only the text table groups; JSON Lines keep one line per finding, for scripts.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from kseg.ops.verify.model import SEVERITY_RANK, Finding

#: The smallest number of alike findings in one file shown as one group.
GROUP_AT = 3

_NUMBER = re.compile(r"-?\d+")


@dataclass(frozen=True, slots=True)
class FindingGroup:
    """Alike findings of one file: the first (for its message), their count and ranges."""

    first: Finding
    count: int
    positions: tuple[int, int] | None  # lowest and highest byte position, when known
    offsets: tuple[int, int] | None  # lowest and highest offset, when known


def pattern(finding: Finding) -> tuple[str, str, str, str]:
    """What alike findings share: file, kind, severity and the message with its numbers blanked."""
    return (finding.path, finding.kind, finding.severity, _NUMBER.sub("#", finding.message))


def _span(values: list[int]) -> tuple[int, int] | None:
    return (min(values), max(values)) if values else None


def _group(members: list[Finding]) -> FindingGroup:
    return FindingGroup(
        members[0],
        len(members),
        _span([f.position for f in members if f.position is not None]),
        _span([f.offset for f in members if f.offset is not None]),
    )


def group_findings(findings: Iterable[Finding], file_order: dict[str, int]) -> list[FindingGroup]:
    """Every finding in a group (most of count 1), worst first as :func:`model.worst_first` orders them."""
    buckets: dict[tuple[str, str, str, str], list[tuple[int, Finding]]] = {}
    for index, finding in enumerate(findings):
        buckets.setdefault(pattern(finding), []).append((index, finding))
    groups: list[tuple[int, FindingGroup]] = []
    for members in buckets.values():
        if len(members) >= GROUP_AT:
            groups.append((members[0][0], _group([f for _, f in members])))
        else:
            groups.extend((index, _group([f])) for index, f in members)
    groups.sort(
        key=lambda item: (
            SEVERITY_RANK[item[1].first.severity],
            file_order.get(item[1].first.path, 0),
            item[1].positions[0] if item[1].positions is not None else float("inf"),
            item[0],
        )
    )
    return [group for _, group in groups]
