"""Batch and record digests for ``kseg diff``: one core call per window of batches, the same digests in Python.

Two 128-bit digests, both BLAKE2b (RFC 7693) with a 16-byte digest, the one
``hashlib.blake2b(data, digest_size=16)`` computes, so the pure-Python path
(``KSEG_PURE=1``) and the compiled core (``rust/kseg-wire/src/digest.rs``)
give equal digests (tests/core/test_core_digest.py):

* the **content digest** of a V2 batch: of its bytes from the attributes to
  the end (what its CRC covers).  Two batches over the same offsets are
  byte-identical when size, leader epoch, magic, CRC and content digest agree;
  only the content digest agreeing means the same records in another leader epoch;
* the **records digest**: the sum modulo 2**128 of each record's digest (read
  little-endian) of its canonical form (:func:`canonical_record`: offset,
  timestamp, producer id, transactional and control flags, key, value,
  headers).  A sum does not depend on how the records are cut into batches, so
  a window of batches on one replica compares with a differently cut window
  on another (compaction, down-conversion, a rebuilt log).  The sum is a
  multiset hash: fine for telling replicas apart, not a defence against a
  forger choosing records (thousands of chosen records can cancel).

:func:`batch_digests` walks a window as ``BatchWalk(strict=False).frames()``
frames it and gives, per entry, ``(position, next, magic, header or None,
content or None, records or None)``: content and records are None for a
magic 0/1 entry and a V2 entry too short for a header, records also where the
records are compressed or not read exactly by the scanner -- the caller
decodes those and uses :func:`records_digest` (the same sum).
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Iterable, Iterator
from hashlib import blake2b
from typing import Any, cast
from zlib import crc32

from kseg.format._core import CORE, NOT_FOR_CORE, core_failure, is_core_failure
from kseg.format.layout import (
    CODEC_MASK,
    CONTROL_MASK,
    RECORD_BATCH_OVERHEAD,
    TIMESTAMP_TYPE_MASK,
    TRANSACTIONAL_MASK,
    V2_ATTRIBUTES_OFFSET,
    Buffer,
)
from kseg.format.model import Record
from kseg.format.records import scan_records
from kseg.format.walk import BatchWalk

#: entries per core call: a window's tuples, not a segment's, are alive at once
DIGEST_CHUNK = 1024
MASK_128 = (1 << 128) - 1
_PREFIX = struct.Struct(">qqqB")
_LENGTH = struct.Struct(">I")
#: (position, next, magic, V2 header tuple or None, content digest or None, records digest or None)
DigestEntry = tuple[int, int, int, "tuple[int, ...] | None", "bytes | None", "bytes | None"]


def flags_of(attributes: int) -> int:
    """The canonical record's flags byte: 1 transactional, 2 control."""
    return (1 if attributes & TRANSACTIONAL_MASK else 0) | (2 if attributes & CONTROL_MASK else 0)


def _field(part: bytes | None) -> bytes:
    return b"\xff" if part is None else b"\x00" + _LENGTH.pack(len(part)) + part


def canonical_record(offset: int, timestamp: int, producer_id: int, flags: int, key: bytes | None,
                     value: bytes | None, headers: Iterable[tuple[bytes | str, bytes | None]]) -> bytes:
    """A record's canonical bytes: int64 offset, timestamp and producer id (big-endian), the flags byte,
    key and value (``0xFF`` for null, else ``0x00``, uint32 length, bytes), the uint32 header count, then
    each header's key and value framed alike.  No two different records frame to the same bytes."""
    pairs = [(_field(name.encode() if isinstance(name, str) else name) + _field(v)) for name, v in headers]
    return b"".join((_PREFIX.pack(offset, timestamp, producer_id, flags), _field(key), _field(value),
                     _LENGTH.pack(len(pairs)), *pairs))


def share(canonical: bytes) -> int:
    """One record's share of a records digest."""
    return int.from_bytes(blake2b(canonical, digest_size=16).digest(), "little")


def records_digest(records: Iterable[Record], producer_id: int, flags: int) -> bytes:
    """The records digest of decoded records (a compressed batch, a V0/V1 entry, what the scanner leaves)."""
    total = 0
    for r in records:
        total += share(canonical_record(r.offset, r.timestamp, producer_id, flags, r.key, r.value, r.headers))
    return (total & MASK_128).to_bytes(16, "little")


