//! What must hold for any input, checked by the seeded property harness (tests/properties.rs) and
//! the cargo-fuzz targets (fuzz/): the properties the Python reference has by construction.
//!
//! `check_walk` panics (with the offending parameters) when a property fails; on hostile bytes
//! the walker itself must never panic, which both harnesses prove by calling it.

use crate::records::{scan_records, HEADER_STRIDE, RECORD_STRIDE};
use crate::render::{render_records, render_some, BatchBase, Offsets, Payload, Style};
use crate::scan::{find_next, plausible, valid_run, RunStop};
use crate::walk::{valid_v2_run, walk, Frame, Step, V2Header, WalkEnd};

/// The parameters a fuzz input is split into: where to walk, and how to chunk.
#[derive(Clone, Copy, Debug)]
pub struct WalkCase {
    pub start: usize,
    pub limit: usize,
    pub check_crc: bool,
    pub max_frames: usize,
    pub max_bytes: usize,
}

impl WalkCase {
    /// A case from the first 8 bytes of a fuzz input (the rest is the buffer).
    pub fn from_bytes(data: &[u8]) -> (WalkCase, &[u8]) {
        let mut head = [0u8; 8];
        let n = data.len().min(8);
        head[..n].copy_from_slice(&data[..n]);
        let buf = &data[n..];
        let case = WalkCase {
            start: usize::from(head[0]) % 64,
            limit: if head[1] & 1 == 0 { buf.len() } else { usize::from(u16::from_be_bytes([head[2], head[3]])) },
            check_crc: head[1] & 2 == 0,
            max_frames: usize::from(head[4] % 8) + 1,
            max_bytes: usize::from(u16::from_be_bytes([head[5], head[6]])) + 1,
        };
        (case, buf)
    }
}

/// The whole walk in one call.
pub fn walk_all(buf: &[u8], start: usize, limit: usize, check_crc: bool) -> (Vec<Frame>, WalkEnd) {
    let mut frames = Vec::new();
    match walk(buf, start, limit, check_crc, usize::MAX, usize::MAX, &mut frames) {
        Step::Ended(end) => (frames, end),
        Step::More(at) => panic!("an unbounded walk stopped early at {at}"),
    }
}

/// Every property of one walk; panics on the first that fails.
pub fn check_walk(buf: &[u8], case: WalkCase) {
    let WalkCase { start, limit, check_crc, max_frames, max_bytes } = case;
    let (frames, end) = walk_all(buf, start, limit, check_crc);
    // chunked calls frame exactly what one call frames
    let mut chunked = Vec::new();
    let mut pos = start;
    let chunked_end = loop {
        let before = chunked.len();
        match walk(buf, pos, limit, check_crc, max_frames, max_bytes, &mut chunked) {
            Step::More(next) => {
                assert!(chunked.len() > before, "a chunk framed nothing: {case:?}");
                pos = next;
            }
            Step::Ended(e) => break e,
        }
    };
    assert_eq!(chunked, frames, "chunked walk differs: {case:?}");
    assert_eq!(chunked_end, end, "chunked end differs: {case:?}");
    // frames tile [start, end.position) and stay inside the limit
    let bound = limit.min(buf.len());
    let mut at = start;
    for f in &frames {
        assert_eq!(f.position, at, "frames do not follow each other: {case:?}");
        assert!(f.next > f.position && f.next <= bound, "frame outside the limit: {case:?}");
        assert!(f.header.is_none() || f.magic >= 2, "a legacy frame with a V2 header: {case:?}");
        assert!(check_crc || !f.crc_ok, "crc_ok without a check: {case:?}");
        at = f.next;
    }
    assert_eq!(end.position, at, "the end is not after the last frame: {case:?}");
    assert_eq!(end.remaining, bound.saturating_sub(at), "remaining is wrong: {case:?}");
    // valid_v2_run takes exactly the leading CRC-valid magic-2 frames
    if check_crc {
        let expected: Vec<V2Header> = frames
            .iter()
            .take_while(|f| f.magic == 2 && f.crc_ok)
            .map(|f| f.header.expect("a CRC-valid frame has a header"))
            .collect();
        let stop = frames.get(expected.len()).map_or(end.position, |f| f.position);
        let mut headers = Vec::new();
        let run_end = valid_v2_run(buf, start, limit, usize::MAX, &mut headers);
        assert_eq!(headers, expected, "valid_v2_run headers differ: {case:?}");
        let stop = if headers.is_empty() { start } else { stop };
        assert_eq!(run_end, stop, "valid_v2_run stops elsewhere: {case:?}");
    }
    check_scan(buf, case);
}

