//! `kseg._core.RecordColumns`: the Spark source's record-level columns in Arrow's layout
//! (`kseg_wire::columns`), handed to Python as `bytes` buffers for `pyarrow.Array.from_buffers`.
//!
//! Called only from `kseg/format/arrow_columns.py`. Buffers are returned as `bytes` (one copy
//! each, per chunk of rows) rather than through Arrow's C data interface: that would need raw
//! pointers and a release callback, more `unsafe` than this crate allows outside `borrowed.rs`.

use kseg_wire::columns::{BatchBases, Bitmap, RecordColumns as Columns, VarColumn};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyTuple};

use crate::borrowed::Borrowed;
use crate::guarded;

/// A chunk of record rows under construction: `add` a batch's records, `take` the buffers.
#[pyclass(module = "kseg._core", name = "RecordColumns")]
pub struct RecordColumns {
    inner: Columns,
}

fn bytes<'py>(py: Python<'py>, data: &[u8]) -> Bound<'py, PyAny> {
    PyBytes::new(py, data).into_any()
}

/// The validity bitmap, or None when no value is null (as pyarrow builds it).
fn validity<'py>(py: Python<'py>, bitmap: &Bitmap) -> Bound<'py, PyAny> {
    if bitmap.nulls == 0 {
        py.None().into_bound(py)
    } else {
        bytes(py, &bitmap.bits)
    }
}

/// (validity or None, null count, offsets, data) of a variable-width column.
fn var<'py>(py: Python<'py>, column: &VarColumn) -> PyResult<Bound<'py, PyAny>> {
    let items = [
        validity(py, &column.validity),
        column.validity.nulls.into_pyobject(py)?.into_any(),
        bytes(py, &column.offsets),
        bytes(py, &column.data),
    ];
    Ok(PyTuple::new(py, items)?.into_any())
}

#[pymethods]
impl RecordColumns {
    #[new]
    fn new() -> Self {
        RecordColumns { inner: Columns::new() }
    }

    /// Rows gathered so far.
    #[getter]
    fn rows(&self) -> usize {
        self.inner.rows
    }

    /// Key and value bytes gathered so far.
    #[getter]
    fn payload(&self) -> u64 {
        self.inner.payload
    }

    /// Append a V2 batch's `count` records filling `buf[start:end]`: (rows, key and value
    /// bytes), or None with nothing appended (the Python path takes the batch).
    #[pyo3(signature = (buf, start, end, count, base_offset, base_timestamp, log_append_time, base_sequence, /))]
    #[allow(clippy::too_many_arguments)]
    fn add(
        &mut self,
        buf: &Bound<'_, PyAny>,
        start: usize,
        end: usize,
        count: usize,
        base_offset: i64,
        base_timestamp: i64,
        log_append_time: Option<i64>,
        base_sequence: i32,
    ) -> PyResult<Option<(usize, u64)>> {
        guarded(|| {
            let borrowed = Borrowed::new(buf)?;
            let bases = BatchBases { base_offset, base_timestamp, log_append_time, base_sequence };
            Ok(self.inner.add(borrowed.as_slice(), start, end, count, bases))
        })
    }

    /// The buffers gathered, and start over: (rows, offsets, timestamps, sequences,
    /// timestamp_types, keys, values, header_offsets, header_keys, header_values), each
    /// variable-width column as (validity or None, null count, offsets, data).
    fn take<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        guarded(|| {
            let c = self.inner.take();
            let items = [
                c.rows.into_pyobject(py)?.into_any(),
                bytes(py, &c.offsets),
                bytes(py, &c.timestamps),
                bytes(py, &c.sequences),
                var(py, &c.timestamp_types)?,
                var(py, &c.keys)?,
                var(py, &c.values)?,
                bytes(py, &c.header_offsets),
                var(py, &c.header_keys)?,
                var(py, &c.header_values)?,
            ];
            PyTuple::new(py, items)
        })
    }
}
