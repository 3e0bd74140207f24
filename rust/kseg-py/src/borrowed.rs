//! The one module with `unsafe`: borrowing a Python buffer (bytes, bytearray, mmap, memoryview)
//! as a `&[u8]` for the duration of one core call.
//!
//! The core is built for the stable ABI of Python 3.10 (abi3-py310). The buffer protocol joined
//! the limited API only in 3.11, so PyO3 offers no `PyBuffer` under abi3-py310; the two functions
//! are declared here instead. Both are exported by every CPython 3.x (they are what
//! `memoryview` itself calls), and `Py_buffer`'s layout below is the one CPython has kept since
//! 3.3 and froze in the 3.11 stable ABI (Include/pybuffer.h).

use std::ffi::{c_char, c_int, c_void};

use pyo3::ffi;
use pyo3::prelude::*;

/// `Py_buffer` (Include/pybuffer.h).
#[repr(C)]
struct PyBufferView {
    buf: *mut c_void,
    obj: *mut ffi::PyObject,
    len: ffi::Py_ssize_t,
    itemsize: ffi::Py_ssize_t,
    readonly: c_int,
    ndim: c_int,
    format: *mut c_char,
    shape: *mut ffi::Py_ssize_t,
    strides: *mut ffi::Py_ssize_t,
    suboffsets: *mut ffi::Py_ssize_t,
    internal: *mut c_void,
}

/// `PyBUF_SIMPLE`: a plain contiguous run of unsigned bytes, read-only is fine.
const PYBUF_SIMPLE: c_int = 0;

extern "C" {
    fn PyObject_GetBuffer(obj: *mut ffi::PyObject, view: *mut PyBufferView, flags: c_int) -> c_int;
    fn PyBuffer_Release(view: *mut PyBufferView);
}

/// A Python object's bytes, exported through the buffer protocol and held until dropped.
pub struct Borrowed<'py> {
    view: Box<PyBufferView>,
    _owner: Bound<'py, PyAny>,
}

impl<'py> Borrowed<'py> {
    /// Export `obj`'s buffer as `PyBUF_SIMPLE` (a non-contiguous memoryview raises BufferError).
    pub fn new(obj: &Bound<'py, PyAny>) -> PyResult<Borrowed<'py>> {
        let mut view = Box::new(PyBufferView {
            buf: std::ptr::null_mut(),
            obj: std::ptr::null_mut(),
            len: 0,
            itemsize: 0,
            readonly: 0,
            ndim: 0,
            format: std::ptr::null_mut(),
            shape: std::ptr::null_mut(),
            strides: std::ptr::null_mut(),
            suboffsets: std::ptr::null_mut(),
            internal: std::ptr::null_mut(),
        });
        // SAFETY: `obj` is a live object (a `Bound` holds a reference and proves the GIL is held,
        // which PyObject_GetBuffer requires); `view` points to a writable, properly laid out
        // Py_buffer that lives in a Box (its address is stable until PyBuffer_Release in Drop).
        let status = unsafe { PyObject_GetBuffer(obj.as_ptr(), &mut *view, PYBUF_SIMPLE) };
        if status != 0 {
            return Err(PyErr::fetch(obj.py()));
        }
        Ok(Borrowed { view, _owner: obj.clone() })
    }

    /// The bytes, for as long as `self` (and so the export) lives.
    pub fn as_slice(&self) -> &[u8] {
        let len = usize::try_from(self.view.len).unwrap_or(0);
        if len == 0 || self.view.buf.is_null() {
            return &[];
        }
        // SAFETY: the export made in `new` is held until `self` is dropped, and the slice cannot
        // outlive `self`. While an export is held its exporter may not free or move the memory:
        // bytes are immutable, and bytearray resizing / mmap.close / mmap.resize raise BufferError
        // while exports exist. PyBUF_SIMPLE means `buf` is one contiguous run of `len` bytes;
        // `u8` has alignment 1 and every byte is a valid `u8`. Nothing writes the bytes during
        // the call: `Borrowed<'py>` exists only while the GIL is held (`Bound<'py>`), every core
        // call keeps the GIL and calls no Python code while it reads, and the core only reads.
        // (A file mapped read-only could still be changed by another process writing the file;
        // kseg's evidence files are not written while it reads them, and every length the core
        // uses is checked against the slice's length, never trusted from memory read twice.)
        unsafe { std::slice::from_raw_parts(self.view.buf as *const u8, len) }
    }
}

impl Drop for Borrowed<'_> {
    fn drop(&mut self) {
        // SAFETY: `view` was filled by a successful PyObject_GetBuffer in `new` and is released
        // exactly once, here; the GIL is held (the `'py` lifetime of `_owner`, a live `Bound`).
        unsafe { PyBuffer_Release(&mut *self.view) }
    }
}
