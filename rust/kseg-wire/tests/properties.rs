//! The seeded property/fuzz harness: structured random logs (valid V2 and legacy entries, then
//! bit flips, truncations, zeroed runs, garbage) through every invariant of `kseg_wire::invariants`,
//! plus every saved fuzz crash in fuzz/regressions/. Deterministic (a fixed seed), so it runs in CI
//! on the stable toolchain; cargo-fuzz (fuzz/, nightly) explores further.

use std::fs;
use std::path::Path;

use kseg_wire::columns::{check_columns, increment_sequence, BatchBases};
use kseg_wire::invariants::{
    check_digests, check_index_runs, check_legacy, check_legacy_inner, check_records, check_render, check_walk,
    check_zstd_frames, WalkCase,
};
use kseg_wire::render::BatchBase;
use kseg_wire::walk::crc32c;
use kseg_wire::index::NONE;
use kseg_wire::{index_run, index_run_at, indexed_v2_run, valid_v2_run, IndexOut, IndexState};

/// splitmix64: a small, seedable generator (no dependency).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

fn v2_batch(rng: &mut Rng, base: i64) -> Vec<u8> {
    let length = 49 + rng.below(300);
    let mut b = vec![0u8; 12 + length];
    b[0..8].copy_from_slice(&base.to_be_bytes());
    b[8..12].copy_from_slice(&(length as i32).to_be_bytes());
    b[16] = 2;
    for byte in &mut b[21..] {
        *byte = rng.next() as u8;
    }
    let crc = crc32c(&b[21..]);
    b[17..21].copy_from_slice(&crc.to_be_bytes());
    b
}

fn legacy(rng: &mut Rng) -> Vec<u8> {
    let size = 14 + rng.below(60);
    let mut b = vec![0u8; 12 + size];
    b[8..12].copy_from_slice(&(size as i32).to_be_bytes());
    b[16] = rng.below(2) as u8;
    b
}

fn damage(rng: &mut Rng, buf: &mut Vec<u8>) {
    if buf.is_empty() {
        return;
    }
    let at = rng.below(buf.len());
    match rng.below(5) {
        0 => buf[at] ^= 1 << rng.below(8),
        1 => buf.truncate(at),
        2 => {
            let n = rng.below(200).min(buf.len() - at);
            buf[at..at + n].fill(0);
        }
        3 => {
            let garbage: Vec<u8> = (0..rng.below(100) + 1).map(|_| rng.next() as u8).collect();
            buf.splice(at..at, garbage);
        }
        _ => buf[at..].iter_mut().take(4).for_each(|b| *b = 0xFF),
    }
}

fn case(rng: &mut Rng, len: usize) -> WalkCase {
    WalkCase {
        start: if rng.below(4) == 0 { rng.below(len + 2) } else { 0 },
        limit: if rng.below(4) == 0 { rng.below(len + 100) } else { len },
        check_crc: rng.below(4) != 0,
        max_frames: rng.below(5) + 1,
        max_bytes: rng.below(2000) + 1,
    }
}

#[test]
fn structured_logs_damaged_or_not() {
    let mut rng = Rng(0x6b73_6567);
    for _ in 0..4000 {
        let mut buf = Vec::new();
        for i in 0..rng.below(8) {
            let entry = if rng.below(4) == 0 { legacy(&mut rng) } else { v2_batch(&mut rng, i as i64) };
            buf.extend(entry);
        }
        for _ in 0..rng.below(3) {
            damage(&mut rng, &mut buf);
        }
        let c = case(&mut rng, buf.len());
        check_walk(&buf, c);
        check_walk(&buf, WalkCase { start: 0, limit: buf.len(), check_crc: true, ..c });
        check_digests(&buf, c.start, c.limit, c.max_frames);
        check_index_runs(&buf, 1 + rng.below(600) as i64, [0, 1, 1000][rng.below(3)], 1 + rng.below(900));
    }
}