/// The scan's loops: chunked runs hold only plausible entries, and `find_next` is the naive search.
pub fn check_scan(buf: &[u8], case: WalkCase) {
    let WalkCase { start, limit, max_bytes, .. } = case;
    let mut run = Vec::new();
    let mut pos = start;
    while let RunStop::More(next) = valid_run(buf, pos, limit, max_bytes, &mut run) {
        pos = next;
    }
    for (at, magic) in &run {
        assert_eq!(plausible(buf, *at, limit), Some(*magic), "a run entry is not plausible: {case:?}");
    }
    let bound = limit.min(buf.len());
    let naive = (start..bound).find(|&p| plausible(buf, p, limit).is_some());
    assert_eq!(find_next(buf, start, limit), naive, "find_next is not the first plausible entry: {case:?}");
}

/// The record scanner on any bytes: never a panic, and what it returns lies inside the buffer.
pub fn check_records(buf: &[u8], start: usize, end: usize, count: usize) {
    let Some(scan) = scan_records(buf, start, end, count) else { return };
    assert_eq!(scan.fields.len(), count * RECORD_STRIDE, "one stride per record");
    assert!(scan.end <= end && scan.end >= start, "records end outside their region");
    let mut headers = 0;
    for f in scan.fields.chunks_exact(RECORD_STRIDE) {
        for (at, length) in [(f[3], f[4]), (f[5], f[6])] {
            assert!(at >= start as i64 && at + length.max(0) <= scan.end as i64, "a span outside the records");
        }
        assert!(f[7] >= 0, "a negative header count");
        headers += f[7] as usize;
    }
    assert_eq!(scan.header_fields.len(), headers * HEADER_STRIDE, "one stride per header");
    for h in scan.header_fields.chunks_exact(HEADER_STRIDE) {
        assert!(h[1] >= 0 && h[0] + h[1] <= scan.end as i64 && h[2] + h[3].max(0) <= scan.end as i64);
    }
}

/// The recovery loop's runs on any bytes (`index::index_run`, `index_run_at`, `indexed_v2_run`):
/// over windows of `window` bytes (refilled where a run stopped at a window's end, a batch longer
/// than a window taken from the whole buffer) they equal one run over the whole buffer; the
/// combined run's headers are `valid_v2_run`'s; every position stays in the buffer.
pub fn check_index_runs(buf: &[u8], interval: i64, capacity: i64, window: usize) {
    use crate::index::{index_run, index_run_at, indexed_v2_run, IndexOut, IndexState, NONE};
    let fresh = IndexState::from_array([0, interval, 0, 0, -1, -1, interval, -1, 0, capacity, -1, 0, 0, capacity, NONE, NONE]);
    let (mut whole, mut out) = (fresh, IndexOut::default());
    let end = index_run(buf, 0, buf.len(), usize::MAX, &mut whole, &mut out);
    assert!(end <= buf.len(), "index_run ended past the buffer");
    let mut want = Vec::new();
    let run_end = valid_v2_run(buf, 0, buf.len(), usize::MAX, &mut want);
    let (mut both, mut out2, mut headers) = (fresh, IndexOut::default(), Vec::new());
    let (combined_end, stopped) = indexed_v2_run(buf, 0, 0, buf.len(), usize::MAX, &mut both, &mut out2, &mut headers);
    assert_eq!((combined_end, &headers), (run_end, &want), "indexed_v2_run's headers differ from valid_v2_run's");
    assert_eq!((stopped.unwrap_or(combined_end), both, &out2), (end, whole, &out), "indexed_v2_run's loop differs");
    let window = window.max(1);
    let (mut cut, mut out3, mut base) = (fresh, IndexOut::default(), 0);
    loop {
        let chunk = &buf[base..(base + window).min(buf.len())];
        let next = index_run_at(chunk, base, 0, chunk.len(), usize::MAX, &mut cut, &mut out3);
        assert!(next <= chunk.len(), "index_run_at ended past its window");
        let at_end = base + chunk.len() == buf.len();
        base += next;
        if at_end || next == 0 {
            break;
        }
    }
    if base < end {
        base = index_run(buf, base, buf.len(), usize::MAX, &mut cut, &mut out3);
    }
    assert_eq!((base, cut, out3), (end, whole, out), "windowed index runs differ from one run");
}

