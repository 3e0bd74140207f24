"""dump's tables drawn without rich, where rich would print plain text anyway.

rich's ``Table`` measures and renders every cell through its segment machinery: about half a
millisecond per row of dump (docs/core.md, "Dump tables").  Into a pipe or a file (no colour
system: no styles are written) the table dump prints is plain text whose layout is simple: each
column as wide as its widest cell or header, capped or floored as ``TableRenderer`` asks, cells
cut with an ellipsis at the cap, one space of padding inside each column divider, a ``─`` rule
under the header.  :func:`plain_table` draws exactly that, or returns None where rich would do
more (the table wider than the console: rich shrinks every column; a control character in a
cell) and the caller keeps rich.
tests/cliffs/test_dump_plain_table.py compares the two over random tables.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Literal

from rich._ratio import ratio_reduce
from rich.cells import cell_len, set_cell_size

Justify = Literal["left", "right"]

#: What rich treats specially in a cell (new lines split it, tabs expand, some controls are dropped):
#: a table holding any of it is left to rich.
_SPECIAL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def plain_table(
    columns: Sequence[str],
    rows: Sequence[Sequence[str]],
    justify: Sequence[Justify],
    caps: Sequence[int | None],
    floors: Sequence[int | None],
    width: int,
    bold_header: bool = False,
) -> str | None:
    """The text rich's ``Table(box=SIMPLE_HEAD, pad_edge=False, show_edge=False, padding=(0, 1))``
    prints for these no-wrap, ellipsis columns on a console ``width`` cells wide, or None where a
    cell holds a control character or a column is reduced into its padding.

    ``bold_header``: the console writes styles (a terminal with a colour system), where rich draws
    the header row in its ``table.header`` style, bold: each header cell's padding and content
    each wrapped in ``ESC[1m`` ... ``ESC[0m`` (one segment each, as rich writes them); nothing
    else of the table is styled.  A table wider than the console is then left to rich."""
    count = len(columns)
    if any(_SPECIAL.search(" ".join(row)) for row in rows) or _SPECIAL.search(" ".join(columns)):
        return None
    pads = [(0 if i == 0 else 1, 0 if i == count - 1 else 1) for i in range(count)]
    widest = [max(cell_len(columns[i]), *(cell_len(row[i]) for row in rows)) if rows else cell_len(columns[i])
              for i in range(count)]
    limits = [(pad[0] + pad[1], floor, cap) for pad, floor, cap in zip(pads, floors, caps, strict=True)]
    widths = [_measure(w + extra, width, floor, cap, extra) or 1 for w, (extra, floor, cap) in zip(widest, limits, strict=True)]
    if sum(widths) > width - (count - 1):
        # rich's last resort: every column reduced alike, then measured again within its reduced width
        # (a floor wins over the reduction; the console crops the lines that are still too long)
        reduced = ratio_reduce(sum(widths) - (width - (count - 1)), [1] * count, widths, widths)
        widths = [_measure(w + extra, r, floor, cap, extra) or 0
                  for w, r, (extra, floor, cap) in zip(widest, reduced, limits, strict=True)]
    contents = [w - left - right for w, (left, right) in zip(widths, pads, strict=True)]
    if min(contents) < 1:
        return None  # a column reduced into its padding: rich's own cropping, kept
    total = sum(widths) + count - 1
    if bold_header and total > width:
        return None
    fit = _fitter(contents, justify, pads)
    lines = [_bold(fit, columns) if bold_header else " ".join("".join(p) for p in fit(columns)), "─" * total]
    lines.extend(" ".join("".join(p) for p in fit(row)) for row in rows)
    if total > width:
        lines = [line if cell_len(line) <= width else set_cell_size(line, width) for line in lines]
    return "\n".join(lines) + "\n"


def _measure(widest: int, within: int, floor: int | None, cap: int | None, padding: int) -> int:
    """rich's width of a no-wrap column (its padding included): the widest cell within ``within``,
    then at least ``floor`` and at most ``cap`` (each plus the padding), in rich's order; nothing
    at all within less than one cell."""
    if within < 1:
        return 0
    high = min(widest, within)
    if floor is not None:
        high = max(high, floor + padding)
    if cap is not None:
        high = min(high, cap + padding)
    return high


_Pieces = list[tuple[str, str, str]]


def _bold(fit: Callable[[Sequence[str]], _Pieces], cells: Sequence[str]) -> str:
    """The header row as rich writes it in bold: every non-empty piece a segment of its own."""
    return " ".join("".join(f"\x1b[1m{piece}\x1b[0m" for piece in pieces if piece) for pieces in fit(cells))


def _fitter(widths: list[int], justify: Sequence[Justify], pads: list[tuple[int, int]]) -> Callable[[Sequence[str]], _Pieces]:
    """The function laying out one row of cells at the columns' widths: (left padding, content, right
    padding) per column, joined by one space."""
    layout = list(zip(widths, justify, pads, strict=True))

    def fit(cells: Sequence[str]) -> _Pieces:
        out = []
        for text, (w, how, (left, right)) in zip(cells, layout, strict=True):
            if how == "right":
                text = text.rstrip()  # rich's right justification strips the end first
            size = cell_len(text)
            if size > w:
                text = set_cell_size(text, w - 1) + "…" if w > 0 else ""
                size = cell_len(text)
            gap = " " * max(0, w - size)
            out.append((" " * left, text + gap if how == "left" else gap + text, " " * right))
        return out

    return fit
