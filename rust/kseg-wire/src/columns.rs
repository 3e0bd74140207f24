//! The record-level columns of the Spark source in Arrow's memory layout, built from V2 records.
//!
//! `kseg/spark/rows.py` turns each batch's records into one row each (offset, timestamp,
//! timestamp_type, key, value, headers, sequence; the batch-level columns are repeated in
//! Python). Its pure-Python path gathers those columns record by record (`spark/decode.py`,
//! `RecordScan` in `format/records.py`) and has pyarrow convert the Python objects; this module
//! writes the same columns straight into Arrow's buffers, batch after batch, so that Python only
//! wraps them (`pyarrow.Array.from_buffers`):
//!
//! * int64 / int32 columns: the values, native-endian (Arrow's default);
//! * binary / string columns: int32 offsets (one more than rows, starting at 0), the bytes, and a
//!   validity bitmap (bit i of byte i/8, least significant bit first) with its null count;
//! * `headers` (`list<struct<key string, value binary>>`): int32 list offsets per row over one
//!   struct row per header, whose `key` is a string column and `value` a nullable binary column.
//!
//! The records are read by the one V2 scanner (`records::scan_records`), so a batch this module
//! takes is exactly a batch `RecordScan` answers for. It declines a batch -- `add` returns `None`
//! and appends nothing -- where the Python path does something this module does not: records
//! the scanner does not accept (the validating Python reader explains them), a header key that
//! is not UTF-8 (Python decodes it as Java's `new String(bytes, UTF_8)` does, with replacement
//! characters: `format/jvm_text.py`), or a column that would pass Arrow's 2 GiB int32 offsets.
//!
//! Values, as Kafka 4.3.0 computes them (clients/src/main/java/org/apache/kafka/common/record/
//! internal/DefaultRecord.java, DefaultRecordBatch.java): offset = baseOffset + offsetDelta and
//! timestamp = baseTimestamp + timestampDelta in Java long arithmetic (wrapping), the batch's
//! maxTimestamp for every record of a LogAppendTime batch; sequence = -1 without a base sequence,
//! else `DefaultRecordBatch.incrementSequence(baseSequence, offsetDelta)` in Java int arithmetic.

use crate::records::{scan_records, RecordScan, HEADER_STRIDE, RECORD_STRIDE};

/// `TimestampType.toString()` for the two V2 timestamp types (`model.CREATE_TIME`, `LOG_APPEND_TIME`).
pub const CREATE_TIME: &[u8] = b"CreateTime";
pub const LOG_APPEND_TIME: &[u8] = b"LogAppendTime";

/// The largest offset an Arrow binary/string/list column with int32 offsets can hold.
const MAX_OFFSET: u64 = i32::MAX as u64;

/// A validity bitmap under construction, and how many of its bits are 0 (nulls).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Bitmap {
    pub bits: Vec<u8>,
    pub len: usize,
    pub nulls: usize,
}

impl Bitmap {
    fn push(&mut self, valid: bool) {
        if self.len.is_multiple_of(8) {
            self.bits.push(0);
        }
        if valid {
            if let Some(last) = self.bits.last_mut() {
                *last |= 1 << (self.len % 8);
            }
        } else {
            self.nulls += 1;
        }
        self.len += 1;
    }
}

/// An Arrow variable-width column (binary or string): offsets, bytes, validity.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VarColumn {
    /// `len + 1` int32 offsets, native-endian.
    pub offsets: Vec<u8>,
    pub data: Vec<u8>,
    pub validity: Bitmap,
}

impl Default for VarColumn {
    fn default() -> Self {
        VarColumn { offsets: 0i32.to_ne_bytes().to_vec(), data: Vec::new(), validity: Bitmap::default() }
    }
}

impl VarColumn {
    /// Append `buf[start..start + length]`, or a null when `length` is negative. The caller has
    /// checked that the span lies in `buf` (`span`) and that the data stays within int32 offsets.
    fn push(&mut self, buf: &[u8], start: i64, length: i64) {
        if length >= 0 {
            self.data.extend_from_slice(span(buf, start, length).unwrap_or_default());
        }
        self.validity.push(length >= 0);
        self.offsets.extend_from_slice(&(self.data.len() as i32).to_ne_bytes());
    }

    fn push_bytes(&mut self, bytes: &[u8]) {
        self.data.extend_from_slice(bytes);
        self.validity.push(true);
        self.offsets.extend_from_slice(&(self.data.len() as i32).to_ne_bytes());
    }

    /// Rows appended so far.
    pub fn len(&self) -> usize {
        self.validity.len
    }

