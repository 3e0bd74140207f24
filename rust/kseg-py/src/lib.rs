//! `kseg._core`: the thin PyO3 binding over `kseg-wire`. Called only from `kseg/format/_core.py`.
//!
//! Each entry point borrows the caller's buffer (module `borrowed`, the crate's only `unsafe`),
//! runs the wire function, and converts the result to the exact Python values the pure-Python
//! functions return. A panic is caught here and raised as `kseg._core.CoreError` (the glue turns
//! it into kseg's one-line error); the panic hook is silenced so nothing reaches stderr.

#![deny(unsafe_op_in_unsafe_fn)]

mod borrowed;
mod columns;
mod digest;
mod indexed;
mod index_check;
mod encode;
mod grep;
mod metadata;
mod render;
mod zstd;

use std::panic::{catch_unwind, AssertUnwindSafe};

use borrowed::Borrowed;
use kseg_wire::{Frame, Step, V2Header};
use pyo3::create_exception;
use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyList, PyTuple};

create_exception!(_core, CoreError, PyRuntimeError, "A panic inside the compiled core (a bug in kseg).");

/// Run `f`, turning a panic into `CoreError` with the panic's message.
pub(crate) fn guarded<T>(f: impl FnOnce() -> PyResult<T>) -> PyResult<T> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(result) => result,
        Err(payload) => {
            let message = payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "panic".to_string());
            Err(CoreError::new_err(message))
        }
    }
}

fn header_tuple<'py>(py: Python<'py>, h: &V2Header) -> PyResult<Bound<'py, PyTuple>> {
    PyTuple::new(py, h.as_array())
}

/// A frame's V2 header as a tuple, or None.
pub(crate) fn frame_header<'py>(py: Python<'py>, f: &Frame) -> PyResult<Bound<'py, PyAny>> {
    Ok(match &f.header {
        Some(h) => header_tuple(py, h)?.into_any(),
        None => py.None().into_bound(py),
    })
}

pub(crate) fn frame_tuple<'py>(py: Python<'py>, f: &Frame) -> PyResult<Bound<'py, PyAny>> {
    let header = frame_header(py, f)?;
    Ok((f.position, f.next, f.magic, header, f.crc_ok).into_pyobject(py)?.into_any())
}

/// `BatchWalk.frames` for one chunk: (frames, next position or None, end or None).
///
/// The end is (position, remaining, reason, declared size or None) as in `WalkEnd`.
#[pyfunction]
#[allow(clippy::type_complexity)]
fn walk_frames<'py>(
    py: Python<'py>,
    buf: &Bound<'py, PyAny>,
    start: usize,
    limit: usize,
    check_crc: bool,
    max_frames: usize,
    max_bytes: usize,
) -> PyResult<(Bound<'py, PyList>, Option<usize>, Option<(usize, usize, &'static str, Option<i32>)>)> {
    guarded(|| {
        let borrowed = Borrowed::new(buf)?;
        let mut frames = Vec::new();
        let step = kseg_wire::walk(borrowed.as_slice(), start, limit, check_crc, max_frames, max_bytes, &mut frames);
        let items = frames.iter().map(|f| frame_tuple(py, f)).collect::<PyResult<Vec<_>>>()?;
        let list = PyList::new(py, items)?;
        Ok(match step {
            Step::More(pos) => (list, Some(pos), None),
            Step::Ended(e) => (list, None, Some((e.position, e.remaining, e.reason.name(), e.declared_size))),
        })
    })
}

/// `BatchWalk.valid_v2_run`: (headers, position after the last).
#[pyfunction]
fn valid_v2_run<'py>(
    py: Python<'py>,
    buf: &Bound<'py, PyAny>,
    position: usize,
    limit: usize,
    until: usize,
) -> PyResult<(Bound<'py, PyList>, usize)> {
    guarded(|| {
        let borrowed = Borrowed::new(buf)?;
        let mut headers = Vec::new();
        let pos = kseg_wire::valid_v2_run(borrowed.as_slice(), position, limit, until, &mut headers);
        let items = headers.iter().map(|h| header_tuple(py, h)).collect::<PyResult<Vec<_>>>()?;
        Ok((PyList::new(py, items)?, pos))
    })
}

/// `scan.py`'s `_valid_run` for one chunk: ([(position, magic)], position reached, more to do).
#[pyfunction]
fn valid_entries<'py>(
    py: Python<'py>,
    buf: &Bound<'py, PyAny>,
    start: usize,
    limit: usize,
    max_bytes: usize,
) -> PyResult<(Bound<'py, PyList>, usize, bool)> {
    guarded(|| {
        let borrowed = Borrowed::new(buf)?;
        let mut entries = Vec::new();
        let stop = kseg_wire::valid_run(borrowed.as_slice(), start, limit, max_bytes, &mut entries);
        let list = PyList::new(py, entries)?;
        Ok(match stop {
            kseg_wire::RunStop::More(pos) => (list, pos, true),
            kseg_wire::RunStop::Stopped(pos) => (list, pos, false),
        })
    })
}

