"""verify on .log bytes: every injected corruption is found, at the position of the batch at fault.

The walk is run in memory (``LogWalk`` over bytes) so the exhaustive matrices
-- every bit of every CRC-covered byte, every truncation point -- stay fast.
"""

from __future__ import annotations

import struct
import zlib

import pytest

from kseg.format import RecordSpec, encode_batch
from kseg.format.compression import compress
from kseg.format.control import COMMIT, encode_control_key, encode_end_txn_marker
from kseg.format.crc import crc32c
from kseg.format.v0v1_encode import encode_entry, encode_message
from kseg.ops.verify.log_walk import LogWalk

TS = 1_700_000_000_000


def batches(n: int = 3, per: int = 2, value_size: int = 12) -> list[bytes]:
    return [
        encode_batch([RecordSpec(i * per + j, TS + i, b"k", b"v" * value_size) for j in range(per)])
        for i in range(n)
    ]


def starts(parts: list[bytes]) -> list[int]:
    out, pos = [], 0
    for part in parts:
        out.append(pos)
        pos += len(part)
    return out


def walk(data: bytes, name_base: int | None = 0, deep: bool = False) -> LogWalk:
    result = LogWalk("seg.log", data, name_base=name_base, deep=deep).run()
    result.close()
    return result


def found(data: bytes, **kw) -> list[tuple]:
    return [(f.kind, f.severity, f.position, f.offset) for f in walk(data, **kw).findings.close()]


def recrc(batch: bytearray) -> bytes:
    struct.pack_into(">I", batch, 17, crc32c(bytes(batch[21:])))
    return bytes(batch)


PARTS = batches()
POS = starts(PARTS)
DATA = b"".join(PARTS)
BASES = [0, 2, 4]


def batch_at(byte: int) -> int:
    """Index of the batch holding ``byte``."""
    return max(i for i, p in enumerate(POS) if p <= byte)


def test_clean_segment_has_no_findings_and_counts_its_batches():
    result = walk(DATA)
    assert result.findings.close() == []
    assert (result.batches, result.first_offset, result.last_offset, result.skipped) == (3, 0, 5, 0)


def test_every_single_bit_flip_in_crc_covered_bytes_is_a_crc_error_at_its_batch():
    for k, (pos, part) in enumerate(zip(POS, PARTS)):
        for byte in range(pos + 17, pos + len(part)):  # the CRC field and everything it covers
            for bit in range(8):
                data = bytearray(DATA)
                data[byte] ^= 1 << bit
                assert found(bytes(data)) == [("crc", "error", pos, BASES[k])], (byte, bit)


def test_truncation_at_every_byte_is_a_partial_batch_at_the_cut_batch():
    for cut in range(1, len(DATA)):
        findings = found(DATA[:cut])
        if cut in POS:
            assert findings == [], cut  # a cut at a batch boundary leaves a shorter, whole segment
            continue
        k = batch_at(cut)
        offset = BASES[k] if cut - POS[k] > 17 else None
        assert findings == [("partial-batch", "error", POS[k], offset)], cut


def test_partial_batch_message_gives_its_size_and_what_kafka_would_do():
    # what the next start does with the damage is the log-loading model's to say (load_findings);
    # the walk only records where the first damage is
    result = walk(DATA[:-5])
    [finding] = result.findings.close()
    assert finding.size == len(PARTS[2]) - 5
    assert finding.message == (
        f"partial trailing batch of {len(PARTS[2]) - 5} bytes: its header declares {len(PARTS[2])} bytes; data "
        f"that was written is incomplete."
    )
    assert result.kafka_cut == POS[2]


@pytest.mark.parametrize(
    ("start", "end", "expected"),
    [
        # a whole batch zeroed: a zero-filled region where batch 1 was
        (POS[1], POS[2], [("zero-filled", "error", POS[1], None)]),
        # zeros inside batch 1's records: its CRC fails
        (POS[1] + 40, POS[1] + 50, [("crc", "error", POS[1], 2)]),
        # zeros from inside batch 0 into batch 1's header: batch 0 is damaged, reading resumes at batch 2
        (POS[0] + 50, POS[1] + 12, [("crc", "error", POS[0], 0), ("skipped-bytes", "info", POS[0], None)]),
        # zeros to the end of the file
        (POS[2], len(DATA), [("zero-filled", "error", POS[2], None)]),
    ],
)
def test_zeroed_ranges_are_found_at_the_first_damaged_batch(start, end, expected):
    data = bytearray(DATA)
    data[start:end] = bytes(end - start)
    assert found(bytes(data)) == expected


