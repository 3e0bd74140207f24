"""Shared by the kseg <-> Kafka interop tests: the input matrix, kseg's writer for it, kseg's view of a file.

* :func:`matrix_cases` -- every input the two interop modules write: magic x codec x timestamp type with
  nulls, empties, headers, offset gaps, out-of-order timestamps and values larger than the snappy (32 KiB)
  and lz4 (64 KiB) blocks, plus transactions with COMMIT/ABORT markers, producer sequences that wrap,
  mixed magics in one file, delete horizons and extreme header values. Batches are the oracle's BATCH dicts
  (``oracle.make_batch``), so Kafka's MemoryRecordsBuilder and kseg's ``encode_batch`` get the same input.
* :func:`kseg_encode` -- the same BATCH dict through ``kseg.format.encode_batch``.
* :func:`kseg_read` -- what kseg reports for a file, in the shape of the oracle's ``read`` result
  (Kafka's accessor names), so that a test can compare the two dicts whole and pytest shows the diff.
* :func:`kafka_view` -- the oracle's ``read`` result reduced to what kseg can be asked for.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from oracle import make_batch, make_marker_batch, make_record

from kseg.errors import Corrupt, KsegError
from kseg.format import BAD_SIZE, Batch, BatchWalk, RecordSpec, encode_batch
from kseg.format.control import (
    ABORT,
    COMMIT,
    decode_control_key,
    decode_end_txn_marker,
    encode_control_key,
    encode_end_txn_marker,
)
from kseg.format.model import Record
from kseg.segment import open_segment

TS = 1_700_000_000_000
LOG_APPEND_TIME = TS + 86_400_000
MAGICS = (0, 1, 2)
CODECS = ("none", "gzip", "snappy", "lz4", "zstd")
TIMESTAMP_TYPES = ("CreateTime", "LogAppendTime")
MARKER_TYPE_IDS = {"ABORT": ABORT, "COMMIT": COMMIT}

_rng = random.Random(20240601)
NOISE_70K = _rng.randbytes(70 * 1024)  # incompressible and > 64 KiB: lz4 stores raw blocks, two of them
TEXT_40K = (b"kafka log segment, record batch; " * 1300)[: 40 * 1024]  # compressible, > one snappy block
HEADERS = [
    ("trace-id", b"4bf92f35"),
    ("null-value", None),
    ("", b""),
    ("\u00fcn\u00efcode-\u2603", b"\x00\xff"),
]


def codecs_for(magic: int) -> tuple[str, ...]:
    """The codecs Kafka's builder accepts at ``magic`` (zstd needs magic 2)."""
    return CODECS if magic == 2 else CODECS[:-1]


# --------------------------------------------------------------------------- the input matrix


def _varied_records(first: int, headers: bool) -> list[dict]:
    """Nulls, empties, gaps, a timestamp before the first one, no timestamp, and two big values."""
    h = HEADERS if headers else []
    return [
        make_record(first, TS, b"key-0", b"value-0", h),
        make_record(first + 1, TS + 5, None, b"null key", h[:2]),
        make_record(first + 2, TS - 30_000, b"null value", None),  # negative timestamp delta
        make_record(first + 3, TS + 1, b"", b"", h[2:3]),  # empty key, empty value, empty header
        make_record(first + 4, -1, None, None),  # NO_TIMESTAMP, null key and value
        make_record(first + 7, TS + 2, b"after a gap", TEXT_40K),  # gap inside the batch
        make_record(
            first + 8, TS + 3, b"noise", NOISE_70K, [("dup", b"1"), ("dup", b"2")] if headers else []
        ),
        make_record(first + 200, TS + 4, b"\x00\xff binary", bytes(range(256))),  # offsetDelta > 1 byte
    ]


def _small_records(first: int, headers: bool) -> list[dict]:
    return [
        make_record(first, TS + 10, b"a", b"1", [("h", b"x")] if headers else []),
        make_record(first + 1, TS + 9, None, b"2"),
        make_record(first + 3, TS + 12, b"c", None),
    ]