/// `kseg convert`'s re-encoding over the messages of any V0/V1 set (`encode`, `legacy`): never a
/// panic; a set the scanner takes is summed up, cut and sought consistently; records it encodes
/// (for every target magic) read back as the same records. Returns how many encodings it checked.
pub fn check_legacy(buf: &[u8], wrapper_magic: i8, wrapper_offset: i64, budget: i64) -> usize {
    use crate::encode::{cuts, encode, seek, summarize, Source, Target};
    use crate::legacy::{absolute_base, entries, Wrapper};
    let Some((count, last)) = entries(buf) else { return 0 };
    let base = if wrapper_magic == 1 {
        let Some(base) = absolute_base(wrapper_offset, last) else { return 0 };
        base
    } else {
        None
    };
    let source = Source::Legacy(Wrapper { magic: wrapper_magic, base, timestamp: 1_000, log_append: budget % 2 == 0 });
    let Some(s) = summarize(buf, buf.len(), &source, 0, count) else { return 0 };
    let mut checked = 0;
    assert_eq!(s.count as usize, count, "the summary counts every entry");
    assert!(s.end <= buf.len(), "the records end inside the set");
    assert_eq!(seek(buf, buf.len(), &source, 0, count), Some(s.end), "seeking every record ends where they end");
    let parts = cuts(buf, buf.len(), &source, 0, count, budget, 2).expect("a summed-up set is cut");
    assert!(parts.windows(2).all(|w| w[0] < w[1]) && parts.iter().all(|&c| c > 0 && c < count), "cuts inside, increasing");
    for magic in [0i8, 1, 2] {
        let target = Target {
            magic,
            base_offset: None,
            base_timestamp: None,
            previous_offset: None,
            max_timestamp: -1,
            relative: false,
            log_append_time: None,
        };
        let mut out = Vec::new();
        let Some(e) = encode(buf, buf.len(), &source, 0, count, &target, &mut out) else { continue };
        assert_eq!(e.next, s.end, "encoding reads what the summary read");
        let again = if magic == 2 {
            Source::V2 { base_offset: e.first_offset, base_timestamp: e.first_timestamp, log_append: None }
        } else {
            Source::Legacy(Wrapper { magic: 0, base: None, timestamp: -1, log_append: false })
        };
        let r = summarize(&out, out.len(), &again, 0, count).expect("encoded records read back");
        assert_eq!((r.end, r.count, r.first_offset), (out.len(), s.count, s.first_offset), "magic {magic}");
        assert_eq!(r.key_value_bytes, s.key_value_bytes, "keys and values survive, magic {magic}");
        if magic == 2 {
            assert_eq!((r.max_timestamp, r.timestamps_set), (s.max_timestamp, s.timestamps_set), "timestamps survive");
        }
        checked += 1;
    }
    checked
}

/// Every rendering style, for the harnesses: text with each flag combination, JSON with each payload.
pub fn render_styles() -> Vec<Style> {
    let mut styles = vec![Style::Json(Payload::Utf8), Style::Json(Payload::Hex), Style::Json(Payload::Base64)];
    for flags in 0..8u8 {
        styles.push(Style::Text { print_data: flags & 1 != 0, skip_metadata: flags & 2 != 0, keyless_pipe: flags & 4 != 0 });
    }
    styles
}

