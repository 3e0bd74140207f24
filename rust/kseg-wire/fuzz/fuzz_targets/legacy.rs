//! cargo +nightly fuzz run legacy: convert's V0/V1 message-set scanner and re-encoder, and the
//! inner-message walk and check in runs (verify, dump, recover), on any bytes
//! (kseg-wire legacy.rs, encode.rs; docs/core.md). A crash found here is copied to ../regressions/
//! and replayed by `cargo test` (tests/properties.rs).
#![no_main]

use kseg_wire::invariants::{check_legacy, check_legacy_inner, WalkCase};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let (case, buf) = WalkCase::from_bytes(data);
    check_legacy(buf, (case.start % 2) as i8, case.max_bytes as i64, case.max_bytes as i64);
    check_legacy_inner(buf, case.start, Some(case.max_bytes as i64));
});
