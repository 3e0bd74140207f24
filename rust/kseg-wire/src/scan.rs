//! The resynchronising scan's two loops, as `kseg/format/scan.py` (`_valid_run`, `find_next_batch`).
//!
//! Kafka's reader stops at the first entry it cannot frame; kseg's scanner goes on past damage.
//! Here only the loops that cost time per byte or per batch: finding the clean run of whole,
//! CRC-valid entries (CRC-32C for magic 2, CRC-32 for magic 0/1), and finding the next position
//! where such an entry starts. Why an entry is damaged is said by the Python side.

use crate::layout::{min_entry_size, LOG_OVERHEAD, MAGIC_OFFSET, SIZE_OFFSET};
use crate::read::{i32_at, i8_at, u32_at};
use crate::walk::{crc32, walk, Frame, Step, V2Header};

/// A V0/V1 message's CRC-32 holds: stored at byte 12, over [magic, end) (LegacyRecord.java).
fn legacy_crc_holds(buf: &[u8], pos: usize, next: usize) -> bool {
    match (u32_at(buf, pos + 12), buf.get(pos + MAGIC_OFFSET..next)) {
        (Some(stored), Some(covered)) => crc32(covered) == stored,
        _ => false,
    }
}

/// Whether the framed entry is one `_valid_run` takes: a CRC-valid V2 batch, or a V0/V1 message
/// of at least its magic's minimum size whose CRC-32 holds.
fn frame_is_valid(buf: &[u8], f: &Frame) -> bool {
    match f.magic {
        2 => f.crc_ok,
        0 | 1 => {
            let size = f.next - f.position - LOG_OVERHEAD;
            min_entry_size(f.magic).is_some_and(|min| size >= min as usize)
                && legacy_crc_holds(buf, f.position, f.next)
        }
        _ => false,
    }
}

/// Where a run of valid entries stopped: `More(pos)` after a chunk of `max_bytes` (call again),
/// or `Stopped(pos)` at an entry that is not valid or at the end of the walk.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RunStop {
    More(usize),
    Stopped(usize),
}

/// The whole, CRC-valid entries from `start` on (position, magic) into `out`; stops at the first
/// that is not (`scan.py`'s `_valid_run`).
pub fn valid_run(buf: &[u8], start: usize, limit: usize, max_bytes: usize, out: &mut Vec<(usize, i8)>) -> RunStop {
    let mut frames = Vec::new();
    let step = walk(buf, start, limit, true, usize::MAX, max_bytes, &mut frames);
    for f in &frames {
        if !frame_is_valid(buf, f) {
            return RunStop::Stopped(f.position);
        }
        out.push((f.position, f.magic));
    }
    match step {
        Step::More(pos) => RunStop::More(pos),
        Step::Ended(end) => RunStop::Stopped(end.position),
    }
}

/// The entry at `pos` is whole below `limit`, of a known magic and size, and its CRC holds
/// (`scan.py`'s `_plausible`); returns its magic.
pub fn plausible(buf: &[u8], pos: usize, limit: usize) -> Option<i8> {
    let limit = limit.min(buf.len());
    if pos.checked_add(LOG_OVERHEAD + 14)? > limit {
        return None;
    }
    let size = i32_at(buf, pos + SIZE_OFFSET)?;
    let magic = i8_at(buf, pos + MAGIC_OFFSET)?;
    if size < min_entry_size(magic)? {
        return None;
    }
    let next = pos + LOG_OVERHEAD + size as usize;
    if next > limit {
        return None;
    }
    let ok = if magic == 2 {
        let header = V2Header::parse(buf, pos)?;
        buf.get(pos + 21..next).is_some_and(|covered| crate::walk::crc32c(covered) == header.crc)
    } else {
        legacy_crc_holds(buf, pos, next)
    };
    ok.then_some(magic)
}

