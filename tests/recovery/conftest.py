"""Fixtures of the log-loading tests; the builders themselves are in ``tests/logdirs.py``."""

from __future__ import annotations

import os
from pathlib import Path
from types import SimpleNamespace

import pytest
from logdirs import LogDir, batch, checkpoint, control_batch, name, tree


@pytest.fixture
def kit() -> SimpleNamespace:
    """The builders, for tests (conftest modules are not importable by name here)."""
    return SimpleNamespace(batch=batch, control_batch=control_batch, name=name, checkpoint=checkpoint, LogDir=LogDir)


@pytest.fixture
def logdir(tmp_path: Path) -> LogDir:
    return LogDir(tmp_path / "kafka-logs")


@pytest.fixture
def readonly():
    """Call with a root before and after: asserts the tree, contents, mtimes and atimes are unchanged."""

    class Guard:
        def __init__(self) -> None:
            self.before: dict[str, tuple[int, int, int, bytes]] = {}
            self.root: Path | None = None

        def start(self, root: Path) -> None:
            self.root = root
            self.before = {k: v[:2] + (0, v[3]) for k, v in tree(root).items()}
            self.atimes = {k: os.stat(root / k).st_atime_ns for k in self.before}

        def check(self) -> None:
            assert self.root is not None
            atimes = {str(p.relative_to(self.root)): p.stat().st_atime_ns for p in self.root.rglob("*")}
            assert atimes == self.atimes
            assert {k: v[:2] + (0, v[3]) for k, v in tree(self.root).items()} == self.before

    return Guard()
