"""kseg writes, Kafka reads: Kafka must accept every batch kseg's writer makes and decode what kseg wrote.

Every case of ``interop_support.matrix_cases()`` is written twice: by ``kseg.format.encode_batch`` (via
``interop_support.kseg_encode``) and by Kafka's MemoryRecordsBuilder from the same input. Then:

* Kafka's ``ensureValid()`` and ``Record.ensureValid()`` accept every batch and record kseg wrote;
* Kafka's reader reports, for kseg's file, the same batches and records as for its own file (positions,
  sizes and checksums aside where compressed output differs);
* uncompressed batches (V0, V1 and V2, with headers, nulls, gaps, producer fields, LogAppendTime, control
  markers) are byte-identical to Kafka's;
* compressed batches: the bytes around the compressed stream are identical, and so are the format quirks
  kseg emulates -- the gzip header (MTIME 0, XFL 0, OS 255), the lz4 frame header with the magic-0 header
  checksum of KAFKA-3160 and the EndMark, the xerial snappy header, the zstd frame header; the compressed
  blocks themselves may differ (different compressor builds);
* what Kafka's builder refuses, ``encode_batch`` refuses too (EncodeError), with Kafka's words.

One JVM start for the module.
"""

from __future__ import annotations

import struct
from pathlib import Path

import pytest
from interop_support import TS, kseg_encode, matrix_cases
from oracle import make_batch, make_marker_batch, make_record

from kseg.errors import EncodeError
from kseg.format.model import CODEC_NAMES

CASES = matrix_cases()

