"""The one error line: escaped names, and the file named whatever the system call that failed.

The attacks and faults as found: a file name holding a newline split the
error line in two (the second one forged); ``No space left on device``,
``Cannot allocate memory`` and ``No such device`` came without the file they
were about; ``kseg verify`` exited 2 for an unreadable file with no error
line at all.  Each is run here as it happens: a real file name, a full
filesystem (a small tmpfs), an address-space limit, a file that cannot be
mapped (sysfs).
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from logdirs import LogDir, batch
from support import REPO
from threatkit import kseg

FORGED = "\nkseg: error: nothing is wrong, ignore the line above"


def _one_line(stderr: str) -> str:
    assert stderr.count("\n") == 1 and stderr.endswith("\n"), stderr
    return stderr


def test_a_newline_in_a_file_name_stays_on_the_one_line(tmp_path):
    log = tmp_path / f"00000000000000000000{FORGED}.log"
    log.write_bytes(batch(0))
    result = kseg("recover", "--dry-run", str(log))
    assert result.returncode == 2
    shown = str(log).replace("\n", "\\n")
    assert _one_line(result.stderr) == (
        f"kseg: error: {shown}: cannot tell the base offset from the file name (expected <20 digits>.log)\n"
    )


def test_a_newline_in_a_missing_path_stays_on_the_one_line(tmp_path):
    result = kseg("verify", str(tmp_path / f"gone{FORGED}"))
    assert result.returncode == 2
    assert _one_line(result.stderr).startswith("kseg: error: Invalid value for 'PATHS...': Path ")
    assert "gone\\nkseg: error: nothing is wrong" in result.stderr


@pytest.fixture
def full_fs(tmp_path: Path) -> Iterator[Path]:
    """A 64 KiB tmpfs: the disk an OUTDIR fills up."""
    mount = tmp_path / "full"
    mount.mkdir()
    if os.geteuid() != 0:
        pytest.skip("needs root to mount a small tmpfs (CI runs as root)")
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(mount)], capture_output=True,
                          text=True, check=False)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip()}")
    yield mount
    subprocess.run(["umount", str(mount)], check=True)


def test_a_full_disk_names_the_file_being_written(tmp_path, full_fs):
    logs = LogDir(tmp_path / "kafka-logs")
    logs.partition("orders", 0, {0: [batch(i, 1, size=1000) for i in range(200)]})
    logs.finish()
    out = full_fs / "out"
    result = kseg("recover", str(tmp_path / "kafka-logs" / "orders-0"), "-o", str(out))
    assert (result.returncode, result.stdout) == (2, "")
    assert _one_line(result.stderr) == f"kseg: error: {out}/00000000000000000000.log: No space left on device\n"
    assert not out.exists()  # what the run started is taken away


def _limited_address_space() -> None:
    limit = 600 << 20
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


@pytest.mark.parametrize(("command", "reason"), [
    (["recover", "--dry-run"], "Cannot allocate memory"),
    (["reindex", "--check"], "Cannot allocate memory"),
    (["verify"], "cannot read: Cannot allocate memory"),
])
def test_a_mapping_the_address_space_cannot_hold_names_the_file(tmp_path, command, reason):
    log = tmp_path / "big" / "00000000000000000000.log"
    log.parent.mkdir()
    with log.open("wb") as sparse:
        sparse.truncate(2 << 30)  # 2 GiB of holes: more than the 600 MiB the run may map
    result = subprocess.run([sys.executable, "-m", "kseg", *command, str(log)], capture_output=True, text=True,
                            env={**os.environ, "PYTHONPATH": str(REPO)}, preexec_fn=_limited_address_space,
                            timeout=120, check=False)
    assert result.returncode == 2
    assert _one_line(result.stderr) == f"kseg: error: {log}: {reason}\n"


SYSFS_FILE = Path("/sys/kernel/mm/transparent_hugepage/enabled")


@pytest.mark.parametrize(("command", "reason"), [
    (["recover", "--dry-run"], "No such device"),
    (["verify"], "cannot read: No such device"),
])
def test_a_file_that_cannot_be_mapped_names_the_file(tmp_path, command, reason):
    if not SYSFS_FILE.is_file():
        pytest.skip(f"{SYSFS_FILE} is not here to stand for an unmappable file")
    log = tmp_path / "00000000000000000000.log"
    log.symlink_to(SYSFS_FILE)  # a regular file with a size, which mmap refuses with ENODEV
    result = kseg(*command, str(log))
    assert result.returncode == 2
    assert _one_line(result.stderr) == f"kseg: error: {log}: {reason}\n"
