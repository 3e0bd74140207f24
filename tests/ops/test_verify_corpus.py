"""No false positives on real data: every file of the shared real corpus verifies without an error."""

from __future__ import annotations

import json

import pytest
from support import CORPUS_REAL, require_dir

from kseg.ops.discover import is_partition_dir
from kseg.ops.verify import verify_paths

pytestmark = pytest.mark.corpus


def _corpus_files() -> list:
    root = require_dir(CORPUS_REAL, "the real-data corpus")
    return [root / entry["file"] for entry in json.loads((root / "manifest.json").read_text())]


def test_every_real_file_verifies_with_exit_0():
    files = _corpus_files()
    assert len(files) >= 600
    result = verify_paths(files, deep=True, jobs=2)
    errors = [f for f in result.findings() if f.severity == "error"]
    assert errors == []
    assert result.exit_code() == 0
    # what is left is expected of a corpus that lacks some files: indexes whose .log was not kept
    assert {f.kind for f in result.findings()} <= {"missing-log", "index-preallocated", "unknown-file"}
    assert result.summary().batches > 200_000


def test_every_real_partition_directory_verifies_with_exit_0():
    dirs = sorted({p.parent for p in _corpus_files() if is_partition_dir(p.parent)})
    assert len(dirs) > 300
    result = verify_paths(dirs, jobs=2)
    assert [f for f in result.findings() if f.severity == "error"] == []
    assert result.exit_code() == 0
