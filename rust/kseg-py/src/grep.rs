//! `kseg grep`'s needle search (kseg/ops/grep/search.py): where a byte string first occurs in a range of
//! a buffer, with memchr's `memmem` (SIMD two-way search), so that batches that do not hold the searched
//! bytes are passed over at memory speed and never read record by record.

use pyo3::prelude::*;

use crate::borrowed::Borrowed;
use crate::guarded;

/// The first position `p` in `[start, end)` where `needle` starts and ends by `end`, or None.
///
/// `bytes.find(needle, start, end)`'s answer (tests/core/test_core_find.py compares them); an
/// empty needle is found at `start` when `start <= end`, as Python finds it.
#[pyfunction]
pub fn find_bytes(
    buf: &Bound<'_, PyAny>,
    needle: &[u8],
    start: usize,
    end: usize,
) -> PyResult<Option<usize>> {
    guarded(|| {
        let borrowed = Borrowed::new(buf)?;
        let hay = borrowed.as_slice();
        let end = end.min(hay.len());
        if start > end || needle.len() > end - start {
            return Ok(None);
        }
        Ok(memchr::memmem::find(&hay[start..end], needle).map(|at| at + start))
    })
}

/// Attributes bits (`kseg/format/layout.py`): the codec and the control flag.
const CODEC_MASK: i16 = 0x07;
const CONTROL_MASK: i16 = 0x20;

/// Where each needle next starts at or after the position last searched from: `(searched from, hit)`.
/// `Needles.within` of kseg/ops/grep/search.py, so that a window costs one pass per needle.
struct Memo<'a> {
    hay: &'a [u8],
    needles: Vec<memchr::memmem::Finder<'a>>,
    known: Vec<(usize, Option<usize>)>,
}

impl<'a> Memo<'a> {
    fn new(hay: &'a [u8], needles: &'a [Vec<u8>]) -> Self {
        let finders = needles.iter().map(|n| memchr::memmem::Finder::new(n.as_slice())).collect();
        Memo { hay, needles: finders, known: vec![(hay.len() + 1, None); needles.len()] }
    }

    /// Whether every needle starts inside `[pos, next)` (and lies wholly before the window's limit).
    fn within(&mut self, pos: usize, next: usize) -> bool {
        for index in 0..self.needles.len() {
            let (start, hit) = self.known[index];
            let hit = if start > pos || matches!(hit, Some(h) if h < pos) {
                let found = self.needles[index].find(&self.hay[pos.min(self.hay.len())..]).map(|at| at + pos);
                self.known[index] = (pos, found);
                found
            } else {
                hit
            };
            match hit {
                Some(h) if h < next => {}
                _ => return false,
            }
        }
        true
    }
}

/// `kseg grep`'s no-match path for one window in one call (kseg/format/find.py's `grep_candidates`):
/// the window's entries framed as `BatchWalk(strict=False).frames()` frames them, and the positions
/// `(position, next)` of those that may hold a match -- a V2 batch whose control flag is `control` and
/// that is compressed or holds every needle, or a magic 0/1 entry when `legacy` -- with the walk's end
/// `(position, remaining, reason, declared size)`.  Batches that cannot match never reach Python.
/// The walk starts at `start` (a window mapped at a page boundary holds bytes before its first batch);
/// positions are the buffer's.
#[pyfunction]
#[pyo3(signature = (buf, limit, needles, control, legacy, start=0))]
#[allow(clippy::type_complexity)]
pub fn grep_candidates(
    buf: &Bound<'_, PyAny>,
    limit: usize,
    needles: Vec<Vec<u8>>,
    control: bool,
    legacy: bool,
    start: usize,
) -> PyResult<(Vec<(usize, usize)>, (usize, usize, &'static str, Option<i32>))> {
    guarded(|| {
        let borrowed = Borrowed::new(buf)?;
        let all = borrowed.as_slice();
        let limit = limit.min(all.len());
        let start = start.min(limit);
        let mut frames = Vec::new();
        let step = kseg_wire::walk(all, start, limit, false, usize::MAX, usize::MAX, &mut frames);
        let end = match step {
            kseg_wire::Step::Ended(e) => (e.position, e.remaining, e.reason.name(), e.declared_size),
            kseg_wire::Step::More(_) => unreachable!("an unbounded walk ends"),
        };
        let mut memo = Memo::new(&all[..limit], &needles);
        let wanted = if control { CONTROL_MASK } else { 0 };
        let mut out = Vec::new();
        for frame in &frames {
            match &frame.header {
                Some(header) => {
                    if header.attributes & CONTROL_MASK != wanted {
                        continue;
                    }
                    if header.attributes & CODEC_MASK == 0
                        && !needles.is_empty()
                        && !memo.within(frame.position, frame.next)
                    {
                        continue;
                    }
                }
                None if !legacy => continue,
                None => {}
            }
            out.push((frame.position, frame.next));
        }
        Ok((out, end))
    })
}
