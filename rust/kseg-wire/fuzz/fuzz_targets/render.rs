//! cargo +nightly fuzz run render: the record renderer (dump text and JSON) on any bytes (docs/core.md).
//! A crash found here is copied to ../regressions/ and replayed by `cargo test` (tests/properties.rs).
#![no_main]

use kseg_wire::invariants::{check_render, WalkCase};
use kseg_wire::render::BatchBase;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let (case, buf) = WalkCase::from_bytes(data);
    let base = BatchBase {
        base_offset: if case.check_crc { 0 } else { i64::MAX - 1 },
        base_timestamp: i64::from(case.start as u8) - 1,
        log_append_time: (case.max_frames == 1).then_some(-1),
        base_sequence: if case.limit & 1 == 0 { -1 } else { i32::MAX },
    };
    check_render(buf, case.start.min(buf.len()), buf.len(), case.max_frames, &base);
});