def _matrix_file(magic: int, codec: str, timestamp_type: str) -> list[dict]:
    """Two batches with an offset gap between them (and before the first record of the first)."""
    headers = magic == 2
    common: dict[str, Any] = {"magic": magic, "codec": codec, "timestamp_type": timestamp_type}
    first: dict[str, Any] = {"base_offset": 95}  # first record at 100: the gap is inside the batch
    second: dict[str, Any] = {}
    if timestamp_type == "LogAppendTime":
        first["log_append_time"] = LOG_APPEND_TIME
        second["log_append_time"] = LOG_APPEND_TIME + 1
    if magic == 2:
        first.update(producer_id=4000, producer_epoch=2, base_sequence=10, partition_leader_epoch=7)
        second.update(partition_leader_epoch=8)
    return [
        make_batch(_varied_records(100, headers), **common, **first),
        make_batch(_small_records(400, headers), **common, **second),
    ]


def _transactions(codec: str) -> list[dict]:
    """Producers 7 and 8 interleaved: 7 commits, 8 aborts, 7's second transaction aborts."""
    p7 = {"producer_id": 7, "producer_epoch": 1, "is_transactional": True, "partition_leader_epoch": 2}
    p8 = {"producer_id": 8, "producer_epoch": 0, "is_transactional": True, "partition_leader_epoch": 2}
    marker_codec = codec if codec == "zstd" else "none"  # brokers write markers uncompressed; try one
    return [
        make_batch(
            [
                make_record(0, TS, b"t7", b"a"),
                make_record(1, TS + 1, b"t7", b"b"),
                make_record(2, TS + 2, None, b"c", [("txn", b"7")]),
            ],
            codec=codec,
            base_sequence=0,
            **p7,
        ),
        make_batch(
            [make_record(3, TS + 3, b"t8", b"d"), make_record(4, TS + 1, b"t8", None)],
            codec=codec,
            base_sequence=0,
            **p8,
        ),
        make_marker_batch(
            "COMMIT", 5, TS + 10, 7, 1, coordinator_epoch=3, partition_leader_epoch=2, codec=marker_codec
        ),
        make_batch(
            [make_record(6, TS + 11, b"t7", b"e"), make_record(7, TS + 12, b"t7", b"f")],
            codec=codec,
            base_sequence=3,
            **p7,
        ),
        make_marker_batch("ABORT", 8, TS + 13, 8, 0, coordinator_epoch=3, partition_leader_epoch=3),
        make_marker_batch("ABORT", 9, TS + 14, 7, 1, coordinator_epoch=2**31 - 1, partition_leader_epoch=3),
    ]


def _sequence_wrap() -> list[dict]:
    """Sequences past Integer.MAX_VALUE wrap to 0, gaps included (sequence = base + offsetDelta)."""
    producer = {"producer_id": 1, "producer_epoch": 0}
    return [
        make_batch([make_record(o, TS + o) for o in (0, 1, 2, 5)], base_sequence=2**31 - 3, **producer),
        make_batch([make_record(6, TS)], base_sequence=2**31 - 1, **producer),
        make_batch([make_record(7, TS), make_record(8, TS)], base_sequence=0, codec="snappy", **producer),
    ]


def _mixed_magics() -> list[dict]:
    """V0, V1 and V2 entries in one file, as after message-format upgrades (and a V0 lz4 wrapper)."""
    return [
        make_batch([make_record(0, TS, b"v0", b"a"), make_record(1, TS, None, b"b")], magic=0),
        make_batch([make_record(2, TS, b"v0", b"gz"), make_record(4, TS, b"", None)], magic=0, codec="gzip"),
        make_batch(
            [make_record(5, TS + 5, b"v1", b"c")],
            magic=1,
            timestamp_type="LogAppendTime",
            log_append_time=LOG_APPEND_TIME,
        ),
        make_batch(
            [make_record(6, TS + 6, b"v1", b"snappy"), make_record(9, TS + 1, None, b"d")],
            magic=1,
            codec="snappy",
        ),
        make_batch([make_record(10, TS, b"v1", b"lz4")], magic=1, codec="lz4"),
        make_batch([make_record(11, TS + 11, b"v2", b"e", [("h", b"v")])], partition_leader_epoch=0),
        make_batch(
            [make_record(12, TS + 12, b"v2", b"zstd"), make_record(14, TS + 2, b"v2", b"f")],
            codec="zstd",
            partition_leader_epoch=1,
        ),
        make_batch(
            [make_record(15, TS, b"v0 again", b"lz4"), make_record(16, TS, b"x", b"y")], magic=0, codec="lz4"
        ),  # magic-0 LZ4 header checksum (KAFKA-3160)
    ]


