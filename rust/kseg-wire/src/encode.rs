//! Re-encoding records for `kseg convert`, as `kseg/format/v2_write.py` (`BatchEncoder.add`,
//! `encode_record`) and `kseg/format/v0v1_encode.py` (`MessageSetEncoder.add`) write them, from
//! the records of a source batch read in place (V2 records, or the messages of a V0/V1 set).
//!
//! Kafka's writer is `MemoryRecordsBuilder` (clients/src/main/java/org/apache/kafka/common/
//! record/internal/MemoryRecordsBuilder.java): `DefaultRecord.writeTo` for magic 2 (attributes 0,
//! timestamp and offset deltas from the batch's bases, headers), `LegacyRecord.write` for magic
//! 0/1 (CRC-32 of the message from its magic on).
//!
//! Nothing here refuses with a message: where the Python encoder would raise (offsets not
//! increasing, a negative timestamp, an offset delta past `Integer.MAX_VALUE`) -- or where it
//! would take an unusual path (a negative delta) -- these functions return `None` and the Python
//! encoder runs instead, raising Kafka's message. A source record the scanners do not accept
//! also gives `None`. Records are visited a chunk at a time: no column of a whole batch is held.

use crate::legacy::{self, Wrapper};
use crate::records::{scan_records, HEADER_STRIDE, RECORD_STRIDE};

/// Records scanned at a time from a V2 source (the columns of one chunk are held, no more).
const CHUNK: usize = 4096;
/// `DefaultRecord.MAX_RECORD_OVERHEAD` + the header-count varint, and two varint lengths per
/// header: `estimate_size` in kseg/ops/convert_build.py.
const V2_RECORD_ESTIMATE: i64 = 21 + 5;
const V2_HEADER_ESTIMATE: i64 = 10;
/// Log overhead + message overhead, magic 0 and 1 (`LEGACY_ENTRY_OVERHEAD`).
const LEGACY_ENTRY_ESTIMATE: [i64; 2] = [12 + 14, 12 + 22];

/// Where a source batch's records are and how they take their offsets and timestamps.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source {
    /// V2 records: the batch's base offset and base timestamp, and `Some(max timestamp)` for a
    /// LogAppendTime batch (every record then reports it: `V2Batch._records_of`).
    V2 { base_offset: i64, base_timestamp: i64, log_append: Option<i64> },
    /// The messages of a V0/V1 set.
    Legacy(Wrapper),
}

/// One source record, its key, value and headers as slices of the buffer.
#[derive(Clone, Copy, Debug)]
pub struct Rec<'a> {
    pub offset: i64,
    pub timestamp: i64,
    pub attributes: u8,
    pub key: Option<&'a [u8]>,
    pub value: Option<&'a [u8]>,
    /// Four integers per header: key start, key length, value start, value length (< 0: null).
    pub headers: &'a [i64],
}

fn span(buf: &[u8], start: i64, length: i64) -> Option<Option<&[u8]>> {
    if length < 0 {
        return Some(None);
    }
    let start = usize::try_from(start).ok()?;
    let end = start.checked_add(usize::try_from(length).ok()?)?;
    Some(Some(buf.get(start..end)?))
}

