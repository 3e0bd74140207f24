//! cargo +nightly fuzz run index: the recovery loop's runs (index_run, index_run_at over windows,
//! indexed_v2_run) on any bytes equal one run and never panic (docs/core.md).
//! A crash found here is copied to ../regressions/ and replayed by `cargo test` (tests/properties.rs).
#![no_main]

use kseg_wire::invariants::check_index_runs;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let (head, buf) = data.split_at(data.len().min(4));
    let byte = |i: usize| head.get(i).copied().unwrap_or(0);
    let interval = i64::from(u16::from_be_bytes([byte(0), byte(1)])) + 1;
    let capacity = [0, 1, 2, 1000][usize::from(byte(2) % 4)];
    check_index_runs(buf, interval, capacity, usize::from(byte(3)) * 16 + 1);
});
