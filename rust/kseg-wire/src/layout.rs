//! The fixed layouts of a log entry, as `kseg/format/layout.py` declares them.
//!
//! Sources (Kafka 4.3.0): `clients/src/main/java/org/apache/kafka/common/record/internal/Records.java`
//! (LOG_OVERHEAD, HEADER_SIZE_UP_TO_MAGIC), `LegacyRecord.java` (RECORD_OVERHEAD_V0/V1),
//! `DefaultRecordBatch.java` (the 61-byte V2 header).

/// offset + size: the bytes a size field does not count.
pub const LOG_OVERHEAD: usize = 12;
/// The bytes up to and including the magic: 17 or fewer left frame no entry.
pub const HEADER_SIZE_UP_TO_MAGIC: usize = 17;
/// `LegacyRecord.RECORD_OVERHEAD_V0`: the only size check `FileLogInputStream` makes.
pub const MIN_RECORD_OVERHEAD: i32 = 14;
/// `LegacyRecord.RECORD_OVERHEAD_V1`.
pub const RECORD_OVERHEAD_V1: i32 = 22;
/// The V2 batch header (`DefaultRecordBatch.RECORD_BATCH_OVERHEAD`).
pub const RECORD_BATCH_OVERHEAD: usize = 61;
/// The smallest batch_length a V2 batch can have (61 - 12).
pub const MIN_V2_BATCH_LENGTH: i32 = 49;
/// A V2 batch's CRC-32C covers from its attributes (byte 21) to its end.
pub const V2_ATTRIBUTES_OFFSET: usize = 21;
/// A V0/V1 message's CRC-32 covers from its magic (byte 16) to its end.
pub const MAGIC_OFFSET: usize = 16;
/// Where the size field is in every entry.
pub const SIZE_OFFSET: usize = 8;

/// The smallest size field a valid entry of each magic can have (`MIN_ENTRY_SIZE` in layout.py).
pub fn min_entry_size(magic: i8) -> Option<i32> {
    match magic {
        0 => Some(MIN_RECORD_OVERHEAD),
        1 => Some(RECORD_OVERHEAD_V1),
        2 => Some(MIN_V2_BATCH_LENGTH),
        _ => None,
    }
}
