"""Kafka writes, kseg reads: kseg must decode exactly what Kafka's own FileRecords reader reports.

Kafka's MemoryRecordsBuilder writes every case of ``interop_support.matrix_cases()`` (magic x codec x
timestamp type, headers, nulls, empties, gaps, out-of-order timestamps, values crossing the snappy and
lz4 block sizes, idempotent and transactional batches with COMMIT/ABORT markers, sequence wrap, mixed
magics, delete horizons, levels); Kafka's reader reports every batch and record; kseg must report the
same, field by field (``interop_support.kseg_read`` puts kseg's answers under Kafka's accessor names).

Then the Kafka-written files are damaged (truncated, bit-flipped with and without a fixed CRC, size
fields below 14 and below the V2 header, counts, magics, garbage in and recompression of compressed
payloads) and kseg must stop its walk where Kafka's reader stops, agree with ``isValid``/``ensureValid``
on every batch, and fail record iteration where Kafka's fails. The few places where kseg answers
differently on damaged input are listed in ``ALLOWED_DIFFERENCES`` and each is checked precisely.

Two JVM starts for the module: one writes and reads the matrix, one reads and validates the damage.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from interop_support import (
    HEADERS,
    LOG_APPEND_TIME,
    TS,
    kafka_message,
    kafka_view,
    kseg_read,
    matrix_cases,
    without_errors,
)

from kseg.errors import CodecError, Corrupt, KsegError
from kseg.format import BAD_SIZE, END_OF_DATA, BatchWalk, compression
from kseg.format.crc import crc32, crc32c
from kseg.format.model import CODEC_NAMES

CASES = matrix_cases()

#: Where kseg's answer differs from Kafka's on damaged input, by design (each is asserted below):
ALLOWED_DIFFERENCES = """
* codec id 5-7: Kafka's compressionType() throws "Unknown compression type id: N"; kseg says "unknown(N)".
* a V2 batch shorter than its 61-byte header: Kafka's producerId/producerEpoch/baseSequence/lastSequence/
  deleteHorizonMs throw IndexOutOfBounds; kseg reads the header bytes that follow (the batch is invalid
  either way, and kseg refuses its records as Kafka does).
* V0/V1 key or value lengths past the message end: Kafka yields the record and its key()/value()/
  keySize()/valueSize() throw; kseg's iteration raises at that record.
