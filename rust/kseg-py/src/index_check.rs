//! verify's `.index` / `.timeindex` cross-check (kseg-wire `index_check`) as two classes that
//! `kseg/ops/verify/index_checks.py` drives through `kseg/format/index_cross.py`.
//!
//! A run of the walk's batches is shown in one call (`observe_run`: the walk's header tuples and
//! the position of the first), so a healthy index costs no Python per batch or per entry.

use kseg_wire::index_check::{Offset, OffsetCheck, TimeCheck, Verdict};
use pyo3::prelude::*;
use pyo3::types::{PyList, PyTuple};

use crate::borrowed::Borrowed;
use crate::guarded;

/// `LOG_OVERHEAD`: the offset and size fields before a batch's length counts.
const LOG_OVERHEAD: i64 = 12;

/// (position, base offset, last offset, max timestamp) of each header of a run whose first batch
/// starts at `start`: the walk's V2 header tuples (base 0, length 1, lastOffsetDelta 6, maxTimestamp 8).
fn each_batch(start: i64, headers: &Bound<'_, PyList>, mut f: impl FnMut(i64, Offset, Offset, i64)) -> PyResult<()> {
    let mut pos = start;
    for header in headers.iter() {
        let header = header.downcast::<PyTuple>()?;
        let base: i64 = header.get_item(0)?.extract()?;
        let length: i64 = header.get_item(1)?.extract()?;
        let delta: i64 = header.get_item(6)?.extract()?;
        let max_timestamp: i64 = header.get_item(8)?.extract()?;
        f(pos, Offset::from(base), Offset::from(base) + Offset::from(delta), max_timestamp);
        pos = pos.saturating_add(LOG_OVERHEAD).saturating_add(length);
    }
    Ok(())
}

/// (position, offset, timestamp) of each message of a legacy run, shown as a batch of one offset.
fn each_message(messages: &Bound<'_, PyList>, mut f: impl FnMut(i64, Offset, Offset, i64)) -> PyResult<()> {
    for message in messages.iter() {
        let (pos, offset, timestamp): (i64, i64, i64) = message.extract()?;
        f(pos, offset.into(), offset.into(), timestamp);
    }
    Ok(())
}

/// The log's largest timestamp and its offset, when no `.timeindex` entry has it.
type Unindexed = Option<(i64, Option<Offset>)>;

/// `OffsetIndexCheck`'s entries and cross-check state.
#[pyclass(module = "kseg._core")]
pub struct OffsetCross(OffsetCheck);

#[pymethods]
impl OffsetCross {
    #[new]
    fn new(data: &Bound<'_, PyAny>, live: usize, base: i64) -> PyResult<Self> {
        guarded(|| Ok(OffsetCross(OffsetCheck::new(Borrowed::new(data)?.as_slice(), live, base))))
    }

    fn __len__(&self) -> usize {
        self.0.len()
    }

    fn entry(&self, i: usize) -> PyResult<(Offset, i64)> {
        guarded(|| Ok(self.0.entry(i)))
    }

    fn order(&self) -> PyResult<Vec<Verdict>> {
        guarded(|| Ok(self.0.order()))
    }

    fn observe(&mut self, pos: i64, base: Offset, last: Offset, _max_timestamp: i64) -> PyResult<()> {
        guarded(|| {
            self.0.observe(pos, base, last);
            Ok(())
        })
    }

    fn observe_run(&mut self, start: i64, headers: &Bound<'_, PyList>) -> PyResult<()> {
        guarded(|| each_batch(start, headers, |p, b, l, _| self.0.observe(p, b, l)))
    }

    fn observe_messages(&mut self, messages: &Bound<'_, PyList>) -> PyResult<()> {
        guarded(|| each_message(messages, |p, b, l, _| self.0.observe(p, b, l)))
    }

    fn finish(&self, log_size: i64) -> PyResult<Vec<Verdict>> {
        guarded(|| Ok(self.0.finish(log_size)))
    }
}

/// `TimeIndexCheck`'s entries and cross-check state.
#[pyclass(module = "kseg._core")]
pub struct TimeCross(TimeCheck);

#[pymethods]
impl TimeCross {
    #[new]
    fn new(data: &Bound<'_, PyAny>, live: usize, base: i64) -> PyResult<Self> {
        guarded(|| Ok(TimeCross(TimeCheck::new(Borrowed::new(data)?.as_slice(), live, base))))
    }

    fn __len__(&self) -> usize {
        self.0.len()
    }

    fn entry(&self, i: usize) -> PyResult<(i64, Offset)> {
        guarded(|| Ok(self.0.entry(i)))
    }

    fn order(&self) -> PyResult<Vec<Verdict>> {
        guarded(|| Ok(self.0.order()))
    }

    fn observe(&mut self, pos: i64, base: Offset, last: Offset, max_timestamp: i64) -> PyResult<()> {
        guarded(|| {
            self.0.observe(pos, base, last, max_timestamp);
            Ok(())
        })
    }

    fn observe_run(&mut self, start: i64, headers: &Bound<'_, PyList>) -> PyResult<()> {
        guarded(|| each_batch(start, headers, |p, b, l, t| self.0.observe(p, b, l, t)))
    }

    fn observe_messages(&mut self, messages: &Bound<'_, PyList>) -> PyResult<()> {
        guarded(|| each_message(messages, |p, b, l, t| self.0.observe(p, b, l, t)))
    }

    /// The verdicts, and (timestamp, offset) of the log's largest timestamp when no entry has it.
    fn finish(&self) -> PyResult<(Vec<Verdict>, Unindexed)> {
        guarded(|| Ok(self.0.finish()))
    }
}
