"""The CLI's last look: a shrink no ``MappedFile.close`` reported still ends the run with exit 2 and one line.

Two ways a shrink can escape the close that names the file: a page faulted in
a mapping kseg.mapguard knows nothing of (only the count of faults tells), and
a ``MappedFile`` dropped without ``close`` (its ``weakref.finalize`` asks the
descriptor's size and keeps what it found for the CLI).  Both are mounted
here in kseg's own process, before a run that is otherwise clean.
"""

from __future__ import annotations

import mmap

import pytest
from logdirs import LogDir, batch
from threatkit import kseg

from kseg import mapguard

pytestmark = pytest.mark.skipif(not mapguard.supported(), reason="kseg.mapguard knows Linux x86_64/aarch64 only")

#: A file of two pages mapped with Python's own mmap (no MappedFile), cut to one page, and its second
#: page read: the fault is counted and the read sees zeros, but no closing file can name it.
FAULT_IN_A_FOREIGN_MAPPING = """
import mmap, os
import kseg.segment as segment
from kseg import mapguard
_init = segment.MappedFile.__init__
_path = {scratch!r}
def _fault_then_init(self, path, readable=False):
    if mapguard.faults() == 0:  # once, inside the run
        mapguard.install()
        with open(_path, "wb") as f:
            f.write(b"x" * 2 * mmap.PAGESIZE)
        with open(_path, "rb") as f:
            m = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
        os.truncate(_path, mmap.PAGESIZE)
        assert m[mmap.PAGESIZE] == 0 and mapguard.faults() == 1
    _init(self, path, readable)
segment.MappedFile.__init__ = _fault_then_init
"""

#: Every MappedFile of a .log is left unclosed (as a code path that forgets ``close`` would), and the
#: first one's file is cut inside a page right after it is mapped: nothing faults, nothing closes.
DROPPED_UNCLOSED = """
import os
import kseg.segment as segment
_init, _close = segment.MappedFile.__init__, segment.MappedFile.close
_done = []
def _init_then_cut(self, path, readable=False):
    _init(self, path, readable)
    if self.path.name.endswith(".log") and not _done:
        _done.append(self.path)
        os.truncate(self.path, {cut})
def _close_unless_log(self):
    if not self.path.name.endswith(".log"):
        _close(self)
segment.MappedFile.__init__ = _init_then_cut
segment.MappedFile.close = _close_unless_log
"""


@pytest.fixture
def clean_partition(tmp_path):
    logs = LogDir(tmp_path / "kafka-logs")
    logs.partition("orders", 0, {0: [batch(i, 1, size=1200) for i in range(10)]})
    return logs.finish(clean=True) / "orders-0"


def test_a_fault_no_closing_file_accounts_for_ends_the_run_after_its_output(clean_partition, tmp_path):
    log = clean_partition / "00000000000000000000.log"
    clean = kseg("verify", str(log))
    assert (clean.returncode, clean.stderr) == (0, "")
    result = kseg("verify", str(log), prelude=FAULT_IN_A_FOREIGN_MAPPING.format(scratch=str(tmp_path / "scratch")))
    assert result.returncode == 2, (result.stdout, result.stderr)
    assert result.stdout == clean.stdout  # printed before the fault was noticed: the line says not to trust it
    assert result.stderr == ("kseg: error: a file shrank while kseg read it (another process truncated it): "
                             "what this run printed is not to be trusted\n")


def test_a_mapping_dropped_unclosed_whose_file_shrank_is_named(clean_partition):
    log = clean_partition / "00000000000000000000.log"
    size = log.stat().st_size
    cut = 12 + 1200  # inside the first page: the rest of it reads as zeros, nothing faults
    result = kseg("triage", str(clean_partition.parent), prelude=DROPPED_UNCLOSED.format(cut=cut))
    assert result.returncode == 2, (result.stdout, result.stderr)
    assert result.stderr == (
        f"kseg: error: {log} byte {cut}: the file shrank from {size} to {cut} bytes while kseg read it "
        "(another process truncated it): nothing read from it is reported; run again when nothing writes it\n")
    assert mmap.PAGESIZE > cut
