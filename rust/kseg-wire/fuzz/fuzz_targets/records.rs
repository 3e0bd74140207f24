//! cargo +nightly fuzz run records: the V2 record scanner on any bytes (docs/core.md).
//! A crash found here is copied to ../regressions/ and replayed by `cargo test` (tests/properties.rs).
#![no_main]

use kseg_wire::invariants::{check_records, WalkCase};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let (case, buf) = WalkCase::from_bytes(data);
    check_records(buf, case.start.min(buf.len()), buf.len(), case.max_frames);
    check_records(buf, 0, buf.len(), usize::from(data.first().copied().unwrap_or(0)));
});