def test_a_zero_filled_tail_is_an_error_with_kafkas_reaction():
    [finding] = walk(DATA + bytes(4096)).findings.close()
    assert (finding.kind, finding.position, finding.size) == ("zero-filled", len(DATA), 4096)
    assert finding.message.startswith("4096 zero bytes running to the end of the file")
    assert finding.message.endswith("(a batch size of 0 is a CorruptRecordException to Kafka).")  # no load claim


@pytest.mark.parametrize("k", [0, 1, 2])
@pytest.mark.parametrize("length", [-1, 0, 5, 13, 14, 48, 0x7FFFFFFF, 1 << 20])
def test_garbled_length_fields_are_found_at_their_batch_and_reading_resumes(k, length):
    data = bytearray(DATA)
    struct.pack_into(">i", data, POS[k] + 8, length)
    result = walk(bytes(data))
    findings = result.findings.close()
    first = findings[0]
    assert (first.position, first.severity, first.offset) == (POS[k], "error", BASES[k])
    if length < 49:
        assert first.kind == "short-batch"
    elif k == 2:
        assert first.kind == "partial-batch"  # the last batch now claims more bytes than the file has
    else:
        assert first.kind == "bad-size"
    assert result.batches == 2  # every other batch was still read
    assert all(f.position == POS[k] for f in findings)


def test_a_length_shortened_but_still_plausible_fails_the_crc_and_resynchronises():
    data = bytearray(DATA)
    struct.pack_into(">i", data, POS[0] + 8, len(PARTS[0]) - 12 - 7)
    assert found(bytes(data)) == [("crc", "error", 0, 0), ("skipped-bytes", "info", 0, None)]


def test_damage_then_a_torn_tail_are_two_findings():
    data = bytearray(DATA)
    data[POS[1] + 30] ^= 1
    assert found(bytes(data[:-3])) == [("crc", "error", POS[1], 2), ("partial-batch", "error", POS[2], 4)]


def test_after_a_resync_each_later_damaged_batch_is_reported_at_its_own_position():
    """Five batches, 1, 2 and 4 damaged: three CRC findings, never one skipped range over 1 and 2."""
    parts = batches(5)
    pos, data = starts(parts), bytearray(b"".join(parts))
    for k in (1, 2, 4):
        data[pos[k] + 40] ^= 0xFF
    result = walk(bytes(data))
    assert [(f.kind, f.position, f.offset, f.size) for f in result.findings.close()] == [
        ("crc", pos[1], 2, len(parts[1])), ("crc", pos[2], 4, len(parts[2])), ("crc", pos[4], 8, len(parts[4]))]
    assert (result.batches, result.skipped) == (2, len(parts[1]) + len(parts[2]) + len(parts[4]))


def test_garbage_between_batches_is_skipped_and_counted():
    garbage = bytes(range(1, 200))
    result = walk(PARTS[0] + garbage + PARTS[1])
    findings = result.findings.close()
    assert [(f.kind, f.position) for f in findings] == [("bad-magic", POS[1]), ("skipped-bytes", POS[1])]
    assert result.skipped == len(garbage) and result.batches == 2
    assert findings[1].message == f"resynchronised on the next valid batch at byte {POS[1] + len(garbage)}: " \
                                  f"{len(garbage)} bytes from byte {POS[1]} skipped"


def test_only_the_first_damage_says_where_kafka_would_cut():
    data = bytearray(DATA)
    data[POS[0] + 30] ^= 1
    data[POS[2] + 30] ^= 1
    result = walk(bytes(data))
    first, second = result.findings.close()
    # the walk records the first damage; the sentence about the next start comes from the model
    assert result.kafka_cut == POS[0]
    assert "Kafka's recovery" not in first.message and "Kafka's recovery" not in second.message


