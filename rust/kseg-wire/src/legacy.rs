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

/// What [`inner_walk`] found in a region of decompressed inner entries (`kseg/format/legacy_inner.py`'s
/// `python_inner_walk`): where it stopped, the whole entries, the first and last stored offsets,
/// whether the first has codec bits, the entry whose size is below the V0 minimum (the walk stops
/// there), and the position and number of the first message kseg's reader refuses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct InnerWalk {
    pub stop: usize,
    pub count: usize,
    pub first: i64,
    pub last: i64,
    pub first_compressed: bool,
    pub size_problem: Option<usize>,
    pub record_problem: Option<usize>,
    pub record_index: usize,
}

/// Whether kseg's reader refuses the whole message at `pos` ending at `end`: codec bits, or a key
/// or value length that runs past the message. `end` is within `buf` (the caller checked).
fn refused(buf: &[u8], pos: usize, end: usize) -> bool {
    let (Some(&attributes), Some(&magic)) = (buf.get(pos + 17), buf.get(pos + 16)) else {
        return true;
    };
    if attributes & CODEC_MASK != 0 {
        return true;
    }
    let key_at = pos + if magic == 0 { KEY_AT_V0 } else { KEY_AT_V1 };
    match sized(buf, key_at, end) {
        Some((_, next)) => sized(buf, next, end).is_none(),
        None => true,
    }
}

/// Pass 1 over a wrapper's decompressed bytes: the whole entries of `buf[start..end]`, split as
/// `DataLogInputStream.nextBatch` splits them. Stops at the first entry not yet whole (the caller
/// brings more bytes) or at a size below the V0 minimum (`size_problem`).
pub fn inner_walk(buf: &[u8], start: usize, end: usize) -> InnerWalk {
    let end = end.min(buf.len());
    let mut out = InnerWalk { stop: start, ..InnerWalk::default() };
    let mut pos = start;
    while end.saturating_sub(pos) >= LOG_OVERHEAD {
        let (Some(offset), Some(size)) = (i64_at(buf, pos), i32_at(buf, pos + SIZE_OFFSET)) else {
            break;
        };
        if size < MIN_RECORD_OVERHEAD {
            out.size_problem = Some(pos);
            break;
        }
        let size = size as usize;
        if size > end - pos - LOG_OVERHEAD {
            break;
        }
        let next = pos + LOG_OVERHEAD + size;
        if out.count == 0 {
            out.first = offset;
            out.first_compressed = buf[pos + 17] & CODEC_MASK != 0;
        }
        if out.record_problem.is_none() && refused(buf, pos, next) {
            out.record_problem = Some(pos);
            out.record_index = out.count;
        }
        out.last = offset;
        out.count += 1;
        pos = next;
    }
    out.stop = pos;
    out
}

/// What [`inner_check`] looks at of one inner message: it fails its CRC-32 (value: the stored crc),
/// has another magic than its wrapper (value: the magic), or an offset not above the previous one
/// (value: the previous offset).
pub const BAD_CRC: u8 = 0;
pub const OTHER_MAGIC: u8 = 1;
pub const OUT_OF_ORDER: u8 = 2;

/// What [`inner_check`] found (`python_inner_check`): where it stopped, how many messages, the
/// first and last absolute offsets, the largest timestamp, and the (index, kind, offset, value) of
/// every message with something to report, in order.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct InnerCheck {
    pub stop: usize,
    pub count: usize,
    pub first: i64,
    pub last: i64,
    pub largest: i64,
    pub events: Vec<(usize, u8, i64, i64)>,
}

