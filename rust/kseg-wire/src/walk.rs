//! The one batch walker, as `kseg/format/walk.py` (`BatchWalk.frames`, `BatchWalk.valid_v2_run`).
//!
//! Framing follows Kafka 4.3.0's `FileLogInputStream.nextBatch`
//! (clients/src/main/java/org/apache/kafka/common/record/internal/FileLogInputStream.java):
//! 17 or fewer bytes left -> no more batches; a size field below 14 -> `CorruptRecordException`
//! (here: [`EndReason::BadSize`], the Python walker raises or stops); an entry running past the
//! end -> no more batches. No maximum size, CRC or offset order is checked while framing.

use crate::layout::{
    HEADER_SIZE_UP_TO_MAGIC, LOG_OVERHEAD, MAGIC_OFFSET, MIN_RECORD_OVERHEAD, MIN_V2_BATCH_LENGTH,
    RECORD_BATCH_OVERHEAD, SIZE_OFFSET, V2_ATTRIBUTES_OFFSET,
};
use crate::read::{i16_at, i32_at, i64_at, i8_at, u32_at};

/// The 61-byte V2 batch header, fields in the order of `BATCH_HEADER` in layout.py.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct V2Header {
    pub base_offset: i64,
    pub batch_length: i32,
    pub partition_leader_epoch: i32,
    pub magic: i8,
    pub crc: u32,
    pub attributes: i16,
    pub last_offset_delta: i32,
    pub base_timestamp: i64,
    pub max_timestamp: i64,
    pub producer_id: i64,
    pub producer_epoch: i16,
    pub base_sequence: i32,
    pub records_count: i32,
}

impl V2Header {
    /// The header at `pos`, or `None` if fewer than 61 bytes are there.
    pub fn parse(buf: &[u8], pos: usize) -> Option<V2Header> {
        let h = buf.get(pos..pos.checked_add(RECORD_BATCH_OVERHEAD)?)?;
        Some(V2Header {
            base_offset: i64_at(h, 0)?,
            batch_length: i32_at(h, 8)?,
            partition_leader_epoch: i32_at(h, 12)?,
            magic: i8_at(h, 16)?,
            crc: u32_at(h, 17)?,
            attributes: i16_at(h, 21)?,
            last_offset_delta: i32_at(h, 23)?,
            base_timestamp: i64_at(h, 27)?,
            max_timestamp: i64_at(h, 35)?,
            producer_id: i64_at(h, 43)?,
            producer_epoch: i16_at(h, 51)?,
            base_sequence: i32_at(h, 53)?,
            records_count: i32_at(h, 57)?,
        })
    }

    /// The fields as the Python tuple holds them.
    pub fn as_array(&self) -> [i64; 13] {
        [
            self.base_offset,
            self.batch_length.into(),
            self.partition_leader_epoch.into(),
            self.magic.into(),
            self.crc.into(),
            self.attributes.into(),
            self.last_offset_delta.into(),
            self.base_timestamp,
            self.max_timestamp,
            self.producer_id,
            self.producer_epoch.into(),
            self.base_sequence.into(),
            self.records_count.into(),
        ]
    }
}

/// One framed entry: `walk.py`'s `Frame` (position, next position, magic, V2 header, CRC holds).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Frame {
    pub position: usize,
    pub next: usize,
    pub magic: i8,
    /// None for magic 0/1 and for a V2 entry too short to hold a header.
    pub header: Option<V2Header>,
    /// Only computed for V2 with `check_crc` (false otherwise).
    pub crc_ok: bool,
}

/// Why a walk ended (`walk.py`'s END_OF_DATA, SHORT_TAIL, PARTIAL_BATCH, BAD_SIZE).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EndReason {
    End,
    ShortTail,
    PartialBatch,
    BadSize,
}

impl EndReason {
    /// The reason's name in walk.py.
    pub fn name(self) -> &'static str {
        match self {
            EndReason::End => "end",
            EndReason::ShortTail => "short-tail",
            EndReason::PartialBatch => "partial-batch",
            EndReason::BadSize => "bad-size",
        }
    }
}

/// Where and why a walk stopped (`walk.py`'s `WalkEnd`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WalkEnd {
    pub position: usize,
    pub remaining: usize,
    pub reason: EndReason,
    pub declared_size: Option<i32>,
}

/// What one call of [`walk`] did: framed a chunk and stopped at `More(next position)`, or ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    More(usize),
    Ended(WalkEnd),
}

/// CRC-32C (Castagnoli) as `org.apache.kafka.common.utils.Crc32C` computes it.
#[inline]
pub fn crc32c(data: &[u8]) -> u32 {
    crc32c::crc32c(data)
}