def _extremes() -> list[dict]:
    """Large ids and epochs, big varints (deltas, lengths, header counts), timestamp 0, a delete horizon."""
    many_headers = [(f"h{i}", bytes([i]) * i) for i in range(70)]
    return [
        make_batch(
            [
                make_record(2**40, TS, b"k", b"v"),
                make_record(2**40 + 100_000, 0, b"k2", b"v" * 300),
                make_record(2**40 + 100_001, TS + 10**10, None, b"w", many_headers),
            ],
            producer_id=2**63 - 1,
            producer_epoch=32767,
            base_sequence=2**31 - 2,
            partition_leader_epoch=2**31 - 1,
        ),
        make_batch([make_record(2**40 + 100_002, TS + 1, b"deleted", None)], delete_horizon_ms=TS + 5000),
        make_batch(
            [make_record(2**40 + 100_003, TS + 2, b"tomb", None), make_record(2**40 + 100_004, TS)],
            codec="gzip",
            delete_horizon_ms=TS - 10,
        ),
        make_batch(
            [make_record(2**40 + 100_005, TS + 3, b"lat", b"v")],
            timestamp_type="LogAppendTime",
            log_append_time=LOG_APPEND_TIME,
            delete_horizon_ms=TS,
        ),
    ]


def _single_records() -> list[dict]:
    """One-record batches of every codec, the smallest possible ones included."""
    batches = [
        make_batch([make_record(i, TS + i, None, None)], codec=codec) for i, codec in enumerate(CODECS)
    ]
    batches += [make_batch([make_record(10 + i, -1, b"", b"")], magic=m) for i, m in enumerate(MAGICS)]
    return batches


def _java_arithmetic() -> list[dict]:
    """Deltas that overflow: Kafka computes them in Java long/int arithmetic, wrapping silently."""
    return [
        make_batch([make_record(0, -1), make_record(1, 2**63 - 1), make_record(2, 0)]),  # delta 2**63
        make_batch([make_record(3, 2**63 - 1), make_record(4, -1, b"k", b"v")], codec="lz4"),
        make_batch([make_record(5, 0)], delete_horizon_ms=2**63 - 1),
        make_batch([make_record(6, TS)], base_offset=2**32 + 6),  # (int) (6 - 2**32 - 6) == 0
        make_batch([make_record(2**63 - 3, TS), make_record(2**63 - 1, TS + 1)], base_offset=-(2**63) + 5),
        make_batch([make_record(7, TS), make_record(7 + 2**31 - 1, TS)], codec="gzip"),  # the largest delta
    ]


def _levels() -> list[dict]:
    """Non-default compression levels (the gzip XFL byte and the lz4/zstd headers must not change)."""
    records = [make_record(0, TS, b"level", TEXT_40K[:5000]), make_record(1, TS + 1, None, NOISE_70K[:3000])]

    def shifted(base: int) -> list[dict]:
        return [{**r, "offset": r["offset"] + base} for r in records]

    settings = [
        (2, "gzip", 1),
        (2, "gzip", 9),
        (2, "lz4", 1),
        (2, "lz4", 17),
        (2, "zstd", -5),
        (2, "zstd", 1),
        (2, "zstd", 19),
        (1, "gzip", 9),
        (1, "lz4", 17),
        (0, "lz4", 1),
    ]
    return [
        make_batch(shifted(2 * i), magic=magic, codec=codec, level=level)
        for i, (magic, codec, level) in enumerate(settings)
    ]