/// `render_records` on any bytes: no panic; it answers exactly where the scanner reads the region
/// exactly, then with one offset per record and well-formed output (UTF-8, whatever the bytes:
/// Java's replacement rules; text: one line per record where nothing but the line ends is written;
/// JSON: `count` balanced objects joined by commas).
pub fn check_render(buf: &[u8], start: usize, end: usize, count: usize, base: &BatchBase) {
    let scanned = scan_records(buf, start, end, count).filter(|s| s.end == end);
    for style in render_styles() {
        let mut out = Vec::new();
        let answer = render_records(buf, start, end, count, base, style, &mut out);
        assert_eq!(answer.is_some(), scanned.is_some(), "rendered where the scanner did not read, or not where it did");
        let Some(offsets) = answer else { continue };
        match offsets {
            Offsets::Run { count: n, .. } => assert_eq!(n, count),
            Offsets::Each(each) => assert_eq!(each.len(), count),
        }
        assert!(std::str::from_utf8(&out).is_ok(), "output is not UTF-8");
        assert_eq!(in_parts(buf, start, end, count, base, style, 1 + count % 3), out, "parts differ from the whole");
        match style {
            Style::Text { print_data: false, skip_metadata: true, .. } => assert_eq!(out, vec![b'\n'; count]),
            Style::Text { .. } => assert!(count == 0 || out.ends_with(b"\n"), "a line without its end"),
            Style::Json(_) => assert_eq!(json_objects(&out), Some(count), "not {count} JSON objects"),
        }
    }
}

/// How many top-level JSON objects, joined by commas, `out` holds (None when brackets, strings or
/// separators are not balanced): a structural check, enough to catch a broken writer.
fn json_objects(out: &[u8]) -> Option<usize> {
    let (mut depth, mut objects, mut in_string, mut escaped) = (0usize, 0usize, false, false);
    let mut expect_object = true;
    for &b in out {
        if in_string {
            match (escaped, b) {
                (true, _) => escaped = false,
                (false, b'\\') => escaped = true,
                (false, b'"') => in_string = false,
                (false, c) if c < 0x20 => return None,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'{' | b'[' => {
                if depth == 0 && (!expect_object || b != b'{') {
                    return None;
                }
                depth += 1;
                expect_object = false;
            }
            b'}' | b']' => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    objects += 1;
                }
            }
            b',' if depth == 0 => expect_object = true,
            _ if depth == 0 => return None,
            _ => {}
        }
    }
    (depth == 0 && !in_string && (objects == 0 || !expect_object)).then_some(objects)
}

/// The records rendered `part` at a time with `render_some`, joined as the renderers join parts.
fn in_parts(buf: &[u8], start: usize, end: usize, count: usize, base: &BatchBase, style: Style, part: usize) -> Vec<u8> {
    let (mut out, mut pos, mut done) = (Vec::new(), start, 0);
    while done < count {
        let n = part.min(count - done);
        if done > 0 && matches!(style, Style::Json(_)) {
            out.push(b',');
        }
        let (_, after) = render_some(buf, pos, end, n, base, style, &mut out).expect("a part of records read whole");
        pos = after;
        done += n;
    }
    assert_eq!(pos, end, "parts end where the whole ends");
    out
}

/// The zstd frame walk ([`crate::zstd::frames`]) on any bytes: the frames to decode lie in order
/// inside the buffer, each frame's block ends go up and stay inside it, and every prefix of the
/// buffer that ends where a frame ends walks to the same frames up to there, without an error.
pub fn check_zstd_frames(buf: &[u8]) -> usize {
    let (frames, error) = crate::zstd::frames(buf);
    let mut at = 0;
    for f in &frames {
        assert!(f.start >= at && !f.pieces.is_empty(), "frames out of order at {}", f.start);
        let mut piece = f.start;
        for &end in &f.pieces {
            assert!(end > piece && end <= buf.len(), "block end {end} after {piece} (buffer {})", buf.len());
            piece = end;
        }
        at = piece;
        let (before, cut_error) = crate::zstd::frames(&buf[..at]);
        assert_eq!((before.last(), cut_error), (Some(f), None), "a prefix ending at {at}");
    }
    assert!(error.is_some() || frames.last().map_or(0, |f| f.start) <= buf.len());
    frames.len()
}