def test_magic_above_2_with_a_matching_crc_says_kafka_would_accept_it():
    data = bytearray(DATA)
    data[POS[1] + 16] = 5
    [finding] = walk(bytes(data)).findings.close()
    assert finding.kind == "bad-magic"
    assert "as V2 its CRC matches: Kafka would accept it" in finding.message


def test_offsets_must_increase_across_batches():
    data = bytearray(DATA)
    struct.pack_into(">q", data, POS[2], 3)  # batch 2 now holds 3..4, overlapping batch 1's 2..3
    [finding] = walk(bytes(data)).findings.close()
    assert (finding.kind, finding.position, finding.offset) == ("offset-order", POS[2], 3)
    assert finding.message == (
        f"batch offsets 3..4 do not follow the previous batch at byte {POS[1]}, whose last offset is 3"
    )


def test_offsets_below_the_name_and_beyond_the_index_range():
    assert found(DATA, name_base=3) == [
        ("offset-below-base", "error", POS[0], 0),
        ("offset-below-base", "error", POS[1], 2),
    ]
    far = encode_batch([RecordSpec((1 << 31) + 5, TS, b"k", b"v")])
    assert found(far, name_base=0) == [("offset-overflow", "warning", 0, (1 << 31) + 5)]


def test_header_problems_with_a_valid_crc():
    def with_header(fmt: str, at: int, value: int) -> bytes:
        batch = bytearray(PARTS[1])
        struct.pack_into(fmt, batch, at, value)
        return PARTS[0] + recrc(batch) + PARTS[2]

    assert found(with_header(">h", 21, 5)) == [("bad-attributes", "error", POS[1], 2)]
    assert found(with_header(">h", 21, 0x0100)) == [("bad-attributes", "warning", POS[1], 2)]
    assert found(with_header(">i", 57, 3)) == [("record-count", "error", POS[1], 2)]  # 3 records in 2 offsets
    assert found(with_header(">i", 57, -1)) == [("record-count", "error", POS[1], 2)]
    assert found(with_header(">h", 21, 0x10)) == [("producer-fields", "error", POS[1], 2)]
    assert found(with_header(">i", 53, -7)) == [("producer-fields", "warning", POS[1], 2)]


def test_idempotent_and_transactional_batches_and_their_markers_are_clean():
    data = encode_batch([RecordSpec(0, TS, b"k", b"v")], producer_id=5, producer_epoch=0, base_sequence=0,
                        is_transactional=True)
    marker = encode_batch([RecordSpec(1, TS, encode_control_key(COMMIT), encode_end_txn_marker(0))],
                          is_control=True, is_transactional=True, producer_id=5, producer_epoch=0)
    assert found(data + marker, deep=True) == []


def test_control_records_are_checked_at_batch_level():
    def control(key: bytes, value: bytes, **kw) -> bytes:
        return encode_batch([RecordSpec(0, TS, key, value)], is_control=True, **kw)

    txn = {"is_transactional": True, "producer_id": 5, "producer_epoch": 0}
    assert found(control(b"\x00\x00\x00\x07", b"")) == [("control-record", "warning", 0, 0)]  # unknown type
    assert found(control(b"\x00\x00", b"", **txn)) == [("control-record", "error", 0, 0)]  # key too short
    assert found(control(encode_control_key(COMMIT), b"\x00", **txn)) == [("control-record", "error", 0, 0)]
    assert found(control(encode_control_key(COMMIT), encode_end_txn_marker(1))) == [
        ("control-record", "error", 0, 0)  # a marker outside a transactional batch
    ]


def test_deep_checks_max_timestamp_and_record_count():
    batch = bytearray(PARTS[1])
    struct.pack_into(">q", batch, 35, TS + 50)
    data = PARTS[0] + recrc(batch)
    assert found(data) == []
    assert found(data, deep=True) == [("max-timestamp", "error", POS[1], 2)]
    batch = bytearray(PARTS[1])
    struct.pack_into(">i", batch, 57, 1)
    data = PARTS[0] + recrc(batch)
    assert found(data) == []
    assert found(data, deep=True) == [("record-count", "error", POS[1], 2)]


def test_deep_reports_undecompressable_records():
    batch = bytearray(encode_batch([RecordSpec(0, TS, b"k", b"v" * 100)], codec="gzip"))
    batch[75] ^= 0xFF  # inside the deflate stream
    data = recrc(batch)
    assert found(data) == []
    [(kind, severity, position, offset)] = found(data, deep=True)
    assert (kind, severity, position, offset) == ("decompress", "error", 0, 0)


