//! cargo +nightly fuzz run digest: `kseg diff`'s batch digests on any bytes (docs/core.md).
//! A crash found here is copied to ../regressions/ and replayed by `cargo test` (tests/properties.rs).
#![no_main]

use kseg_wire::invariants::{check_digests, WalkCase};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let (case, buf) = WalkCase::from_bytes(data);
    check_digests(buf, case.start, case.limit, case.max_frames);
});
