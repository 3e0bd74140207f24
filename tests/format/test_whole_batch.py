"""``all_or_nothing``: a batch's records only when all decode, holding at most ``keep`` of them.

The internal-topic readers (``_schemas``, ``__consumer_offsets``) skip a damaged batch whole; this
is how they do it without listing the batch (docs/fuzzing.md, "Known failures").
"""

from __future__ import annotations

import struct
import tracemalloc

import pytest

from kseg.errors import KsegError
from kseg.format.compression import CODEC_GZIP
from kseg.format.model import RecordSpec
from kseg.format.v0v1_encode import MessageSetEncoder
from kseg.format.v2 import V2Batch
from kseg.format.v2_write import encode_batch
from kseg.format.walk import BatchWalk
from kseg.format.whole import all_or_nothing

SPECS = [RecordSpec(i, 1_700_000_000_000 + i, b"k%d" % i, b"v%05d" % i) for i in range(300)]


def _v2(count: int | None = None) -> V2Batch:
    data = bytearray(encode_batch(SPECS))
    if count is not None:
        struct.pack_into(">i", data, 57, count)  # recordsCount: one more than the batch holds
    return V2Batch(bytes(data), 0)


@pytest.mark.parametrize("keep", [1, 100, 299, 300, 301, 4096])
def test_the_records_are_the_batchs_whatever_keep_is(keep: int):
    got = [(r.offset, r.key, r.value) for r in all_or_nothing(_v2(), keep=keep)]
    assert got == [(s.offset, s.key, s.value) for s in SPECS]


@pytest.mark.parametrize("keep", [1, 100, 300, 4096])
def test_a_batch_that_fails_at_its_last_record_hands_out_none(keep: int):
    batch = _v2(count=301)
    with pytest.raises(KsegError):
        list(batch.iter_records())  # the batch's own iterator fails only after 300 records
    handed: list[object] = []
    with pytest.raises(KsegError):
        handed.extend(all_or_nothing(batch, keep=keep))
    assert handed == []


def test_a_wrapper_of_many_messages_is_not_held():
    """200,000 one-byte messages in a gzip V1 wrapper: listed they cost tens of MB of objects;
    handed out through all_or_nothing, the peak stays near ``keep`` records."""
    encoder = MessageSetEncoder(magic=1, codec=CODEC_GZIP)
    encoder.add([RecordSpec(i, 1_700_000_000_000, None, b"x") for i in range(200_000)])
    wrapper, _ = encoder.finish()
    assert wrapper is not None
    batch = next(iter(BatchWalk(wrapper)))
    tracemalloc.start()
    try:
        count = sum(1 for _ in all_or_nothing(batch))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert count == 200_000
    assert peak < 12 * 1024 * 1024, f"peak {peak / 2**20:.1f} MiB"
