"""Bounded memory on hostile input: small versions of bench/bench_memory.py's inputs.

Exact errors and outputs are asserted here; peak RSS only with generous margins,
measured on a child started from a small interpreter (a child forked from
pytest would start with pytest's own peak already counted).
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from kseg.errors import LimitExceeded
from kseg.format import BatchWalk
from kseg.format.compression import CODEC_GZIP, compress, decompress_buffer

ROOT = Path(__file__).resolve().parents[1]


def _bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_memory", ROOT / "bench" / "bench_memory.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


BENCH = _bench()


def _kseg(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "kseg", *args], capture_output=True, text=True, check=False)


def test_decompression_cap_is_a_located_limit_naming_the_option() -> None:
    data = compress(CODEC_GZIP, bytes(1 << 20), magic=2)
    with pytest.raises(LimitExceeded) as caught:
        decompress_buffer(CODEC_GZIP, data, magic=2, max_size=1000)
    assert "exceeds the limit of 1000 bytes" in caught.value.message
    assert "--max-batch-bytes" in caught.value.message
    assert caught.value.__traceback__ is not None and caught.value.__cause__ is None


def test_records_are_read_from_one_map_not_a_copy() -> None:
    out = decompress_buffer(CODEC_GZIP, compress(CODEC_GZIP, b"abc" * 1000, magic=2), magic=2)
    assert len(out) == 3000 and out[:3] == b"abc" and type(out[:3]) is bytes


def test_a_record_with_too_many_headers_is_refused_at_the_cap(tmp_path: Path) -> None:
    path = BENCH.many_headers(tmp_path, 0.02)  # one record, 400 000 headers
    batch = next(iter(BatchWalk(path.read_bytes())))
    with pytest.raises(LimitExceeded) as caught:
        list(batch.iter_records(max_decompressed=1 << 24))
    assert caught.value.field == "record[0].headers"
    assert "record has 400000 headers, more than the 65536" in caught.value.message
    assert "--max-batch-bytes" in caught.value.message
    assert len(list(batch.iter_records())) == 1  # under the default cap it is read


def test_dump_streams_a_large_batch_in_chunks_as_one_json_line(tmp_path: Path) -> None:
    path = BENCH.tiny_records(tmp_path, 0.001)  # 10 000 records in one batch
    done = _kseg("dump", "--format", "json", "--deep-iteration", str(path))
    assert done.returncode == 0, done.stderr
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    batch = lines[-1]
    assert batch["type"] == "batch" and batch["count"] == 10_000
    assert [r["offset"] for r in batch["records"]] == list(range(10_000))
    text = _kseg("dump", "--deep-iteration", str(path))
    assert text.stdout.count("| offset: ") == 10_000


def test_sparse_txnindex_is_summarised(tmp_path: Path) -> None:
    path = BENCH.sparse_txnindex(tmp_path, 34 * (1 << 16) * 3 / (2 << 30))  # three whole steps of zeros
    done = _kseg("dump", str(path))
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[1:] == [
        "version: 0 producerId: 0 firstOffset: 0 lastOffset: 0 lastStableOffset: 0",
        "... and 196607 more entries like it (all-zero slots: kseg summarises them)",
    ]


def test_v1_wrapper_at_the_top_of_the_long_range_wraps_as_java(tmp_path: Path) -> None:
    from kseg.format.v0v1_encode import encode_entry, encode_message

    inner = b"".join(encode_entry(o, encode_message(1, 0, 1000, b"k", b"v")) for o in (5, 0))
    wrapper = encode_entry(2**63 - 1, encode_message(1, 1, 1000, None, compress(1, inner, magic=1)))
    log = tmp_path / "p-0" / "00000000000000000000.log"
    log.parent.mkdir()
    log.write_bytes(wrapper)
    done = _kseg("dump", "--deep-iteration", str(log))
    assert "Traceback" not in done.stderr
    assert "| offset: -9223372036854775804 CreateTime: 1000" in done.stdout
    refused = _kseg("convert", str(log.parent), "-o", str(tmp_path / "out"), "--to-magic", "2")
    assert refused.returncode == 2
    assert ("Maximum offset delta exceeded, base offset: -9223372036854775804, "
            "last offset: 9223372036854775807") in refused.stderr


def test_verify_reports_a_zero_run_of_a_txnindex_once(tmp_path: Path) -> None:
    path = BENCH.sparse_txnindex(tmp_path, 34 * (1 << 16) * 3 / (2 << 30))  # three whole steps of zeros
    done = _kseg("verify", "--format", "json", str(path.parent))
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    found = [f for f in lines if f.get("type") == "finding" and f["path"].endswith(".txnindex")]
    assert len(found) == 1, found
    assert found[0]["kind"] == "txnindex" and found[0]["severity"] == "error"
    assert found[0]["position"] == 0 and found[0]["size"] == 34 * 196608
    assert found[0]["message"].startswith(
        "entries 0..196607: 196608 all-zero entries (bytes 0..6684671), which Kafka reads as aborted")


def test_an_offset_overflow_is_quoted_as_a_java_long(tmp_path: Path) -> None:
    from kseg.format.v2_write import assemble_batch

    body = b"\x00\x00\x00\x01\x00\x00"  # attributes, ts delta, offset delta, key null, value "", no headers
    batch = assemble_batch(
        BENCH._zigzag(len(body)) + body, base_offset=-(2**63), partition_leader_epoch=0, attributes=0,
        last_offset_delta=-1, base_timestamp=1000, max_timestamp=1000, producer_id=-1, producer_epoch=-1,
        base_sequence=-1, records_count=1,
    )
    log = tmp_path / "p-0" / "00000000000000000000.log"
    log.parent.mkdir()
    log.write_bytes(batch)
    done = _kseg("reindex", "--check", str(log.parent))
    assert "offset 9223372036854775807 does not fit a segment with base offset 0" in done.stdout, done.stdout


@pytest.mark.parametrize("name", ["tiny-records", "many-headers", "zero-batches", "sparse-index", "sparse-txnindex"])
def test_peak_rss_stays_bounded(tmp_path: Path, name: str) -> None:
    scale = {"tiny-records": 0.05, "many-headers": 0.2, "zero-batches": 0.5, "sparse-index": 0.25,
             "sparse-txnindex": 0.1}[name]
    path = BENCH.INPUTS[name](tmp_path, scale) if name != "zero-batches" else BENCH.zero_batches(tmp_path, scale, 4)
    for label, argv in BENCH.commands(path, tmp_path / "out").items():
        code, rss, _ = BENCH.measure(argv, 120.0)
        assert code is not None, f"{label} timed out"
        assert rss < 250, f"{label} on {name}: {rss:.0f} MB"


def test_convert_holds_a_chunk_of_a_batch_not_its_records(tmp_path: Path) -> None:
    """300 000 tiny records in one gzip batch, split to 100 kB batches: memory does not grow with the records.

    Holding them (as before the streaming fix) took ~125 MB here (~3.6 GB for the benchmark's 10 M);
    read a chunk at a time, the run stays near the interpreter's own ~30 MB.
    """
    path = BENCH.tiny_records(tmp_path, 0.03)
    out = tmp_path / "out"
    argv = [sys.executable, "-m", "kseg", "convert", str(path.parent), "-o", str(out), "--to-magic", "2",
            "--max-message-bytes", "100000", "--format", "json"]
    code, rss, _ = BENCH.measure(argv, 600.0)
    assert code == 0
    assert rss < 80, f"convert: {rss:.0f} MB"
    done = _kseg("verify", "--deep", "--format", "json", str(out))
    summary = json.loads(done.stdout.splitlines()[-1])
    assert done.returncode == 0 and summary["records"] == 300_000, done.stdout[-500:]