/// CRC-32 (IEEE) as `java.util.zip.CRC32` computes it.
#[inline]
pub fn crc32(data: &[u8]) -> u32 {
    crc32fast::hash(data)
}

/// Whether the V2 batch `buf[pos..next]` (whole, at least 61 bytes) has the CRC-32C `stored`.
#[inline]
pub(crate) fn v2_crc_holds(buf: &[u8], pos: usize, next: usize, stored: u32) -> bool {
    match buf.get(pos + V2_ATTRIBUTES_OFFSET..next) {
        Some(covered) => crc32c(covered) == stored,
        None => false,
    }
}

/// Frame the entries of `buf[start..limit]` into `out`, as `BatchWalk.frames` does.
///
/// Stops after a chunk -- once `max_frames` entries are framed or the chunk covers `max_bytes`
/// (at least one entry per call) -- with `Step::More(position)`: call again from there. The walk
/// keeps no other state, so chunked calls frame exactly what one call would.
pub fn walk(
    buf: &[u8],
    start: usize,
    limit: usize,
    check_crc: bool,
    max_frames: usize,
    max_bytes: usize,
    out: &mut Vec<Frame>,
) -> Step {
    let limit = limit.min(buf.len());
    let mut pos = start;
    let mut framed = 0usize;
    // `pos + 17 < limit` <=> more than 17 bytes left: `pos < limit - 17` in walk.py
    while pos < limit && limit - pos > HEADER_SIZE_UP_TO_MAGIC {
        if framed >= max_frames.max(1) || pos - start >= max_bytes.max(1) {
            return Step::More(pos);
        }
        let header = if limit - pos >= RECORD_BATCH_OVERHEAD { V2Header::parse(buf, pos) } else { None };
        let (size, magic) = match header {
            Some(h) => (h.batch_length, h.magic),
            None => match (i32_at(buf, pos + SIZE_OFFSET), i8_at(buf, pos + MAGIC_OFFSET)) {
                (Some(size), Some(magic)) => (size, magic),
                _ => unreachable_end(pos, limit),
            },
        };
        if size < MIN_RECORD_OVERHEAD {
            return ended(pos, limit, EndReason::BadSize, Some(size));
        }
        // size >= 14 here, so the sum is positive; pos <= limit <= isize::MAX bounds it
        let next = pos + LOG_OVERHEAD + size as usize;
        if next > limit {
            return ended(pos, limit, EndReason::PartialBatch, Some(size));
        }
        let frame = match header {
            Some(h) if magic >= 2 && next - pos >= RECORD_BATCH_OVERHEAD => Frame {
                position: pos,
                next,
                magic,
                header: Some(h),
                crc_ok: check_crc && v2_crc_holds(buf, pos, next, h.crc),
            },
            _ => Frame { position: pos, next, magic, header: None, crc_ok: false },
        };
        out.push(frame);
        framed += 1;
        pos = next;
    }
    let reason = if pos == limit { EndReason::End } else { EndReason::ShortTail };
    Step::Ended(WalkEnd { position: pos, remaining: limit.saturating_sub(pos), reason, declared_size: None })
}

fn ended(pos: usize, limit: usize, reason: EndReason, size: Option<i32>) -> Step {
    Step::Ended(WalkEnd { position: pos, remaining: limit - pos, reason, declared_size: size })
}

/// More than 17 bytes are left below `limit <= buf.len()`, so the prefix reads cannot fail;
/// should they, the walk reports a short tail rather than panicking.
#[cold]
fn unreachable_end(_pos: usize, _limit: usize) -> (i32, i8) {
    (i32::MIN, 0)
}

/// The whole, CRC-valid magic-2 batches from `position` that start before `until`, in order:
/// `(position, next position, header)`; the run ends at the first batch that is not one.
/// [`CleanV2Run::position`] is where it stopped (`BatchWalk.valid_v2_run`'s rule, shared by
/// [`valid_v2_run`] and `index::index_run`).
pub struct CleanV2Run<'a> {
    buf: &'a [u8],
    pos: usize,
    limit: usize,
    bound: usize,
}

impl<'a> CleanV2Run<'a> {
    pub fn new(buf: &'a [u8], position: usize, limit: usize, until: usize) -> Self {
        let limit = limit.min(buf.len());
        // a whole V2 header fits below this: min(until, limit - 61 + 1); none fits: an empty run
        let bound = (limit + 1).checked_sub(RECORD_BATCH_OVERHEAD).map_or(0, |b| b.min(until));
        CleanV2Run { buf, pos: position, limit, bound }
    }

    /// The position after the last batch yielded (the start position if none was).
    pub fn position(&self) -> usize {
        self.pos
    }
}

