"""The two checksums of Kafka's log formats.

* magic 0 and 1 messages: CRC-32 (zlib/IEEE, ``java.util.zip.CRC32``) over the
  bytes from the magic byte to the end of the message;
* magic 2 record batches and producer-state snapshots: CRC-32C (Castagnoli,
  ``Crc32C``) -- for batches over the attributes field to the end of the batch.

Both are C-speed (zlib and the ``crc32c`` extension) and accept memoryviews, so
no batch bytes are copied to check them.
"""

from __future__ import annotations

import zlib

import crc32c as _crc32c


def crc32(data: bytes | memoryview) -> int:
    """CRC-32 as ``java.util.zip.CRC32`` computes it, unsigned."""
    return zlib.crc32(data) & 0xFFFFFFFF


def crc32c(data: bytes | memoryview) -> int:
    """CRC-32C as ``org.apache.kafka.common.utils.Crc32C`` computes it, unsigned."""
    return _crc32c.crc32c(data) & 0xFFFFFFFF