#: (id, BATCH dict Kafka refuses, Kafka's message if kseg's is the same, else None)
REFUSALS = [
    (
        "zstd-magic0",
        make_batch([make_record(0, TS, b"k", b"v")], magic=0, codec="zstd"),
        "ZStandard compression is not supported for magic 0",
    ),
    (
        "zstd-magic1",
        make_batch([make_record(0, TS, b"k", b"v")], magic=1, codec="zstd"),
        "ZStandard compression is not supported for magic 1",
    ),
    (
        "headers-magic0",
        make_batch([make_record(0, TS, b"k", b"v", [("h", b"x")])], magic=0),
        "Magic v0 does not support record headers",
    ),
    (
        "headers-magic1",
        make_batch([make_record(0, TS, b"k", b"v", [("h", None)])], magic=1, codec="gzip"),
        "Magic v1 does not support record headers",
    ),
    (
        "transactional-magic0",
        make_batch(
            [make_record(0, TS)],
            magic=0,
            is_transactional=True,
            producer_id=1,
            producer_epoch=0,
            base_sequence=0,
        ),
        "Transactional records are not supported for magic 0",
    ),
    (
        "transactional-magic1",
        make_batch(
            [make_record(0, TS)],
            magic=1,
            is_transactional=True,
            producer_id=1,
            producer_epoch=0,
            base_sequence=0,
        ),
        "Transactional records are not supported for magic 1",
    ),
    (
        "control-magic1",
        make_batch([make_record(0, TS)], magic=1, is_control_batch=True),
        "Control records are not supported for magic 1",
    ),
    (
        "idempotent-magic0",
        make_batch([make_record(0, TS)], magic=0, producer_id=5, producer_epoch=0, base_sequence=0),
        "Idempotent messages are not supported for magic 0",
    ),
    (
        "idempotent-magic1",
        make_batch(
            [make_record(0, TS)], magic=1, codec="lz4", producer_id=5, producer_epoch=0, base_sequence=0
        ),
        "Idempotent messages are not supported for magic 1",
    ),
    # Kafka checks the epoch before the magic at close(); kseg refuses on the magic first.
    ("idempotent-no-epoch-magic1", make_batch([make_record(0, TS)], magic=1, producer_id=5), None),
    (
        "delete-horizon-magic1",
        make_batch([make_record(0, TS)], magic=1, delete_horizon_ms=TS),
        "Delete horizon timestamp is not supported for magic 1",
    ),
    (
        "repeated-offset-magic2",
        make_batch([make_record(3, TS), make_record(3, TS)]),
        "Illegal offset 3 following previous offset 3 (Offsets must increase monotonically).",
    ),
    (
        "decreasing-offset-magic2",
        make_batch([make_record(3, TS), make_record(2, TS)], codec="zstd"),
        "Illegal offset 2 following previous offset 3 (Offsets must increase monotonically).",
    ),
    (
        "repeated-offset-magic1",
        make_batch([make_record(3, TS), make_record(3, TS)], magic=1),
        "Illegal offset 3 following previous offset 3 (Offsets must increase monotonically).",
    ),
    (
        "repeated-offset-magic0-gzip",
        make_batch([make_record(3, TS), make_record(3, TS)], magic=0, codec="gzip"),
        "Illegal offset 3 following previous offset 3 (Offsets must increase monotonically).",
    ),
    (
        "negative-timestamp-magic2",
        make_batch([make_record(0, TS), make_record(1, -2)]),
        "Invalid negative timestamp -2",
    ),
    (
        "negative-timestamp-magic1",
        make_batch([make_record(0, -5)], magic=1, codec="snappy"),
        "Invalid negative timestamp -5",
    ),
    ("negative-timestamp-magic0", make_batch([make_record(0, -5)], magic=0), "Invalid negative timestamp -5"),
    (
        "producer-without-epoch",
        make_batch([make_record(0, TS)], producer_id=5, base_sequence=0),
        "Invalid negative producer epoch",
    ),
    (
        "producer-without-sequence",
        make_batch([make_record(0, TS)], producer_id=5, producer_epoch=0),
        "Invalid negative sequence number used",
    ),
    (
        "transactional-without-producer",
        make_batch([make_record(0, TS)], is_transactional=True),
        "Cannot write transactional messages without a valid producer ID",
    ),
    # Kafka's appendEndTxnMarker checks the producer id first; kseg (no marker API) checks the batch.
    ("marker-without-producer", make_marker_batch("COMMIT", 0, TS, producer_id=-1, producer_epoch=0), None),
    (
        "offset-delta-magic2",
        make_batch([make_record(0, TS), make_record(2**31, TS)]),
        "Maximum offset delta exceeded, base offset: 0, last offset: 2147483648",
    ),
    (
        "offset-delta-magic1",
        make_batch([make_record(5, TS)], magic=1, base_offset=5 - 2**31 - 1),
        f"Maximum offset delta exceeded, base offset: {5 - 2**31 - 1}, last offset: 5",
    ),
    (
        "offset-delta-magic0",
        make_batch([make_record(0, TS), make_record(2**40, TS)], magic=0, codec="snappy"),
        f"Maximum offset delta exceeded, base offset: 0, last offset: {2**40}",
    ),
    (
        "gzip-level-10",
        make_batch([make_record(0, TS)], codec="gzip", level=10),
        "gzip doesn't support given compression level: 10",
    ),
    (
        "lz4-level-18",
        make_batch([make_record(0, TS)], codec="lz4", level=18),
        "lz4 doesn't support given compression level: 18",
    ),
    (
        "zstd-level-23",
        make_batch([make_record(0, TS)], codec="zstd", level=23),
        "zstd doesn't support given compression level: 23",
    ),
]


def _kafka_file(directory: Path, name: str) -> Path:
    return directory / f"{name}.kafka.log"


def _kseg_file(directory: Path, name: str) -> Path:
    return directory / f"{name}.kseg.log"