/// The first position >= `start` where a whole, CRC-valid entry begins (`find_next_batch`).
///
/// Only positions whose byte 16 is a known magic (0, 1, 2) get the header test and CRC. A
/// candidate whose size field is all zero starts a zero run: no entry starts where the size
/// field lies inside it, so the search goes on 11 bytes before the run's first non-zero byte
/// (as `_find_next_batch` does), one step for a preallocated or sparse region of any length.
pub fn find_next(buf: &[u8], start: usize, limit: usize) -> Option<usize> {
    let limit = limit.min(buf.len());
    let last = limit.checked_sub(LOG_OVERHEAD + 14)?;
    let mut pos = start;
    while pos <= last {
        if *buf.get(pos + MAGIC_OFFSET)? <= 2 {
            if buf.get(pos + SIZE_OFFSET..pos + SIZE_OFFSET + 4)? == [0, 0, 0, 0] {
                let nonzero = first_nonzero(buf, pos + SIZE_OFFSET, limit)?; // past the zero size field
                pos = (pos + 1).max(nonzero.saturating_sub(11));
                continue;
            }
            if plausible(buf, pos, limit).is_some() {
                return Some(pos);
            }
        }
        pos += 1;
    }
    None
}

/// The position of the first non-zero byte in `buf[from..limit]`, eight bytes at a time.
pub fn first_nonzero(buf: &[u8], from: usize, limit: usize) -> Option<usize> {
    let region = buf.get(from..limit)?;
    let mut chunks = region.chunks_exact(64);
    let mut at = from;
    for chunk in &mut chunks {
        if chunk.iter().fold(0u8, |acc, b| acc | b) != 0 {
            return chunk.iter().position(|b| *b != 0).map(|i| at + i);
        }
        at += 64;
    }
    chunks.remainder().iter().position(|b| *b != 0).map(|i| at + i)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn legacy(magic: u8, size: usize) -> Vec<u8> {
        let mut b = vec![0u8; LOG_OVERHEAD + size];
        b[8..12].copy_from_slice(&(size as i32).to_be_bytes());
        b[16] = magic;
        let crc = crc32(&b[16..]);
        b[12..16].copy_from_slice(&crc.to_be_bytes());
        b
    }

    #[test]
    fn runs_stop_at_damage_and_the_next_entry_is_found() {
        let mut buf = legacy(0, 14);
        buf.extend(legacy(1, 22));
        let clean = buf.len();
        buf.extend([7u8; 30]);
        buf.extend(legacy(1, 30));
        let mut out = Vec::new();
        assert_eq!(valid_run(&buf, 0, buf.len(), usize::MAX, &mut out), RunStop::Stopped(clean));
        assert_eq!(out, vec![(0, 0), (26, 1)]);
        assert_eq!(find_next(&buf, clean, buf.len()), Some(clean + 30));
        assert_eq!(find_next(&buf, clean + 31, buf.len()), None);
        assert_eq!(plausible(&buf, 0, 25), None); // not whole below the limit
        let mut short_v1 = legacy(1, 14); // a V1 message below RECORD_OVERHEAD_V1
        assert_eq!(plausible(&short_v1, 0, short_v1.len()), None);
        short_v1[20] ^= 1;
        assert_eq!(find_next(&short_v1, 0, short_v1.len()), None);
    }

    #[test]
    fn zero_runs_are_skipped_in_one_step_and_entries_after_them_found() {
        for zeros in [0usize, 1, 11, 12, 13, 63, 64, 65, 1000, 4096 + 7] {
            let mut buf = vec![0u8; zeros];
            let at = buf.len();
            buf.extend(legacy(1, 22));
            assert_eq!(find_next(&buf, 0, buf.len()), Some(at), "{zeros} zeros");
            assert_eq!(first_nonzero(&buf, 0, buf.len()), Some(at + 11)); // the size field's low byte
        }
        assert_eq!(find_next(&[0u8; 5000], 0, 5000), None);
        assert_eq!(first_nonzero(&[0u8; 130], 0, 130), None);
    }
}
