//! The V2 record scanner, as `kseg/format/records.py` (`scan_some_records`): a batch's records
//! as flat columns of integers, spans into the buffer instead of copies.
//!
//! Record layout (Kafka 4.3.0, clients/src/main/java/org/apache/kafka/common/record/internal/
//! DefaultRecord.java): length varint, attributes int8, timestampDelta varlong, offsetDelta varint,
//! keyLength varint + key, valueLength varint + value, header count varint, then per header
//! keyLength varint + key, valueLength varint + value. Varints are `ByteUtils.readVarint/Varlong`.
//!
//! Like the Python scanner this is not an authority: it answers only for well-formed records that
//! fill their region exactly and returns `None` at the first thing it does not expect; the
//! validating Python reader then explains the record with Kafka's messages.

/// Integers per record in [`RecordScan::fields`]: offset_delta, timestamp_delta, attributes,
/// key_start, key_length, value_start, value_length, header_count.
pub const RECORD_STRIDE: usize = 8;
/// Integers per header in [`RecordScan::header_fields`]: key start/length, value start/length.
pub const HEADER_STRIDE: usize = 4;
/// A record with more headers goes to the validating reader (`SCAN_MAX_HEADERS` in records.py).
pub const SCAN_MAX_HEADERS: i64 = 1 << 12;

/// The scanned columns, where the records end, and whether a timestamp delta took 3+ bytes.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RecordScan {
    pub fields: Vec<i64>,
    pub header_fields: Vec<i64>,
    pub end: usize,
    pub long_timestamps: bool,
}

/// LEB128 of at most `max_bytes` bytes below `limit`, accumulated as Java does (bits past the
/// type's width are lost); `None` past the limit or when the last allowed byte continues.
#[inline(always)]
fn unsigned(buf: &[u8], pos: usize, max_bytes: usize, limit: usize) -> Option<(u64, usize)> {
    let mut value = 0u64;
    for i in 0..max_bytes {
        let at = pos.checked_add(i)?;
        if at >= limit {
            return None;
        }
        let byte = *buf.get(at)?;
        value |= u64::from(byte & 0x7F) << (7 * i);
        if byte & 0x80 == 0 {
            return Some((value, at + 1));
        }
    }
    None
}

/// A zigzag int32 varint (`decode_varint`).
#[inline(always)]
fn varint(buf: &[u8], pos: usize, limit: usize) -> Option<(i64, usize)> {
    // one byte: the overwhelmingly common case
    if let Some(&b) = buf.get(pos) {
        if b < 0x80 && pos < limit {
            let raw = u32::from(b);
            return Some((i64::from(((raw >> 1) as i32) ^ -((raw & 1) as i32)), pos + 1));
        }
    }
    let (raw, next) = unsigned(buf, pos, 5, limit)?;
    let raw = raw as u32;
    Some((i64::from(((raw >> 1) as i32) ^ -((raw & 1) as i32)), next))
}

/// A zigzag int64 varlong (`decode_varlong`).
#[inline(always)]
fn varlong(buf: &[u8], pos: usize, limit: usize) -> Option<(i64, usize)> {
    let (raw, next) = unsigned(buf, pos, 10, limit)?;
    Some((((raw >> 1) as i64) ^ -((raw & 1) as i64), next))
}