    pub fn is_empty(&self) -> bool {
        self.validity.len == 0
    }
}

/// A batch's values the records are read against (its header fields).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BatchBases {
    pub base_offset: i64,
    pub base_timestamp: i64,
    /// `Some(maxTimestamp)` for a LogAppendTime batch: every record's timestamp.
    pub log_append_time: Option<i64>,
    pub base_sequence: i32,
}

/// The record-level columns of a chunk of rows, in Arrow's layout (see the module comment).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RecordColumns {
    pub rows: usize,
    /// Key and value bytes gathered (what `rows.py` counts against `CHUNK_BYTES`).
    pub payload: u64,
    pub offsets: Vec<u8>,
    pub timestamps: Vec<u8>,
    pub sequences: Vec<u8>,
    pub timestamp_types: VarColumn,
    pub keys: VarColumn,
    pub values: VarColumn,
    /// `rows + 1` int32 offsets into the header rows.
    pub header_offsets: Vec<u8>,
    pub header_keys: VarColumn,
    pub header_values: VarColumn,
}

/// `DefaultRecordBatch.incrementSequence` in Java int arithmetic (`model.increment_sequence`).
pub fn increment_sequence(sequence: i32, increment: i32) -> i32 {
    if sequence > i32::MAX.wrapping_sub(increment) {
        increment.wrapping_sub(i32::MAX.wrapping_sub(sequence)).wrapping_sub(1)
    } else {
        sequence.wrapping_add(increment)
    }
}

/// `buf[start..start + length]` when it lies in `buf` (a checked read: never a panic).
fn span(buf: &[u8], start: i64, length: i64) -> Option<&[u8]> {
    let start = usize::try_from(start).ok()?;
    buf.get(start..start.checked_add(usize::try_from(length).ok()?)?)
}

/// Whether the span is a null (negative length) or lies in `buf`.
fn null_or_in(buf: &[u8], start: i64, length: i64) -> bool {
    length < 0 || span(buf, start, length).is_some()
}

/// Sum of the positive lengths at `index` of each `stride` integers of `fields`.
fn span_bytes(fields: &[i64], stride: usize, index: usize) -> u64 {
    fields.chunks_exact(stride).map(|f| f[index].max(0) as u64).sum()
}

/// Whether the column can take `more` bytes and still fit int32 offsets.
fn fits(column: &VarColumn, more: u64) -> bool {
    column.data.len() as u64 + more <= MAX_OFFSET
}

impl RecordColumns {
    pub fn new() -> Self {
        RecordColumns { header_offsets: 0i32.to_ne_bytes().to_vec(), ..Default::default() }
    }

    /// Append the `count` records filling `buf[start..end]` exactly, read with `bases`:
    /// `Some((rows, key and value bytes))` appended, or `None` with nothing appended (see the
    /// module comment for when).
    pub fn add(&mut self, buf: &[u8], start: usize, end: usize, count: usize, bases: BatchBases) -> Option<(usize, u64)> {
        let scan = scan_records(buf, start, end, count)?;
        if scan.end != end || !self.can_take(buf, &scan) {
            return None;
        }
        let payload = span_bytes(&scan.fields, RECORD_STRIDE, 4) + span_bytes(&scan.fields, RECORD_STRIDE, 6);
        self.append(buf, &scan, bases);
        self.rows += count;
        self.payload += payload;
        Some((count, payload))
    }

    /// The checks made before anything is appended: every span in `buf` (the scanner's spans
    /// always are), UTF-8 header keys, int32 offsets.
    fn can_take(&self, buf: &[u8], scan: &RecordScan) -> bool {
        let records_ok = scan.fields.chunks_exact(RECORD_STRIDE).all(|f| {
            null_or_in(buf, f[3], f[4]) && null_or_in(buf, f[5], f[6]) && f[7] >= 0
        });
        let headers_ok = scan.header_fields.chunks_exact(HEADER_STRIDE).all(|h| {
            span(buf, h[0], h[1]).is_some_and(|key| std::str::from_utf8(key).is_ok()) && null_or_in(buf, h[2], h[3])
        });
        let headers = (scan.header_fields.len() / HEADER_STRIDE) as u64;
        records_ok
            && headers_ok
            && fits(&self.keys, span_bytes(&scan.fields, RECORD_STRIDE, 4))
            && fits(&self.values, span_bytes(&scan.fields, RECORD_STRIDE, 6))
            && fits(&self.header_keys, span_bytes(&scan.header_fields, HEADER_STRIDE, 1))
            && fits(&self.header_values, span_bytes(&scan.header_fields, HEADER_STRIDE, 3))
            && fits(&self.timestamp_types, (scan.fields.len() / RECORD_STRIDE * LOG_APPEND_TIME.len()) as u64)
            && (self.header_keys.len() as u64 + headers) <= MAX_OFFSET
    }