impl Iterator for CleanV2Run<'_> {
    type Item = (usize, usize, V2Header);

    fn next(&mut self) -> Option<Self::Item> {
        if self.pos >= self.bound {
            return None;
        }
        let h = V2Header::parse(self.buf, self.pos)?;
        if h.magic != 2 || h.batch_length < MIN_V2_BATCH_LENGTH {
            return None;
        }
        let next = self.pos + LOG_OVERHEAD + h.batch_length as usize;
        if next > self.limit || !v2_crc_holds(self.buf, self.pos, next, h.crc) {
            return None;
        }
        let at = self.pos;
        self.pos = next;
        Some((at, next, h))
    }
}

/// The headers of the whole, CRC-valid magic-2 batches from `position` that start before
/// `until`, and the position after the last of them (`BatchWalk.valid_v2_run`).
pub fn valid_v2_run(buf: &[u8], position: usize, limit: usize, until: usize, out: &mut Vec<V2Header>) -> usize {
    let mut run = CleanV2Run::new(buf, position, limit, until);
    out.extend((&mut run).map(|(_, _, h)| h));
    run.position()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A V2 batch of `length` bytes after the size field, CRC-32C set.
    fn batch(base: i64, length: i32) -> Vec<u8> {
        let mut b = vec![0u8; LOG_OVERHEAD + length as usize];
        b[0..8].copy_from_slice(&base.to_be_bytes());
        b[8..12].copy_from_slice(&length.to_be_bytes());
        b[16] = 2;
        let crc = crc32c(&b[21..]);
        b[17..21].copy_from_slice(&crc.to_be_bytes());
        b
    }

    fn all(buf: &[u8], start: usize, limit: usize, check: bool, max_frames: usize) -> (Vec<Frame>, WalkEnd) {
        let mut out = Vec::new();
        let mut pos = start;
        loop {
            match walk(buf, pos, limit, check, max_frames, usize::MAX, &mut out) {
                Step::More(p) => pos = p,
                Step::Ended(end) => return (out, end),
            }
        }
    }

    #[test]
    fn clean_batches_end_at_the_end() {
        let mut buf = batch(0, 49);
        buf.extend(batch(1, 100));
        let (frames, end) = all(&buf, 0, buf.len(), true, 1);
        assert_eq!(frames.len(), 2);
        assert!(frames.iter().all(|f| f.crc_ok && f.magic == 2));
        assert_eq!(frames[1].position, 61);
        assert_eq!(frames[1].header.unwrap().base_offset, 1);
        assert_eq!(end, WalkEnd { position: buf.len(), remaining: 0, reason: EndReason::End, declared_size: None });
        let mut headers = Vec::new();
        assert_eq!(valid_v2_run(&buf, 0, buf.len(), usize::MAX, &mut headers), buf.len());
        assert_eq!(headers.len(), 2);
    }

    #[test]
    fn damage_ends_the_walk_where_python_does() {
        let mut buf = batch(0, 49);
        buf[30] ^= 1; // CRC no longer holds: framed, crc_ok false
        let (frames, end) = all(&buf, 0, buf.len(), true, 10);
        assert!(!frames[0].crc_ok);
        assert_eq!(end.reason, EndReason::End);
        let mut headers = Vec::new();
        assert_eq!(valid_v2_run(&buf, 0, buf.len(), usize::MAX, &mut headers), 0);
        // a size below 14
        let mut bad = vec![0u8; 40];
        bad[11] = 13;
        let (_, end) = all(&bad, 0, bad.len(), true, 10);
        assert_eq!((end.reason, end.declared_size, end.remaining), (EndReason::BadSize, Some(13), 40));
        // a partial tail
        let whole = batch(0, 49);
        let (_, end) = all(&whole[..60], 0, 60, true, 10);
        assert_eq!((end.reason, end.declared_size), (EndReason::PartialBatch, Some(49)));
        // 17 bytes left
        let (_, end) = all(&whole[..17], 0, 17, true, 10);
        assert_eq!((end.reason, end.remaining), (EndReason::ShortTail, 17));
        // a start past the limit frames nothing
        let (frames, end) = all(&whole, 100, 61, true, 10);
        assert!(frames.is_empty());
        assert_eq!((end.position, end.remaining, end.reason), (100, 0, EndReason::ShortTail));
    }

    #[test]
    fn legacy_and_short_v2_entries_have_no_header() {
        let mut buf = vec![0u8; 12 + 14];
        buf[11] = 14; // a V0 message of 14 bytes
        let (frames, _) = all(&buf, 0, buf.len(), true, 10);
        assert_eq!(frames[0].header, None);
        buf[16] = 2; // a "V2" entry of 26 bytes: too short for a header
        let (frames, _) = all(&buf, 0, buf.len(), true, 10);
        assert_eq!((frames[0].magic, frames[0].header, frames[0].crc_ok), (2, None, false));
    }
}