* kseg decompresses a payload whole (checking the codec's own trailer) before decoding records; Kafka
  streams, so on a payload with two faults Kafka may name the record error and kseg the codec error,
  and Kafka may yield records that precede the damage.
"""


# --------------------------------------------------------------------------- Kafka writes the matrix


@pytest.fixture(scope="module")
def written(kafka_oracle, tmp_path_factory) -> dict[str, tuple[Path, dict, dict]]:
    """name -> (path, Kafka's write result, Kafka's read result); one JVM for all of them."""
    directory = tmp_path_factory.mktemp("kafka-written")
    jobs = []
    for name, batches in CASES.items():
        path = directory / f"{name}.log"
        jobs += [{"op": "write", "out": path, "batches": batches}, {"op": "read", "in": path}]
    results = kafka_oracle.run(jobs)
    return {
        name: (directory / f"{name}.log", results[2 * i], results[2 * i + 1]) for i, name in enumerate(CASES)
    }


@pytest.mark.parametrize("name", list(CASES))
def test_kafka_accepts_every_case(written, name):
    path, write, read = written[name]
    assert write["ok"], write
    assert write["size"] == path.stat().st_size == read["file_size"] == read["valid_bytes"] > 0
    assert read["error"] is None
    assert all(
        b["isValid"] and b["records_error"] is None and "field_errors" not in b for b in read["batches"]
    )


@pytest.mark.parametrize("name", list(CASES))
def test_kseg_reads_what_kafka_reads(written, name):
    """Every batch field and every record field, compared as one dict (pytest shows the diff)."""
    path, _, read = written[name]
    mine = kseg_read(path)
    assert mine["end"].reason == END_OF_DATA and mine["end"].remaining == 0
    assert mine["error"] is None
    assert all(b["records_error"] is None and "field_errors" not in b for b in mine["batches"])
    assert without_errors(mine) == without_errors(kafka_view(read))


@pytest.mark.parametrize("name", [n for n in CASES if n.startswith("m2-")])
def test_v2_records_carry_the_batch_timestamp_type(written, name):
    """Kafka's V2 records have no timestamp type of their own: kseg gives each its batch's."""
    path, _, _ = written[name]
    data = path.read_bytes()
    for batch in BatchWalk(data):
        assert {r.timestamp_type for r in batch.iter_records()} == {batch.timestamp_type}


def test_the_matrix_holds_what_it_claims(written):
    """Guards the inputs: the interesting shapes really are in the files (read back by Kafka)."""
    records = {
        name: [r for b in read["batches"] for r in b["records"]] for name, (_, _, read) in written.items()
    }
    lat = [r["timestamp"] for r in records["m1-gzip-LogAppendTime"][:8]]
    assert lat == [LOG_APPEND_TIME] * 8
    create = [r["timestamp"] for r in records["m2-none-CreateTime"][:3]]
    assert create == [TS, TS + 5, TS - 30_000]  # a negative timestamp delta
    assert [r["offset"] for r in records["m2-zstd-CreateTime"]] == [
        100,
        101,
        102,
        103,
        104,
        107,
        108,
        300,
        400,
        401,
        403,
    ]
    assert records["m2-lz4-CreateTime"][0]["headers"] == HEADERS
    assert max(r["valueSize"] for r in records["m2-snappy-CreateTime"]) > 64 * 1024
    txn = written["txn-none"][2]["batches"]
    markers = [(b["baseOffset"], r["control"]) for b in txn for r in b["records"] if "control" in r]
    assert markers == [
        (5, {"type": "COMMIT", "typeId": 1, "coordinatorEpoch": 3}),
        (8, {"type": "ABORT", "typeId": 0, "coordinatorEpoch": 3}),
        (9, {"type": "ABORT", "typeId": 0, "coordinatorEpoch": 2**31 - 1}),
    ]
    wrap = written["sequence-wrap"][2]["batches"][0]
    assert [r["sequence"] for r in wrap["records"]] == [2**31 - 3, 2**31 - 2, 2**31 - 1, 2]
    assert wrap["lastSequence"] == 2
    magics = [b["magic"] for b in written["mixed-magics"][2]["batches"]]
    assert magics == [0, 0, 0, 1, 1, 1, 2, 2, 0]  # uncompressed V0: one entry per record
    horizons = [b["deleteHorizonMs"] for b in written["extremes"][2]["batches"]]
    assert horizons == [None, TS + 5000, TS - 10, TS]


# --------------------------------------------------------------------------- damage


def _payload_start(position: int, magic: int) -> int:
    """Where the records (V2) or the wrapper's value (V0/V1, key null) start."""
    return position + {0: 26, 1: 34}.get(magic, 61)


def _fix_crc(data: bytearray, position: int, size: int, magic: int) -> None:
    if magic >= 2:
        struct.pack_into(">I", data, position + 17, crc32c(bytes(data[position + 21 : position + size])))
    else:
        struct.pack_into(">I", data, position + 12, crc32(bytes(data[position + 16 : position + size])))


def _patched(data: bytes, at: int, fmt: str, value: int) -> bytes:
    out = bytearray(data)
    struct.pack_into(fmt, out, at, value)
    return bytes(out)


def _flipped(data: bytes, at: int, bit: int, fix: tuple[int, int, int] | None) -> bytes:
    out = bytearray(data)
    out[at] ^= 1 << bit
    if fix:
        _fix_crc(out, *fix)
    return bytes(out)


def _recompressed(data: bytes, batch: dict, mutate: Callable[[bytearray], bytes]) -> bytes:
    """Decompress a batch's payload, change it, compress it again with the same codec; fix sizes and CRC."""
    position, size, magic = batch["position"], batch["sizeInBytes"], batch["magic"]
    codec = CODEC_NAMES.index(batch["compressionType"])
    start = _payload_start(position, magic)
    plain = compression.decompress(codec, data[start : position + size], magic=magic)
    payload = compression.compress(codec, mutate(bytearray(plain)), magic=magic)
    head = bytearray(data[position:start])
    if magic < 2:
        struct.pack_into(">i", head, start - position - 4, len(payload))  # the wrapper's value length
    entry = head + payload
    struct.pack_into(">i", entry, 8, len(entry) - 12)
    _fix_crc(entry, 0, len(entry), magic)
    return data[:position] + bytes(entry) + data[position + size :]


def _first_inner_size_13(inner: bytearray) -> bytes:
    struct.pack_into(">i", inner, 8, 13)
    return bytes(inner)


def _first_inner_compressed(inner: bytearray) -> bytes:
    inner[17] |= 1  # attributes of the first inner message: gzip
    return bytes(inner)


def _truncations(name: str, data: bytes, batches: list[dict]) -> Iterator[tuple[str, bytes]]:
    cuts = {0, 10, 17, 18, len(data) - 1}
    for b in batches:
        p, s = b["position"], b["sizeInBytes"]
        cuts |= {p + 17, p + 18, p + s // 2, p + s - 1}
    for cut in sorted(c for c in cuts if 0 <= c < len(data)):
        yield f"{name}-cut{cut}", data[:cut]


def _batch_damage(name: str, data: bytes, i: int, b: dict) -> Iterator[tuple[str, bytes]]:
    p, s, m = b["position"], b["sizeInBytes"], b["magic"]
    tag = f"{name}-b{i}"
    for size in (0, 13, 14, 20, 48, -1, 2**31 - 1):  # < 14: Kafka throws; < 49: shorter than a V2 header
        yield f"{tag}-size{size}", _patched(data, p + 8, ">i", size)
    spots = {
        "crc": p + (17 if m == 2 else 12),
        "attributes": p + (21 if m == 2 else 17),
        "payload0": _payload_start(p, m),
        "payload-mid": (_payload_start(p, m) + p + s) // 2,
        "last": p + s - 1,
    }
    if m == 2:
        spots.update(
            {
                "last-offset-delta": p + 26,
                "base-timestamp": p + 34,
                "base-sequence": p + 56,
                "records-count": p + 60,
            }
        )
    for what, at in spots.items():
        if at >= p + s:
            continue
        for bit in (0, 7):
            yield f"{tag}-flip-{what}-bit{bit}", _flipped(data, at, bit, None)
            if what != "crc":  # the same damage with a matching CRC: only record decoding can see it
                yield f"{tag}-flip-{what}-bit{bit}-crc-fixed", _flipped(data, at, bit, (p, s, m))
    if m == 2:
        count = b["countOrNull"]
        for label, new in (("negative", -1), ("plus1", count + 1), ("minus1", count - 1)):
            out = bytearray(_patched(data, p + 57, ">i", new))
            _fix_crc(out, p, s, m)
            yield f"{tag}-count-{label}", bytes(out)
    if b["compressionType"] != "none":
        mid = (_payload_start(p, m) + p + s) // 2
        for fixed in (False, True):
            out = bytearray(data)
            out[mid - 4 : mid + 4] = b"\xa5" * 8
            if fixed:
                _fix_crc(out, p, s, m)
            yield f"{tag}-payload-garbage{'-crc-fixed' if fixed else ''}", bytes(out)
        yield from _recompressions(tag, data, b)
    for magic in {0, 1, 2, 3, -1} - {m}:
        yield f"{tag}-magic{magic}", _patched(data, p + 16, ">b", magic)
    if m == 1 and b["compressionType"] != "none":
        yield f"{tag}-wrapper-offset-1", _patched(data, p, ">q", 1)  # < last inner offset, not 0
        yield f"{tag}-wrapper-offset-0", _patched(data, p, ">q", 0)  # librdkafka's "base 0"


def _recompressions(tag: str, data: bytes, b: dict) -> Iterator[tuple[str, bytes]]:
    """Damage inside a compressed payload that still decompresses (Kafka's record-level errors)."""
    if b["magic"] < 2:
        yield f"{tag}-inner-size13", _recompressed(data, b, _first_inner_size_13)
        yield f"{tag}-inner-compressed", _recompressed(data, b, _first_inner_compressed)
        yield f"{tag}-inner-empty", _recompressed(data, b, lambda inner: b"")
        yield f"{tag}-inner-cut", _recompressed(data, b, lambda inner: bytes(inner[:-5]))
    else:
        yield f"{tag}-records-cut", _recompressed(data, b, lambda records: bytes(records[:-3]))
        yield f"{tag}-records-extra", _recompressed(data, b, lambda records: bytes(records) + b"\0\0")
        yield f"{tag}-records-negative-length", _recompressed(data, b, lambda r: b"\x01" + bytes(r[1:]))


DAMAGE_BASES = (
    "mixed-magics",
    "txn-none",
    "txn-gzip",
    "sequence-wrap",
    "single-records",
    "m1-lz4-CreateTime",
)


@dataclass
class Damaged:
    path: Path
    read: dict
    validate: dict


@pytest.fixture(scope="module")
def damaged(kafka_oracle, written, tmp_path_factory) -> dict[str, Damaged]:
    """Every damaged variant of DAMAGE_BASES, read and validated by Kafka in one JVM."""
    directory = tmp_path_factory.mktemp("damaged")
    variants: dict[str, Path] = {}
    for base in DAMAGE_BASES:
        path, _, read = written[base]
        data = path.read_bytes()
        damage = list(_truncations(base, data, read["batches"]))
        for i, batch in enumerate(read["batches"]):
            damage += _batch_damage(base, data, i, batch)
        for name, content in damage:
            variants[name] = directory / f"{name}.log"
            variants[name].write_bytes(content)
    jobs = [{"op": op, "in": path} for path in variants.values() for op in ("read", "validate")]
    results = kafka_oracle.run(jobs)
    return {
        name: Damaged(path, results[2 * i], results[2 * i + 1])
        for i, (name, path) in enumerate(variants.items())
    }


def test_damage_covers_kafkas_failure_modes(damaged):
    """The damage set provokes each of Kafka's reader failures that the brief names (and more)."""
    walk_errors = {kafka_message(d.read["error"]) for d in damaged.values() if d.read["error"]}
    assert any(
        e.startswith("Found record size 0 smaller than minimum record overhead (14)") for e in walk_errors
    )
    assert any(
        d.read["valid_bytes"] < d.read["file_size"] and d.read["error"] is None for d in damaged.values()
    )
    record_errors = {
        kafka_message(b["records_error"])
        for d in damaged.values()
        for b in d.read["batches"]
        if b["records_error"]
    }
    assert any(
        "Found invalid record structure; caused by IllegalArgumentException: Varint is too long" in e
        for d in damaged.values()
        for b in d.read["batches"]
        for e in [b["records_error"] or ""]
    )
    for expected in (
        "Found invalid record count -1 in magic v2 batch",
        "Incorrect declared batch size, premature EOF reached",
        "Incorrect declared batch size, records still remaining in file",
        "Record size is less than the minimum record overhead (14)",
        "Inner messages must not be compressed",
        "Found invalid compressed record set with no inner records",
        "Invalid record size: expected to read -10 bytes in record payload, but instead read 9",
        "Found invalid wrapper offset in compressed v1 message set",
    ):
        assert any(e.startswith(expected) for e in record_errors), expected
    assert sum(1 for d in damaged.values() for b in d.read["batches"] if not b["isValid"]) > 500
    assert len(damaged) > 1500


def test_damaged_walk_stops_where_kafka_stops(damaged):
    """Batch positions, valid_bytes, file_size, and the walk error of a size field below 14."""
    mismatches = []
    for name, d in damaged.items():
        mine = kseg_read(d.path)
        theirs = d.read
        got = (
            [b["position"] for b in mine["batches"]],
            mine["valid_bytes"],
            mine["file_size"],
            kafka_message(None if mine["error"] is None else mine["error"].message),
        )
        want = (
            [b["position"] for b in theirs["batches"]],
            theirs["valid_bytes"],
            theirs["file_size"],
            kafka_message(theirs["error"]),
        )
        if got != want:
            mismatches.append((name, got, want))
        if (mine["end"].reason == BAD_SIZE) != (theirs["error"] is not None):
            mismatches.append((name, mine["end"], theirs["error"]))
        if mine["end"].position + mine["end"].remaining != theirs["file_size"]:
            mismatches.append((name, mine["end"], theirs["file_size"]))
    assert mismatches == []


def test_damaged_is_valid_and_ensure_valid_agree_with_kafka(damaged):
    """isValid() for every batch, and ensureValid()'s exact message (None when Kafka accepts)."""
    mismatches = []
    for name, d in damaged.items():
        batches = list(BatchWalk(d.path.read_bytes(), strict=False))
        assert len(batches) == len(d.validate["batches"]) == len(d.read["batches"]), name
        for batch, checked, read in zip(batches, d.validate["batches"], d.read["batches"]):
            try:
                batch.ensure_valid()
                message = None
            except KsegError as error:
                message = error.message
            if (batch.is_valid(), message) != (read["isValid"], kafka_message(checked["error"])):
                mismatches.append(
                    (name, batch.position, batch.is_valid(), message, read["isValid"], checked["error"])
                )
    assert mismatches == []


def _short_v2(batch: dict) -> bool:
    return batch["magic"] >= 2 and batch["sizeInBytes"] < 61


def _field_difference_allowed(field: str, mine: dict, theirs: dict) -> bool:
    """The two header-field differences of ALLOWED_DIFFERENCES, checked exactly."""
    error = theirs.get("field_errors", {}).get(field)
    if error is None or field in mine.get("field_errors", {}):
        return False
    if field == "compressionType":
        return kafka_message(
            error
        ) == f"Unknown compression type id: {mine['compressionType'][8:-1]}" and mine[
            "compressionType"
        ].startswith("unknown(")
    short_header_fields = ("producerId", "producerEpoch", "baseSequence", "lastSequence", "deleteHorizonMs")
    return (
        field in short_header_fields
        and error == "IndexOutOfBoundsException: null"
        and _short_v2(theirs)
        and mine["isValid"] is False
    )


def test_damaged_batch_fields_match_kafka(damaged):
    mismatches = []
    for name, d in damaged.items():
        for mine, theirs in zip(kseg_read(d.path)["batches"], d.read["batches"]):
            for field, value in theirs.items():
                if field in ("records", "records_error", "field_errors"):
                    continue
                kseg_failed = field in mine.get("field_errors", {})
                kafka_failed = field in theirs.get("field_errors", {})
                if (kseg_failed, mine[field]) == (kafka_failed, value):
                    continue
                if not _field_difference_allowed(field, mine, theirs):
                    mismatches.append(
                        (
                            name,
                            mine["position"],
                            field,
                            mine[field],
                            value,
                            mine.get("field_errors", {}).get(field),
                            theirs.get("field_errors", {}).get(field),
                        )
                    )
    assert mismatches == []


LEGACY_LAZY_FIELDS = {"key", "keySize", "value", "valueSize"}


def _records_agree(mine: dict, theirs: dict) -> str | None:
    """None when kseg's records and record error agree with Kafka's for one batch, else why not."""
    kafka_records = [{k: v for k, v in r.items() if k != "sizeInBytes"} for r in theirs["records"]]
    mine_records, error = mine["records"], mine["records_error"]
    if theirs["records_error"] is None and error is None:
        return None if mine_records == kafka_records else "records differ"
    if error is None:
        return f"Kafka fails ({theirs['records_error']}), kseg does not"
    if (
        not theirs["position"]
        <= (error.offset if error.offset is not None else -1)
        <= theirs["position"] + theirs["sizeInBytes"]
    ):
        return f"kseg's error is not located inside the batch: {error!r} at {error.offset}"
    if theirs["records_error"] is None:  # legacy: Kafka's lazy key/value accessors throw instead
        at = len(mine_records)
        if (
            mine["magic"] < 2
            and at < len(kafka_records)
            and mine_records == kafka_records[:at]
            and set(kafka_records[at].get("field_errors", {})) <= LEGACY_LAZY_FIELDS
            and kafka_records[at].get("field_errors")
        ):
            return None
        return f"kseg fails ({error.message}), Kafka does not"
    common = min(len(mine_records), len(kafka_records))
    if mine_records[:common] != kafka_records[:common]:
        return "records before the error differ"
    if isinstance(error, CodecError) and mine["compressionType"] != "none":
        return None  # kseg checks the whole compressed stream first (ALLOWED_DIFFERENCES)
    return _messages_agree(error, theirs["records_error"], theirs)


def _messages_agree(error: KsegError, kafka_text: str, theirs: dict) -> str | None:
    """Kafka's own record errors must read the same in kseg; other Java exceptions only need a KsegError."""
    kafka_class = kafka_text.split(":", 1)[0]
    expected = kafka_message(kafka_text).split("; caused by ")[0]
    if kafka_class in ("InvalidRecordException", "CorruptRecordException"):
        if not error.message.startswith(expected):
            return f"{error.message!r} is not Kafka's {expected!r}"
        cause = kafka_text.split("; caused by IllegalArgumentException: ")[-1]
        if expected == "Found invalid record structure" and cause.startswith(
            ("Varint is too long", "Varlong is too long")
        ):
            return (
                None if f"({cause})" in error.message else f"{error.message!r} lacks Kafka's cause {cause!r}"
            )
        return None
    if kafka_class == "IndexOutOfBoundsException" and _short_v2(theirs):
        return None if error.message.startswith("Record batch is corrupt (the size ") else error.message
    if kafka_class in ("KafkaException", "NegativeArraySizeException"):  # Kafka's decompressor failed
        return None if isinstance(error, (CodecError, Corrupt)) else f"{error!r} for {kafka_text}"
    return None  # IndexOutOfBounds / IllegalArgument from a damaged legacy header: any located KsegError


def test_damaged_records_match_kafka(damaged):
    """Records are equal where both decode; kseg raises a located KsegError where Kafka's iteration fails."""
    mismatches = []
    for name, d in damaged.items():
        for mine, theirs in zip(kseg_read(d.path)["batches"], d.read["batches"]):
            why = _records_agree(mine, theirs)
            if why is not None:
                mismatches.append((name, mine["position"], why))
    assert mismatches == []


@pytest.mark.parametrize(
    "name, expected",
    [
        ("txn-none-b0-count-negative", "Found invalid record count -1 in magic v2 batch"),
        ("txn-none-b0-count-plus1", "Incorrect declared batch size, premature EOF reached"),
        ("txn-none-b0-count-minus1", "Incorrect declared batch size, records still remaining in file"),
        ("txn-gzip-b0-records-extra", "Incorrect declared batch size, records still remaining in file"),
        ("mixed-magics-b2-inner-size13", "Record size is less than the minimum record overhead (14)"),
        ("mixed-magics-b4-inner-size13", "Record size is less than the minimum record overhead (14)"),
        ("mixed-magics-b5-inner-compressed", "Inner messages must not be compressed"),
        ("mixed-magics-b8-inner-empty", "Found invalid compressed record set with no inner records"),
        (
            "txn-none-b0-flip-payload0-bit0-crc-fixed",
            "Invalid record size: expected to read -10 bytes in record payload, but instead read 9",
        ),
        ("txn-gzip-b0-records-negative-length", "Incorrect declared batch size, premature EOF reached"),
        (
            "mixed-magics-b4-wrapper-offset-1",
            "Found invalid wrapper offset in compressed v1 message set, wrapper offset '1' is less than "
            "the last inner message offset '3' and it is not zero.",
        ),
    ],
)
def test_kafkas_record_error_messages(damaged, name, expected):
    """Kafka's exact words for the record errors a forensic user meets most, batch by batch."""
    d = damaged[name]
    failing = [b for b in d.read["batches"] if b["records_error"]]
    assert len(failing) == 1 and kafka_message(failing[0]["records_error"]).startswith(expected)
    batch = next(b for b in BatchWalk(d.path.read_bytes()) if b.position == failing[0]["position"])
    with pytest.raises(KsegError) as raised:
        list(batch.iter_records())
    assert raised.value.message.startswith(expected)
    assert batch.position <= raised.value.offset <= batch.position + batch.size


def test_size_below_14_raises_kafkas_message(damaged):
    d = damaged["txn-none-b2-size0"]
    position = d.read["valid_bytes"]
    assert kafka_message(d.read["error"]) == "Found record size 0 smaller than minimum record overhead (14)"
    with pytest.raises(Corrupt) as raised:
        list(BatchWalk(d.path.read_bytes(), strict=True))
    assert raised.value.message == "Found record size 0 smaller than minimum record overhead (14)"
    assert raised.value.offset == position + 8
