"""``kseg stats`` on a partition built batch by batch: every counter has one exact expected value.

The partition (written with kseg's encoder, which writes what Kafka's MemoryRecordsBuilder
writes -- tests/interop prove it) holds: uncompressed and gzip batches, a LogAppendTime batch,
a magic-1 message, an idempotent producer, a committed, an aborted and an open transaction,
tombstones, null keys, headers, a batch over max.message.bytes and one future timestamp.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from logdirs import LogDir

from kseg.format import encode_batch
from kseg.format.control import encode_control_key, encode_end_txn_marker
from kseg.format.model import RecordSpec
from kseg.ops.stats import StatsOptions, collect_stats
from kseg.ops.stats.hll import HyperLogLog
from kseg.render.stats import json_lines, partition_object

NOW = 1_800_000_000_000
T0 = 1_700_000_000_000


def recs(offset: int, n: int, ts: int = T0, key: bytes | None = b"k", value: bytes | None = b"v",
         headers: tuple = ()) -> list[RecordSpec]:
    return [RecordSpec(offset + i, ts + i, key if key is None else key + str(offset + i).encode(), value, headers)
            for i in range(n)]


def marker(offset: int, pid: int, commit: bool) -> bytes:
    record = RecordSpec(offset, T0, encode_control_key(1 if commit else 0), encode_end_txn_marker(3))
    return encode_batch([record], producer_id=pid, producer_epoch=0, is_transactional=True, is_control=True)


@pytest.fixture(scope="module")
def partition(tmp_path_factory: pytest.TempPathFactory) -> Path:
    hdr = (("trace", b"1"), ("user", None))
    seg0 = [
        encode_batch(recs(0, 4)),  # 0-3 keys k0..k3
        encode_batch(recs(4, 6, value=None), codec="gzip"),  # 4-9 tombstones, gzip
        encode_batch(recs(10, 2, key=None, headers=hdr), timestamp_type="LogAppendTime", log_append_time=T0 + 50),
        encode_batch(recs(12, 3), producer_id=5, producer_epoch=0, base_sequence=0),  # idempotent
    ]
    seg1 = [
        encode_batch(recs(15, 2), producer_id=7, producer_epoch=0, base_sequence=0, is_transactional=True),
        marker(17, 7, commit=True),
        encode_batch(recs(18, 1), producer_id=8, producer_epoch=0, base_sequence=0, is_transactional=True),
        marker(19, 8, commit=False),
        encode_batch(recs(20, 1, value=b"x" * 2000)),  # the largest batch, over a 1000-byte max
        encode_batch(recs(21, 1), producer_id=9, producer_epoch=0, base_sequence=0, is_transactional=True),  # open
        encode_batch(recs(22, 1, ts=NOW + 5000)),  # a future timestamp
    ]
    logdir = LogDir(tmp_path_factory.mktemp("counts") / "logs")
    part = logdir.partition("t", 0, {0: seg0, 15: seg1})
    logdir.finish()
    return part.path


def test_every_counter(partition: Path) -> None:
    result = collect_stats([partition], StatsOptions(records=True, now_ms=NOW, max_message_bytes=1000), jobs=1)
    [part] = result.partitions
    obj = partition_object(part, result)
    sizes = [s.log_bytes for s in part.segments]
    assert obj["log_bytes"] == sum(sizes) and obj["tail_bytes"] == 0
    assert obj["bytes"] == sum(f.stat().st_size for f in partition.iterdir())
    assert (obj["segments"], obj["batches"], obj["records"]) == (2, 11, 23)
    assert obj["codecs"] == {"gzip": 1, "none": 10}
    assert obj["magics"] == {"2": 11}
    assert obj["timestamp_types"] == {"CreateTime": 10, "LogAppendTime": 1}
    assert (obj["producers"], obj["transactional_producers"]) == (4, 3)
    assert (obj["idempotent_batches"], obj["transactional_batches"], obj["control_batches"]) == (6, 5, 2)
    assert obj["transactions"] == {"committed": 1, "aborted": 1, "open": 1}
    assert obj["over_max_message_bytes"] == 1 and obj["largest_batch"] > 2000
    assert obj["oldest_timestamp"] == T0  # the markers' maxTimestamp (the first batch's is T0 + 3)
    assert obj["newest_timestamp"] == NOW + 5000
    assert (obj["future_batches"], obj["future_segments"]) == (1, [15])
    assert (obj["tombstones"], obj["null_keys"]) == (6, 2)
    assert obj["header_keys"] == {"trace": 2, "user": 2}
    assert obj["distinct_keys"] == 19  # k0..k22 but two null keys and two control records (not data)
    assert obj["scanned_batches"] == 9 and obj["scanned_records"] == 21
    assert obj["largest_record"] == 3 + 2000  # key "k20" + value
    plain, gzipped = encode_batch(recs(4, 6, value=None)), encode_batch(recs(4, 6, value=None), codec="gzip")
    assert obj["compression_ratio"] == round(len(plain) / len(gzipped), 3)  # the one compressed batch
    assert (obj["log_start_offset"], obj["log_end_offset"]) == (0, 23)
    held = obj["retention"]["held"]
    assert obj["retention"]["deletes"] == [{"base_offset": 0, "bytes": sizes[0], "by": "time"}]
    assert held[0]["base_offset"] == 15 and held[0]["why"].startswith("future timestamp")


def test_sample_reads_one_batch_in_n(partition: Path) -> None:
    result = collect_stats([partition], StatsOptions(records=True, sample=3, now_ms=NOW), jobs=1)
    obj = json.loads(next(json_lines(result)))
    assert obj["sample"] == 3
    assert obj["scanned_batches"] == 4  # batches 1, 4, 7 and 10 of the 11 (all data batches)


def test_header_only_by_default(partition: Path) -> None:
    obj = json.loads(next(json_lines(collect_stats([partition], StatsOptions(now_ms=NOW), jobs=1))))
    assert "tombstones" not in obj and "distinct_keys" not in obj
    assert obj["transactions"] == {"committed": 1, "aborted": 1, "open": 1}


@pytest.mark.parametrize("n", [1, 100, 3000, 50_000])
def test_hyperloglog_bounded_error(n: int) -> None:
    sketch = HyperLogLog()
    for i in range(n):
        sketch.add(f"key-{i}".encode())
    assert len(sketch.registers) == 4096
    assert abs(sketch.estimate() - n) <= max(1, 0.05 * n)
    half, other = HyperLogLog(), HyperLogLog()
    for i in range(n):
        (half if i % 2 else other).add(f"key-{i}".encode())
    half.merge(other)
    assert half.estimate() == sketch.estimate()


def test_memory_stays_flat(tmp_path: Path) -> None:
    """A 96 MiB partition: the header walk gives the pages back behind it, so the resident set stays
    below the file (a walk that kept them would not)."""
    import os
    import subprocess
    import sys

    part = tmp_path / "big-0"
    part.mkdir()
    with (part / "00000000000000000000.log").open("wb") as out:
        for o in range(96 * 2**20 // 16_100):
            out.write(encode_batch([RecordSpec(o, T0 + o, None, bytes(16_000))], base_offset=o))
    code = (
        "from pathlib import Path\n"
        "from kseg.ops.stats import StatsOptions, collect_stats\n"
        f"result = collect_stats([Path({str(part)!r})], StatsOptions(now_ms={NOW}), jobs=1)\n"
        "assert result.partitions[0].tally.batches > 6000\n"
        "status = dict(l.split(':', 1) for l in open('/proc/self/status'))\n"
        "print(int(status['VmHWM'].split()[0]))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=dict(os.environ),
                          check=True)
    assert int(done.stdout) < 90 * 1024  # KiB; the file alone is 96 MiB


def test_a_segment_named_alone(partition: Path) -> None:
    """A ``.log`` named on the command line: that segment's numbers and files, and no forecast."""
    log = partition / "00000000000000000015.log"
    [part] = collect_stats([log], StatsOptions(now_ms=NOW), jobs=1).partitions
    assert (part.whole, part.tally.segments, part.tally.batches, part.tally.records) == (False, 1, 7, 8)
    assert part.tally.bytes == sum(f.stat().st_size for f in partition.iterdir() if f.name.startswith(log.name[:20]))
    assert part.tally.log_bytes == log.stat().st_size
    obj = json.loads(next(json_lines(collect_stats([log], StatsOptions(now_ms=NOW), jobs=1))))
    assert obj["retention"] is None and obj["whole"] is False


def test_a_file_that_is_no_segment_is_refused(partition: Path) -> None:
    import os
    import subprocess
    import sys

    from support import REPO

    index = partition / "00000000000000000015.index"
    proc = subprocess.run([sys.executable, "-m", "kseg", "stats", str(index)], capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(REPO)})
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert proc.stderr == f"kseg: error: {index}: not a segment .log, partition or log directory\n"