def matrix_cases() -> dict[str, list[dict]]:
    """name -> list of BATCH dicts (one file each); every batch is one Kafka's builder accepts."""
    cases = {
        f"m{magic}-{codec}-{ts_type}": _matrix_file(magic, codec, ts_type)
        for magic in MAGICS
        for codec in codecs_for(magic)
        for ts_type in TIMESTAMP_TYPES
    }
    cases.update({f"txn-{codec}": _transactions(codec) for codec in CODECS})
    cases["sequence-wrap"] = _sequence_wrap()
    cases["mixed-magics"] = _mixed_magics()
    cases["extremes"] = _extremes()
    cases["single-records"] = _single_records()
    cases["levels"] = _levels()
    cases["java-arithmetic"] = _java_arithmetic()
    cases["marker-only"] = [make_marker_batch("COMMIT", 0, TS, 3, 0, coordinator_epoch=0)]
    return cases


# --------------------------------------------------------------------------- kseg's writer on the same input


def _record_spec(record: dict) -> RecordSpec:
    return RecordSpec(
        record["offset"],
        record.get("timestamp", -1),
        record.get("key"),
        record.get("value"),
        tuple((k, v) for k, v in record.get("headers", [])),
    )


def kseg_encode(batch: dict) -> bytes:
    """One BATCH dict through ``kseg.format.encode_batch`` (markers become control records)."""
    specs = [_record_spec(r) for r in batch.get("records", [])]
    marker = batch.get("end_txn_marker")
    if marker is not None:
        offset = marker.get("offset", specs[-1].offset + 1 if specs else batch.get("base_offset", 0))
        specs.append(
            RecordSpec(
                offset,
                marker.get("timestamp", -1),
                encode_control_key(MARKER_TYPE_IDS[marker["type"]]),
                encode_end_txn_marker(marker.get("coordinator_epoch", 0)),
            )
        )
    return encode_batch(
        specs,
        magic=batch.get("magic", 2),
        codec=batch.get("codec", "none"),
        level=batch.get("level"),
        timestamp_type=batch.get("timestamp_type", "CreateTime"),
        log_append_time=batch.get("log_append_time", -1),
        base_offset=batch.get("base_offset"),
        producer_id=batch.get("producer_id", -1),
        producer_epoch=batch.get("producer_epoch", -1),
        base_sequence=batch.get("base_sequence", -1),
        is_transactional=batch.get("is_transactional", False),
        is_control=batch.get("is_control_batch", marker is not None),
        partition_leader_epoch=batch.get("partition_leader_epoch", -1),
        delete_horizon_ms=batch.get("delete_horizon_ms", -1),
    )


# --------------------------------------------------------------------------- kseg's view, Kafka's names


def _error_text(error: BaseException) -> str:
    return error.message if isinstance(error, KsegError) else f"{type(error).__name__}: {error}"


def _fields(getters: dict[str, Callable[[], Any]], errors: dict[str, BaseException]) -> dict[str, Any]:
    """name -> getter(), or None with the exception kept in ``errors`` (as the oracle's field_errors)."""
    out: dict[str, Any] = {}
    for name, getter in getters.items():
        try:
            out[name] = getter()
        except KsegError as error:
            out[name] = None
            errors[name] = error
    return out


def _control_view(record: Record) -> dict[str, Any]:
    """What ControlRecordType.parse / EndTransactionMarker.deserialize report for a control record."""
    try:
        key = decode_control_key(record.key)
        view: dict[str, Any] = {"type": key.name, "typeId": key.raw_type}
        if key.type_id in (ABORT, COMMIT):
            view["coordinatorEpoch"] = decode_end_txn_marker(record.value).coordinator_epoch
    except KsegError as error:
        return {"error": error}
    return view


def record_view(record: Record, control: bool) -> dict[str, Any]:
    """A kseg Record with the oracle's record keys (sizeInBytes excepted: kseg does not keep it)."""
    view: dict[str, Any] = {
        "offset": record.offset,
        "timestamp": record.timestamp,
        "sequence": record.sequence,
        "keySize": record.key_size,
        "valueSize": record.value_size,
        "key": None if record.key is None else bytes(record.key),
        "value": None if record.value is None else bytes(record.value),
        "headers": [
            (bytes(k).decode("utf-8", "replace"), None if v is None else bytes(v)) for k, v in record.headers
        ],
    }
    if record.magic < 2:
        view.update(
            magic=record.magic,
            timestampType=record.timestamp_type,
            isValid=record.valid,
            checksumOrNull=record.crc,
        )
    if control:
        view["control"] = _control_view(record)
    return view


