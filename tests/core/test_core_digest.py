"""The core's ``batch_digests`` (rust/kseg-wire/src/digest.rs) gives what kseg/format/digest.py computes in Python.

``kseg diff`` calls two batches identical, or their records the same, on these digests
(docs/diff.md §3); a core that hashed other bytes than Python would call replicas equal
under one path and different under the other.  Compared: every entry's header, content
digest and records digest on generated logs of every magic, codec and record shape, the
same logs damaged, windows cut anywhere, and the real corpus; and the records digest is
tied to the decoded records (any batching of the same records sums to the same digest).
"""

from __future__ import annotations

import hashlib
import os

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from segments import corpus_logs, damaged, log_of

from kseg.format import RecordSpec, encode_batch
from kseg.format.digest import DIGEST_CHUNK, _digests, records_digest
from kseg.format.v0v1 import LegacyBatch
from kseg.format.v2 import V2Batch

EXAMPLES = int(os.environ.get("KSEG_DIGEST_EXAMPLES", "80"))
T0 = 1_700_000_000_000


def core_digests(core, buf, limit: int, chunk: int = DIGEST_CHUNK) -> list[tuple]:
    out, pos = [], 0
    while pos is not None:
        part, pos, _ = core.batch_digests(buf, pos, limit, chunk)
        out.extend(part)
    return out


def shapes() -> bytes:
    """Record shapes the canonical form frames: null and empty keys and values, headers (a null header value),
    LogAppendTime, transactional and control batches, negative timestamps, gzip, and an empty batch."""
    specs = [RecordSpec(0, T0, None, b"v"), RecordSpec(1, T0 + 1, b"", None), RecordSpec(2, -1, b"k", b""),
             RecordSpec(3, T0 - 5000, b"k" * 300, b"v" * 3000, headers=(("h", b"x"), ("", None), ("h2", b"")))]
    parts = [
        encode_batch(specs),
        encode_batch(specs, codec="gzip"),
        encode_batch([RecordSpec(4, T0, b"a", b"b")], timestamp_type="LogAppendTime", log_append_time=T0 + 99,
                     base_offset=4),
        encode_batch([RecordSpec(5, T0, b"a", b"b")], producer_id=9, producer_epoch=1, base_sequence=0,
                     is_transactional=True, base_offset=5, partition_leader_epoch=3),
        encode_batch([RecordSpec(6, T0, b"\x00\x00\x00\x01", b"\x00\x00\x00\x00\x00\x00")], producer_id=9,
                     producer_epoch=1, is_transactional=True, is_control=True, base_offset=6),
        encode_batch([RecordSpec(7, T0, b"legacy", b"m")], magic=1, base_offset=7),
        encode_batch([RecordSpec(8, T0, b"legacy", b"m")], magic=0, base_offset=8),
    ]
    return b"".join(parts)


def test_shapes_agree_and_each_v2_digest_is_its_records(core):
    data = shapes()
    got = core_digests(core, data, len(data))
    assert got == list(_digests(data, len(data)))
    assert [e[2] for e in got] == [2, 2, 2, 2, 2, 1, 0]
    assert [e[5] is None for e in got] == [False, True, False, False, False, True, True]  # gzip: Python decodes
    for pos, nxt, magic, header, content, digest in got:
        if magic < 2:
            assert header is None and content is None
            continue
        assert content == hashlib.blake2b(data[pos + 21 : nxt], digest_size=16).digest()
        batch = V2Batch(data, pos)
        flags = (1 if batch.is_transactional else 0) | (2 if batch.is_control else 0)
        assert records_digest(batch.iter_records(), header[9], flags) == (digest or records_digest(
            batch.iter_records(), header[9], flags))
        if digest is not None:
            assert digest == records_digest(batch.iter_records(), header[9], flags)


def test_the_records_digest_does_not_depend_on_the_batching(core):
    specs = [RecordSpec(i, T0 + i, b"k%d" % i, b"v" * i, headers=(("h", b"%d" % i),)) for i in range(7)]
    one = encode_batch(specs)
    split = encode_batch(specs[:3]) + encode_batch(specs[3:], base_offset=3)
    other_value = encode_batch(specs[:6] + [RecordSpec(6, T0 + 6, b"k6", b"w" * 6, headers=(("h", b"6"),))])
    moved_timestamp = encode_batch(specs[:6] + [RecordSpec(6, T0 + 7, b"k6", b"v" * 6, headers=(("h", b"6"),))])

    def total(buf: bytes) -> int:
        return sum(int.from_bytes(e[5], "little") for e in core_digests(core, buf, len(buf))) % (1 << 128)

    assert total(one) == total(split)
    assert len({total(one), total(other_value), total(moved_timestamp)}) == 3
    plain = [RecordSpec(i, T0 + i, b"k%d" % i, b"v" * i) for i in range(7)]
    legacy = encode_batch(plain, magic=1)  # a down-conversion: one message per record
    decoded = [r for pos, *_ in core_digests(core, legacy, len(legacy)) for r in LegacyBatch(legacy, pos).iter_records()]
    v2 = encode_batch(plain)
    assert int.from_bytes(records_digest(decoded, -1, 0), "little") == total(v2)
    assert records_digest(decoded, -1, 1) != records_digest(decoded, -1, 0)  # transactional is part of it


@settings(deadline=None, max_examples=EXAMPLES)
@given(seed=st.integers(0, 2**32), damage=st.integers(0, 2**32), cut=st.integers(0, 2000),
       chunk=st.integers(1, 9), broken=st.booleans())
def test_generated_logs_agree_in_any_window(core, seed, damage, cut, chunk, broken):
    data = log_of(seed) + shapes()
    if broken:
        data = damaged(data, damage)
    limit = max(0, len(data) - cut)
    assert core_digests(core, data, limit, chunk) == list(_digests(data, limit))


@pytest.mark.parametrize("kind", ["bytes", "bytearray"])
def test_real_corpus_agrees(core, kind):
    logs = corpus_logs(max_size=2 << 20)
    assert logs
    for path in logs[:12]:
        data = path.read_bytes()
        buf = bytearray(data) if kind == "bytearray" else data
        assert core_digests(core, buf, len(buf)) == list(_digests(buf, len(buf))), path
