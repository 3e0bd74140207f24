//! V0/V1 message sets read as records, as `kseg/format/v0v1.py` reads them (`_inner_messages`,
//! `_shallow_record`, `_deep_records`): the inner messages of a decompressed wrapper, or a plain
//! message set, one message at a time with every length checked.
//!
//! Layout (Kafka 4.3.0, clients/src/main/java/org/apache/kafka/common/record/internal/
//! LegacyRecord.java, AbstractLegacyRecordBatch.java): offset int64, size int32, crc uint32,
//! magic int8, attributes int8, timestamp int64 (magic 1 only), keyLength int32 + key,
//! valueLength int32 + value. Entries are split as `DataLogInputStream.nextBatch` splits them:
//! a size below 14 is corrupt, an entry cut short by the end of the stream ends the set.
//!
//! Like the V2 scanner this answers only for what it expects -- inner magic 0 or 1, no codec
//! bits on an inner message, key and value inside their message -- and returns `None` at
//! anything else; the Python reader then raises Kafka's exception for it.

use crate::layout::{LOG_OVERHEAD, MIN_RECORD_OVERHEAD, SIZE_OFFSET};
use crate::read::{i32_at, i64_at, i8_at};

/// The message header through the attributes (offset, size, crc, magic, attributes).
const HEADER: usize = 18;
/// Where a magic-1 message's timestamp is, from the entry start (`LEGACY_TIMESTAMP_OFFSET`).
const TIMESTAMP_AT: usize = 18;
/// Where the key length is, from the entry start: magic 0, and every other magic (Kafka reads
/// every magic but 0 with the V1 layout).
const KEY_AT_V0: usize = LOG_OVERHEAD + 6;
const KEY_AT_V1: usize = LOG_OVERHEAD + 14;
/// The codec bits of a message's attributes.
const CODEC_MASK: u8 = 0x07;
/// LogAppendTime, magic 1.
pub const TIMESTAMP_TYPE_MASK: u8 = 0x08;

/// How the messages of a set take their offsets and timestamps: a wrapper's rules
/// (`DeepRecordsIterator`), or a plain set's (each message its own: `magic` 0).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Wrapper {
    /// The wrapper's magic (0 for a plain message set).
    pub magic: i8,
    /// Added to every inner offset (a magic-1 wrapper's absolute base), or none.
    pub base: Option<i64>,
    /// The wrapper's timestamp and whether it is LogAppendTime (magic-1 wrapper).
    pub timestamp: i64,
    pub log_append: bool,
}

/// One message as a record: the fields `_shallow_record` gives, spans instead of copies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Message {
    pub offset: i64,
    pub timestamp: i64,
    pub attributes: u8,
    /// (start, length); a negative length is a null.
    pub key: (usize, i32),
    pub value: (usize, i32),
    /// Where the next entry starts.
    pub next: usize,
}

/// The entries of a decompressed message set: (count, offset field of the last), or `None` when
/// an entry's size is below the V0 minimum (`_inner_messages` raises) or there is none.
pub fn entries(buf: &[u8]) -> Option<(usize, i64)> {
    let (mut pos, mut count, mut last) = (0usize, 0usize, 0i64);
    while buf.len() - pos >= LOG_OVERHEAD {
        let size = i32_at(buf, pos + SIZE_OFFSET)?;
        if size < MIN_RECORD_OVERHEAD {
            return None;
        }
        let size = size as usize;
        if size > buf.len() - pos - LOG_OVERHEAD {
            break; // cut short by the end of the stream: the set ends silently
        }
        last = i64_at(buf, pos)?;
        count += 1;
        pos += LOG_OVERHEAD + size;
    }
    (count > 0).then_some((count, last))
}

/// `_absolute_base`: what inner offset 0 stands for under a magic-1 wrapper at `wrapper_offset`,
/// or `Some(None)` (offsets as stored) when the Java arithmetic gives a negative base; `None` where
/// Kafka throws (a non-zero wrapper offset below the last inner one).
pub fn absolute_base(wrapper_offset: i64, last_inner: i64) -> Option<Option<i64>> {
    if wrapper_offset == 0 {
        return Some(Some(0));
    }
    if wrapper_offset < last_inner {
        return None;
    }
    let base = wrapper_offset.wrapping_sub(last_inner);
    Some((base >= 0).then_some(base))
}

