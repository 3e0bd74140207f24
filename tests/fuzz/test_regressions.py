"""Every crash the fuzz campaigns found, replayed: the command must now keep the contract.

Each case is a directory of fixtures/fuzz written by ``python -m tools.fuzz --save`` (then
minimised): ``finding.json`` (the bucket, the command line with placeholders, the campaign seed
and mutant number) beside the mutant's partition.  The test copies the partition into a fresh log
directory, runs the command as the campaign did (a child process, 512 MB, 10 s) and asserts that
no clause of the contract breaks: no traceback, exit code 0/1/2, memory and time under the caps,
the input unchanged.  A case whose fix has not landed is listed in OPEN with its issue: it is an
xfail(strict=True), so the day it passes the test fails and the mark (and the matching entry of
tools/fuzz/known.py) must go.  fixtures/fuzz/PROVENANCE.md documents every case.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from support import FIXTURES

from tools.fuzz.contract import Limits, check, run_kseg, snapshot

CASES = FIXTURES / "fuzz"
#: case directory -> why it still fails (with the issue that will fix it)
OPEN: dict[str, str] = {}


def _cases() -> list[Path]:
    return sorted(p.parent for p in CASES.glob("*/finding.json"))


def _param(case: Path) -> object:
    reason = OPEN.get(case.name)
    marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
    return pytest.param(case, id=case.name, marks=marks)


def _replay(case: Path, tmp_path: Path) -> list:
    info = json.loads((case / "finding.json").read_text())
    source = next(p for p in case.iterdir() if p.is_dir())
    logdir, out = tmp_path / "in", tmp_path / "out"
    shutil.copytree(source, logdir / source.name)
    out.mkdir()
    part = logdir / source.name
    paths = {"file": part / Path(info["mutated_file"]).name, "part": part, "logdir": logdir, "out": out}
    args = [arg.format(**{k: str(v) for k, v in paths.items()}) for arg in info["args"]]
    limits = Limits(memory_mb=512, timeout_s=10.0)
    before = snapshot(logdir)
    run = run_kseg(args, out, limits)
    return check(info["bucket"][0], run, before, snapshot(logdir), limits)


@pytest.mark.parametrize("case", [_param(case) for case in _cases()])
def test_a_fuzz_crash_now_keeps_the_contract(case, tmp_path):
    assert _replay(case, tmp_path) == []


def test_every_case_is_documented_and_every_open_case_exists():
    provenance = (CASES / "PROVENANCE.md").read_text()
    for case in _cases():
        assert f"`{case.name}`" in provenance, f"{case.name} has no row in fixtures/fuzz/PROVENANCE.md"
    assert set(OPEN) <= {case.name for case in _cases()}