    fn append(&mut self, buf: &[u8], scan: &RecordScan, bases: BatchBases) {
        let timestamp_type = if bases.log_append_time.is_some() { LOG_APPEND_TIME } else { CREATE_TIME };
        let mut headers = scan.header_fields.chunks_exact(HEADER_STRIDE);
        for f in scan.fields.chunks_exact(RECORD_STRIDE) {
            let offset_delta = f[0];
            self.offsets.extend_from_slice(&bases.base_offset.wrapping_add(offset_delta).to_ne_bytes());
            let timestamp = bases.log_append_time.unwrap_or_else(|| bases.base_timestamp.wrapping_add(f[1]));
            self.timestamps.extend_from_slice(&timestamp.to_ne_bytes());
            // offset deltas are zigzag int32 varints: the cast is exact
            let sequence = if bases.base_sequence < 0 { -1 } else { increment_sequence(bases.base_sequence, offset_delta as i32) };
            self.sequences.extend_from_slice(&sequence.to_ne_bytes());
            self.timestamp_types.push_bytes(timestamp_type);
            self.keys.push(buf, f[3], f[4]);
            self.values.push(buf, f[5], f[6]);
            for h in headers.by_ref().take(f[7] as usize) {
                self.header_keys.push(buf, h[0], h[1]);
                self.header_values.push(buf, h[2], h[3]);
            }
            self.header_offsets.extend_from_slice(&(self.header_keys.len() as i32).to_ne_bytes());
        }
    }

    /// The columns gathered so far; the builder starts over empty.
    pub fn take(&mut self) -> RecordColumns {
        std::mem::replace(self, RecordColumns::new())
    }
}

/// The builder on any bytes (tests/properties.rs, fuzz target `records`): never a panic; a batch
/// it takes is appended exactly as the scanner's spans say, and one it declines changes nothing.
pub fn check_columns(buf: &[u8], start: usize, end: usize, count: usize, bases: BatchBases) -> Option<(usize, u64)> {
    let mut columns = RecordColumns::new();
    // a first batch of the same bytes, when it is taken, so that the second appends to a column
    let first = columns.add(buf, start, end, count, bases);
    let before = columns.clone();
    let added = columns.add(buf, start, end, count, bases);
    assert_eq!(first, added, "the same batch taken once and not twice");
    let Some((rows, payload)) = added else {
        assert_eq!(columns, before, "a declined batch changed the columns");
        return None;
    };
    let scan = scan_records(buf, start, end, count).expect("a taken batch scans");
    assert_eq!((rows, columns.rows), (count, before.rows + count));
    assert_eq!(columns.payload, before.payload + payload);
    let int = |bytes: &[u8], i: usize| i32::from_ne_bytes(bytes[4 * i..4 * i + 4].try_into().unwrap_or_default());
    let long = |bytes: &[u8], i: usize| i64::from_ne_bytes(bytes[8 * i..8 * i + 8].try_into().unwrap_or_default());
    let mut header = before.header_keys.len();
    for (r, f) in scan.fields.chunks_exact(RECORD_STRIDE).enumerate() {
        let row = before.rows + r;
        assert_eq!(long(&columns.offsets, row), bases.base_offset.wrapping_add(f[0]));
        let timestamp = bases.log_append_time.unwrap_or(bases.base_timestamp.wrapping_add(f[1]));
        assert_eq!(long(&columns.timestamps, row), timestamp);
        for (column, start, length) in [(&columns.keys, f[3], f[4]), (&columns.values, f[5], f[6])] {
            let (from, to) = (int(&column.offsets, row) as usize, int(&column.offsets, row + 1) as usize);
            assert_eq!(column.validity.bits[row / 8] >> (row % 8) & 1 == 1, length >= 0, "validity of row {row}");
            assert_eq!(&column.data[from..to], span(buf, start, length.max(0)).unwrap_or_default());
        }
        assert_eq!(int(&columns.header_offsets, row) as usize, header);
        header += f[7] as usize;
        assert_eq!(int(&columns.header_offsets, row + 1) as usize, header);
    }
    assert_eq!(columns.header_keys.len(), header);
    assert_eq!(columns.keys.validity.nulls, 2 * before.keys.validity.nulls, "nulls counted");
    added
}