@pytest.fixture(scope="module")
def both(kafka_oracle, tmp_path_factory) -> dict[str, dict]:
    """name -> kseg's batches (bytes), Kafka's batches (bytes) and Kafka's read/validate of both files."""
    directory = tmp_path_factory.mktemp("kseg-written")
    jobs = []
    for name, batches in CASES.items():
        _kseg_file(directory, name).write_bytes(b"".join(kseg_encode(b) for b in batches))
        jobs += [
            {"op": "write", "out": _kafka_file(directory, name), "batches": batches},
            {"op": "read", "in": _kafka_file(directory, name)},
            {"op": "read", "in": _kseg_file(directory, name)},
            {"op": "validate", "in": _kseg_file(directory, name)},
        ]
    jobs += [
        {"op": "write", "out": directory / f"refused-{name}.log", "batches": [batch]}
        for name, batch, _ in REFUSALS
    ]
    results = kafka_oracle.run(jobs)
    out = {}
    for i, (name, batches) in enumerate(CASES.items()):
        written, kafka_read, kseg_read, kseg_validate = results[4 * i : 4 * i + 4]
        assert written["ok"], written
        kafka_bytes = _kafka_file(directory, name).read_bytes()
        starts = [sum(written["batch_sizes"][:j]) for j in range(len(batches) + 1)]
        out[name] = {
            "input": batches,
            "kseg": [kseg_encode(b) for b in batches],
            "kafka": [kafka_bytes[a:b] for a, b in zip(starts, starts[1:])],
            "kafka_read": kafka_read,
            "kseg_read": kseg_read,
            "kseg_validate": kseg_validate,
        }
    out["refusals"] = dict(zip([name for name, _, _ in REFUSALS], results[4 * len(CASES) :]))
    return out


@pytest.mark.parametrize("name", list(CASES))
def test_kafka_validates_what_kseg_writes(both, name):
    """ensureValid() on every batch and Record.ensureValid() on every record: all accepted."""
    case = both[name]
    validated = case["kseg_validate"]
    assert validated["all_valid"] is True, validated
    assert validated["error"] is None and validated["valid_bytes"] == validated["file_size"]
    assert all(b["error"] is None and b["records_error"] is None for b in validated["batches"])
    kafka_counts = [len(b["records"]) for b in case["kafka_read"]["batches"]]
    assert [b["record_count"] for b in validated["batches"]] == kafka_counts


def _content(read: dict, compressed_sizes_may_differ: bool) -> list[dict]:
    """Kafka's read result without what differing compressor output may change."""
    batches = []
    for batch in read["batches"]:
        batch = dict(batch)
        if compressed_sizes_may_differ:
            for field in ("position", "sizeInBytes", "checksum"):
                batch.pop(field)
        batches.append(batch)
    return batches


@pytest.mark.parametrize("name", list(CASES))
def test_kafka_reads_what_kseg_wrote(both, name):
    """Kafka's reader reports the same batches and records for kseg's file as for its own."""
    case = both[name]
    mine, theirs = case["kseg_read"], case["kafka_read"]
    assert mine["error"] is None and mine["valid_bytes"] == mine["file_size"] == sum(map(len, case["kseg"]))
    compressed = any(b.get("codec", "none") != "none" for b in case["input"])
    assert _content(mine, compressed) == _content(theirs, compressed)
    assert all(b["isValid"] for b in mine["batches"])


UNCOMPRESSED = [
    (name, i)
    for name, batches in CASES.items()
    for i, b in enumerate(batches)
    if b.get("codec", "none") == "none"
]
COMPRESSED = [
    (name, i)
    for name, batches in CASES.items()
    for i, b in enumerate(batches)
    if b.get("codec", "none") != "none"
]


def test_every_magic_and_feature_has_an_uncompressed_case():
    """The byte-identity test below really covers V0, V1 and V2 with the features the brief lists."""
    batches = [CASES[name][i] for name, i in UNCOMPRESSED]
    assert {b.get("magic", 2) for b in batches} == {0, 1, 2}
    assert any(
        b.get("timestamp_type") == "LogAppendTime" and b.get("magic", 2) == m for b in batches for m in (1, 2)
    )
    assert any(b.get("end_txn_marker", {}).get("type") == t for b in batches for t in ("COMMIT", "ABORT"))
    assert any(r["headers"] for b in batches for r in b["records"])
    assert any(b.get("producer_id", -1) >= 0 and not b.get("end_txn_marker") for b in batches)
    assert any(b.get("delete_horizon_ms", -1) >= 0 for b in batches)
    assert any(r["key"] is None and r["value"] is None for b in batches for r in b["records"])


@pytest.mark.parametrize("name, index", UNCOMPRESSED)
def test_uncompressed_batches_are_byte_identical(both, name, index):
    case = both[name]
    assert case["kseg"][index] == case["kafka"][index]