def test_deep_reports_offset_deltas_out_of_order():
    body = encode_batch([RecordSpec(0, TS, b"a", b"1"), RecordSpec(1, TS, b"b", b"2")])
    batch = bytearray(body)
    # second record's offset delta (zigzag 1 -> 0x02) rewritten to 0: same offset as the first record
    second = 61 + batch[61] // 2 + 1
    assert batch[second + 3] == 0x02
    batch[second + 3] = 0x00
    assert found(recrc(batch), deep=True) == [("record-structure", "error", 0, 0)]


def test_legacy_messages_clean_and_with_problems():
    v0 = encode_batch([RecordSpec(0, -1, b"k", b"v")], magic=0)
    v1 = encode_batch([RecordSpec(1, TS, b"k", b"v")], magic=1)
    assert found(v0 + v1, deep=True) == []
    flagged = bytearray(v0)
    flagged[17] |= 0x08  # a timestamp-type bit in a magic 0 message
    struct.pack_into(">I", flagged, 12, zlib.crc32(bytes(flagged[16:])))
    assert found(bytes(flagged)) == [("bad-attributes", "warning", 0, 0)]
    broken = bytearray(v1)
    broken[-1] ^= 1
    assert found(v0 + bytes(broken)) == [("crc", "error", len(v0), 1)]


def test_deep_checks_every_inner_crc_of_a_legacy_wrapper():
    inner = [encode_entry(i, encode_message(1, 0, TS, b"k", b"v%d" % i)) for i in range(3)]
    bad = bytearray(inner[1])
    bad[-1] ^= 1  # inner message 1 no longer matches its CRC
    inner[1] = bytes(bad)
    compressed = compress(1, b"".join(inner), magic=1)
    wrapper = encode_entry(2, encode_message(1, 1, TS, None, compressed))
    assert found(wrapper) == []
    assert found(wrapper, deep=True) == [("crc", "error", 0, 1)]


def _mixed_segment() -> bytes:
    """V0, V1 and V2 batches, compressed and not, a transaction and its marker."""
    parts = [
        encode_batch([RecordSpec(i, -1, b"k", b"a" * 20) for i in range(3)], magic=0, codec="gzip"),
        encode_batch([RecordSpec(3, TS, b"k", b"b" * 20)], magic=1),
        encode_batch([RecordSpec(4 + i, TS + i, b"k", b"c" * 30) for i in range(3)], magic=1, codec="snappy"),
        encode_batch([RecordSpec(7 + i, TS + i, b"k", b"d" * 40, (("h", b"v"),)) for i in range(4)], codec="lz4"),
        encode_batch([RecordSpec(11 + i, TS, None, b"e" * 25) for i in range(3)], codec="zstd",
                     producer_id=3, producer_epoch=0, base_sequence=0, is_transactional=True),
        encode_batch([RecordSpec(14, TS, encode_control_key(COMMIT), encode_end_txn_marker(1))],
                     is_control=True, is_transactional=True, producer_id=3, producer_epoch=0),
        encode_batch([RecordSpec(15 + i, TS + i, b"k", b"f" * 10) for i in range(5)]),
    ]
    return b"".join(parts)


def test_random_damage_never_escapes_as_an_exception():
    import random

    data = _mixed_segment()
    assert found(data, deep=True) == []
    rng = random.Random(4)
    for _ in range(400):
        damaged = bytearray(data)
        for _ in range(rng.randint(1, 4)):
            action = rng.random()
            at = rng.randrange(len(damaged))
            if action < 0.5:
                damaged[at] ^= 1 << rng.randrange(8)
            elif action < 0.7:
                damaged[at : at + rng.randint(1, 40)] = bytes(rng.randint(1, 40))
            elif action < 0.85:
                del damaged[at : at + rng.randint(1, 30)]
            else:
                damaged[at:at] = rng.randbytes(rng.randint(1, 30))
        result = walk(bytes(damaged), deep=True)
        for finding in result.findings.close():
            assert finding.position is None or 0 <= finding.position < len(damaged)
        assert result.skipped <= len(damaged)
