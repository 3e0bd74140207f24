//! `kseg diff`'s batch digests for one window of a segment in one call (kseg-wire `digest`;
//! the pure-Python reference is kseg/format/digest.py, tests/core/test_core_digest.py compares them).

use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList};

use crate::borrowed::Borrowed;
use crate::{frame_header, guarded};

/// Up to `max_frames` entries of `buf[start..limit]`: ([(position, next, magic, header or None,
/// content digest or None, records digest or None)], next position or None, end or None), the
/// header and end as `walk_frames` gives them.
#[pyfunction]
#[allow(clippy::type_complexity)]
pub fn batch_digests<'py>(
    py: Python<'py>,
    buf: &Bound<'py, PyAny>,
    start: usize,
    limit: usize,
    max_frames: usize,
) -> PyResult<(Bound<'py, PyList>, Option<usize>, Option<(usize, usize, &'static str, Option<i32>)>)> {
    guarded(|| {
        let borrowed = Borrowed::new(buf)?;
        let mut out = Vec::new();
        let step = kseg_wire::digest::batch_digests(borrowed.as_slice(), start, limit, max_frames, &mut out);
        let items = out
            .iter()
            .map(|d| {
                let f = &d.frame;
                let content = d.content.map(|c| PyBytes::new(py, &c));
                let records = d.records.map(|r| PyBytes::new(py, &r));
                Ok((f.position, f.next, f.magic, frame_header(py, f)?, content, records).into_pyobject(py)?.into_any())
            })
            .collect::<PyResult<Vec<_>>>()?;
        let list = PyList::new(py, items)?;
        Ok(match step {
            kseg_wire::Step::More(pos) => (list, Some(pos), None),
            kseg_wire::Step::Ended(e) => (list, None, Some((e.position, e.remaining, e.reason.name(), e.declared_size))),
        })
    })
}

/// `kseg diff`'s keyed records of one bucket for a window: ([item], next position or None, whether
/// a batch at or past `log_end` was reached). An item is a list (a run of plain batches' keyed records
/// `(key fingerprint, (offset, value fingerprint or None))`) or a tuple `(position, next, magic, header
/// or None, keyed records or None)` for a batch the caller reads itself.
#[pyfunction]
#[allow(clippy::type_complexity, clippy::too_many_arguments)]
pub fn keyed_digests<'py>(
    py: Python<'py>,
    buf: &Bound<'py, PyAny>,
    start: usize,
    limit: usize,
    max_frames: usize,
    bits: u32,
    bucket: u64,
    log_start: i64,
    log_end: i64,
) -> PyResult<(Bound<'py, PyList>, Option<usize>, bool)> {
    use kseg_wire::digest::{KeyedItem, KeyedStep};
    guarded(|| {
        if bits > 32 {
            return Err(pyo3::exceptions::PyValueError::new_err("at most 32 bucket bits"));
        }
        let borrowed = Borrowed::new(buf)?;
        let mut out = Vec::new();
        let step = kseg_wire::digest::keyed_digests(
            borrowed.as_slice(), start, limit, max_frames, bits, bucket, (log_start, log_end), &mut out,
        );
        let items = out
            .into_iter()
            .map(|item| match item {
                KeyedItem::Run(run) => Ok(run.into_pyobject(py)?.into_any()),
                KeyedItem::Batch(f, keyed) => {
                    Ok((f.position, f.next, f.magic, frame_header(py, &f)?, keyed).into_pyobject(py)?.into_any())
                }
            })
            .collect::<PyResult<Vec<_>>>()?;
        let list = PyList::new(py, items)?;
        Ok(match step {
            KeyedStep::More(pos) => (list, Some(pos), false),
            KeyedStep::Done => (list, None, false),
            KeyedStep::LogEnd => (list, None, true),
        })
    })
}
