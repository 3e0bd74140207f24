"""A segment truncated by another process while kseg reads its mapping: the one error line, exit 2, no SIGBUS.

The attack as found: a live broker (follower truncation, recovery) or another
tool cuts a segment short while ``recover``, ``triage`` or ``txn`` walks its
mapping; the next read of a vanished page raised ``SIGBUS`` and the process
died with exit 135 and no message.  Here a second process (``truncate``) cuts
the ``.log`` at a page boundary right after kseg has mapped it, before kseg reads on: the moment
is fixed, the truncation is real (kseg.mapguard).
"""

from __future__ import annotations

import mmap
import os
import signal
from pathlib import Path

import pytest
from logdirs import LogDir, batch
from threatkit import kseg

from kseg import mapguard

pytestmark = pytest.mark.skipif(not mapguard.supported(), reason="kseg.mapguard knows Linux x86_64/aarch64 only")

#: Where the other process cuts the segment: at a page boundary, so every byte past it is on a vanished page
#: (a cut inside a page leaves the rest of that page reading as zeros, with no fault to notice).
CUT = mmap.PAGESIZE

#: Run in kseg's process first: the first time kseg takes the buffer of a mapped .log to walk it (a
#: mapping without ``read_into``: those copies read with ``pread`` and see the shorter file), another
#: process truncates the file.
TRUNCATE_AFTER_MAPPING = f"""
import subprocess
import kseg.segment as segment
_buf = segment.MappedFile.buf.fget
_done = []
def _cut_then_read(self):
    if self.path.name.endswith(".log") and self._fd is None and self.size > {CUT} and not _done:
        _done.append(self.path)
        subprocess.run(["truncate", "-s", "{CUT}", str(self.path)], check=True)
    return _buf(self)
segment.MappedFile.buf = property(_cut_then_read)
"""


@pytest.fixture
def big_partition(tmp_path: Path) -> Path:
    """``orders-0`` with one 2.4 MiB segment (2,000 batches of 1 KiB values): a walk crosses hundreds of pages."""
    logs = LogDir(tmp_path / "kafka-logs")
    logs.partition("orders", 0, {0: [batch(i, 1, size=1200) for i in range(2000)]})
    return logs.finish(clean=False)


@pytest.mark.parametrize("command", ["recover", "triage", "txn", "convert", "verify"])
def test_a_segment_truncated_under_the_mapping_ends_with_one_line(big_partition, tmp_path, command):
    log = big_partition / "orders-0" / "00000000000000000000.log"
    size = log.stat().st_size
    args = {"recover": ["recover", str(big_partition / "orders-0"), "-o", str(tmp_path / "out")],
            "triage": ["triage", str(big_partition)],
            "txn": ["txn", str(big_partition)],
            "convert": ["convert", str(big_partition / "orders-0"), "-o", str(tmp_path / "out"), "--to-magic", "1"],
            "verify": ["verify", "--deep", str(big_partition / "orders-0")]}[command]
    result = kseg(*args, prelude=TRUNCATE_AFTER_MAPPING)
    assert result.returncode == 2, (result.returncode, result.stderr[-2000:])
    assert result.returncode != 128 + signal.SIGBUS and result.returncode != -signal.SIGBUS
    assert result.stderr == (
        f"kseg: error: {log} byte {CUT}: the file shrank from {size} to {CUT} bytes while kseg read it "
        "(another process truncated it): nothing read from it is reported; run again when nothing writes it\n"
    )
    assert log.stat().st_size == CUT and os.path.exists(log)
