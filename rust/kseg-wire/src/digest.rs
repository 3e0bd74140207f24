//! `kseg diff`'s batch digests (kseg/format/digest.py is the pure-Python reference): a window of a
//! segment walked as `BatchWalk(strict=False).frames()` frames it, and for each V2 batch its header
//! fields, a 128-bit digest of its CRC-covered bytes and, where its records are stored
//! uncompressed and well-formed, the digest of its records as a consumer reads them.
//!
//! * content digest: BLAKE2b-128 of `batch[21..]` (attributes to the end: what the CRC covers);
//!   two batches over the same offsets are byte-identical when size, leader epoch, magic, CRC and
//!   this digest agree, and hold the same records in another leader epoch when only the digest does.
//! * records digest: the sum, modulo 2^128, of each record's BLAKE2b-128 (read little-endian) of
//!   its canonical form (`canonical_record`). A sum does not depend on how records are cut into
//!   batches, so a window of batches on one replica compares with another cut on the other.

use crate::blake2b::{blake2b_128, Blake2b};
use crate::records::{scan_records, HEADER_STRIDE, RECORD_STRIDE};
use crate::layout::{RECORD_BATCH_OVERHEAD, V2_ATTRIBUTES_OFFSET};
use crate::walk::{walk, Frame, Step};

const CODEC_MASK: i16 = 0x07;
const TIMESTAMP_TYPE_MASK: i16 = 0x08;
const TRANSACTIONAL_MASK: i16 = 0x10;
const CONTROL_MASK: i16 = 0x20;

/// One framed entry of the window; `content` and `records` are `None` for magic 0/1 entries and
/// V2 entries too short for a header (the Python side computes those), `records` also for
/// compressed or malformed records.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BatchDigest {
    pub frame: Frame,
    pub content: Option<[u8; 16]>,
    pub records: Option<[u8; 16]>,
}

/// The flags byte of the canonical record: 1 transactional, 2 control.
pub fn record_flags(attributes: i16) -> u8 {
    u8::from(attributes & TRANSACTIONAL_MASK != 0) | (u8::from(attributes & CONTROL_MASK != 0) << 1)
}

fn field(out: &mut Vec<u8>, part: Option<&[u8]>) {
    match part {
        None => out.push(0xFF),
        Some(bytes) => {
            out.push(0);
            out.extend_from_slice(&(bytes.len() as u32).to_be_bytes());
            out.extend_from_slice(bytes);
        }
    }
}

/// One record's canonical bytes: offset, timestamp and producer id (int64 big-endian), the flags
/// byte, key and value (`0xFF` for null, else `0x00`, uint32 length, bytes), the header count
/// (uint32), then each header's key and value framed alike. digest.py's `canonical_record`.
#[allow(clippy::too_many_arguments)]
pub fn canonical_record(
    out: &mut Vec<u8>,
    offset: i64,
    timestamp: i64,
    producer_id: i64,
    flags: u8,
    key: Option<&[u8]>,
    value: Option<&[u8]>,
    headers: &[(&[u8], Option<&[u8]>)],
) {
    out.clear();
    out.extend_from_slice(&offset.to_be_bytes());
    out.extend_from_slice(&timestamp.to_be_bytes());
    out.extend_from_slice(&producer_id.to_be_bytes());
    out.push(flags);
    field(out, key);
    field(out, value);
    out.extend_from_slice(&(headers.len() as u32).to_be_bytes());
    for (name, value) in headers {
        field(out, Some(name));
        field(out, *value);
    }
}

/// A record's share of a records digest.
pub fn record_share(canonical: &[u8]) -> u128 {
    u128::from_le_bytes(blake2b_128(canonical))
}

fn span(buf: &[u8], start: i64, length: i64) -> Option<Option<&[u8]>> {
    if length < 0 {
        return Some(None);
    }
    buf.get(start as usize..(start as usize).checked_add(length as usize)?).map(Some)
}

/// The records digest of the uncompressed V2 batch at `pos..next`, or `None` where the scanner
/// does not read its records exactly to the batch's end (the Python reader decides those).
fn records_digest(buf: &[u8], pos: usize, next: usize, header: &crate::walk::V2Header) -> Option<[u8; 16]> {
    if header.attributes & CODEC_MASK != 0 || header.records_count < 0 {
        return None;
    }
    let start = pos.checked_add(RECORD_BATCH_OVERHEAD)?;
    if start > next {
        return None;
    }
    let count = header.records_count as usize;
    let scan = scan_records(buf, start, next, count)?;
    if scan.end != next || scan.fields.len() != count * RECORD_STRIDE {
        return None;
    }
    let flags = record_flags(header.attributes);
    let log_append = header.attributes & TIMESTAMP_TYPE_MASK != 0;
    let mut sum = 0u128;
    let mut canonical = Vec::new();
    let mut header_index = 0usize;
    let mut pairs: Vec<(&[u8], Option<&[u8]>)> = Vec::new();
    for f in scan.fields.chunks_exact(RECORD_STRIDE) {
        let offset = header.base_offset.wrapping_add(f[0]);
        let timestamp = if log_append { header.max_timestamp } else { header.base_timestamp.wrapping_add(f[1]) };
        let key = span(buf, f[3], f[4])?;
        let value = span(buf, f[5], f[6])?;
        pairs.clear();
        for _ in 0..f[7] {
            let h = scan.header_fields.get(header_index * HEADER_STRIDE..(header_index + 1) * HEADER_STRIDE)?;
            pairs.push((span(buf, h[0], h[1])??, span(buf, h[2], h[3])?));
            header_index += 1;
        }
        canonical_record(&mut canonical, offset, timestamp, header.producer_id, flags, key, value, &pairs);
        sum = sum.wrapping_add(record_share(&canonical));
    }
    Some(sum.to_le_bytes())
}

