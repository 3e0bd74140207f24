"""A batch's records only when every one of them decodes: all or none, in bounded memory.

Readers of internal topics (the schema registry's ``_schemas``, ``__consumer_offsets``) skip a
damaged batch whole, as the coordinator or the registry's store would not apply half of one.
Listing the records first gave that for free but held the batch: a V0/V1 wrapper of millions of
tiny messages (or a magic-2 batch of as many records) under the 128 MiB cap became millions of
objects.  Here a batch of more than ``keep`` records is decoded twice instead -- once to raise
what it would raise, keeping nothing, then again as the caller reads -- so memory holds ``keep``
records whatever the batch holds.
"""

from __future__ import annotations

from collections.abc import Iterator
from itertools import chain, islice

from kseg.format import Batch
from kseg.format.compression import DEFAULT_MAX_DECOMPRESSED
from kseg.format.model import Record

#: records held at once; a batch with more is checked in a pass of its own first
KEEP = 4096


def all_or_nothing(batch: Batch, max_decompressed: int = DEFAULT_MAX_DECOMPRESSED,
                   keep: int = KEEP) -> Iterator[Record]:
    """The records of ``batch``; raises (before the first is handed out) whatever any of them raises."""
    records = batch.iter_records(max_decompressed)
    head = list(islice(records, keep))
    if len(head) < keep:
        return iter(head)
    for _ in records:  # every record decoded once, none kept: the errors, before anything is applied
        pass
    return chain(head, islice(batch.iter_records(max_decompressed), keep, None))