/// `scan.py`'s `find_next_batch`: the first position >= start of a whole, CRC-valid entry, or None.
#[pyfunction]
fn find_next(buf: &Bound<'_, PyAny>, start: usize, limit: usize) -> PyResult<Option<usize>> {
    guarded(|| {
        let borrowed = Borrowed::new(buf)?;
        Ok(kseg_wire::find_next(borrowed.as_slice(), start, limit))
    })
}

/// `records.py`'s `scan_some_records` loop: (fields, header_fields, end, long_timestamps) or None.
#[pyfunction]
#[allow(clippy::type_complexity)]
fn scan_records<'py>(
    py: Python<'py>,
    buf: &Bound<'py, PyAny>,
    start: usize,
    end: usize,
    count: usize,
) -> PyResult<Option<(Bound<'py, PyList>, Bound<'py, PyList>, usize, bool)>> {
    guarded(|| {
        let borrowed = Borrowed::new(buf)?;
        let Some(scan) = kseg_wire::records::scan_records(borrowed.as_slice(), start, end, count) else {
            return Ok(None);
        };
        let fields = PyList::new(py, &scan.fields)?;
        let header_fields = PyList::new(py, &scan.header_fields)?;
        Ok(Some((fields, header_fields, scan.end, scan.long_timestamps)))
    })
}

/// verify's run of clean V0/V1 messages (kseg-wire `legacy::clean_legacy_run`): (position reached,
/// count, first offset, last offset, position of the last or None, [(position, offset, timestamp)]
/// of every message when `each`, else None).
#[pyfunction]
#[allow(clippy::type_complexity, clippy::too_many_arguments)]
fn clean_legacy_run<'py>(
    buf: &Bound<'py, PyAny>,
    start: usize,
    limit: usize,
    until: usize,
    floor: i64,
    overflow_at: i64,
    each: bool,
) -> PyResult<(usize, usize, i64, i64, Option<usize>, Option<Vec<(usize, i64, i64)>>)> {
    guarded(|| {
        let borrowed = Borrowed::new(buf)?;
        let mut summary = kseg_wire::legacy::RunSummary::default();
        let mut out = Vec::new();
        let end = kseg_wire::legacy::clean_legacy_run(
            borrowed.as_slice(), start, limit, until, floor, overflow_at, &mut summary, each.then_some(&mut out),
        );
        let messages = each.then(|| out.iter().map(|m| (m.position, m.offset, m.timestamp)).collect());
        Ok((end, summary.count, summary.first_offset, summary.last_offset, summary.last_position, messages))
    })
}

/// Pass 1 over a region of a wrapper's decompressed inner entries (kseg-wire `legacy::inner_walk`):
/// (stop, count, first, last, first compressed, size problem or None, record problem or None,
/// record index), as `kseg/format/legacy_inner.py`'s `Walked`.
#[pyfunction]
#[allow(clippy::type_complexity)]
fn legacy_inner_walk<'py>(
    buf: &Bound<'py, PyAny>,
    start: usize,
    end: usize,
) -> PyResult<(usize, usize, i64, i64, bool, Option<usize>, Option<usize>, usize)> {
    guarded(|| {
        let borrowed = Borrowed::new(buf)?;
        let w = kseg_wire::legacy::inner_walk(borrowed.as_slice(), start, end);
        Ok((w.stop, w.count, w.first, w.last, w.first_compressed, w.size_problem, w.record_problem, w.record_index))
    })
}

/// verify's look at a region of inner messages (kseg-wire `legacy::inner_check`): (stop, count,
/// first, last, largest timestamp, [(index, kind, offset, value)]), as `legacy_inner.Checked`.
#[pyfunction]
#[allow(clippy::type_complexity, clippy::too_many_arguments)]
fn legacy_inner_check<'py>(
    buf: &Bound<'py, PyAny>,
    start: usize,
    end: usize,
    magic: i8,
    base: Option<i64>,
    log_append: bool,
    timestamp: i64,
    index: usize,
    previous: Option<i64>,
    largest: i64,
) -> PyResult<(usize, usize, i64, i64, i64, Vec<(usize, u8, i64, i64)>)> {
    guarded(|| {
        let borrowed = Borrowed::new(buf)?;
        let wrapper = kseg_wire::legacy::Wrapper { magic, base, timestamp, log_append };
        let c = kseg_wire::legacy::inner_check(borrowed.as_slice(), start, end, &wrapper, index, previous, largest);
        Ok((c.stop, c.count, c.first, c.last, c.largest, c.events))
    })
}