/// A log for the index runs: V2 batches (producer ids cleared in half of them so that runs get
/// long, offsets sometimes unchanged so that an offset index append throws, epochs that sometimes
/// change), sometimes damaged; with a random interval and index capacity.
fn index_case(rng: &mut Rng) -> (Vec<u8>, IndexState) {
    let mut buf = Vec::new();
    let mut offset = rng.below(3) as i64;
    let mut epoch = rng.below(3) as i32 - 1;
    for _ in 0..rng.below(12) {
        let mut entry = v2_batch(rng, offset);
        if rng.below(2) == 0 && entry.len() >= 61 {
            entry[43..51].copy_from_slice(&(-1i64).to_be_bytes());
            entry[23..27].copy_from_slice(&(rng.below(4) as i32).to_be_bytes());
            if rng.below(3) == 0 {
                epoch += rng.below(3) as i32 - 1;
            }
            entry[12..16].copy_from_slice(&epoch.to_be_bytes());
            let crc = crc32c(&entry[21..]);
            entry[17..21].copy_from_slice(&crc.to_be_bytes());
        }
        offset += rng.below(5) as i64; // sometimes unchanged: an offset index append that throws
        buf.extend(entry);
    }
    if rng.below(3) == 0 {
        damage(rng, &mut buf);
    }
    let interval = 1 + rng.below(600) as i64;
    let capacity = [0, 1, 2, 3, 1000][rng.below(5)];
    let fresh = IndexState::from_array([0, interval, 0, 0, -1, -1, interval, -1, 0, capacity, -1, 0, 0, capacity, NONE, NONE]);
    (buf, fresh)
}

/// `index_run` cut into random chunks (as the caller cuts it at page releases) equals one run;
/// entries match the counts; epochs change at every entry; the position stays in the buffer.
#[test]
fn index_runs_chunked_equal_whole() {
    let mut rng = Rng(0x696e_6478);
    for _ in 0..3000 {
        let (buf, fresh) = index_case(&mut rng);
        let (mut whole, mut out) = (fresh, IndexOut::default());
        let end = index_run(&buf, 0, buf.len(), usize::MAX, &mut whole, &mut out);
        assert!(end <= buf.len());
        assert_eq!(out.offsets.len() as i64, whole.offset_count * 8);
        assert_eq!(out.times.len() as i64, whole.time_count * 12);
        assert!(out.epochs.windows(2).all(|w| w[0].0 != w[1].0));
        assert_eq!(whole.last_epoch, out.epochs.last().map_or(NONE, |e| e.0));
        assert_eq!(whole.map_end == NONE, whole.batches == 0);
        let (mut cut, mut out2, mut pos) = (fresh, IndexOut::default(), 0);
        loop {
            let until = pos + 1 + rng.below(700);
            let next = index_run(&buf, pos, buf.len(), until, &mut cut, &mut out2);
            let stopped = next < until;
            pos = next;
            if stopped {
                break;
            }
        }
        assert_eq!((pos, cut, out2), (end, whole, out));
    }
}

/// `indexed_v2_run` in random chunks gives `valid_v2_run`'s headers and end, and -- up to the
/// position where its loop stopped -- `index_run`'s state and entries.
#[test]
fn indexed_runs_are_valid_v2_run_and_index_run() {
    let mut rng = Rng(0x7665_7269);
    for _ in 0..3000 {
        let (buf, fresh) = index_case(&mut rng);
        let (mut state, mut out) = (fresh, IndexOut::default());
        let index_end = index_run(&buf, 0, buf.len(), usize::MAX, &mut state, &mut out);
        let mut want = Vec::new();
        let end = valid_v2_run(&buf, 0, buf.len(), usize::MAX, &mut want);
        let (mut cut, mut out2, mut headers, mut pos, mut stop) = (fresh, IndexOut::default(), Vec::new(), 0, None);
        loop {
            let until = pos + 1 + rng.below(700);
            let (next, stopped) = if stop.is_none() {
                indexed_v2_run(&buf, 0, pos, buf.len(), until, &mut cut, &mut out2, &mut headers)
            } else {
                (valid_v2_run(&buf, pos, buf.len(), until, &mut headers), None)
            };
            stop = stop.or(stopped);
            let ended = next < until;
            pos = next;
            if ended {
                break;
            }
        }
        assert_eq!((pos, headers), (end, want));
        assert_eq!((stop.unwrap_or(pos), cut, out2), (index_end, state, out));
    }
}

