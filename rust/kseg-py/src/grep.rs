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
