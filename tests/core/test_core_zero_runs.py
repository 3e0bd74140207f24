"""Zero-filled runs (a preallocated or sparse ``.log``) are recognised and passed in one step.

``first_nonzero`` (format/scan.py) and the core's ``find_next`` skip a zero run of any length;
the scan's output stays exactly the reference's (tests/core/test_core_scan.py's comparison) and
is asserted here too: one zero-filled gap, then the batch after it.  A 512 MiB sparse segment
is verified with a peak resident set far below its size (the zero pages are dropped as passed).
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from test_core_scan import assert_same_scan

from kseg.format import RecordSpec, encode_batch
from kseg.format.scan import BAD_SIZE, ZERO_CHUNK, Gap, first_nonzero, scan

BATCH = encode_batch([RecordSpec(0, 1_700_000_000_000, b"k", b"v" * 50)])
AFTER = encode_batch([RecordSpec(9, 1_700_000_000_009, b"k", b"w" * 50)], base_offset=9)


@pytest.mark.parametrize("zeros", [1, 11, 12, 13, 100, ZERO_CHUNK - 1, ZERO_CHUNK, ZERO_CHUNK + 5, 3 * ZERO_CHUNK + 17])
def test_a_zero_run_is_one_gap_and_the_batch_after_it_is_found(core, zeros):
    buf = BATCH + bytes(zeros) + AFTER
    items = list(scan(buf))
    start = len(BATCH)
    assert [type(i).__name__ for i in items] == ["V2Batch", "Gap", "V2Batch"]
    gap = items[1]
    assert (gap.start, gap.end, gap.zero_filled) == (start, start + zeros, True)
    if zeros >= 12:  # the size field lies in the zeros (below that it takes bytes of the next batch)
        assert gap == Gap(start, start + zeros, BAD_SIZE, 0, True)
    assert items[2].position == start + zeros
    assert_same_scan(core, buf)
    assert first_nonzero(buf, start, len(buf)) == start + zeros + 7  # the next batch's base offset (9), low byte
    assert first_nonzero(buf, start, start + zeros) is None


def test_first_nonzero_finds_the_byte_in_any_chunk():
    for at in (0, 1, ZERO_CHUNK - 1, ZERO_CHUNK, 2 * ZERO_CHUNK + 3):
        buf = bytearray(3 * ZERO_CHUNK)
        buf[at] = 7
        assert first_nonzero(bytes(buf), 0, len(buf)) == at
        assert first_nonzero(memoryview(buf), 0, len(buf)) == at
        assert first_nonzero(bytes(buf), at + 1, len(buf)) is None


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="VmHWM is Linux's")
def test_a_sparse_segment_is_verified_in_flat_memory(core, tmp_path):
    log = tmp_path / "00000000000000000000.log"
    with log.open("wb") as out:
        out.write(BATCH)
        out.truncate(512 << 20)  # a sparse hole to 512 MiB, as a preallocated segment
    code = (
        "import sys\n"
        "from kseg.ops.verify import verify_paths\n"
        f"result = verify_paths([{str(log)!r}], jobs=1)\n"
        "print(sorted({f.kind for r in result.files for f in r.findings}))\n"
        "status = dict(l.split(':', 1) for l in open('/proc/self/status'))\n"
        "print(int(status['VmHWM'].split()[0]))\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "KSEG_PURE"}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    kinds, peak_kib = done.stdout.splitlines()
    assert "zero-filled" in kinds
    assert int(peak_kib) < 100 * 1024