/// `index_run_at` over windows of the file read into memory (as reindex reads a segment) equals
/// one `index_run` over the whole buffer; a batch longer than a window is taken from the buffer.
#[test]
fn index_runs_over_windows_equal_one_run() {
    let mut rng = Rng(0x7269_6478);
    for _ in 0..3000 {
        let (buf, fresh) = index_case(&mut rng);
        let (mut state, mut out) = (fresh, IndexOut::default());
        let end = index_run(&buf, 0, buf.len(), usize::MAX, &mut state, &mut out);
        let window = 61 + rng.below(900);
        let (mut cut, mut out2, mut base) = (fresh, IndexOut::default(), 0);
        loop {
            let chunk = &buf[base..(base + window).min(buf.len())];
            let next = index_run_at(chunk, base, 0, chunk.len(), usize::MAX, &mut cut, &mut out2);
            let at_end = base + chunk.len() == buf.len();
            base += next;
            if at_end || next == 0 {
                break;
            }
        }
        if base < end {
            base = index_run(&buf, base, buf.len(), usize::MAX, &mut cut, &mut out2);
        }
        assert_eq!((base, cut, out2), (end, state, out));
    }
}

/// `indexed_v2_run` over windows of the file read into memory (as verify reads a segment:
/// `buf[base..base + window]`, refilled from where a run stopped at the window's end) equals
/// one run over the whole buffer: the same headers and the same state, in file positions.
#[test]
fn indexed_runs_over_windows_equal_one_run() {
    let mut rng = Rng(0x7769_6e64);
    for _ in 0..3000 {
        let (buf, fresh) = index_case(&mut rng);
        let (mut state, mut out, mut want) = (fresh, IndexOut::default(), Vec::new());
        let (end, stop) = indexed_v2_run(&buf, 0, 0, buf.len(), usize::MAX, &mut state, &mut out, &mut want);
        let window = 61 + rng.below(900);
        let (mut cut, mut out2, mut headers, mut base, mut stopped) = (fresh, IndexOut::default(), Vec::new(), 0, None);
        loop {
            let chunk = &buf[base..(base + window).min(buf.len())];
            let (next, s) = if stopped.is_none() {
                indexed_v2_run(chunk, base, 0, chunk.len(), usize::MAX, &mut cut, &mut out2, &mut headers)
            } else {
                (valid_v2_run(chunk, 0, chunk.len(), usize::MAX, &mut headers), None)
            };
            stopped = stopped.or(s.map(|p| base + p));
            // the window ended the run (a batch crosses it) unless it reaches the end of the buffer
            if next == 0 || base + chunk.len() == buf.len() {
                base += next;
                break;
            }
            base += next;
        }
        if base < end {
            // a batch longer than the window: the caller takes the rest from the whole buffer
            let (next, s) = if stopped.is_none() {
                indexed_v2_run(&buf, 0, base, buf.len(), usize::MAX, &mut cut, &mut out2, &mut headers)
            } else {
                (valid_v2_run(&buf, base, buf.len(), usize::MAX, &mut headers), None)
            };
            stopped = stopped.or(s);
            base = next;
        }
        assert_eq!((base, &headers), (end, &want));
        assert_eq!((stopped, cut, out2), (stop, state, out));
    }
}

#[test]
fn random_bytes() {
    let mut rng = Rng(17);
    for _ in 0..4000 {
        let buf: Vec<u8> = (0..rng.below(300)).map(|_| rng.next() as u8).collect();
        let c = case(&mut rng, buf.len());
        check_walk(&buf, c);
        check_index_runs(&buf, 1 + rng.below(600) as i64, 1000, 1 + rng.below(300));
    }
}

/// A record of Kafka's layout with a random key, value and headers (DefaultRecord.java).
fn record(rng: &mut Rng, out: &mut Vec<u8>) {
    fn varint(out: &mut Vec<u8>, v: i64) {
        let mut z = ((v << 1) ^ (v >> 63)) as u64;
        while z > 0x7F {
            out.push((z as u8 & 0x7F) | 0x80);
            z >>= 7;
        }
        out.push(z as u8);
    }
    let mut body = vec![0u8]; // attributes
    varint(&mut body, rng.below(1 << 20) as i64 - (1 << 19)); // timestamp delta
    varint(&mut body, rng.below(300) as i64); // offset delta
    for _ in 0..2 {
        if rng.below(5) == 0 {
            varint(&mut body, -1);
        } else {
            let n = rng.below(200);
            varint(&mut body, n as i64);
            body.extend((0..n).map(|_| rng.next() as u8));
        }
    }
    let headers = rng.below(3);
    varint(&mut body, headers as i64);
    for _ in 0..headers {
        varint(&mut body, 3);
        body.extend(b"key");
        varint(&mut body, 2);
        body.extend(b"vv");
    }
    varint(out, body.len() as i64);
    out.extend(body);
}

