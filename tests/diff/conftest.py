"""The ``unclean`` replica set of tests/diff (helpers in diff_replicas.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
from diff_replicas import b, replica


@pytest.fixture
def unclean(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """a led epochs 0 and 1 (HW 15); b copied up to 11, was elected uncleanly at 2 and took 12..19; c lags (HW 8)."""
    replica(tmp_path, "a", {0: [b(0, 5, 0), b(5, 5, 0), b(10, 2, 1), b(12, 3, 1)]}, [(0, 0), (1, 10)])
    replica(tmp_path, "b", {0: [b(0, 5, 0), b(5, 5, 0), b(10, 2, 1), b(12, 8, 2, size=11)]},
            [(0, 0), (1, 10), (2, 12)], hw=12)
    replica(tmp_path, "c", {0: [b(0, 5, 0), b(5, 5, 0)]}, [(0, 0)], hw=8)
    monkeypatch.chdir(tmp_path)
    return ["a/t-0", "b/t-0", "c/t-0"]
