"""Encoding fed in pieces (``kseg convert`` on batches too large to hold): the bytes of encoding it all at once.

The one-call functions (``compress``, ``encode_batch``, ``encode_message_set``) are
checked against Kafka elsewhere (tests/interop, test_compression.py); here the
streaming forms are checked against them, cut at every kind of boundary.
"""

from __future__ import annotations

import random

import pytest

from kseg.errors import EncodeError
from kseg.format import RecordSpec, encode_batch
from kseg.format.compression import CODEC_NAMES, CODEC_ZSTD, compress, compressor
from kseg.format.layout import RECORD_BATCH_OVERHEAD
from kseg.format.model import LOG_APPEND_TIME
from kseg.format.v0v1_encode import MessageSetEncoder
from kseg.format.v2_write import BatchEncoder

TS = 1_700_000_000_000


def _payload(size: int) -> bytes:
    """Half compressible, half random: blocks of both kinds (LZ4 stores incompressible ones)."""
    rng = random.Random(size)
    return b"".join(
        (b"kafka record %d " % i) * 3 if i % 2 else rng.randbytes(40) for i in range(size // 64 + 1)
    )[:size]


@pytest.mark.parametrize("codec", range(len(CODEC_NAMES)))
@pytest.mark.parametrize("magic", [0, 1, 2])
@pytest.mark.parametrize("size", [0, 1, 32 * 1024, 64 * 1024 + 1, 300_001])
def test_a_compressor_fed_in_pieces_writes_the_bytes_of_one_call(codec: int, magic: int, size: int) -> None:
    if codec == CODEC_ZSTD and magic < 2:
        with pytest.raises(EncodeError, match="ZStandard compression is not supported for magic"):
            compressor(codec, magic=magic)
        return
    data = _payload(size)
    whole = compress(codec, data, magic=magic)
    for step in (1, 4095, 65536, 100_000):
        if step == 1 and size > 70_000:
            continue
        stream = compressor(codec, magic=magic)
        pieces = b"".join(stream.compress(data[i : i + step]) for i in range(0, len(data), step))
        assert pieces + stream.flush() == whole, (CODEC_NAMES[codec], magic, size, step)


def test_a_compressor_checks_the_level_as_compress_does() -> None:
    with pytest.raises(EncodeError, match="gzip doesn't support given compression level: 10"):
        compressor(1, magic=2, level=10)
    with pytest.raises(EncodeError, match="snappy has no compression level"):
        compressor(2, magic=2, level=1)


def _specs(count: int, headers: bool = True) -> list[RecordSpec]:
    return [
        RecordSpec(
            100 + 3 * i + i % 2, TS + (i * 37) % 1000, None if i % 7 == 0 else b"key-%d" % i,
            _payload(i % 300), (("h", b"v" * (i % 5)),) if headers and i % 4 == 0 else (),
        )
        for i in range(count)
    ]


@pytest.mark.parametrize("codec", range(len(CODEC_NAMES)))
@pytest.mark.parametrize("cut", [1, 1000, 4096])
def test_a_v2_batch_fed_in_pieces_is_the_batch_encode_batch_builds(codec: int, cut: int) -> None:
    specs = _specs(9000)
    kwargs = {"codec": codec, "producer_id": 7, "producer_epoch": 2, "base_sequence": 40, "partition_leader_epoch": 3}
    whole = encode_batch(specs, **kwargs)
    encoder = BatchEncoder(**kwargs)
    for i in range(0, len(specs), cut):
        encoder.add(specs[i : i + cut])
    assert encoder.finish() == (whole, len(whole))
    log_append = encode_batch(specs, codec=codec, timestamp_type=LOG_APPEND_TIME, log_append_time=TS, base_offset=50)
    encoder = BatchEncoder(codec=codec, timestamp_type=LOG_APPEND_TIME, log_append_time=TS, base_offset=50)
    for i in range(0, len(specs), cut):
        encoder.add(specs[i : i + cut])
    assert encoder.finish()[0] == log_append


def test_a_v2_batch_past_keep_gives_its_size_only() -> None:
    specs = _specs(5000)
    whole = encode_batch(specs, codec=1)
    encoder = BatchEncoder(codec=1, keep=len(whole) - 1)
    for i in range(0, len(specs), 512):
        encoder.add(specs[i : i + 512])
    assert encoder.finish() == (None, len(whole))
    encoder = BatchEncoder(codec=1, keep=len(whole))
    encoder.add(specs)
    assert encoder.finish() == (whole, len(whole))
    assert len(whole) > RECORD_BATCH_OVERHEAD


def test_a_v2_batch_in_pieces_refuses_what_encode_batch_refuses() -> None:
    specs = _specs(10)
    encoder = BatchEncoder()
    encoder.add(specs[:5])
    with pytest.raises(EncodeError, match=r"Illegal offset 100 following previous offset 112"):
        encoder.add(specs[:1])  # an offset that goes back across pieces
    with pytest.raises(EncodeError, match="a record batch needs at least one record"):
        BatchEncoder().finish()
    encoder = BatchEncoder(producer_id=5, producer_epoch=1)
    encoder.add(specs)
    with pytest.raises(EncodeError, match="Invalid negative sequence number used"):
        encoder.finish()


@pytest.mark.parametrize("codec", [0, 1, 2, 3])
@pytest.mark.parametrize("magic", [0, 1])
def test_a_message_set_fed_in_pieces_is_the_one_encode_batch_builds(codec: int, magic: int) -> None:
    specs = _specs(6000, headers=False)
    whole = encode_batch(specs, magic=magic, codec=codec)
    encoder = MessageSetEncoder(magic=magic, codec=codec)
    plain = b"".join(encoder.add(specs[i : i + 777]) for i in range(0, len(specs), 777))
    wrapper, size = encoder.finish()
    assert plain + (wrapper or b"") == whole
    if codec:
        assert plain == b"" and size == len(whole)
        small = MessageSetEncoder(magic=magic, codec=codec, keep=len(whole) - 1)
        small.add(specs)
        assert small.finish() == (None, len(whole))


def test_a_message_set_in_pieces_refuses_an_offset_going_back_across_pieces() -> None:
    specs = _specs(10, headers=False)
    encoder = MessageSetEncoder(magic=1, codec=1)
    encoder.add(specs[5:])
    with pytest.raises(EncodeError, match=r"Illegal offset 100 following previous offset 128"):
        encoder.add(specs[:5])
