"""Shared test helpers: where the shared corpus lives, and how tests reach it.

Import as ``from support import ...`` (``tests`` is on pytest's ``pythonpath``).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
FIXTURES = REPO / "fixtures"
SHARED = Path(os.environ.get("KSEG_SHARED", REPO.parent / "shared"))
CORPUS_REAL = SHARED / "corpus" / "real"
CORPUS_VECTORS = SHARED / "corpus" / "vectors"
IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")


def require_dir(path: Path, what: str) -> Path:
    """Skip locally when a shared input is absent; in CI a missing input is a failure, not a skip."""
    if path.is_dir():
        return path
    message = f"{what} not found at {path} (set KSEG_SHARED to the shared/ folder)"
    if IN_CI:
        pytest.fail(message)
    pytest.skip(message)
    raise AssertionError  # unreachable


def write_file(tmp_path: Path, name: str, data: bytes) -> Path:
    path = tmp_path / name
    path.write_bytes(data)
    return path
