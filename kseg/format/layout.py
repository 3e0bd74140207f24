"""Every fixed layout of a log entry, declared once.

Kafka's log holds entries of three magics that share their first 17 bytes::

     0  offset (V0/V1) or baseOffset (V2)   int64
     8  size: bytes after this field        int32
    12  crc (V0/V1) or partitionLeaderEpoch (V2)
    16  magic                               int8

Sources: ``Records.java`` (LOG_OVERHEAD, HEADER_SIZE_UP_TO_MAGIC),
``LegacyRecord.java`` (the V0/V1 message), ``DefaultRecordBatch.java`` (the
V2 batch header and its attribute bits).  This module imports nothing but
``struct`` and ``mmap``: the walker, the scanner and every command read their constants
from here without paying for the codecs.
"""

from __future__ import annotations

import mmap
import struct
from typing import TypeAlias

#: What every reader parses from: file bytes, a slice of them, or a read-only mapping of the file.
Buffer: TypeAlias = bytes | bytearray | memoryview | mmap.mmap

# -- common to every magic (Records.java) -------------------------------------------------------

ENTRY_PREFIX = struct.Struct(
    ">q"  # offset (V0/V1) or base_offset (V2)
    "i"  # size: bytes after this field
    "4x"  # crc (V0/V1) or partition_leader_epoch (V2): not needed to frame an entry
    "b"  # magic
)
HEADER_SIZE_UP_TO_MAGIC = ENTRY_PREFIX.size  # 17
LOG_OVERHEAD = 12  # offset + size: the bytes a size field does not count
SIZE_OFFSET = 8  # position of the size field in an entry
MAGIC_OFFSET = 16  # position of the magic byte in an entry
MIN_RECORD_OVERHEAD = 14  # LegacyRecord.RECORD_OVERHEAD_V0: the only size check FileLogInputStream makes

# -- magic 2 (DefaultRecordBatch.java) ----------------------------------------------------------

BATCH_HEADER = struct.Struct(
    ">q"  # base_offset
    "i"  # batch_length: bytes after this field
    "i"  # partition_leader_epoch (not covered by the CRC)
    "b"  # magic
    "I"  # crc: CRC-32C of [attributes, end of batch)
    "h"  # attributes (Kafka reads only the low byte)
    "i"  # last_offset_delta
    "q"  # base_timestamp
    "q"  # max_timestamp
    "q"  # producer_id
    "h"  # producer_epoch
    "i"  # base_sequence
    "i"  # records_count
)
RECORD_BATCH_OVERHEAD = BATCH_HEADER.size  # 61
MIN_V2_BATCH_LENGTH = RECORD_BATCH_OVERHEAD - LOG_OVERHEAD  # 49: the smallest batch_length a batch can have
V2_CRC_OFFSET = struct.calcsize(">qiib")  # 17
V2_ATTRIBUTES_OFFSET = struct.calcsize(">qiibI")  # 21: the CRC covers from here to the end
V2_PRODUCER_ID_OFFSET = struct.calcsize(">qiibIhiqq")  # 43

CODEC_MASK = 0x07  # compression codec id, both V1 and V2
TIMESTAMP_TYPE_MASK = 0x08  # LogAppendTime when set, both V1 and V2
TRANSACTIONAL_MASK = 0x10  # V2 only
CONTROL_MASK = 0x20  # V2 only
DELETE_HORIZON_MASK = 0x40  # V2 only: base_timestamp holds the delete horizon
UNUSED_ATTRIBUTE_BITS = 0xFF80  # V2 bits Kafka never writes

# -- magic 0 and 1 (LegacyRecord.java) ----------------------------------------------------------

LEGACY_HEADER = struct.Struct(
    ">q"  # offset: the message offset; for a compressed wrapper the last inner offset
    "i"  # message_size: bytes after this field
    "I"  # crc: CRC-32 of [magic, end of message)
    "b"  # magic
    "b"  # attributes
)
LEGACY_TIMESTAMP = struct.Struct(">q")  # timestamp, magic 1 only, right after attributes
LEGACY_CRC_OFFSET = 12  # from the start of the entry
LEGACY_ATTRIBUTES_OFFSET = 17
LEGACY_TIMESTAMP_OFFSET = 18
RECORD_OVERHEAD_V0 = 14  # crc + magic + attributes + key length + value length
RECORD_OVERHEAD_V1 = 22  # ... + timestamp

#: The smallest size field a valid entry of each magic can have.
MIN_ENTRY_SIZE = {0: RECORD_OVERHEAD_V0, 1: RECORD_OVERHEAD_V1, 2: MIN_V2_BATCH_LENGTH}

# -- offsets within a segment (LogSegment.java, AbstractIndex.java) ---------------------------

MAX_RELATIVE_OFFSET = 0x7FFFFFFF  # an index holds offsets as int32 relative to the segment's base