def add_digests(a: bytes, b: bytes) -> bytes:
    """Two records digests' sum: the digest of both sets of records."""
    return ((int.from_bytes(a, "little") + int.from_bytes(b, "little")) & MASK_128).to_bytes(16, "little")


EMPTY = bytes(16)


def batch_digests(buf: Buffer, limit: int) -> Iterator[DigestEntry]:
    """Every entry of ``buf[:limit]`` with its digests, a window at a time (the core) or in Python."""
    if CORE is not None:
        try:
            CORE.batch_digests(buf, 0, 0, 1)  # can the core borrow this buffer?
        except NOT_FOR_CORE:
            pass
        else:
            return _core_digests(buf, limit)
    return _digests(buf, limit)


def _core_digests(buf: Buffer, limit: int) -> Iterator[DigestEntry]:
    assert CORE is not None
    pos: int | None = 0
    while pos is not None:
        try:
            chunk, pos, _ = CORE.batch_digests(buf, pos, limit, DIGEST_CHUNK)
        except Exception as err:
            if is_core_failure(err):
                raise core_failure(err, pos or 0) from None
            raise
        yield from chunk


def _digests(buf: Buffer, limit: int) -> Iterator[DigestEntry]:
    """:func:`batch_digests` in Python: the reference."""
    view = memoryview(buf)
    try:
        for pos, nxt, magic, header, _ in BatchWalk(buf, 0, limit, strict=False).frames():
            if header is None:
                yield pos, nxt, magic, None, None, None
                continue
            content = blake2b(view[pos + V2_ATTRIBUTES_OFFSET : nxt], digest_size=16).digest()
            yield pos, nxt, magic, header, content, _v2_records_digest(buf, pos, nxt, header)
    finally:
        view.release()


def _v2_records_digest(buf: Buffer, pos: int, nxt: int, header: tuple[int, ...]) -> bytes | None:
    """The records digest of an uncompressed V2 batch the scanner reads exactly to its end, else None."""
    base, attributes, max_ts, producer_id, count = header[0], header[5], header[8], header[9], header[12]
    if attributes & CODEC_MASK or count < 0:
        return None
    if count == 0:
        return EMPTY if pos + RECORD_BATCH_OVERHEAD == nxt else None
    scan = scan_records(cast(bytes, buf), pos + RECORD_BATCH_OVERHEAD, nxt, count, base, header[7])  # any buffer
    if scan is None:
        return None
    stamps = [max_ts] * scan.count if attributes & TIMESTAMP_TYPE_MASK else scan.timestamps()
    flags = flags_of(attributes)
    total = 0
    for offset, stamp, key, value, headers in zip(scan.offsets(), stamps, scan.keys(), scan.values(), scan.headers(),
                                                  strict=True):
        total += share(canonical_record(offset, stamp, producer_id, flags, key, value, headers))
    return (total & MASK_128).to_bytes(16, "little")


# -- keyed records, for the read_committed state of kseg diff ----------------------------------------

#: (key fingerprint, (offset, value fingerprint or None for a tombstone)): the shape ``dict.update`` takes
Keyed = tuple[int, tuple[int, "int | None"]]
#: a run of plain batches' keyed records (a list), or (position, next, magic, V2 header or None, keyed or None)
KeyedItem = "list[Keyed] | tuple[int, int, int, tuple[int, ...] | None, list[Keyed] | None]"


def fingerprint(part: bytes) -> int:
    """A key's or value's 64-bit fingerprint: the first 8 bytes (little-endian) of its BLAKE2b-128."""
    return int.from_bytes(blake2b(part, digest_size=16).digest()[:8], "little")


#: at most 2**MAX_BUCKET_BITS key buckets
MAX_BUCKET_BITS = 32


def in_bucket(key: bytes, bits: int, bucket: int) -> bool:
    """Whether a key lies in bucket ``bucket`` of ``2**bits``: the top ``bits`` bits of its CRC-32, a cheap
    spread computed before the fingerprint, which only the keys of the bucket get."""
    return bits == 0 or crc32(key) >> (32 - bits) == bucket