#[test]
fn records_written_or_damaged() {
    let mut rng = Rng(0x7265_636f);
    for _ in 0..4000 {
        let mut buf = Vec::new();
        let count = rng.below(6);
        for _ in 0..count {
            record(&mut rng, &mut buf);
        }
        if count > 0 {
            let whole = kseg_wire::records::scan_records(&buf, 0, buf.len(), count).expect("written records scan");
            assert_eq!(whole.end, buf.len());
        }
        for _ in 0..rng.below(3) {
            damage(&mut rng, &mut buf);
        }
        let start = rng.below(4).min(buf.len());
        check_records(&buf, start, buf.len(), count);
        check_records(&buf, 0, buf.len().saturating_sub(rng.below(4)), count + rng.below(2));
    }
}

/// A record whose header keys are UTF-8 or not (the column builder declines a batch with one that is not).
fn record_with_keys(rng: &mut Rng, out: &mut Vec<u8>) {
    let mut plain = Vec::new();
    record(rng, &mut plain);
    if rng.below(8) == 0 {
        if let Some(at) = plain.windows(3).position(|w| w == b"key") {
            plain[at] = 0xC0 | rng.below(4) as u8; // a lead byte followed by ASCII: not UTF-8
        }
    }
    out.extend(plain);
}

#[test]
fn record_columns_written_or_damaged() {
    let mut rng = Rng(0x636f_6c73);
    let (mut taken, mut declined) = (0, 0);
    for i in 0..3000 {
        let mut buf = Vec::new();
        let count = rng.below(6);
        for _ in 0..count {
            record_with_keys(&mut rng, &mut buf);
        }
        let bases = BatchBases {
            base_offset: if i % 7 == 0 { i64::MAX - rng.below(100) as i64 } else { rng.below(1 << 40) as i64 },
            base_timestamp: if i % 11 == 0 { i64::MIN + rng.below(1 << 20) as i64 } else { 1_700_000_000_000 },
            log_append_time: if i % 5 == 0 { Some(rng.next() as i64) } else { None },
            base_sequence: [-1, 0, i32::MAX - 2, rng.next() as i32][rng.below(4)],
        };
        match check_columns(&buf, 0, buf.len(), count, bases) {
            Some(_) => taken += 1,
            None => declined += 1, // a header key that is not UTF-8 (written records always scan)
        }
        for _ in 0..rng.below(3) {
            damage(&mut rng, &mut buf);
        }
        let start = rng.below(4).min(buf.len());
        check_columns(&buf, start, buf.len(), count, bases);
        check_columns(&buf, 0, buf.len().saturating_sub(rng.below(4)), count + rng.below(2), bases);
    }
    assert!(taken > 2000 && declined > 50, "both outcomes exercised: {taken} taken, {declined} declined");
    assert_eq!(increment_sequence(i32::MAX - 1, 3), 1, "Kafka's wrap past Integer.MAX_VALUE");
}

/// Batch fields from a seed: offsets near the int64 limits, -1 and large timestamps, LogAppendTime,
/// sequences that wrap.
fn base_of(data: &[u8]) -> BatchBase {
    let pick = |i: usize| data.get(i).copied().unwrap_or(0);
    BatchBase {
        base_offset: [0, 5, i64::MAX - 2, i64::MIN][usize::from(pick(0) % 4)],
        base_timestamp: [-1, 0, 1_700_000_000_000, i64::MAX][usize::from(pick(1) % 4)],
        log_append_time: (pick(2) & 1 == 1).then_some(1_700_000_000_000),
        base_sequence: [-1, 0, i32::MAX - 1][usize::from(pick(3) % 3)],
    }
}

#[test]
fn rendered_records_written_or_damaged() {
    let mut rng = Rng(0x7265_6e64);
    for round in 0..3000 {
        let mut buf = Vec::new();
        let count = rng.below(6);
        for _ in 0..count {
            record(&mut rng, &mut buf);
        }
        let seed = rng.next().to_le_bytes();
        check_render(&buf, 0, buf.len(), count, &base_of(&seed));
        if round % 2 == 0 {
            damage(&mut rng, &mut buf);
        }
        check_render(&buf, rng.below(4).min(buf.len()), buf.len(), count + rng.below(2), &base_of(&seed));
    }
}

