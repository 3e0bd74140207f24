"""Reading evidence leaves its access time alone: every command opens inputs with O_NOATIME.

Directories too: a listing is a read of the directory, so kseg lists through an
``O_NOATIME`` descriptor of it (kseg.listing).  The tests run as root or as the
files' owner, the only accounts the kernel lets use ``O_NOATIME`` (docs/cli.md §10).

The files get an access time far in the past (2001); with the usual
``relatime`` mount, any ordinary read would move it to now.  A control file
read the ordinary way proves the file system updates access times here, so
the assertions cannot pass by accident on a ``noatime`` mount (there the test
skips, and fails under CI, which must be able to run it).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner
from support import FIXTURES, IN_CI

from kseg.cli import cli

OLD = 978307200  # 2001-01-01T00:00:00Z
#: Real partitions with every kind of file the commands read: .log, .index, .timeindex, .snapshot.
PARTITIONS = [FIXTURES / "real" / "kafka-logs" / name for name in ("__consumer_offsets-12", "nikhilDemo-0")]


def _age(directory: Path) -> dict[Path, int]:
    """Set the atime of every file and directory (the log directory too) to 2001, mtime kept; returns them."""
    ages = {}
    for path in [directory, *sorted(directory.rglob("*"))]:
        os.utime(path, ns=(OLD * 10**9, path.stat().st_mtime_ns))
        ages[path] = path.stat().st_atime_ns
    return ages


def _require_atime_updates(tmp_path: Path) -> None:
    control = tmp_path / "control"
    control.write_bytes(b"x" * 4096)
    os.utime(control, ns=(OLD * 10**9, control.stat().st_mtime_ns))
    before = control.stat().st_atime_ns
    with open(control, "rb") as plain:  # an ordinary read: the kernel updates atime on relatime mounts
        plain.read()
    if control.stat().st_atime_ns == before:
        if IN_CI:
            pytest.fail("this file system does not update access times: the O_NOATIME test cannot run")
        pytest.skip("this file system does not update access times (noatime mount)")


@pytest.fixture
def evidence(tmp_path: Path) -> Path:
    """A log directory holding copies of the real partitions."""
    _require_atime_updates(tmp_path)
    logs = tmp_path / "logs"
    for partition in PARTITIONS:
        shutil.copytree(partition, logs / partition.name)
    return logs


def _files(logs: Path) -> list[str]:
    return [str(path) for path in sorted(logs.rglob("*")) if path.is_file()]


COMMANDS = {
    "dump": lambda logs, out: [["dump", "--deep-iteration", "--print-data-log", *_files(logs)]],
    "dump-json": lambda logs, out: [["dump", "--format", "json", "--print-data-log", *_files(logs)]],
    "verify": lambda logs, out: [["verify", "--deep", "-j", "1", str(logs)]],
    "triage": lambda logs, out: [["triage", str(logs)], ["triage", "--format", "json", str(logs)]],
    "txn": lambda logs, out: [["txn", str(logs)], ["txn", "--format", "json", *map(str, sorted(logs.iterdir()))]],
    "stats": lambda logs, out: [["stats", "--records", "--format", "json", "-j", "1", str(logs)],
                                ["stats", "--format", "table", *(f for f in _files(logs) if f.endswith(".log"))]],
    "report": lambda logs, out: [["report", "--with-verify", "-j", "1", "-o", f"{out}.html", str(logs)]],
    "reindex-check": lambda logs, out: [["reindex", "--check", str(logs)]],
    "reindex-out": lambda logs, out: [["reindex", "-o", str(out), str(logs)]],
    "recover-dry-run": lambda logs, out: [["recover", "--dry-run", str(p)] for p in sorted(logs.iterdir())],
    "recover-out": lambda logs, out: [["recover", "-o", str(out / p.name), str(p)] for p in sorted(logs.iterdir())],
    "recover-salvage-out": lambda logs, out: [
        ["recover", "--salvage", "-o", str(out / p.name), str(p)] for p in sorted(logs.iterdir())
    ],
    "convert": lambda logs, out: [
        ["convert", "--to-magic", "2", "--compression", "lz4", "-o", str(out / p.name), str(p)]
        for p in sorted(logs.iterdir())
    ],
}


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_reading_leaves_the_access_time_of_every_input_unchanged(evidence, tmp_path, command):
    runs = COMMANDS[command](evidence, tmp_path / "out")  # listed before the atimes are set: a listing reads
    ages = _age(evidence)
    assert {path.suffix for path in ages if path.is_file()} >= {".log", ".index", ".timeindex", ".snapshot"}
    for args in runs:
        result = CliRunner().invoke(cli, args)
        assert result.exit_code in (0, 1), (args, result.output)
    after = {path: path.stat().st_atime_ns for path in ages}
    assert after == ages