def batch_view(batch: Batch) -> dict[str, Any]:
    """A kseg batch with the oracle's batch keys; records_error / field_errors hold kseg's exceptions."""
    errors: dict[str, BaseException] = {}
    view = {"position": batch.position, "sizeInBytes": batch.size, "magic": batch.magic}
    view.update(
        _fields(
            {
                "baseOffset": lambda: batch.base_offset,
                "lastOffset": lambda: batch.last_offset,
                "countOrNull": lambda: batch.count,
                "compressionType": lambda: batch.codec,
                "timestampType": lambda: batch.timestamp_type,
                "maxTimestamp": lambda: batch.max_timestamp,
                "checksum": lambda: batch.crc,
                "isValid": batch.is_valid,
                "producerId": lambda: batch.producer_id,
                "producerEpoch": lambda: batch.producer_epoch,
                "baseSequence": lambda: batch.base_sequence,
                "lastSequence": lambda: batch.last_sequence,
                "partitionLeaderEpoch": lambda: batch.partition_leader_epoch,
                "isTransactional": lambda: batch.is_transactional,
                "isControlBatch": lambda: batch.is_control,
                "deleteHorizonMs": lambda: batch.delete_horizon_ms,
            },
            errors,
        )
    )
    if errors:
        view["field_errors"] = errors
    records: list[dict] = []
    view["records"], view["records_error"] = records, None
    try:
        for record in batch.iter_records():
            records.append(record_view(record, batch.is_control))
    except KsegError as error:
        view["records_error"] = error
    return view


def kseg_read(path: Path) -> dict[str, Any]:
    """kseg's answer to the oracle's ``read`` job: the walk (non-strict, with its end) and every batch.

    ``error`` is the exception of a strict walk (Kafka's iterator throws where kseg's strict walk does);
    ``end`` is the WalkEnd of the non-strict walk.
    """
    with open_segment(path) as segment:
        walk = BatchWalk(segment.buf, strict=False)
        batches = [batch_view(b) for b in walk]
        end = walk.end
        error = None
        if end.reason == BAD_SIZE:
            try:
                for _ in segment.iter_batches():
                    pass
            except Corrupt as exc:
                error = exc
        return {
            "file_size": segment.size,
            "valid_bytes": end.position,
            "error": error,
            "batches": batches,
            "end": end,
        }


# --------------------------------------------------------------------------- Kafka's view, reduced

_KAFKA_CLASS = re.compile(r"^[A-Za-z]+(Exception|Error): ")
_IN_FILE = re.compile(r" in file .*\.$")


def kafka_message(text: str | None) -> str | None:
    """An exception text from the oracle without the Java class name and the ' in file <path>.' tail."""
    if text is None:
        return None
    return _IN_FILE.sub("", _KAFKA_CLASS.sub("", text))


def kafka_view(read: dict) -> dict[str, Any]:
    """The oracle's read result without what kseg does not report (record sizeInBytes, ok)."""
    batches = []
    for batch in read["batches"]:
        batch = dict(batch)
        batch["records"] = [{k: v for k, v in r.items() if k != "sizeInBytes"} for r in batch["records"]]
        batches.append(batch)
    return {
        "file_size": read["file_size"],
        "valid_bytes": read["valid_bytes"],
        "error": read["error"],
        "batches": batches,
    }


def without_errors(view: dict[str, Any]) -> dict[str, Any]:
    """A read view with error texts/objects replaced by whether there was one, for a whole-dict compare."""
    out = dict(view)
    out.pop("end", None)
    out["error"] = view["error"] is not None
    batches = []
    for batch in view["batches"]:
        batch = dict(batch)
        batch["records_error"] = batch["records_error"] is not None
        if "field_errors" in batch:
            batch["field_errors"] = sorted(batch["field_errors"])
        batch["records"] = [_record_without_errors(r) for r in batch["records"]]
        batches.append(batch)
    out["batches"] = batches
    return out


def _record_without_errors(record: dict) -> dict:
    if "error" in record.get("control", {}):
        return {**record, "control": {"error": True}}
    return record