#[test]
fn saved_fuzz_crashes_replay_clean() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/regressions");
    let mut replayed = 0;
    for entry in fs::read_dir(&dir).expect("fuzz/regressions exists") {
        let path = entry.expect("a readable entry").path();
        if path.extension().is_some_and(|e| e == "md") {
            continue;
        }
        let data = fs::read(&path).expect("a readable fixture");
        let (c, buf) = WalkCase::from_bytes(&data);
        check_walk(buf, c);
        check_records(buf, c.start.min(buf.len()), buf.len(), c.max_frames);
        check_digests(buf, c.start, c.limit, c.max_frames);
        check_index_runs(buf, 1 + c.max_bytes as i64, 1000, c.max_frames * 61);
        check_legacy(buf, (c.start % 2) as i8, c.max_bytes as i64, c.max_bytes as i64);
        check_zstd_frames(buf);
        check_legacy_inner(buf, c.start, Some(c.max_bytes as i64));
        replayed += 1;
    }
    assert!(replayed >= 1, "no regression inputs in {}", dir.display());
}

/// A V0/V1 message set of Kafka's layout (LegacyRecord.java): random magics, null or random keys
/// and values, increasing offsets, timestamps from -1 up.
fn message_set(rng: &mut Rng) -> Vec<u8> {
    let mut out = Vec::new();
    let mut offset = rng.below(4) as i64;
    for _ in 0..rng.below(6) + 1 {
        let magic = rng.below(2) as u8;
        let mut message = vec![0, 0, 0, 0, magic, if rng.below(6) == 0 { 0x08 } else { 0 }];
        if magic == 1 {
            message.extend((rng.below(3000) as i64 - 1).to_be_bytes());
        }
        for _ in 0..2 {
            if rng.below(4) == 0 {
                message.extend((-1i32).to_be_bytes());
            } else {
                let n = rng.below(50);
                message.extend((n as i32).to_be_bytes());
                message.extend((0..n).map(|_| rng.next() as u8));
            }
        }
        let crc = crc32fast::hash(&message[4..]);
        message[..4].copy_from_slice(&crc.to_be_bytes());
        out.extend(offset.to_be_bytes());
        out.extend((message.len() as i32).to_be_bytes());
        out.extend(message);
        offset += 1 + rng.below(3) as i64;
    }
    out
}

/// Re-encoding for convert over message sets, written or damaged, and random bytes.
#[test]
fn legacy_sets_encode_and_read_back() {
    let mut rng = Rng(0x6c65_6761);
    let mut checked = 0;
    for i in 0..6000 {
        let mut buf = if i % 5 == 4 { (0..rng.below(200)).map(|_| rng.next() as u8).collect() } else { message_set(&mut rng) };
        if rng.below(3) == 0 {
            damage(&mut rng, &mut buf);
        }
        let wrapper_offset = [0i64, 3, 40, i64::MAX][rng.below(4)];
        checked += check_legacy(&buf, rng.below(2) as i8, wrapper_offset, 1 + rng.below(400) as i64);
        check_legacy_inner(&buf, rng.below(buf.len() + 2), [None, Some(0), Some(i64::MAX - 2)][rng.below(3)]);
    }
    assert!(checked > 6000, "only {checked} encodings were checked");
}

/// zstd streams of data, empty and skippable frames (hand-made headers, no libzstd here), cut,
/// flipped or random: the walk's invariants ([`check_zstd_frames`]).
#[test]
fn zstd_frame_walks() {
    let mut rng = Rng(25);
    let mut walked = 0;
    for _ in 0..3000 {
        let mut buf = Vec::new();
        for _ in 0..rng.below(6) {
            match rng.below(4) {
                0 => buf.extend([0x28, 0xB5, 0x2F, 0xFD, 0x20, 0x00, 0x01, 0x00, 0x00]),
                1 => {
                    let size = rng.below(9);
                    buf.extend((0x184D_2A50u32 | rng.below(16) as u32).to_le_bytes());
                    buf.extend((size as u32).to_le_bytes());
                    buf.extend(std::iter::repeat_n(0xAA, size));
                }
                2 => {
                    // a window descriptor, raw blocks of random sizes, maybe a checksum
                    let fhd = (rng.next() as u8) & 0xC4;
                    buf.extend([0x28, 0xB5, 0x2F, 0xFD, fhd, rng.next() as u8]);
                    buf.extend(std::iter::repeat_n(0, [0, 2, 4, 8][usize::from(fhd >> 6)]));
                    let blocks = 1 + rng.below(3);
                    for b in 0..blocks {
                        let size = rng.below(40);
                        let header = u32::from(b + 1 == blocks) | ((size as u32) << 3);
                        buf.extend(&header.to_le_bytes()[..3]);
                        buf.extend(std::iter::repeat_n(0x55, size));
                    }
                    if fhd & 0x04 != 0 {
                        buf.extend([1, 2, 3, 4]);
                    }
                }
                _ => buf.extend((0..rng.below(5)).map(|_| rng.next() as u8)),
            }
        }
        if !buf.is_empty() && rng.below(3) == 0 {
            let at = rng.below(buf.len());
            buf[at] ^= 1 << rng.below(8);
        }
        if rng.below(3) == 0 {
            buf.truncate(rng.below(buf.len() + 1));
        }
        walked += check_zstd_frames(&buf);
    }
    assert!(walked > 1000, "only {walked} frames to decode were walked");
}

