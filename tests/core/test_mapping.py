"""The mapping advice of segment.py: pages ahead of a walk come in one call, pages behind go.

Counted in page faults (``ru_minflt``), not time: after :func:`release_pages` has dropped the first
window, reading the next one takes (almost) no faults, while reading a window nobody populated
takes one per fault-around block (64 KiB by default: 256 per 16 MiB) -- the control that proves
the count sees faults at all (a kernel that maps whole large folios per fault has nothing to save).
"""

from __future__ import annotations

import errno
import mmap
import resource
import sys
from pathlib import Path

import pytest

from kseg.segment import RELEASE_EVERY, MappedFile, populate_ahead, release_pages


def _faults_reading(buf: mmap.mmap, start: int, end: int) -> int:
    view = memoryview(buf)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    total = sum(view[start:end:mmap.PAGESIZE])  # one byte of every page
    after = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    view.release()
    assert total >= 0
    return after - before


@pytest.mark.skipif(sys.platform != "linux", reason="MADV_POPULATE_READ is Linux's")
def test_release_maps_the_next_window_and_drops_the_last(tmp_path: Path) -> None:
    path = tmp_path / "00000000000000000000.log"
    page = bytes(range(256)) * (mmap.PAGESIZE // 256)
    with path.open("wb") as out:  # page by page, as a broker appends: small page-cache folios
        for _ in range(3 * RELEASE_EVERY // mmap.PAGESIZE + 1):
            out.write(page)
    with MappedFile(path) as mapped:
        buf = mapped.buf
        assert isinstance(buf, mmap.mmap)
        try:
            buf.madvise(22, 0, mmap.PAGESIZE)
        except OSError as err:  # a kernel before 5.14: the walk takes its faults as before
            assert err.errno == errno.EINVAL
            pytest.skip("this kernel has no MADV_POPULATE_READ")
        _faults_reading(buf, 0, RELEASE_EVERY)
        assert release_pages(buf, 0, RELEASE_EVERY) == RELEASE_EVERY
        populated = _faults_reading(buf, RELEASE_EVERY, 2 * RELEASE_EVERY)
        faulted = _faults_reading(buf, 2 * RELEASE_EVERY + RELEASE_EVERY // 2, 3 * RELEASE_EVERY)
    if faulted <= 64:  # the control: a window nobody populated faults block by block ...
        pytest.skip(f"{faulted} faults for 8 MiB: this kernel maps whole large folios, nothing to save")
    assert populated < 16  # ... and a populated one does not


def test_populating_past_the_end_of_the_mapping_is_nothing(tmp_path: Path) -> None:
    path = tmp_path / "small.log"
    path.write_bytes(b"x" * 10_000)
    with MappedFile(path) as mapped:
        assert isinstance(mapped.buf, mmap.mmap)
        populate_ahead(mapped.buf, 10_000)
        populate_ahead(mapped.buf, 8192)
        assert release_pages(mapped.buf, 0, 9000) == 8192
        assert mapped.buf[9999:] == b"x"