/// Visit `count` records starting at `pos` (`buf[..end]` holds the records); `f` returns false to
/// stop. Returns where the visited records end, or `None` when a record is not one the scanners
/// accept (or `f` stopped).
pub fn visit(
    buf: &[u8],
    end: usize,
    source: &Source,
    mut pos: usize,
    count: usize,
    mut f: impl FnMut(&Rec<'_>) -> bool,
) -> Option<usize> {
    let buf = buf.get(..end)?;
    match *source {
        Source::V2 { base_offset, base_timestamp, log_append } => {
            let mut left = count;
            while left > 0 {
                let n = left.min(CHUNK);
                let scan = scan_records(buf, pos, end, n)?;
                let mut h = 0usize;
                for r in scan.fields.chunks_exact(RECORD_STRIDE) {
                    let headers = usize::try_from(r[7]).ok()?.checked_mul(HEADER_STRIDE)?;
                    let rec = Rec {
                        offset: base_offset.wrapping_add(r[0]),
                        timestamp: log_append.unwrap_or_else(|| base_timestamp.wrapping_add(r[1])),
                        attributes: r[2] as u8,
                        key: span(buf, r[3], r[4])?,
                        value: span(buf, r[5], r[6])?,
                        headers: scan.header_fields.get(h..h.checked_add(headers)?)?,
                    };
                    h += headers;
                    if !f(&rec) {
                        return None;
                    }
                }
                pos = scan.end;
                left -= n;
            }
            Some(pos)
        }
        Source::Legacy(wrapper) => {
            for _ in 0..count {
                let m = legacy::message(buf, pos, &wrapper)?;
                let key = span(buf, m.key.0 as i64, i64::from(m.key.1))?;
                let value = span(buf, m.value.0 as i64, i64::from(m.value.1))?;
                let rec = Rec { offset: m.offset, timestamp: m.timestamp, attributes: m.attributes, key, value, headers: &[] };
                if !f(&rec) {
                    return None;
                }
                pos = m.next;
            }
            Some(pos)
        }
    }
}

/// What `convert_source.BatchSummary` sums up of a batch's records.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Summary {
    pub count: i64,
    pub first_offset: i64,
    pub first_timestamp: i64,
    /// The first record's key span (start, length < 0: null).
    pub first_key: (i64, i64),
    pub max_timestamp: i64,
    pub any_attributes: bool,
    pub timestamps_set: i64,
    pub key_value_bytes: i64,
    pub header_records: i64,
    pub headers: i64,
    pub header_bytes: i64,
    /// (offset, header count) of the first record with headers, or (0, -1).
    pub first_with_headers: (i64, i64),
    /// Where the records end.
    pub end: usize,
}

/// The summary of `count` records from `pos`, or `None` when one is not accepted.
pub fn summarize(buf: &[u8], end: usize, source: &Source, pos: usize, count: usize) -> Option<Summary> {
    let mut s = Summary { max_timestamp: -1, first_with_headers: (0, -1), first_key: (0, -1), ..Default::default() };
    let base = buf.as_ptr() as usize;
    let stop = visit(buf, end, source, pos, count, |r| {
        if s.count == 0 {
            s.first_offset = r.offset;
            s.first_timestamp = r.timestamp;
            s.first_key = match r.key {
                Some(k) => ((k.as_ptr() as usize - base) as i64, k.len() as i64),
                None => (0, -1),
            };
        }
        s.count += 1;
        s.max_timestamp = s.max_timestamp.max(r.timestamp);
        s.any_attributes |= r.attributes != 0;
        s.timestamps_set += i64::from(r.timestamp != -1);
        s.key_value_bytes += r.key.map_or(0, |k| k.len() as i64) + r.value.map_or(0, |v| v.len() as i64);
        if !r.headers.is_empty() {
            let n = (r.headers.len() / HEADER_STRIDE) as i64;
            if s.first_with_headers.1 < 0 {
                s.first_with_headers = (r.offset, n);
            }
            s.header_records += 1;
            s.headers += n;
            s.header_bytes += r.headers.chunks_exact(HEADER_STRIDE).map(|h| h[1] + h[3].max(0)).sum::<i64>();
        }
        true
    })?;
    s.end = stop;
    Some(s)
}

/// `estimate_size` of a record in the target magic (the whole entry for magic 0/1).
pub fn estimate(r: &Rec<'_>, magic: i8) -> i64 {
    let size = r.key.map_or(0, |k| k.len() as i64) + r.value.map_or(0, |v| v.len() as i64);
    if magic < 2 {
        return LEGACY_ENTRY_ESTIMATE[usize::from(magic == 1)] + size;
    }
    let headers: i64 = r.headers.chunks_exact(HEADER_STRIDE).map(|h| V2_HEADER_ESTIMATE + h[1] + h[3].max(0)).sum();
    V2_RECORD_ESTIMATE + size + headers
}