def keyed_digests(buf: Buffer, limit: int, bits: int, bucket: int, log_start: int, log_end: int,
                  walked: Callable[[int], None] | None = None) -> Iterator[Any]:
    """What a read_committed fold of one key bucket needs of ``buf[:limit]``, in log order.

    Items: a list -- the keyed records, in the bucket, of a run of consecutive plain batches (V2, not
    transactional, not control, records uncompressed and read exactly by the scanner) -- or a tuple
    ``(position, next, magic, header or None, keyed or None)`` for a batch the caller reads itself:
    with its keyed records where they were read (a transactional batch), else None (control,
    compressed, records the scanner leaves, and entries without a V2 header, which are not
    filtered by offset).  V2 batches ending below ``log_start`` are left out; the walk stops at the
    first V2 batch from ``log_end`` on.  ``walked`` is called with the position reached after each
    window (the caller releases the pages behind it).
    """
    if CORE is not None and 0 <= bits <= MAX_BUCKET_BITS:
        try:
            CORE.keyed_digests(buf, 0, 0, 1, 0, 0, 0, 0)  # can the core borrow this buffer?
        except NOT_FOR_CORE:
            pass
        else:
            return _core_keyed(buf, limit, bits, bucket, log_start, log_end, walked)
    return _keyed(buf, limit, bits, bucket, log_start, log_end, walked)


def _core_keyed(buf: Buffer, limit: int, bits: int, bucket: int, log_start: int, log_end: int,
                walked: Callable[[int], None] | None) -> Iterator[Any]:
    assert CORE is not None
    pos: int | None = 0
    while pos is not None:
        try:
            chunk, pos, _ = CORE.keyed_digests(buf, pos, limit, DIGEST_CHUNK, bits, bucket, log_start, log_end)
        except Exception as err:
            if is_core_failure(err):
                raise core_failure(err, pos or 0) from None
            raise
        yield from chunk
        if walked is not None and pos is not None:
            walked(pos)


def _keyed(buf: Buffer, limit: int, bits: int, bucket: int, log_start: int, log_end: int,
           walked: Callable[[int], None] | None = None) -> Iterator[Any]:
    """:func:`keyed_digests` in Python: the reference (items cut at the same chunk boundaries)."""
    run: list[Keyed] | None = None
    for index, (pos, nxt, magic, header, _) in enumerate(BatchWalk(buf, 0, limit, strict=False).frames()):
        if index % DIGEST_CHUNK == 0 and index:  # the core's runs end with its calls
            if run is not None:
                yield run
                run = None
            if walked is not None:
                walked(pos)
        if header is None:
            if run is not None:
                yield run
                run = None
            yield pos, nxt, magic, None, None
            continue
        if header[0] >= log_end:
            break
        if header[0] + header[6] < log_start:
            continue
        keyed = _keyed_v2(buf, pos, nxt, header, bits, bucket)
        if keyed is not None and not header[5] & TRANSACTIONAL_MASK:
            if run is not None:
                run.extend(keyed)
            elif keyed:
                run = keyed
            continue
        if run is not None:
            yield run
            run = None
        yield pos, nxt, magic, header, keyed
    if run is not None:
        yield run


def _keyed_v2(buf: Buffer, pos: int, nxt: int, header: tuple[int, ...], bits: int, bucket: int) -> list[Keyed] | None:
    attributes, count = header[5], header[12]
    if attributes & (CODEC_MASK | CONTROL_MASK) or count < 0:
        return None
    if count == 0:
        return [] if pos + RECORD_BATCH_OVERHEAD == nxt else None
    scan = scan_records(cast(bytes, buf), pos + RECORD_BATCH_OVERHEAD, nxt, count, header[0], header[7])
    if scan is None:
        return None
    return keyed_of(zip(scan.keys(), scan.offsets(), scan.values(), strict=True), bits, bucket)


def keyed_of(records: Iterable[tuple[bytes | None, int, bytes | None]], bits: int, bucket: int) -> list[Keyed]:
    """(key, offset, value) triples as the bucket's keyed records (unkeyed records dropped)."""
    out: list[Keyed] = []
    for key, offset, value in records:
        if key is None:
            continue
        if in_bucket(key, bits, bucket):
            out.append((fingerprint(key), (offset, None if value is None else fingerprint(value))))
    return out
