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


def core_keyed(core, buf, limit: int, bits: int, bucket: int, start: int, end: int) -> list:
    out, pos = [], 0
    while pos is not None:
        part, pos, _ = core.keyed_digests(buf, pos, limit, DIGEST_CHUNK, bits, bucket, start, end)
        out.extend(part)
    return out


def transactional_log() -> bytes:
    """Plain, transactional (with and without keys), control, gzip and V1 batches, keys repeated."""
    parts = []
    for base in range(0, 40, 4):
        specs = [RecordSpec(base + i, T0 + i, None if i == 3 else b"k%d" % ((base + i) % 7),
                            None if i == 2 else b"v%d" % (base + i)) for i in range(4)]
        kind = base // 4 % 4
        if kind == 1:
            parts.append(encode_batch(specs, base_offset=base, producer_id=5, producer_epoch=0, base_sequence=base,
                                      is_transactional=True))
        elif kind == 2:
            parts.append(encode_batch(specs, base_offset=base, codec="gzip"))
        else:
            parts.append(encode_batch(specs, base_offset=base))
    parts.append(encode_batch([RecordSpec(40, T0, b"\x00\x00\x00\x01", b"\x00\x00\x00\x00\x00\x00")], producer_id=5,
                              producer_epoch=0, is_transactional=True, is_control=True, base_offset=40))
    parts.append(encode_batch([RecordSpec(41, T0, b"k1", b"legacy")], magic=1, base_offset=41))
    parts.append(encode_batch([RecordSpec(42, T0, b"k2", b"last")], base_offset=42))
    return b"".join(parts)


def test_keyed_records_agree_for_every_bucket_and_offset_window(core):
    from kseg.format.digest import _keyed, fingerprint

    data = transactional_log()
    for bits in (0, 1, 2, 3):
        for bucket in range(1 << bits):
            for start, end in ((0, 1 << 62), (5, 30), (12, 43), (41, 42)):
                got = core_keyed(core, data, len(data), bits, bucket, start, end)
                assert got == list(_keyed(data, len(data), bits, bucket, start, end)), (bits, bucket, start, end)
    whole = core_keyed(core, data, len(data), 0, 0, 0, 1 << 62)
    runs = [item for item in whole if type(item) is list]
    assert runs[0][0] == (fingerprint(b"k0"), (0, fingerprint(b"v0")))
    assert runs[0][2] == (fingerprint(b"k2"), (2, None))  # a tombstone
    assert [type(i).__name__ if type(i) is list else ("txn" if i[4] is not None else i[2]) for i in whole] == [
        "list", "txn", 2, "list", "txn", 2, "list", "txn", 2, 1, "list"]  # gzip and control read by Python


@settings(deadline=None, max_examples=EXAMPLES)
@given(seed=st.integers(0, 2**32), damage=st.integers(0, 2**32), bits=st.integers(0, 4), bucket=st.integers(0, 15),
       start=st.integers(0, 60), broken=st.booleans())
def test_keyed_records_agree_on_generated_logs(core, seed, damage, bits, bucket, start, broken):
    from kseg.format.digest import _keyed

    data = log_of(seed) + transactional_log()
    if broken:
        data = damaged(data, damage)
    bucket %= 1 << bits
    got = core_keyed(core, data, len(data), bits, bucket, start, start + 40)
    assert got == list(_keyed(data, len(data), bits, bucket, start, start + 40))