/// `verify --deep`'s look at each whole inner message of `buf[start..end]` under `wrapper` (pass 2,
/// after [`inner_walk`] passed them all): `index` numbers the first, `previous` is the offset before
/// it (none for a wrapper's first), `largest` the largest timestamp so far.
pub fn inner_check(
    buf: &[u8],
    start: usize,
    end: usize,
    wrapper: &Wrapper,
    index: usize,
    mut previous: Option<i64>,
    largest: i64,
) -> InnerCheck {
    let end = end.min(buf.len());
    let mut out = InnerCheck { stop: start, largest, ..InnerCheck::default() };
    let mut pos = start;
    while end.saturating_sub(pos) >= LOG_OVERHEAD {
        let (Some(stored), Some(size)) = (i64_at(buf, pos), i32_at(buf, pos + SIZE_OFFSET)) else {
            break;
        };
        if size < MIN_RECORD_OVERHEAD || size as usize > end - pos - LOG_OVERHEAD {
            break;
        }
        let next = pos + LOG_OVERHEAD + size as usize;
        let offset = match wrapper.base {
            Some(base) => base.wrapping_add(stored),
            None => stored,
        };
        let magic = buf[pos + 16] as i8;
        let crc = crate::read::u32_at(buf, pos + 12).unwrap_or(0);
        let at = index + out.count;
        if crate::walk::crc32(&buf[pos + 16..next]) != crc {
            out.events.push((at, BAD_CRC, offset, i64::from(crc)));
        }
        if magic != wrapper.magic {
            out.events.push((at, OTHER_MAGIC, offset, i64::from(magic)));
        }
        if let Some(previous) = previous.filter(|p| offset <= *p) {
            out.events.push((at, OUT_OF_ORDER, offset, previous));
        }
        let timestamp = if magic == 0 {
            -1
        } else if magic == 1 && wrapper.magic == 1 && wrapper.log_append {
            wrapper.timestamp
        } else {
            i64_at(buf, pos + TIMESTAMP_AT).unwrap_or(-1) // a size of 14 or more holds it
        };
        if out.count == 0 {
            out.first = offset;
        }
        out.largest = out.largest.max(timestamp);
        out.last = offset;
        previous = Some(offset);
        out.count += 1;
        pos = next;
    }
    out.stop = pos;
    out
}

/// One inner message as `_shallow_record` reads it under a wrapper (`_stream_records`): every field
/// of kseg's `Record` but the constants, spans instead of copies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct InnerRecord {
    pub offset: i64,
    pub timestamp: i64,
    /// 0 NoTimestampType (magic 0), 1 CreateTime, 2 LogAppendTime.
    pub timestamp_type: u8,
    pub attributes: u8,
    /// (start, stored length); a negative length is a null.
    pub key: (usize, i32),
    pub value: (usize, i32),
    pub magic: i8,
    pub crc: u32,
    pub valid: bool,
    pub next: usize,
}

/// The whole inner message at `pos` (ending by `end`) as a record under `wrapper`, or `None` for one
/// the Python path reads instead: not whole, an inner magic other than 0 and 1, or one kseg's reader
/// refuses (codec bits, a key or value running past the message).
pub fn inner_record(buf: &[u8], pos: usize, end: usize, wrapper: &Wrapper) -> Option<InnerRecord> {
    let end = end.min(buf.len());
    if end.checked_sub(pos)? < LOG_OVERHEAD {
        return None;
    }
    let size = i32_at(buf, pos + SIZE_OFFSET)?;
    if size < MIN_RECORD_OVERHEAD || size as usize > end - pos - LOG_OVERHEAD {
        return None;
    }
    let next = pos + LOG_OVERHEAD + size as usize;
    let magic = i8_at(buf, pos + 16)?;
    let attributes = *buf.get(pos + 17)?;
    if attributes & CODEC_MASK != 0 || !(magic == 0 || magic == 1) {
        return None;
    }
    let key_at = if magic == 0 { KEY_AT_V0 } else { KEY_AT_V1 };
    let (key, p) = sized(buf, pos + key_at, next)?;
    let (value, _) = sized(buf, p, next)?;
    let crc = crate::read::u32_at(buf, pos + 12)?;
    let valid = crate::walk::crc32(buf.get(pos + 16..next)?) == crc;
    let (timestamp, timestamp_type) = if magic == 0 {
        (-1, 0)
    } else if wrapper.magic == 1 && wrapper.log_append {
        (wrapper.timestamp, 2)
    } else if wrapper.magic == 1 {
        (i64_at(buf, pos + TIMESTAMP_AT)?, 1)
    } else {
        (i64_at(buf, pos + TIMESTAMP_AT)?, if attributes & TIMESTAMP_TYPE_MASK != 0 { 2 } else { 1 })
    };
    let offset = match wrapper.base {
        Some(base) => base.wrapping_add(i64_at(buf, pos)?),
        None => i64_at(buf, pos)?,
    };
    Some(InnerRecord { offset, timestamp, timestamp_type, attributes, key, value, magic, crc, valid, next })
}

