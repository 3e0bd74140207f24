//! `valid_v2_run_indexed`: verify's run of clean batches and `LogSegment.recover`'s loop over the
//! same batches, in one pass (kseg-wire `indexed_v2_run`; Python: `kseg/recovery/indexes.py`
//! `RecoveryPrefix`).

use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList, PyTuple};

use crate::borrowed::Borrowed;
use crate::{guarded, header_tuple};

/// `indexes.py`'s `_recover` loop over the clean run in `buf` (`buf[0]` at file position `base`,
/// 0 for a whole mapped file): (position reached in `buf`, state, new `.index` entries, new
/// `.timeindex` entries, [(epoch, base offset)] where the epoch changes).
#[pyfunction]
#[allow(clippy::type_complexity, clippy::too_many_arguments)]
pub fn index_run_at<'py>(
    py: Python<'py>,
    buf: &Bound<'py, PyAny>,
    base: usize,
    position: usize,
    limit: usize,
    until: usize,
    state: [i64; 16],
) -> PyResult<(usize, Bound<'py, PyTuple>, Bound<'py, PyBytes>, Bound<'py, PyBytes>, Vec<(i64, i64)>)> {
    guarded(|| {
        let borrowed = Borrowed::new(buf)?;
        let mut s = kseg_wire::IndexState::from_array(state);
        let mut out = kseg_wire::IndexOut::default();
        let pos = kseg_wire::index_run_at(borrowed.as_slice(), base, position, limit, until, &mut s, &mut out);
        Ok((pos, PyTuple::new(py, s.to_array())?, PyBytes::new(py, &out.offsets), PyBytes::new(py, &out.times), out.epochs))
    })
}

/// `buf[0]` is at file position `base` (a window read into memory): the loop's state is in file
/// positions, the positions taken and returned are `buf`'s.
/// (headers, position after the last, position where the loop stopped or None, state,
/// new `.index` entries, new `.timeindex` entries, [(epoch, base offset)] where the epoch changes).
#[pyfunction]
#[allow(clippy::type_complexity)]
pub fn valid_v2_run_indexed<'py>(
    py: Python<'py>,
    buf: &Bound<'py, PyAny>,
    base: usize,
    position: usize,
    limit: usize,
    until: usize,
    state: [i64; 16],
) -> PyResult<(
    Bound<'py, PyList>,
    usize,
    Option<usize>,
    Bound<'py, PyTuple>,
    Bound<'py, PyBytes>,
    Bound<'py, PyBytes>,
    Vec<(i64, i64)>,
)> {
    guarded(|| {
        let borrowed = Borrowed::new(buf)?;
        let mut s = kseg_wire::IndexState::from_array(state);
        let mut out = kseg_wire::IndexOut::default();
        let mut headers = Vec::new();
        let (end, stopped) =
            kseg_wire::indexed_v2_run(borrowed.as_slice(), base, position, limit, until, &mut s, &mut out, &mut headers);
        let items = headers.iter().map(|h| header_tuple(py, h)).collect::<PyResult<Vec<_>>>()?;
        Ok((
            PyList::new(py, items)?,
            end,
            stopped,
            PyTuple::new(py, s.to_array())?,
            PyBytes::new(py, &out.offsets),
            PyBytes::new(py, &out.times),
            out.epochs,
        ))
    })
}

/// `indexes.py`'s `_recover` loop over the valid V0/V1 messages from `position` before `until`
/// (kseg-wire `legacy_index_run`): (position reached, state, new `.index` entries, new
/// `.timeindex` entries).
#[pyfunction]
#[allow(clippy::type_complexity)]
pub fn legacy_index_run<'py>(
    py: Python<'py>,
    buf: &Bound<'py, PyAny>,
    position: usize,
    limit: usize,
    until: usize,
    state: [i64; 16],
) -> PyResult<(usize, Bound<'py, PyTuple>, Bound<'py, PyBytes>, Bound<'py, PyBytes>)> {
    guarded(|| {
        let borrowed = Borrowed::new(buf)?;
        let mut s = kseg_wire::IndexState::from_array(state);
        let mut out = kseg_wire::IndexOut::default();
        let pos = kseg_wire::legacy_index_run(borrowed.as_slice(), position, limit, until, &mut s, &mut out);
        Ok((pos, PyTuple::new(py, s.to_array())?, PyBytes::new(py, &out.offsets), PyBytes::new(py, &out.times)))
    })
}