def _compressed_region(batch: bytes, magic: int) -> tuple[bytes, bytes]:
    """(bytes before the compressed stream, with the fields that follow its length blanked; the stream)."""
    start = {0: 26, 1: 34}.get(magic, 61)  # V0/V1: the wrapper's value (key null); V2: the records
    head = bytearray(batch[:start])
    head[8:12] = b"...."  # V2 batchLength / V0-V1 message size
    if magic >= 2:
        head[17:21] = b"...."  # V2 crc
    else:
        head[12:16] = b"...."  # V0/V1 crc
        head[start - 4 : start] = b"...."  # the wrapper's value length
    return bytes(head), batch[start:]


def _framing(codec: str, magic: int, stream: bytes) -> tuple[bytes, ...]:
    """The parts of a compressed stream that are format, not compressor output."""
    if codec == "gzip":  # ID1 ID2 CM FLG MTIME(4) XFL OS, and ISIZE (uncompressed length) at the end
        return stream[:10], stream[-4:]
    if codec == "snappy":  # xerial magic, version, compatible version
        return (stream[:16],)
    if codec == "lz4":  # magic, FLG, BD, HC (KAFKA-3160 for magic 0) and the EndMark
        return stream[:7], stream[-4:]
    if codec == "zstd":  # frame magic and frame header descriptor
        return (stream[:5],)
    raise AssertionError(codec)


@pytest.mark.parametrize("name, index", COMPRESSED)
def test_compressed_batch_framing_is_kafkas(both, name, index):
    case = both[name]
    spec = case["input"][index]
    magic, codec = spec.get("magic", 2), spec["codec"]
    mine_head, mine_stream = _compressed_region(case["kseg"][index], magic)
    kafka_head, kafka_stream = _compressed_region(case["kafka"][index], magic)
    assert mine_head == kafka_head
    assert _framing(codec, magic, mine_stream) == _framing(codec, magic, kafka_stream)
    assert CODEC_NAMES[mine_head[22 if magic >= 2 else 17] & 7] == codec  # V2: low byte of the int16


def test_lz4_header_checksum_follows_kafka_3160(both):
    """Magic 0 hashes the frame magic too (HC 0x1a); magic 1 and 2 follow the spec (HC 0x82)."""
    for name, index in COMPRESSED:
        spec = both[name]["input"][index]
        if spec["codec"] != "lz4" or spec.get("level") is not None:
            continue
        magic = spec.get("magic", 2)
        _, stream = _compressed_region(both[name]["kseg"][index], magic)
        assert stream[:7] == bytes.fromhex("04224d18604082" if magic else "04224d1860401a"), (name, index)


@pytest.mark.parametrize("name, batch, message", REFUSALS, ids=[r[0] for r in REFUSALS])
def test_encode_refuses_what_kafka_refuses(both, name, batch, message):
    refused = both["refusals"][name]
    assert refused["ok"] is False and refused["batch_index"] == 0
    assert refused["error"].startswith("IllegalArgumentException: ")
    if message is not None:
        assert refused["error"] == f"IllegalArgumentException: {message}"
    with pytest.raises(EncodeError) as raised:
        kseg_encode(batch)
    if message is not None:
        assert raised.value.message == message


def test_inner_offsets_of_a_v1_wrapper_are_relative_to_the_base_offset(both):
    """The matrix's first batch has base_offset 95 and records from 100: inner offsets 5, 6, ..."""
    from kseg.format import compression

    wrapper = both["m1-gzip-CreateTime"]["kseg"][0]
    assert struct.unpack_from(">q", wrapper)[0] == 300  # the wrapper carries the last offset
    inner = compression.decompress(1, wrapper[34:], magic=1)
    offsets, pos = [], 0
    while pos < len(inner):
        offset, size = struct.unpack_from(">qi", inner, pos)
        offsets.append(offset)
        pos += 12 + size
    assert offsets == [5, 6, 7, 8, 9, 12, 13, 205]
    assert both["m1-gzip-CreateTime"]["kseg_read"]["batches"][0]["baseOffset"] == 100
