//! The zstd frame walk (kseg-wire `zstd::frames`) for `kseg/format/compression/zstd.py`.

use pyo3::prelude::*;

use crate::borrowed::Borrowed;
use crate::guarded;

/// One frame to decode: (start, block ends, content size or None, window size or None).
type FrameTuple = (usize, Vec<usize>, Option<u64>, Option<u64>);

/// `_walk_frames` of zstd.py over the whole stream: the frames to decode (skippable and empty
/// frames dropped) and the walk's error code (1 truncated, 2 unknown frame, 3 reserved block) or None.
#[pyfunction]
pub fn zstd_frames(buf: &Bound<'_, PyAny>) -> PyResult<(Vec<FrameTuple>, Option<u8>)> {
    guarded(|| {
        let borrowed = Borrowed::new(buf)?;
        let (frames, error) = kseg_wire::zstd::frames(borrowed.as_slice());
        let frames = frames.into_iter().map(|f| (f.start, f.pieces, f.content_size, f.window)).collect();
        Ok((frames, error.map(|e| e as u8)))
    })
}
