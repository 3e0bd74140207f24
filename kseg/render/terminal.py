"""The terminal a report is drawn for."""

from __future__ import annotations

import os


def terminal_width(default: int = 100) -> int:
    """COLUMNS when set (tests set it), else the terminal's width, else ``default`` (a pipe or a file)."""
    try:
        return int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        pass
    try:
        return os.get_terminal_size().columns
    except OSError:
        return default
