"""The verify fixtures give exactly the findings their generator expects, and regenerate byte for byte."""

from __future__ import annotations

import hashlib
import importlib.util
import json
import re

import pytest
from support import FIXTURES

from kseg.ops.verify import verify_paths

HERE = FIXTURES / "verify"
EXPECTED = json.loads((HERE / "EXPECTED.json").read_text())


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_fixture_findings(name):
    expected = EXPECTED[name]
    result = verify_paths([HERE / name], deep="--deep" in expected["args"], jobs=1)
    got = [[f.kind, f.severity, f.position, f.offset] for f in result.findings()]
    assert sorted(got, key=str) == sorted(expected["findings"], key=str)
    assert result.exit_code() == expected["exit"]


def test_clean_fixtures_are_clean_even_when_strict():
    for name in EXPECTED:
        if name.startswith("clean/"):
            result = verify_paths([HERE / name], deep=True, jobs=1)
            assert result.exit_code(strict=True) == 0, name


def test_every_corrupt_fixture_fails():
    """Exit 1, or -- where the next start repairs it without a loss (the one verdict) -- exit 1 with --strict."""
    corrupt = [name for name in EXPECTED if name.startswith("corrupt/")]
    assert len(corrupt) >= 15
    lenient = [name for name in corrupt if EXPECTED[name]["exit"] == 0]
    assert lenient == ["corrupt/bad-indexes/orders-0", "corrupt/partition-problems/orders-0",
                       "corrupt/stale-index/orders-0"]
    assert all(verify_paths([HERE / name], jobs=1).exit_code(strict=True) == 1 for name in lenient)


def test_regenerating_gives_the_same_bytes(tmp_path):
    spec = importlib.util.spec_from_file_location("make_verify_fixtures", HERE / "make_fixtures.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    module.generate(tmp_path)
    rows = re.findall(r"^\| `([^`]+)` \| (\d+) \| `([0-9a-f]{64})` \|", (HERE / "PROVENANCE.md").read_text(), re.MULTILINE)
    on_disk = {
        p.relative_to(HERE).as_posix()
        for p in HERE.rglob("*")
        if p.is_file() and p.name not in ("make_fixtures.py", "PROVENANCE.md", "EXPECTED.json") and "__pycache__" not in p.parts
    }
    assert {name for name, _, _ in rows} == on_disk
    for name, size, digest in rows:
        for root in (HERE, tmp_path):
            data = (root / name).read_bytes()
            assert (len(data), hashlib.sha256(data).hexdigest()) == (int(size), digest), (root, name)
    assert (tmp_path / "EXPECTED.json").read_text() == (HERE / "EXPECTED.json").read_text()
    assert (tmp_path / "PROVENANCE.md").read_text() == (HERE / "PROVENANCE.md").read_text()