/// `Converter._split`'s greedy cut over `count` records: the index of each part's first record
/// after the first (a part ends before the record that would take it past `budget`).
pub fn cuts(buf: &[u8], end: usize, source: &Source, pos: usize, count: usize, budget: i64, magic: i8) -> Option<Vec<usize>> {
    let (mut out, mut start, mut running, mut index) = (Vec::new(), 0usize, 0i64, 0usize);
    visit(buf, end, source, pos, count, |r| {
        let size = estimate(r, magic);
        if index > start && running + size > budget {
            out.push(index);
            start = index;
            running = 0;
        }
        running += size;
        index += 1;
        true
    })?;
    Some(out)
}

/// What an encoded run of records tells the batch being built.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Encoded {
    pub first_offset: i64,
    pub first_timestamp: i64,
    pub last_offset: i64,
    /// The largest timestamp written (from `max_timestamp` on).
    pub max_timestamp: i64,
    /// Where the encoded records end in the source.
    pub next: usize,
}

/// How a run of records is written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Target {
    /// 0, 1 or 2.
    pub magic: i8,
    /// Magic 2: offsets and timestamps are deltas from these; `None`: the first record's.
    /// Magic 0/1: `base_offset` is what inner offsets are relative to when `relative` is set.
    pub base_offset: Option<i64>,
    pub base_timestamp: Option<i64>,
    /// The last offset already written to this batch, if any: offsets must go on increasing.
    pub previous_offset: Option<i64>,
    /// The running maximum timestamp of the batch so far (-1 at its start).
    pub max_timestamp: i64,
    /// Magic 0/1: inner offsets relative to `base_offset` (a magic-1 wrapper's inner messages).
    pub relative: bool,
    /// Magic 1: LogAppendTime with this time (inner attributes then carry the timestamp type).
    pub log_append_time: Option<i64>,
}

fn unsigned_varint(out: &mut Vec<u8>, mut raw: u64) {
    while raw >= 0x80 {
        out.push((raw as u8 & 0x7F) | 0x80);
        raw >>= 7;
    }
    out.push(raw as u8);
}

fn varint(out: &mut Vec<u8>, value: i32) {
    unsigned_varint(out, u64::from(((value << 1) ^ (value >> 31)) as u32));
}

fn varlong(out: &mut Vec<u8>, value: i64) {
    unsigned_varint(out, ((value << 1) ^ (value >> 63)) as u64);
}

fn v2_sized(out: &mut Vec<u8>, data: Option<&[u8]>) -> Option<()> {
    match data {
        None => varint(out, -1),
        Some(d) => {
            varint(out, i32::try_from(d.len()).ok()?);
            out.extend_from_slice(d);
        }
    }
    Some(())
}

/// One V2 record (`encode_record`): length varint, then the body.
fn v2_record(out: &mut Vec<u8>, body: &mut Vec<u8>, buf: &[u8], r: &Rec<'_>, offset_delta: i32, timestamp_delta: i64) -> Option<()> {
    body.clear();
    body.push(0);
    varlong(body, timestamp_delta);
    varint(body, offset_delta);
    v2_sized(body, r.key)?;
    v2_sized(body, r.value)?;
    varint(body, i32::try_from(r.headers.len() / HEADER_STRIDE).ok()?);
    for h in r.headers.chunks_exact(HEADER_STRIDE) {
        v2_sized(body, span(buf, h[0], h[1])?)?;
        v2_sized(body, span(buf, h[2], h[3])?)?;
    }
    varint(out, i32::try_from(body.len()).ok()?);
    out.extend_from_slice(body);
    Some(())
}

