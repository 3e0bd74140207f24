"""``RecordScan.subset`` (kseg grep builds only the matching records of a batch): the same records as the
whole scan's, at those indexes -- headers, offsets, timestamps and sequences included."""

from __future__ import annotations

import random

from kseg.format import RecordSpec, encode_batch
from kseg.format.v2 import V2Batch


def test_subset_records_are_the_whole_scans_at_those_indexes():
    rng = random.Random(28)
    specs = [
        RecordSpec(100 + i, 1_700_000_000_000 + rng.randrange(-5000, 5000), None if i % 7 == 0 else b"k%d" % i,
                   None if i % 11 == 0 else bytes(rng.randrange(256) for _ in range(i % 13)),
                   tuple((b"h%d" % j, None if j == 1 else b"v") for j in range(i % 4)))
        for i in range(60)
    ]
    for codec in ("none", "gzip"):
        batch = V2Batch(encode_batch(specs, codec=codec, producer_id=9, producer_epoch=0, base_sequence=40), 0)
        scan = batch.scan()
        assert scan is not None
        whole = batch.records_from(scan)
        assert whole == list(batch.iter_records())
        for indexes in ([], [0], [59], [3, 4, 5, 30, 58], list(range(0, 60, 3)), list(range(60))):
            assert batch.records_from(scan.subset(indexes)) == [whole[i] for i in indexes]