#[cfg(test)]
mod inner_tests {
    use super::*;

    fn entry(offset: i64, magic: u8, attributes: u8, key: Option<&[u8]>, value: &[u8]) -> Vec<u8> {
        let mut body = vec![magic, attributes];
        if magic == 1 {
            body.extend(500i64.to_be_bytes());
        }
        match key {
            Some(k) => {
                body.extend((k.len() as i32).to_be_bytes());
                body.extend(k);
            }
            None => body.extend((-1i32).to_be_bytes()),
        }
        body.extend((value.len() as i32).to_be_bytes());
        body.extend(value);
        let mut b = offset.to_be_bytes().to_vec();
        b.extend(((body.len() + 4) as i32).to_be_bytes());
        b.extend(crate::walk::crc32(&body).to_be_bytes());
        b.extend(body);
        b
    }

    #[test]
    fn a_walk_counts_whole_entries_and_stops_where_one_is_cut_or_too_small() {
        let mut buf = entry(0, 1, 0, None, b"a");
        buf.extend(entry(1, 0, 1, Some(b"k"), b"b")); // codec bits: refused, counted
        let whole = buf.len();
        buf.extend(entry(2, 1, 0, None, b"c"));
        let walked = inner_walk(&buf, 0, buf.len() - 1);
        assert_eq!((walked.stop, walked.count, walked.first, walked.last), (whole, 2, 0, 1));
        assert_eq!((walked.record_problem, walked.record_index, walked.first_compressed), (Some(35), 1, false));
        let mut small = buf.clone();
        small[whole + 8..whole + 12].copy_from_slice(&13i32.to_be_bytes());
        assert_eq!(inner_walk(&small, 0, small.len()).size_problem, Some(whole));
        let mut long_key = entry(7, 1, 0, Some(b"kk"), b"");
        long_key[26..30].copy_from_slice(&9i32.to_be_bytes()); // the key runs past the message
        assert_eq!(inner_walk(&long_key, 0, long_key.len()).record_problem, Some(0));
        assert_eq!(inner_walk(&buf, 5, 3).stop, 5); // an empty region
    }

    #[test]
    fn a_check_reports_crc_magic_and_order_with_absolute_offsets() {
        let mut buf = entry(0, 1, 0, None, b"a");
        let mut bad = entry(1, 0, 0, None, b"b");
        bad[26] ^= 1;
        buf.extend(bad);
        buf.extend(entry(2, 1, 0, None, b"c"));
        let wrapper = Wrapper { magic: 1, base: Some(i64::MAX - 1), timestamp: 9, log_append: false };
        let checked = inner_check(&buf, 0, buf.len(), &wrapper, 4, None, i64::MIN);
        assert_eq!((checked.count, checked.first, checked.last, checked.largest), (3, i64::MAX - 1, i64::MIN, 500));
        let crc = i64::from(u32::from_be_bytes(buf[35 + 12..35 + 16].try_into().unwrap()));
        assert_eq!(
            checked.events,
            vec![(5, BAD_CRC, i64::MAX, crc), (5, OTHER_MAGIC, i64::MAX, 0), (6, OUT_OF_ORDER, i64::MIN, i64::MAX)]
        );
        let log_append = Wrapper { log_append: true, ..wrapper };
        assert_eq!(inner_check(&buf, 0, buf.len(), &log_append, 0, None, i64::MIN).largest, 9);
    }
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