/// One V0/V1 entry (`encode_entry(offset, encode_message(...))`).
fn legacy_entry(out: &mut Vec<u8>, magic: i8, attributes: u8, offset: i64, timestamp: i64, r: &Rec<'_>) -> Option<()> {
    let size = 4 + 2 + if magic == 1 { 8 } else { 0 } + 8 + r.key.map_or(0, <[u8]>::len) + r.value.map_or(0, <[u8]>::len);
    out.extend_from_slice(&offset.to_be_bytes());
    out.extend_from_slice(&i32::try_from(size).ok()?.to_be_bytes());
    let crc_at = out.len();
    out.extend_from_slice(&[0, 0, 0, 0, magic as u8, attributes]);
    if magic == 1 {
        out.extend_from_slice(&timestamp.to_be_bytes());
    }
    for part in [r.key, r.value] {
        match part {
            None => out.extend_from_slice(&(-1i32).to_be_bytes()),
            Some(d) => {
                out.extend_from_slice(&i32::try_from(d.len()).ok()?.to_be_bytes());
                out.extend_from_slice(d);
            }
        }
    }
    let crc = crc32fast::hash(out.get(crc_at + 4..)?);
    out.get_mut(crc_at..crc_at + 4)?.copy_from_slice(&crc.to_be_bytes());
    Some(())
}

/// Encode `count` records from `pos` into `out` for `target`, or `None` (see the module comment:
/// the Python encoder then runs and raises what Kafka's builder throws).
pub fn encode(buf: &[u8], end: usize, source: &Source, pos: usize, count: usize, target: &Target, out: &mut Vec<u8>) -> Option<Encoded> {
    let mut done = Encoded { max_timestamp: target.max_timestamp, ..Default::default() };
    let (mut previous, mut base_offset, mut base_timestamp) = (target.previous_offset, target.base_offset, target.base_timestamp);
    let mut body = Vec::new();
    let mut first = true;
    let next = visit(buf, end, source, pos, count, |r| {
        if first {
            done.first_offset = r.offset;
            done.first_timestamp = r.timestamp;
            first = false;
        }
        // MemoryRecordsBuilder.appendWithOffset: offsets strictly increase, then the timestamp
        if previous.is_some_and(|p| r.offset <= p) || (r.timestamp < 0 && r.timestamp != -1) {
            return false;
        }
        let base = *base_offset.get_or_insert(r.offset);
        // recordWritten: offset - baseOffset <= Integer.MAX_VALUE (a negative one: Python's path)
        let delta = i128::from(r.offset) - i128::from(base);
        if !(0..=i128::from(i32::MAX)).contains(&delta) {
            return false;
        }
        let ok = if target.magic == 2 {
            let base_ts = *base_timestamp.get_or_insert(r.timestamp);
            done.max_timestamp = done.max_timestamp.max(r.timestamp);
            v2_record(out, &mut body, buf, r, delta as i32, r.timestamp.wrapping_sub(base_ts))
        } else {
            let (attributes, mut timestamp) = match target.log_append_time {
                Some(t) if target.magic == 1 => (legacy::TIMESTAMP_TYPE_MASK, t),
                _ => (0, r.timestamp),
            };
            if target.magic == 0 {
                timestamp = -1;
            }
            if timestamp < 0 && timestamp != -1 {
                return false; // encode_message: "Invalid message timestamp"
            }
            done.max_timestamp = done.max_timestamp.max(timestamp);
            let offset = if target.relative { delta as i64 } else { r.offset };
            legacy_entry(out, target.magic, attributes, offset, timestamp, r)
        };
        previous = Some(r.offset);
        done.last_offset = r.offset;
        ok.is_some()
    })?;
    done.next = next;
    Some(done)
}

/// Where the record `count` records after `pos` starts (for a part cut at a given index).
pub fn seek(buf: &[u8], end: usize, source: &Source, pos: usize, count: usize) -> Option<usize> {
    visit(buf, end, source, pos, count, |_| true)
}