/// A sized field (int32 length + bytes) at `pos` inside a message ending at `end`.
fn sized(buf: &[u8], pos: usize, end: usize) -> Option<((usize, i32), usize)> {
    if pos.checked_add(4)? > end {
        return None;
    }
    let length = i32_at(buf, pos)?;
    let start = pos + 4;
    if length < 0 {
        return Some(((start, length), start));
    }
    if length as usize > end - start {
        return None;
    }
    Some(((start, length), start + length as usize))
}

/// The message of the entry at `pos` as a record under `wrapper`, or `None` for anything the
/// Python reader would refuse or read differently (see the module comment).
pub fn message(buf: &[u8], pos: usize, wrapper: &Wrapper) -> Option<Message> {
    if buf.len().checked_sub(pos)? < LOG_OVERHEAD {
        return None;
    }
    let size = i32_at(buf, pos + SIZE_OFFSET)?;
    if size < MIN_RECORD_OVERHEAD || size as usize > buf.len() - pos - LOG_OVERHEAD {
        return None;
    }
    let end = pos + LOG_OVERHEAD + size as usize;
    if pos + HEADER > end {
        return None;
    }
    let offset = i64_at(buf, pos)?;
    let magic = i8_at(buf, pos + 16)?;
    let attributes = *buf.get(pos + 17)?;
    if attributes & CODEC_MASK != 0 || !(magic == 0 || magic == 1) {
        return None;
    }
    let key_at = if magic == 0 { KEY_AT_V0 } else { KEY_AT_V1 };
    let (key, p) = sized(buf, pos + key_at, end)?;
    let (value, _) = sized(buf, p, end)?;
    let timestamp = if magic == 0 {
        -1
    } else if wrapper.magic == 1 && wrapper.log_append {
        wrapper.timestamp
    } else {
        i64_at(buf, pos + TIMESTAMP_AT)?
    };
    let offset = match wrapper.base {
        Some(base) => base.wrapping_add(offset),
        None => offset,
    };
    Some(Message { offset, timestamp, attributes, key, value, next: end })
}

/// One message a clean legacy run took: where it is, its offset and its timestamp (-1 for magic 0).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RunMessage {
    pub position: usize,
    pub offset: i64,
    pub timestamp: i64,
    /// Where the next entry starts.
    pub next: usize,
}

/// What [`clean_legacy_run`] took: how many messages, the offsets of the first and the last, and
/// where the last starts (`None` when none was taken).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct RunSummary {
    pub count: usize,
    pub first_offset: i64,
    pub last_offset: i64,
    pub last_position: Option<usize>,
}

/// The attribute bits verify takes without a finding: codec none, gzip, snappy or lz4 (zstd is
/// not allowed below magic 2), no unused bits, and the timestamp-type bit only in magic 1.
fn usual_legacy_attributes(magic: i8, attributes: u8) -> bool {
    attributes & CODEC_MASK <= 3 && attributes & 0xF0 == 0 && (magic == 1 || attributes & TIMESTAMP_TYPE_MASK == 0)
}

/// verify's fast path for V0/V1 (`kseg/format/legacy_run.py`'s `python_clean_legacy_run`): the
/// whole, CRC-valid V0/V1 messages from `start` whose attributes are usual and whose offsets go
/// up strictly from above `floor` and stay below `overflow_at`. Stops before the first other
/// entry (the slow path's), or after the message that reaches `until`; returns where it stopped.
/// With `each`, every message taken is also pushed to `out` (the index checks see each one).
#[allow(clippy::too_many_arguments)]
pub fn clean_legacy_run(
    buf: &[u8],
    start: usize,
    limit: usize,
    until: usize,
    floor: i64,
    overflow_at: i64,
    summary: &mut RunSummary,
    mut out: Option<&mut Vec<RunMessage>>,
) -> usize {
    let limit = limit.min(buf.len());
    let (mut pos, mut floor) = (start, floor);
    while pos < until {
        let Some(message) = clean_message(buf, pos, limit, floor, overflow_at) else {
            break;
        };
        if summary.count == 0 {
            summary.first_offset = message.offset;
        }
        summary.count += 1;
        summary.last_offset = message.offset;
        summary.last_position = Some(pos);
        floor = message.offset;
        if let Some(out) = out.as_deref_mut() {
            out.push(message);
        }
        pos = message.next;
    }
    pos
}

