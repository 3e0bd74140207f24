//! `kseg convert`'s record re-encoding (kseg-wire `encode` and `legacy`), bound for
//! `kseg/format/convert_core.py`, the only caller. Every function returns `None` where the wire
//! function does: the Python path then runs for that batch or part.
//!
//! A source is five integers, `(kind, a, b, log_append, c)`:
//! kind 2 -- V2 records: a = base offset, b = base timestamp, c = the batch's max timestamp
//! (every record's timestamp when log_append is 1);
//! kind 0/1 -- the messages of a V0/V1 set under a wrapper of that magic (0 for a plain set):
//! a = the absolute base added to inner offsets when c is 1, b = the wrapper's timestamp.

use kseg_wire::encode::{self, Source, Target};
use kseg_wire::legacy::{self, Wrapper};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyTuple};

use crate::borrowed::Borrowed;
use crate::guarded;

type SourceArgs = (i64, i64, i64, bool, i64);

fn source(s: SourceArgs) -> Source {
    let (kind, a, b, log_append, c) = s;
    if kind == 2 {
        return Source::V2 { base_offset: a, base_timestamp: b, log_append: log_append.then_some(c) };
    }
    Source::Legacy(Wrapper { magic: kind as i8, base: (c != 0).then_some(a), timestamp: b, log_append })
}

fn summary_tuple<'py>(py: Python<'py>, s: &encode::Summary) -> PyResult<Bound<'py, PyTuple>> {
    let values = [
        s.count, s.first_offset, s.first_timestamp, s.first_key.0, s.first_key.1, s.max_timestamp,
        i64::from(s.any_attributes), s.timestamps_set, s.key_value_bytes, s.header_records, s.headers,
        s.header_bytes, s.first_with_headers.0, s.first_with_headers.1, s.end as i64,
    ];
    PyTuple::new(py, values)
}

/// A decompressed V0/V1 wrapper's inner messages (`_deep_records`): (source, summary), or None.
#[pyfunction]
pub fn legacy_summary<'py>(
    py: Python<'py>,
    buf: &Bound<'py, PyAny>,
    wrapper_magic: i8,
    wrapper_offset: i64,
    wrapper_timestamp: i64,
    log_append: bool,
) -> PyResult<Option<(SourceArgs, usize, Bound<'py, PyTuple>)>> {
    guarded(|| {
        let borrowed = Borrowed::new(buf)?;
        let data = borrowed.as_slice();
        let Some((count, last)) = legacy::entries(data) else { return Ok(None) };
        let base = if wrapper_magic == 1 {
            let Some(base) = legacy::absolute_base(wrapper_offset, last) else { return Ok(None) };
            base
        } else {
            None
        };
        let src: SourceArgs = (i64::from(wrapper_magic), base.unwrap_or(0), wrapper_timestamp, log_append, i64::from(base.is_some()));
        let Some(s) = encode::summarize(data, data.len(), &source(src), 0, count) else { return Ok(None) };
        Ok(Some((src, count, summary_tuple(py, &s)?)))
    })
}

/// `BatchSummary` of `count` records at `pos`: 13 integers (see `encode::Summary`), or None.
#[pyfunction]
pub fn convert_summary<'py>(
    py: Python<'py>,
    buf: &Bound<'py, PyAny>,
    end: usize,
    src: SourceArgs,
    pos: usize,
    count: usize,
) -> PyResult<Option<Bound<'py, PyTuple>>> {
    guarded(|| {
        let borrowed = Borrowed::new(buf)?;
        let Some(s) = encode::summarize(borrowed.as_slice(), end, &source(src), pos, count) else { return Ok(None) };
        Ok(Some(summary_tuple(py, &s)?))
    })
}

/// The greedy cut of `count` records by estimated size: the first index of each later part.
#[pyfunction]
#[allow(clippy::too_many_arguments)]
pub fn convert_cuts(
    buf: &Bound<'_, PyAny>,
    end: usize,
    src: SourceArgs,
    pos: usize,
    count: usize,
    budget: i64,
    magic: i8,
) -> PyResult<Option<Vec<usize>>> {
    guarded(|| {
        let borrowed = Borrowed::new(buf)?;
        Ok(encode::cuts(borrowed.as_slice(), end, &source(src), pos, count, budget, magic))
    })
}

/// Where the record `count` records after `pos` starts, or None.
#[pyfunction]
pub fn convert_seek(buf: &Bound<'_, PyAny>, end: usize, src: SourceArgs, pos: usize, count: usize) -> PyResult<Option<usize>> {
    guarded(|| {
        let borrowed = Borrowed::new(buf)?;
        Ok(encode::seek(borrowed.as_slice(), end, &source(src), pos, count))
    })
}

type TargetArgs = (i8, Option<i64>, Option<i64>, Option<i64>, i64, bool, Option<i64>);
type EncodedOut<'py> = (Bound<'py, PyBytes>, i64, i64, i64, i64, usize);

/// `count` records from `pos` encoded for the target:
/// (bytes, first offset, first timestamp, last offset, max timestamp, next position), or None.
#[pyfunction]
pub fn convert_encode<'py>(
    py: Python<'py>,
    buf: &Bound<'py, PyAny>,
    end: usize,
    src: SourceArgs,
    pos: usize,
    count: usize,
    target: TargetArgs,
) -> PyResult<Option<EncodedOut<'py>>> {
    guarded(|| {
        let borrowed = Borrowed::new(buf)?;
        let (magic, base_offset, base_timestamp, previous_offset, max_timestamp, relative, log_append_time) = target;
        let target = Target { magic, base_offset, base_timestamp, previous_offset, max_timestamp, relative, log_append_time };
        let mut out = Vec::new();
        let Some(e) = encode::encode(borrowed.as_slice(), end, &source(src), pos, count, &target, &mut out) else {
            return Ok(None);
        };
        Ok(Some((PyBytes::new(py, &out), e.first_offset, e.first_timestamp, e.last_offset, e.max_timestamp, e.next)))
    })
}

/// Add this file's functions to the module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(legacy_summary, m)?)?;
    m.add_function(wrap_pyfunction!(convert_summary, m)?)?;
    m.add_function(wrap_pyfunction!(convert_cuts, m)?)?;
    m.add_function(wrap_pyfunction!(convert_seek, m)?)?;
    m.add_function(wrap_pyfunction!(convert_encode, m)?)?;
    Ok(())
}
