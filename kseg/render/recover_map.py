"""The one-line map of a segment in ``kseg recover``'s text report, drawn by rich.

The map is the segment's bytes to scale, one cell per ``size / width``
bytes: each cell shows what most of its bytes are, except that every lost
range gets at least one cell, so a single lost batch in a large segment is
still visible.  The numbers at its ends are the first and last offsets of
the intact batches of the input::

      map  18 █████████████████░░░░░░░░░░░░░░░░░▓▓▓▓▓▓▓▓▓▓▓▓▓▓▓▓▓▓▓▓▓▓▓▓▓▓▓▓▓▓ 33
"""

from __future__ import annotations

import bisect
import itertools
from collections.abc import Sequence
from typing import TYPE_CHECKING

from kseg.recovery.plan import HOLE, KEPT, LOST, SALVAGED, Plan, Region

if TYPE_CHECKING:
    from rich.text import Text

GLYPHS = {KEPT: "█", SALVAGED: "▓", LOST: "░", HOLE: "·"}
STYLES = {KEPT: "green", SALVAGED: "cyan", LOST: "red", HOLE: "red"}
LEGEND = "map: █ kept  ▓ salvaged  ░ lost  · lost, all zero bytes"
MAP_PREFIX = "  map  "
MAX_CELLS = 100


def map_cells(regions: Sequence[Region], size: int, width: int) -> list[str]:
    """Region kind per cell, the segment's bytes to scale; every lost region shows in at least one cell."""
    if size <= 0 or not regions:
        return []
    width = max(1, min(width, size))
    starts = [r.start for r in regions]
    cells = []
    for i in range(width):
        a, b = size * i // width, size * (i + 1) // width
        cells.append(_majority(regions, starts, a, b))
    for region in regions:
        if region.kind in (LOST, HOLE):
            cell = min(width - 1, region.start * width // size)
            if cells[cell] not in (LOST, HOLE):
                cells[cell] = region.kind
    return cells


def _majority(regions: Sequence[Region], starts: list[int], a: int, b: int) -> str:
    covered: dict[str, int] = {}
    i = max(0, bisect.bisect_right(starts, a) - 1)
    while i < len(regions) and regions[i].start < b:
        r = regions[i]
        overlap = min(b, r.end) - max(a, r.start)
        if overlap > 0:
            covered[r.kind] = covered.get(r.kind, 0) + overlap
        i += 1
    if not covered:
        return LOST
    return max(covered, key=lambda kind: (covered[kind], kind in (LOST, HOLE)))


def map_text(plan: Plan, width: int) -> Text:
    """The one-line map of a segment as rich Text (plain text when colour is off)."""
    from rich.text import Text

    left = str(plan.base_offset if plan.first_offset is None else plan.first_offset)
    right = "?" if plan.last_offset is None else str(plan.last_offset)
    text = Text(MAP_PREFIX)
    if plan.size == 0:
        text.append("(empty file)")
        return text
    if plan.refused is not None:
        text.append("(Kafka's recovery throws on this segment: kept nothing)")
        return text
    cells = max(10, min(MAX_CELLS, width - len(MAP_PREFIX) - len(left) - len(right) - 2))
    text.append(f"{left} ")
    for kind, group in itertools.groupby(map_cells(plan.regions, plan.size, cells)):
        text.append(GLYPHS[kind] * len(list(group)), style=STYLES[kind])
    text.append(f" {right}")
    return text
