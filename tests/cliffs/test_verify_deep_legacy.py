"""``verify --deep`` of a V0/V1 segment checks each entry a bounded number of times.

Under ``--deep`` every V0/V1 message goes through the walk's slow path, which asks
:func:`kseg.format.scan.scan` for the one item at its position.  The scan's clean run used to
ask the core for a megabyte of entries per call, so each message cost the check of up to a
megabyte of the messages after it: quadratic in the messages of a segment (the real corpus's
legacy partitions: 50 s of verify --deep against 1 s of triage).  The count here is of entries
the core hands back, not of time: linear is at most a few per message.
"""

from __future__ import annotations

import struct
import zlib

import pytest

from kseg.format import scan as scan_module
from kseg.ops.verify.log_walk import walk_log

MESSAGES = 3_000


def _v1_message(offset: int, timestamp: int, value: bytes) -> bytes:
    body = struct.pack(">bBq", 1, 0, timestamp) + struct.pack(">i", -1) + struct.pack(">i", len(value)) + value
    message = struct.pack(">I", zlib.crc32(body)) + body
    return struct.pack(">qi", offset, len(message)) + message


@pytest.fixture()
def legacy_segment(tmp_path):
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(b"".join(_v1_message(o, 1_700_000_000_000 + o, b"v%05d" % o) for o in range(MESSAGES)))
    return path


def _counting(monkeypatch) -> list[int]:
    """Wrap the scan's core calls; returns the list the entries per ``valid_entries`` call go to."""
    seen: list[int] = []
    real = scan_module._core_call

    def counted(call, buf, *args):
        got = real(call, buf, *args)
        if call == "valid_entries" and got is not NotImplemented:
            seen.append(len(got[0]))
        return got

    monkeypatch.setattr(scan_module, "_core_call", counted)
    return seen


@pytest.mark.skipif(scan_module.CORE is None, reason="the pure-Python run is a lazy generator: one entry at a time")
def test_deep_verify_of_a_legacy_segment_checks_each_message_a_bounded_number_of_times(legacy_segment, monkeypatch):
    seen = _counting(monkeypatch)
    walk, size = walk_log(str(legacy_segment), name_base=0, deep=True)
    assert size == legacy_segment.stat().st_size
    assert walk.batches == MESSAGES
    assert walk.last_offset == MESSAGES - 1
    assert [(f.kind, f.message) for f in walk.findings.items] == []
    assert len(seen) == MESSAGES  # one slow-path scan per message ...
    assert sum(seen) == MESSAGES  # ... that checks that message only (was ~MESSAGES**2 / 2 entries)


@pytest.mark.skipif(scan_module.CORE is None, reason="counts the core's calls")
def test_a_scan_taken_to_the_end_grows_its_calls_to_the_megabyte(legacy_segment, monkeypatch):
    """Whole scans (convert, salvage, the verdict's scans) still take long runs: calls grow geometrically."""
    seen = _counting(monkeypatch)
    buf = legacy_segment.read_bytes()
    items = list(scan_module.scan(buf))
    assert [item.position for item in items][:3] == [0, len(_v1_message(0, 0, b"v00000")), 2 * len(_v1_message(0, 0, b"v00000"))]
    assert len(items) == MESSAGES
    assert sum(seen) == MESSAGES
    # one entry, then twice the bytes per call: about log2(file size) calls, not one per entry
    assert len(seen) <= (len(buf)).bit_length() + 1
