//! cargo +nightly fuzz run records: the V2 record scanner on any bytes (docs/core.md).
//! A crash found here is copied to ../regressions/ and replayed by `cargo test` (tests/properties.rs).
#![no_main]

use kseg_wire::columns::{check_columns, BatchBases};
use kseg_wire::invariants::{check_records, WalkCase};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let (case, buf) = WalkCase::from_bytes(data);
    check_records(buf, case.start.min(buf.len()), buf.len(), case.max_frames);
    check_records(buf, 0, buf.len(), usize::from(data.first().copied().unwrap_or(0)));
    let bases = BatchBases { base_offset: i64::MAX - 3, base_timestamp: -5, log_append_time: None, base_sequence: i32::MAX };
    let _ = check_columns(buf, case.start.min(buf.len()), buf.len(), case.max_frames, bases);
});