/// The message at `pos` if [`clean_legacy_run`] takes it.
fn clean_message(buf: &[u8], pos: usize, limit: usize, floor: i64, overflow_at: i64) -> Option<RunMessage> {
    let attributes = *buf.get(pos + 17)?;
    let magic = i8_at(buf, pos + 16)?;
    let offset = i64_at(buf, pos)?;
    if offset <= floor || offset >= overflow_at || !usual_legacy_attributes(magic, attributes) {
        return None;
    }
    let (offset, timestamp, next) = valid_message(buf, pos, limit)?;
    Some(RunMessage { position: pos, offset, timestamp, next })
}

/// A whole V0/V1 message at `pos` (below `limit`) of at least its magic's minimum size whose
/// CRC-32 holds -- what `LegacyRecord.ensureValid` passes: (offset, timestamp (-1 for magic 0),
/// where the next entry starts).
pub fn valid_message(buf: &[u8], pos: usize, limit: usize) -> Option<(i64, i64, usize)> {
    let limit = limit.min(buf.len());
    if limit.checked_sub(pos)? < HEADER {
        return None;
    }
    let size = i32_at(buf, pos + SIZE_OFFSET)?;
    let magic = i8_at(buf, pos + 16)?;
    if magic == 2 || size < crate::layout::min_entry_size(magic)? || size as usize > limit - pos - LOG_OVERHEAD {
        return None;
    }
    let end = pos + LOG_OVERHEAD + size as usize;
    let stored = crate::read::u32_at(buf, pos + 12)?;
    if crate::walk::crc32(buf.get(pos + 16..end)?) != stored {
        return None;
    }
    let timestamp = if magic == 0 { -1 } else { i64_at(buf, pos + TIMESTAMP_AT)? };
    Some((i64_at(buf, pos)?, timestamp, end))
}

#[cfg(test)]
mod run_tests {
    use super::*;

    fn message(offset: i64, magic: u8, attributes: u8, payload: usize) -> Vec<u8> {
        let size = if magic == 0 { 14 } else { 22 } + payload;
        let mut b = vec![0u8; LOG_OVERHEAD + size];
        b[0..8].copy_from_slice(&offset.to_be_bytes());
        b[8..12].copy_from_slice(&(size as i32).to_be_bytes());
        b[16] = magic;
        b[17] = attributes;
        if magic == 1 {
            b[18..26].copy_from_slice(&(1000 + offset).to_be_bytes());
        }
        let crc = crate::walk::crc32(&b[16..]);
        b[12..16].copy_from_slice(&crc.to_be_bytes());
        b
    }

    #[test]
    fn a_run_stops_at_unusual_attributes_offsets_out_of_order_and_damage() {
        let mut buf = message(5, 1, 0, 3);
        buf.extend(message(6, 0, 0, 0));
        let second = buf.len();
        buf.extend(message(7, 1, 0x10, 0)); // an unused attribute bit: the slow path reports it
        let mut summary = RunSummary::default();
        let mut out = Vec::new();
        let end = clean_legacy_run(&buf, 0, buf.len(), usize::MAX, 4, 1 << 40, &mut summary, Some(&mut out));
        assert_eq!(end, second);
        assert_eq!(summary, RunSummary { count: 2, first_offset: 5, last_offset: 6, last_position: Some(37) });
        assert_eq!(out[0], RunMessage { position: 0, offset: 5, timestamp: 1005, next: 37 });
        assert_eq!(out[1].timestamp, -1);
        let mut none = RunSummary::default();
        assert_eq!(clean_legacy_run(&buf, 0, buf.len(), usize::MAX, 5, 1 << 40, &mut none, None), 0); // offset 5 <= floor
        assert_eq!(clean_legacy_run(&buf, 0, buf.len(), usize::MAX, 4, 6, &mut none, None), 37); // 6 overflows
        let mut torn = buf.clone();
        torn[55] ^= 1; // inside the second message's CRC-covered bytes
        assert_eq!(clean_legacy_run(&torn, 0, torn.len(), usize::MAX, 4, 1 << 40, &mut none, None), 37);
        assert_eq!(clean_legacy_run(&buf, 0, buf.len(), 1, 4, 1 << 40, &mut none, None), 37); // until reached
    }
}