/// `digest::batch_digests` on any bytes: never a panic; chunked calls give what one call gives;
/// the entries are the walk's frames (`check_crc` off), a content digest exactly for framed V2
/// headers; and a records digest only for uncompressed batches.
pub fn check_digests(buf: &[u8], start: usize, limit: usize, max_frames: usize) {
    use crate::digest::{batch_digests, BatchDigest};
    let mut whole: Vec<BatchDigest> = Vec::new();
    let step = batch_digests(buf, start, limit, usize::MAX, &mut whole);
    assert!(matches!(step, Step::Ended(_)), "an unbounded digest walk ends");
    let (frames, _) = walk_all(buf, start, limit, false);
    assert_eq!(whole.iter().map(|d| d.frame).collect::<Vec<Frame>>(), frames, "the walk's frames");
    let mut chunked = Vec::new();
    let mut pos = start;
    for _ in 0..=whole.len() + 1 {
        match batch_digests(buf, pos, limit, max_frames.max(1), &mut chunked) {
            Step::More(next) => pos = next,
            Step::Ended(_) => break,
        }
    }
    assert_eq!(chunked, whole, "chunked digests differ from one call's");
    for d in &whole {
        assert_eq!(d.content.is_some(), d.frame.header.is_some(), "a content digest for each V2 header");
        if let (Some(h), Some(_)) = (&d.frame.header, d.records) {
            assert_eq!(h.attributes & 0x07, 0, "a records digest of compressed records");
        }
    }
}

/// A wrapper's inner entries walked in runs (`legacy::inner_walk`, `legacy::inner_check`, as
/// `kseg/format/legacy_inner.py` drives them over decompressed pieces): never a panic; a walk
/// stopped at `cut` and taken up again where it stopped (with the bytes after the cut) finds what
/// one walk finds -- the count, the offsets, the first refusal -- and so does the check.
pub fn check_legacy_inner(buf: &[u8], cut: usize, base: Option<i64>) {
    use crate::legacy::{inner_check, inner_walk, Wrapper};
    let whole = inner_walk(buf, 0, buf.len());
    assert!(whole.stop <= buf.len(), "the walk stays in the buffer");
    let cut = cut.min(buf.len());
    let head = inner_walk(buf, 0, cut);
    assert!(head.stop <= cut, "a walk stops inside its region");
    if head.size_problem.is_none() {
        let tail = inner_walk(buf, head.stop, buf.len());
        assert_eq!(head.count + tail.count, whole.count, "a walk in two runs counts what one run counts");
        assert_eq!(tail.stop, whole.stop, "two runs stop where one does");
        assert_eq!(head.size_problem.or(tail.size_problem), whole.size_problem);
        if whole.count > 0 {
            assert_eq!(if head.count > 0 { head.first } else { tail.first }, whole.first);
            assert_eq!(if tail.count > 0 { tail.last } else { head.last }, whole.last);
        }
        let problem = head.record_problem.map(|p| (p, head.record_index))
            .or(tail.record_problem.map(|p| (p, head.count + tail.record_index)));
        assert_eq!(problem, whole.record_problem.map(|p| (p, whole.record_index)), "the first refusal is the same");
    }
    let wrapper = Wrapper { magic: 1, base, timestamp: 7, log_append: cut.is_multiple_of(2) };
    let (mut pos, mut records) = (0, 0);
    while let Some(r) = crate::legacy::inner_record(buf, pos, whole.stop, &wrapper) {
        assert!(r.next > pos && r.next <= whole.stop, "a record ends after it starts, inside the walk");
        let stored = crate::read::i64_at(buf, pos).expect("a whole entry");
        assert_eq!(r.offset, base.map_or(stored, |b| b.wrapping_add(stored)), "the absolute offset");
        (pos, records) = (r.next, records + 1);
    }
    assert!(records <= whole.count && (records == whole.count || whole.record_problem.is_some()
        || buf.get(pos + 16).is_some_and(|m| *m > 1)), "records run to the first message Python reads");
    let one = inner_check(buf, 0, whole.stop, &wrapper, 0, None, i64::MIN);
    let first = inner_check(buf, 0, cut.min(whole.stop), &wrapper, 0, None, i64::MIN);
    let previous = (first.count > 0).then_some(first.last);
    let second = inner_check(buf, first.stop, whole.stop, &wrapper, first.count, previous, first.largest);
    let mut events = first.events.clone();
    events.extend(second.events.iter().copied());
    assert_eq!((first.count + second.count, events, second.largest.max(first.largest)), (one.count, one.events.clone(), one.largest),
        "a check in two runs finds what one run finds");
}
