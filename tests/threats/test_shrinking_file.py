"""A segment truncated by another process while kseg reads its mapping: the one error line, exit 2, no SIGBUS.

The attack as found: a live broker (follower truncation, recovery) or another
tool cuts a segment short while ``recover``, ``triage`` or ``txn`` walks its
mapping; the next read of a vanished page raised ``SIGBUS`` and the process
died with exit 135 and no message.  Two cuts matter:

* at a page boundary: every byte past it is on a vanished page, the read faults
  (kseg.mapguard maps zeros over it and counts the fault);
* inside a page, at a batch boundary: nothing faults -- the rest of the page
  reads as zeros, the walk stops there as at the end of a file, and without a
  second look at the file's size kseg called an intact segment clean but short,
  or damaged.  So every walk over a mapping asks the descriptor's size again
  where it stops and when it closes (``MappedFile.check_size``).

The deterministic tests cut from inside kseg's process, through a second
process (``truncate``), right after kseg has mapped the ``.log`` and before it
reads on.  The concurrent tests leave the moment to a writer process that
watches ``/proc/<pid>/maps`` and truncates while the mapping is there.
"""

from __future__ import annotations

import mmap
import os
import signal
import struct
import subprocess
import sys
from pathlib import Path

import pytest
from logdirs import LogDir, batch
from support import REPO
from threatkit import kseg

from kseg import mapguard
from kseg.segment import MappedFile

pytestmark = pytest.mark.skipif(not mapguard.supported(), reason="kseg.mapguard knows Linux x86_64/aarch64 only")

#: Run in kseg's process first: the first time kseg takes the buffer of a mapped .log to walk it (a
#: mapping not opened ``readable``: those copy with ``pread``), another process truncates the file to CUT.
TRUNCATE_AFTER_MAPPING = """
import subprocess
import kseg.segment as segment
_buf = segment.MappedFile.buf.fget
_done = []
def _cut_then_read(self):
    if self.path.name.endswith(".log") and not self._readable and self.size > {cut} and not _done:
        _done.append(self.path)
        subprocess.run(["truncate", "-s", "{cut}", str(self.path)], check=True)
    return _buf(self)
segment.MappedFile.buf = property(_cut_then_read)
"""

#: The other process of the concurrent tests: waits until process PID maps PATH, truncates PATH to CUT,
#: then says whether the mapping was still there after the cut ("during": kseg's close, which asks the
#: size again, came after the cut) or not ("late").
WRITER = """
import os, signal, sys, time
pid, path, cut = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
needle = " " + path + "\\n"
def mapped():
    try:
        with open(f"/proc/{pid}/maps") as maps:
            return needle in maps.read()
    except OSError:
        return False
deadline = time.monotonic() + 60
while not mapped():
    if time.monotonic() > deadline:
        print("never"); sys.exit(0)
    time.sleep(0.0002)
# Stop the reader where it is, cut, let it go on: a mapping seen is still there when the cut lands
# (the compiled core walks the segment in about a millisecond, often less than one look at the maps).
os.kill(pid, signal.SIGSTOP)
try:
    if mapped():
        os.truncate(path, cut)
        print("during")
    else:
        print("late")
finally:
    os.kill(pid, signal.SIGCONT)
"""

COMMANDS = ["recover", "triage", "txn", "convert", "verify"]


@pytest.fixture
def big_partition(tmp_path: Path) -> Path:
    """``orders-0`` with one 2.4 MiB segment (2,000 batches of 1 KiB values): a walk crosses hundreds of pages."""
    logs = LogDir(tmp_path / "kafka-logs")
    logs.partition("orders", 0, {0: [batch(i, 1, size=1200) for i in range(2000)]})
    return logs.finish(clean=False)


def batch_boundary_inside_a_page(log: Path) -> int:
    """The first batch start past the first page that is not on a page boundary: a cut there faults nothing."""
    data = log.read_bytes()
    position = 0
    while position <= mmap.PAGESIZE or position % mmap.PAGESIZE == 0:
        position += 12 + struct.unpack_from(">i", data, position + 8)[0]
    return position


def command_line(command: str, logs: Path, out: Path) -> list[str]:
    return {"recover": ["recover", str(logs / "orders-0"), "-o", str(out)],
            "triage": ["triage", str(logs)],
            "txn": ["txn", str(logs)],
            "convert": ["convert", str(logs / "orders-0"), "-o", str(out), "--to-magic", "1"],
            "verify": ["verify", "--deep", str(logs / "orders-0")]}[command]