/// BLAKE2b-128 of the bytes the batch's CRC covers (`batch[21..]`; empty when shorter).
pub fn content_digest(buf: &[u8], pos: usize, next: usize) -> [u8; 16] {
    let mut state = Blake2b::<16>::new();
    if let Some(covered) = buf.get(pos.saturating_add(V2_ATTRIBUTES_OFFSET)..next) {
        state.update(covered);
    }
    state.finalize()
}

/// Up to `max_frames` entries of `buf[start..limit]` with their digests; `Step` as [`walk`]'s.
pub fn batch_digests(buf: &[u8], start: usize, limit: usize, max_frames: usize, out: &mut Vec<BatchDigest>) -> Step {
    let mut frames = Vec::new();
    let step = walk(buf, start, limit, false, max_frames, usize::MAX, &mut frames);
    out.extend(frames.into_iter().map(|frame| {
        let (content, records) = match &frame.header {
            Some(h) => (
                Some(content_digest(buf, frame.position, frame.next)),
                records_digest(buf, frame.position, frame.next, h),
            ),
            None => (None, None),
        };
        BatchDigest { frame, content, records }
    }));
    step
}

/// A key's or value's 64-bit fingerprint: the first 8 bytes (little-endian) of its BLAKE2b-128.
pub fn fingerprint(bytes: &[u8]) -> u64 {
    let d = blake2b_128(bytes);
    let mut low = [0u8; 8];
    low.copy_from_slice(&d[..8]);
    u64::from_le_bytes(low)
}

/// Whether a key falls in bucket `bucket` of `2^bits` (1 <= bits <= 32): the top `bits` bits of
/// its CRC-32 (`zlib.crc32`), a cheap spread computed before the fingerprint, which only the keys
/// of the bucket get.
#[inline]
pub fn in_bucket(key: &[u8], bits: u32, bucket: u64) -> bool {
    bits == 0 || u64::from(crate::walk::crc32(key) >> (32 - bits.min(32))) == bucket
}

/// A keyed record of a bucket: (key fingerprint, (offset, value fingerprint or None for a tombstone)),
/// the shape a Python `dict.update` takes.
pub type Keyed = (u64, (i64, Option<u64>));

/// One item of [`keyed_digests`]: the keyed records of a run of consecutive plain batches (V2,
/// neither transactional nor control, records uncompressed and read exactly), or one batch the
/// Python side reads itself -- with its keyed records where the core read them (a transactional
/// batch), else `None` (magic 0/1, no header, control, compressed, records the scanner leaves).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum KeyedItem {
    Run(Vec<Keyed>),
    Batch(Frame, Option<Vec<Keyed>>),
}

fn keyed_of(buf: &[u8], pos: usize, next: usize, h: &crate::walk::V2Header, bits: u32, bucket: u64) -> Option<Vec<Keyed>> {
    if h.attributes & (CODEC_MASK | CONTROL_MASK) != 0 || h.records_count < 0 {
        return None;
    }
    let start = pos.checked_add(RECORD_BATCH_OVERHEAD)?;
    let count = h.records_count as usize;
    let scan = scan_records(buf, start, next, count)?;
    if scan.end != next || scan.fields.len() != count * RECORD_STRIDE {
        return None;
    }
    let mut out = Vec::new();
    for f in scan.fields.chunks_exact(RECORD_STRIDE) {
        let Some(key) = span(buf, f[3], f[4])? else { continue };
        if in_bucket(key, bits, bucket) {
            let value = span(buf, f[5], f[6])?.map(fingerprint);
            out.push((fingerprint(key), (h.base_offset.wrapping_add(f[0]), value)));
        }
    }
    Some(out)
}

/// What [`keyed_digests`] did: more to do from a position, or the window (or the log, a batch at
/// or past `log_end` reached) is done.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeyedStep {
    More(usize),
    Done,
    LogEnd,
}

/// `kseg diff`'s read_committed fold, the core's part (digest.py's `keyed_digests`): up to
/// `max_frames` entries of `buf[start..limit]` with a V2 header and `last >= log_start`, stopping
/// at the first with `base >= log_end`; the keyed records whose key fingerprint lies in the bucket,
/// plain batches' merged into runs. Entries without a V2 header are passed on unfiltered.
#[allow(clippy::too_many_arguments)]
pub fn keyed_digests(
    buf: &[u8],
    start: usize,
    limit: usize,
    max_frames: usize,
    bits: u32,
    bucket: u64,
    offsets: (i64, i64),
    out: &mut Vec<KeyedItem>,
) -> KeyedStep {
    let (log_start, log_end) = offsets;
    let mut frames = Vec::new();
    let step = walk(buf, start, limit, false, max_frames, usize::MAX, &mut frames);
    for frame in frames {
        let Some(h) = frame.header else {
            out.push(KeyedItem::Batch(frame, None));
            continue;
        };
        if h.base_offset >= log_end {
            return KeyedStep::LogEnd;
        }
        if h.base_offset.wrapping_add(i64::from(h.last_offset_delta)) < log_start {
            continue;
        }
        let keyed = keyed_of(buf, frame.position, frame.next, &h, bits, bucket);
        match keyed {
            Some(records) if h.attributes & TRANSACTIONAL_MASK == 0 => match out.last_mut() {
                Some(KeyedItem::Run(run)) => run.extend(records),
                _ if records.is_empty() => {}
                _ => out.push(KeyedItem::Run(records)),
            },
            keyed => out.push(KeyedItem::Batch(frame, keyed)),
        }
    }
    match step {
        Step::More(pos) => KeyedStep::More(pos),
        Step::Ended(_) => KeyedStep::Done,
    }
}
