"""kseg convert on batches of more records than it reads at a time (``convert_source.CHUNK``).

A batch is read in chunks, encoded through a streaming compressor and split in a
second read (memory stays flat).  Every output batch must still be the
batch ``encode_batch`` builds from its own records and the rule's arguments -- the
bytes of encoding each part at once -- and the cut points those of the greedy rule.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kseg.format import RecordSpec, encode_batch
from kseg.format.compression import codec_id
from kseg.format.model import increment_sequence
from kseg.ops.convert.build import estimate_size, with_last_offset
from kseg.ops.convert.run import ConvertRefused, Target, convert_path
from kseg.ops.convert.source import CHUNK
from kseg.segment import open_segment

TS = 1_700_000_000_000
NAME = "00000000000000000000.log"


def _records(count: int, headers: bool = True) -> list[RecordSpec]:
    return [
        RecordSpec(
            i, TS + (i * 13) % 500, b"k%d" % i if i % 5 else None, (b"value %d " % i) * (1 + i % 9),
            (("trace", b"%d" % i),) if headers and i % 3 == 0 else (),
        )
        for i in range(count)
    ]


def _source(tmp_path: Path, data: bytes) -> Path:
    path = tmp_path / "src-0" / NAME
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


def _output(path: Path) -> list[tuple[object, list]]:
    with open_segment(path) as seg:
        return [(b, list(b.iter_records())) for b in seg.iter_batches()]


def _greedy_parts(specs: list[RecordSpec], magic: int, limit: int, whole_size: int) -> list[tuple[int, int]]:
    """The cut points of the split rule, computed on the whole list as the rule is written."""
    sizes = [estimate_size(s, magic) for s in specs]
    budget = max(1, int(limit * 0.95 / (whole_size / sum(sizes))))
    parts, start, running = [], 0, 0
    for i, size in enumerate(sizes):
        if i > start and running + size > budget:
            parts.append((start, i))
            start, running = i, 0
        running += size
    parts.append((start, len(specs)))
    return parts


@pytest.mark.parametrize(("source_codec", "target_codec"), [("gzip", "none"), ("lz4", "zstd"), ("none", "snappy")])
def test_a_large_idempotent_batch_is_split_as_if_encoded_at_once(tmp_path: Path, source_codec: str, target_codec: str) -> None:
    specs = _records(3 * CHUNK + 123)
    kwargs = {"producer_id": 9, "producer_epoch": 1, "base_sequence": 1000, "partition_leader_epoch": 4}
    src = _source(tmp_path, encode_batch(specs, codec=codec_id(source_codec), **kwargs))
    limit = 40_000
    target = Target(2, codec_id(target_codec), max_message_bytes=limit)
    report = convert_path(src.parent, tmp_path / "out", target)
    out = (tmp_path / "out" / NAME).read_bytes()
    whole = encode_batch(specs, codec=codec_id(target_codec), **kwargs)

    def fit(start: int, end: int) -> bytes:  # the rule as written for a list: encode, halve while too big
        part = encode_batch(
            specs[start:end], codec=codec_id(target_codec), base_offset=start,
            **{**kwargs, "base_sequence": increment_sequence(1000, start)},
        )
        if len(part) <= limit or end - start == 1:
            return part
        middle = (start + end) // 2
        return fit(start, middle) + fit(middle, end)

    assert out == b"".join(fit(start, end) for start, end in _greedy_parts(specs, 2, limit, len(whole)))
    tally = report.segments[0].tally
    assert tally.split == 1 and tally.records_out == len(specs) and tally.bytes_out == len(out)


def test_a_part_still_too_large_is_halved_and_the_last_keeps_the_last_offset(tmp_path: Path) -> None:
    specs = _records(2 * CHUNK + 7, headers=False)
    batch = encode_batch(specs, codec=codec_id("gzip"), base_offset=0)
    src = _source(tmp_path, with_last_offset(batch, len(specs) + 5))  # a cleaned batch: last offset past its records
    report = convert_path(src.parent, tmp_path / "out", Target(2, codec_id("none"), max_message_bytes=2_000))
    got = _output(tmp_path / "out" / NAME)
    assert [r.offset for _, rs in got for r in rs] == [s.offset for s in specs]
    assert all(b.size <= 2_000 for b, _ in got)
    assert got[-1][0].last_offset == len(specs) + 5 and got[0][0].last_offset == got[0][1][-1].offset
    for b, rs in got[:-1]:  # every part but the last is exactly encode_batch of its records
        assert bytes(b.buf[b.position : b.position + b.size]) == encode_batch(
            [RecordSpec(r.offset, r.timestamp, r.key, r.value, r.headers) for r in rs], codec=0
        )
    assert report.segments[0].tally.batches_out == len(got)


def test_a_large_batch_that_fits_is_only_recompressed(tmp_path: Path) -> None:
    specs = _records(2 * CHUNK, headers=False)
    src = _source(tmp_path, encode_batch(specs, codec=codec_id("gzip")))
    report = convert_path(src.parent, tmp_path / "out", Target(2, codec_id("lz4")))
    assert (tmp_path / "out" / NAME).read_bytes() == encode_batch(specs, codec=codec_id("lz4"))
    assert report.segments[0].tally.split == 0


def test_a_large_batch_down_converted_counts_every_chunk(tmp_path: Path) -> None:
    specs = _records(2 * CHUNK + 1)
    src = _source(tmp_path, encode_batch(specs, codec=codec_id("gzip")))
    with pytest.raises(ConvertRefused) as refused:
        convert_path(src.parent, tmp_path / "refused", Target(1))
    assert refused.value.message == (
        "record at offset 0 has 1 header(s) and magic 1 cannot hold headers "
        f"({len([s for s in specs if s.headers])} such record(s) in this batch); --drop-headers drops them"
    )
    report = convert_path(src.parent, tmp_path / "out", Target(1, drop_headers=True))
    dropped = report.segments[0].tally.dropped
    assert dropped.header_records == dropped.headers == len([s for s in specs if s.headers])
    plain = [RecordSpec(s.offset, s.timestamp, s.key, s.value) for s in specs]
    assert (tmp_path / "out" / NAME).read_bytes() == encode_batch(plain, magic=1, codec=codec_id("gzip"))