def shrank_line(log: Path, size: int, cut: int) -> str:
    return (f"kseg: error: {log} byte {cut}: the file shrank from {size} to {cut} bytes while kseg read it "
            "(another process truncated it): nothing read from it is reported; run again when nothing writes it\n")


@pytest.mark.parametrize("where", ["page boundary", "inside a page"])
@pytest.mark.parametrize("command", COMMANDS)
def test_a_segment_truncated_under_the_mapping_ends_with_one_line(big_partition, tmp_path, command, where):
    log = big_partition / "orders-0" / "00000000000000000000.log"
    size = log.stat().st_size
    cut = mmap.PAGESIZE if where == "page boundary" else batch_boundary_inside_a_page(log)
    result = kseg(*command_line(command, big_partition, tmp_path / "out"),
                  prelude=TRUNCATE_AFTER_MAPPING.format(cut=cut))
    assert result.returncode == 2, (result.returncode, result.stdout[-2000:], result.stderr[-2000:])
    assert result.returncode != 128 + signal.SIGBUS and result.returncode != -signal.SIGBUS
    assert result.stderr == shrank_line(log, size, cut)
    assert log.stat().st_size == cut and os.path.exists(log)
    assert not (tmp_path / "out").exists()  # recover, convert: nothing written from what was read


@pytest.mark.parametrize("command", COMMANDS)
def test_a_writer_process_cutting_inside_a_page_during_the_walk(big_partition, tmp_path, command):
    """A real race: the writer cuts (at a batch start inside a page) whenever it sees the mapping.

    Where the cut came after kseg had unmapped the file ("late"), kseg read the
    whole file and may report it: the run is repeated (up to 30 times) until a cut lands while the
    mapping is there, and then only the one line is right.  The writer stops the reader (SIGSTOP)
    when it sees the mapping, cuts, and lets it go on: triage's and txn's walks take about a
    millisecond, and a cut made after one more look at the maps often came too late.
    """
    log = big_partition / "orders-0" / "00000000000000000000.log"
    pristine = log.read_bytes()
    cut = batch_boundary_inside_a_page(log)
    env = {**os.environ, "PYTHONPATH": str(REPO), "NO_COLOR": "1"}
    outcomes = []
    for attempt in range(30):
        log.write_bytes(pristine)
        out = tmp_path / f"out{attempt}"
        child = subprocess.Popen([sys.executable, "-m", "kseg", *command_line(command, big_partition, out)],
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True,
                                 env=env)
        writer = subprocess.run([sys.executable, "-c", WRITER, str(child.pid), str(log), str(cut)],
                                capture_output=True, text=True, timeout=120, check=True)
        stdout, stderr = child.communicate(timeout=120)
        outcomes.append(writer.stdout.strip())
        if outcomes[-1] == "during":
            assert child.returncode == 2, (child.returncode, stdout[-2000:], stderr[-2000:])
            assert stderr == shrank_line(log, len(pristine), cut)
            assert not out.exists()
            return
    pytest.fail(f"the writer never cut while kseg had the segment mapped: {outcomes}")


def test_check_size_asks_the_descriptor_not_the_name(tmp_path):
    """A cut inside a page is found by ``check_size`` and ``close``; a new file renamed over the name is not a cut."""
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(bytes(range(256)) * 40)  # 10,240 bytes: three pages
    mapped = MappedFile(path, readable=True)
    mapped.check_size()  # unchanged: nothing raised
    os.truncate(path, 5000)
    assert mapped.buf[5000] == 0  # the rest of the page reads as zeros: no fault, nothing counted
    with pytest.raises(mapguard.FileShrank) as shrank:
        mapped.check_size()
    assert (shrank.value.offset, shrank.value.path) == (5000, str(path))
    view = memoryview(bytearray(4096))
    with pytest.raises(mapguard.FileShrank):
        mapped.read_into(view, 4096)  # pread ends at 5000, before the 10,240 bytes mapped
    with pytest.raises(mapguard.FileShrank):
        mapped.close()

    mapped = MappedFile(path)
    replacement = tmp_path / "new"
    replacement.write_bytes(b"x")
    os.replace(replacement, path)  # an in-place rewrite: the mapped file is intact, the name is another file's
    mapped.check_size()
    mapped.close()
