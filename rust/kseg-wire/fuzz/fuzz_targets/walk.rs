//! cargo +nightly fuzz run walk: the batch walker's invariants on any bytes (docs/core.md).
//! A crash found here is copied to ../regressions/ and replayed by `cargo test` (tests/properties.rs).
#![no_main]

use kseg_wire::invariants::{check_walk, WalkCase};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let (case, buf) = WalkCase::from_bytes(data);
    check_walk(buf, case);
});
