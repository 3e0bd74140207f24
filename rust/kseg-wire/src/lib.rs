//! kseg's wire core: the per-batch loops of kseg over plain byte slices, with no Python in it.
//!
//! Everything here mirrors a pure-Python function of the `kseg.format` package, which stays the
//! reference: the Python glue (`kseg/format/_core.py`) calls these through the thin PyO3 crate
//! `kseg-py`, and tests/core/ prove both return the same thing on every input.
//!
//! Safety: this crate is `#![forbid(unsafe_code)]`. Every read goes through [`read`]'s checked
//! helpers (`slice::get`), so hostile bytes can only make a function return "stopped here",
//! never read out of bounds; arithmetic on positions is checked or bounded by the slice length.

#![forbid(unsafe_code)]

pub mod blake2b;
pub mod columns;
pub mod digest;
pub mod encode;
pub mod index;
pub mod index_check;
pub mod invariants;
pub mod layout;
pub mod metadata;
pub mod legacy;
pub mod read;
pub mod records;
pub mod render;
pub mod scan;
pub mod walk;
pub mod zstd;

pub use index::{index_run, index_run_at, indexed_v2_run, legacy_index_run, IndexOut, IndexState};
pub use scan::{find_next, plausible, valid_run, RunStop};
pub use walk::{valid_v2_run, walk, EndReason, Frame, Step, V2Header, WalkEnd};