/// A wrapper's inner messages as kseg `Record`s (kseg-wire `legacy::inner_record`), at most `most`
/// of them from `start`: (where it stopped, [Record]). `record` is the `Record` class (a tuple
/// subclass, built with `tuple.__new__`), `types` the three timestamp-type names. Stops before the
/// first message the Python path reads instead (`_stream_records`).
#[pyfunction]
#[allow(clippy::too_many_arguments)]
fn legacy_inner_records<'py>(
    py: Python<'py>,
    buf: &Bound<'py, PyAny>,
    start: usize,
    end: usize,
    magic: i8,
    base: Option<i64>,
    log_append: bool,
    timestamp: i64,
    record: &Bound<'py, PyAny>,
    types: (Bound<'py, PyAny>, Bound<'py, PyAny>, Bound<'py, PyAny>),
    most: usize,
) -> PyResult<(usize, Bound<'py, PyList>)> {
    guarded(|| {
        let borrowed = Borrowed::new(buf)?;
        let data = borrowed.as_slice();
        let wrapper = kseg_wire::legacy::Wrapper { magic, base, timestamp, log_append };
        let new = py.get_type::<PyTuple>().getattr("__new__")?;
        let empty = PyTuple::empty(py);
        let types = [types.0, types.1, types.2];
        let out = PyList::empty(py);
        let part = |(at, length): (usize, i32)| -> Option<Bound<'py, PyBytes>> {
            (length >= 0).then(|| PyBytes::new(py, &data[at..at + length as usize]))
        };
        let mut pos = start;
        while out.len() < most {
            let Some(m) = kseg_wire::legacy::inner_record(data, pos, end, &wrapper) else { break };
            let none = || py.None().into_bound(py);
            let fields = PyTuple::new(py, [
                m.offset.into_pyobject(py)?.into_any(),
                m.timestamp.into_pyobject(py)?.into_any(),
                part(m.key).map_or_else(none, Bound::into_any),
                part(m.value).map_or_else(none, Bound::into_any),
                empty.clone().into_any(),
                (-1i32).into_pyobject(py)?.into_any(),
                m.attributes.into_pyobject(py)?.into_any(),
                m.key.1.into_pyobject(py)?.into_any(),
                m.value.1.into_pyobject(py)?.into_any(),
                m.magic.into_pyobject(py)?.into_any(),
                m.crc.into_pyobject(py)?.into_any(),
                PyBool::new(py, m.valid).to_owned().into_any(),
                PyBool::new(py, false).to_owned().into_any(),
                types[usize::from(m.timestamp_type)].clone(),
            ])?;
            out.append(new.call1((record, fields))?)?;
            pos = m.next;
        }
        Ok((pos, out))
    })
}

/// Panic on purpose: lets the tests prove a panic becomes `CoreError`, not a crash or a traceback.
#[pyfunction]
fn _panic_for_tests(message: &str) -> PyResult<()> {
    guarded(|| panic!("{}", message.to_string()))
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    // A panic is reported as CoreError by `guarded`; the default hook would also print it to stderr.
    std::panic::set_hook(Box::new(|_| {}));
    m.add("CoreError", m.py().get_type::<CoreError>())?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add_function(wrap_pyfunction!(walk_frames, m)?)?;
    m.add_function(wrap_pyfunction!(valid_v2_run, m)?)?;
    m.add_function(wrap_pyfunction!(valid_entries, m)?)?;
    m.add_function(wrap_pyfunction!(indexed::valid_v2_run_indexed, m)?)?;
    m.add_function(wrap_pyfunction!(indexed::index_run_at, m)?)?;
    m.add_function(wrap_pyfunction!(indexed::legacy_index_run, m)?)?;
    m.add_function(wrap_pyfunction!(find_next, m)?)?;
    m.add_function(wrap_pyfunction!(clean_legacy_run, m)?)?;
    m.add_function(wrap_pyfunction!(legacy_inner_walk, m)?)?;
    m.add_function(wrap_pyfunction!(legacy_inner_check, m)?)?;
    m.add_function(wrap_pyfunction!(legacy_inner_records, m)?)?;
    m.add_function(wrap_pyfunction!(scan_records, m)?)?;
    m.add_function(wrap_pyfunction!(grep::find_bytes, m)?)?;
    m.add_function(wrap_pyfunction!(digest::batch_digests, m)?)?;
    m.add_function(wrap_pyfunction!(digest::keyed_digests, m)?)?;
    m.add_function(wrap_pyfunction!(grep::grep_candidates, m)?)?;
    m.add_function(wrap_pyfunction!(zstd::zstd_frames, m)?)?;
    m.add_function(wrap_pyfunction!(_panic_for_tests, m)?)?;
    m.add_class::<columns::RecordColumns>()?;
    m.add_class::<index_check::OffsetCross>()?;
    m.add_class::<index_check::TimeCross>()?;
    m.add_class::<metadata::MetadataDecoder>()?;
    encode::register(m)?;
    m.add_function(wrap_pyfunction!(render::render_records, m)?)?;
    Ok(())
}
