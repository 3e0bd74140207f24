"""triage, verify, ``recover --dry-run``, txn and spark verify give one verdict and one exit code on every
log directory among the test suite's fixtures (docs/cli.md, "One verdict").

The log directories are found, not listed: every directory under fixtures/ that holds a broker's
``meta.properties`` or an offset checkpoint (kseg.locks.is_kafka_log_dir).  Each is copied first: a
fixture's access times and bytes stay as they are (the commands are read-only, and tested so
elsewhere), and the copy's path is the same in every command's answer.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from agreement import verdicts
from support import FIXTURES

from kseg.locks import is_kafka_log_dir

LOG_DIRS = sorted(str(p.relative_to(FIXTURES)) for p in FIXTURES.rglob("*") if p.is_dir() and is_kafka_log_dir(p))


def test_the_fixtures_hold_damaged_log_directories():
    assert len(LOG_DIRS) >= 20, LOG_DIRS


@pytest.mark.parametrize("name", LOG_DIRS)
def test_every_command_gives_the_same_verdict(name: str, tmp_path: Path) -> None:
    copy = tmp_path / "logdir"
    shutil.copytree(FIXTURES / name, copy, symlinks=True)
    got = verdicts(copy)
    assert len({headline for _, headline in got.values()}) == 1, got
    assert len({code for code, _ in got.values()}) == 1, got
    assert next(iter(got.values()))[1] is not None
