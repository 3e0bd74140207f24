//! `kseg._core.render_records`: a V2 batch's records as `kseg dump --deep-iteration` writes them
//! (kseg-wire's `render` module), returned as one bytes object per batch. Called only from
//! `kseg/format/records_render.py` through `kseg/format/_core.py`'s module.

use kseg_wire::render::{render_some, BatchBase, Offsets, Payload, Style};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList};

use crate::borrowed::Borrowed;
use crate::guarded;

/// Style codes shared with records_render.py: 0 text, 1 JSON.
const TEXT: u8 = 0;
const JSON: u8 = 1;
/// Text flags.
const PRINT_DATA: u8 = 1;
const SKIP_METADATA: u8 = 2;
const KEYLESS_PIPE: u8 = 4;

fn style(kind: u8, flags: u8) -> PyResult<Style> {
    Ok(match (kind, flags) {
        (TEXT, _) => Style::Text {
            print_data: flags & PRINT_DATA != 0,
            skip_metadata: flags & SKIP_METADATA != 0,
            keyless_pipe: flags & KEYLESS_PIPE != 0,
        },
        (JSON, 0) => Style::Json(Payload::Utf8),
        (JSON, 1) => Style::Json(Payload::Hex),
        (JSON, 2) => Style::Json(Payload::Base64),
        _ => return Err(PyValueError::new_err("unknown render style")),
    })
}

/// (rendered bytes, first offset, every offset or None when they run from the first, where the
/// records end) or None. `whole`: the records must fill `buf[start..end]` exactly; otherwise this is
/// one part of a large batch and more may follow.
#[pyfunction]
#[allow(clippy::too_many_arguments, clippy::type_complexity)]
pub fn render_records<'py>(
    py: Python<'py>,
    buf: &Bound<'py, PyAny>,
    start: usize,
    end: usize,
    count: usize,
    kind: u8,
    flags: u8,
    base_offset: i64,
    base_timestamp: i64,
    log_append_time: Option<i64>,
    base_sequence: i32,
    whole: bool,
) -> PyResult<Option<(Bound<'py, PyBytes>, i64, Option<Bound<'py, PyList>>, usize)>> {
    guarded(|| {
        let style = style(kind, flags)?;
        let borrowed = Borrowed::new(buf)?;
        let base = BatchBase { base_offset, base_timestamp, log_append_time, base_sequence };
        // a capacity hint only: about what the records take as text (a part of a large batch is small)
        let hint = end.saturating_sub(start).saturating_mul(2).min(count.saturating_mul(192)).min(1 << 24);
        let mut out = Vec::with_capacity(hint);
        let Some((offsets, after)) = render_some(borrowed.as_slice(), start, end, count, &base, style, &mut out)
        else {
            return Ok(None);
        };
        if whole && after != end {
            return Ok(None);
        }
        let bytes = PyBytes::new(py, &out);
        Ok(Some(match offsets {
            Offsets::Run { first, .. } => (bytes, first, None, after),
            Offsets::Each(each) => (bytes, each.first().copied().unwrap_or(0), Some(PyList::new(py, &each)?), after),
        }))
    })
}