/// `count` well-formed records from `buf[start..]`, as `scan_some_records` reads them (`None` at
/// anything else, including records that end past `end`).
pub fn scan_records(buf: &[u8], start: usize, end: usize, count: usize) -> Option<RecordScan> {
    if end > buf.len() || start > end || count > end - start {
        return None;
    }
    let len = buf.len();
    let mut out = RecordScan { fields: Vec::with_capacity(count * RECORD_STRIDE), ..Default::default() };
    let mut pos = start;
    for _ in 0..count {
        // the record's own length is read up to the buffer's end (records.py: no limit)
        let (length, p) = varint(buf, pos, len)?;
        let record_end = p as i64 + length; // may lie before p (a negative length): caught below
        pos = p;
        // every field below is read up to the buffer's end: a field past the record ends past it,
        // and `pos != record_end` rejects the record (positions only grow)
        let field_limit = if record_end < 0 { 0 } else { (record_end as u64).min(len as u64) as usize };
        let attributes = i64::from(*buf.get(pos)?);
        pos += 1;
        let (timestamp_delta, p, long_ts) = timestamp(buf, pos, field_limit)?;
        out.long_timestamps |= long_ts;
        let (offset_delta, p) = varint_inline(buf, p, field_limit)?;
        let (key_length, p) = varint_inline(buf, p, field_limit)?;
        let key_start = p;
        pos = if key_length > 0 { p.checked_add(key_length as usize)? } else { p };
        let (value_length, p) = varint_inline(buf, pos, field_limit)?;
        let value_start = p;
        pos = if value_length > 0 { p.checked_add(value_length as usize)? } else { p };
        let header_count;
        if *buf.get(pos)? == 0 {
            header_count = 0;
            pos += 1;
        } else {
            let (n, p) = headers(buf, pos, field_limit, record_end, &mut out.header_fields)?;
            header_count = n;
            pos = p;
        }
        if pos as i64 != record_end {
            return None;
        }
        out.fields.extend_from_slice(&[
            offset_delta,
            timestamp_delta,
            attributes,
            key_start as i64,
            key_length,
            value_start as i64,
            value_length,
            header_count,
        ]);
    }
    if pos > end {
        return None;
    }
    out.end = pos;
    Some(out)
}

/// A varint read as records.py's inline paths read it: one and two bytes need no limit (a read
/// past the record is rejected by the record's end check), longer ones stop at `limit`.
#[inline(always)]
fn varint_inline(buf: &[u8], pos: usize, limit: usize) -> Option<(i64, usize)> {
    let b = *buf.get(pos)?;
    if b < 0x80 {
        let raw = u32::from(b);
        return Some((i64::from(((raw >> 1) as i32) ^ -((raw & 1) as i32)), pos + 1));
    }
    let c = *buf.get(pos + 1)?;
    if c < 0x80 {
        let raw = u32::from(b & 0x7F) | (u32::from(c) << 7);
        return Some((i64::from(((raw >> 1) as i32) ^ -((raw & 1) as i32)), pos + 2));
    }
    varint(buf, pos, limit)
}

/// The timestamp delta: (value, next position, whether it took more than two bytes).
#[inline(always)]
fn timestamp(buf: &[u8], pos: usize, limit: usize) -> Option<(i64, usize, bool)> {
    let b = *buf.get(pos)?;
    if b < 0x80 {
        let raw = i64::from(b);
        return Some(((raw >> 1) ^ -(raw & 1), pos + 1, false));
    }
    let c = *buf.get(pos + 1)?;
    if c < 0x80 {
        let raw = i64::from(b & 0x7F) | (i64::from(c) << 7);
        return Some(((raw >> 1) ^ -(raw & 1), pos + 2, false));
    }
    let (value, next) = varlong(buf, pos, limit)?;
    Some((value, next, true))
}

/// One record's headers, four integers each into `out` (`_scan_headers`).
fn headers(buf: &[u8], pos: usize, limit: usize, record_end: i64, out: &mut Vec<i64>) -> Option<(i64, usize)> {
    let (count, mut pos) = varint(buf, pos, limit)?;
    if count < 0 || count > record_end - pos as i64 || count > SCAN_MAX_HEADERS {
        return None;
    }
    for _ in 0..count {
        let (key_length, p) = varint(buf, pos, limit)?;
        if key_length < 0 {
            return None;
        }
        let key_start = p;
        pos = p.checked_add(key_length as usize)?;
        let (value_length, p) = varint(buf, pos, limit)?;
        out.extend_from_slice(&[key_start as i64, key_length, p as i64, value_length]);
        pos = if value_length > 0 { p.checked_add(value_length as usize)? } else { p };
        if pos as i64 > record_end {
            return None;
        }
    }
    Some((count, pos))
}
