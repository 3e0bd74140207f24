//! cargo +nightly fuzz run zstd: the zstd frame walk on any bytes (kseg-wire zstd.rs; docs/core.md).
//! A crash found here is copied to ../regressions/ and replayed by `cargo test` (tests/properties.rs).
#![no_main]

use kseg_wire::invariants::check_zstd_frames;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    check_zstd_frames(data);
});