/// verify's index cross-check on random index bytes and random batches: no panic, and every verdict
/// names an entry of the index (tests/core/test_core_index_cross.py compares it with Python's).
#[test]
fn index_cross_checks_on_random_input() {
    use kseg_wire::index_check::{OffsetCheck, TimeCheck};
    let mut rng = Rng(31);
    for _ in 0..2000 {
        let data: Vec<u8> = (0..rng.below(200)).map(|_| rng.next() as u8).collect();
        let base = [0, i64::MAX, i64::MIN, 1000][rng.below(4)];
        let mut offsets = OffsetCheck::new(&data, rng.below(30), base);
        let mut times = TimeCheck::new(&data, rng.below(20), base);
        for _ in 0..rng.below(20) {
            let (pos, b) = (rng.next() as i64 >> rng.below(60), i128::from(rng.next() as i64));
            let last = b + i128::from(rng.below(5) as i64);
            offsets.observe(pos, b, last);
            times.observe(pos, b, last, rng.next() as i64);
        }
        let verdicts = [offsets.order(), offsets.finish(rng.next() as i64 >> 40), times.order(), times.finish().0];
        for (k, v) in verdicts.iter().enumerate() {
            let len = if k < 2 { offsets.len() } else { times.len() };
            assert!(v.iter().all(|&(i, ..)| i < len), "a verdict past the index: {v:?}");
        }
    }
}

/// A metadata program with every kind (nested struct, arrays of structs and uuids, tagged fields).
fn metadata_program() -> kseg_wire::metadata::StructProgram {
    use kseg_wire::metadata::{FieldOp, Kind, StructProgram};
    let op = |slot, kind, nullable| FieldOp { slot, kind, nullable };
    let inner = StructProgram {
        id: 1,
        fields: vec![op(0, Kind::String, false), op(1, Kind::Int16, false), op(2, Kind::Bytes, true)],
        tagged: vec![(0, op(3, Kind::Float64, false))],
        slots: 4,
        flexible: true,
    };
    StructProgram {
        id: 0,
        fields: vec![
            op(0, Kind::Uuid, false),
            op(1, Kind::Int32, false),
            op(2, Kind::Array(Box::new(Kind::Int32)), true),
            op(3, Kind::Array(Box::new(Kind::Struct(Box::new(inner.clone())))), false),
            op(4, Kind::Struct(Box::new(inner)), true),
            op(5, Kind::Bool, false),
        ],
        tagged: vec![(0, op(6, Kind::Array(Box::new(Kind::Uuid)), false)), (3, op(7, Kind::String, true))],
        slots: 8,
        flexible: true,
    }
}

/// The metadata decoder on random and damaged bytes: never a panic, and what it reads ends inside them.
#[test]
fn metadata_programs_on_random_bytes() {
    let program = metadata_program();
    let mut rng = Rng(26);
    for _ in 0..20_000 {
        let len = rng.below(80);
        let mut buf: Vec<u8> = (0..len).map(|_| {
            // small numbers are lengths and counts that fit: more of the bytes get read deep
            if rng.below(2) == 0 { rng.below(4) as u8 } else { rng.next() as u8 }
        }).collect();
        damage(&mut rng, &mut buf);
        if let Some((_, end)) = kseg_wire::metadata::read_struct(&buf, 0, &program) {
            assert!(end <= buf.len());
        }
        let _ = kseg_wire::metadata::read_record(&buf, |_, _| Some(&program));
    }
}
