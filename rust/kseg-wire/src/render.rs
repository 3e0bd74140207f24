//! A V2 batch's records rendered as `kseg dump --deep-iteration` writes them: Kafka's record lines
//! (text) or kseg's JSON record objects, straight into an output buffer (issue 16).
//!
//! The Python renderers stay the reference and the authority:
//! * text: `kseg/render/dump/text.py` `TextRenderer.record_line`, which reproduces
//!   `printRecordMetadata` / `printRecordContents` of Kafka 4.3.0's
//!   tools/src/main/java/org/apache/kafka/tools/DumpLogSegments.java (and, for `--kafka-version`
//!   up to 4.2, the Scala tool core/src/main/scala/kafka/tools/DumpLogSegments.scala: the only
//!   V2 record-line difference is what precedes `payload:` for a record without key under
//!   `--skip-record-metadata`);
//! * JSON: `kseg/render/dump/jsonl.py` `JsonRenderer.record_json` / `kseg/render/records_json.py`.
//!
//! Records are read by the one scanner ([`crate::records::scan_records`]); where it says no,
//! [`render_records`] returns `None` and Python renders the batch (and reports Kafka's message).
//! Keys, payloads and header keys shown as text are decoded as Java's `new String(bytes, UTF_8)`
//! decodes them ([`java_utf8`], the twin of kseg's `jvm_text.java_utf8`) and written as UTF-8, as
//! kseg writes all text.

use crate::records::{scan_records, HEADER_STRIDE, RECORD_STRIDE};

/// `TimestampType.name` (clients/src/main/java/org/apache/kafka/common/record/TimestampType.java).
const CREATE_TIME: &[u8] = b"CreateTime";
const LOG_APPEND_TIME: &[u8] = b"LogAppendTime";

/// How keys, values and header values are written in JSON (`--payload`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Payload {
    /// Valid UTF-8 as a JSON string, anything else as `{"base64": ...}` (`utf8_json`).
    Utf8,
    /// Lowercase hex string.
    Hex,
    /// Standard base64 with padding.
    Base64,
}

/// What to render.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Style {
    /// Kafka's record lines, each ended by `\n`.
    Text {
        /// `--print-data-log`: keys and payloads.
        print_data: bool,
        /// `--skip-record-metadata`: no metadata part.
        skip_metadata: bool,
        /// What precedes `payload:` for a record without key: `"| "` when true (4.3's Java port
        /// under `--skip-record-metadata`), `" "` otherwise.
        keyless_pipe: bool,
    },
    /// One JSON object per record, joined by `,` (the inside of the batch's `"records":[...]`).
    Json(Payload),
}

/// The batch header fields the records need.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BatchBase {
    pub base_offset: i64,
    pub base_timestamp: i64,
    /// The batch's max timestamp when it is LogAppendTime (every record then carries it).
    pub log_append_time: Option<i64>,
    pub base_sequence: i32,
}

/// The offsets of the rendered records, for Kafka's non-consecutive check.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Offsets {
    /// `count` offsets from `first`, each one more than the last (no wrap).
    Run { first: i64, count: usize },
    /// Anything else, every offset.
    Each(Vec<i64>),
}

/// Render the `count` records filling `buf[start..end]` exactly, appending to `out`.
///
/// `None` (with `out` holding a partial rendering the caller drops) where the scanner says no.
pub fn render_records(
    buf: &[u8],
    start: usize,
    end: usize,
    count: usize,
    base: &BatchBase,
    style: Style,
    out: &mut Vec<u8>,
) -> Option<Offsets> {
    let (offsets, after) = render_some(buf, start, end, count, base, style, out)?;
    (after == end).then_some(offsets)
}

/// The next `count` records of `buf[start..end]` rendered, and where they end (more records may
/// follow): a large batch a part at a time, as `scan_some_records` reads it, so memory holds one
/// part. The parts of one batch render exactly as the whole batch in one call.
pub fn render_some(
    buf: &[u8],
    start: usize,
    end: usize,
    count: usize,
    base: &BatchBase,
    style: Style,
    out: &mut Vec<u8>,
) -> Option<(Offsets, usize)> {
    let scan = scan_records(buf, start, end, count)?;
    let mut headers = scan.header_fields.chunks_exact(HEADER_STRIDE);
    let mut offsets = OffsetTracker::new(count);
    for (index, f) in scan.fields.chunks_exact(RECORD_STRIDE).enumerate() {
        let offset = base.base_offset.wrapping_add(f[0]);
        offsets.push(offset);
        let timestamp = match base.log_append_time {
            Some(t) => t,
            None => base.base_timestamp.wrapping_add(f[1]),
        };
        let key = span(buf, f[3], f[4])?;
        let value = span(buf, f[5], f[6])?;
        let header_count = usize::try_from(f[7]).ok()?;
        let mut record_headers = Vec::with_capacity(header_count);
        for _ in 0..header_count {
            let h = headers.next()?;
            record_headers.push((span(buf, h[0], h[1])?.unwrap_or(b""), span(buf, h[2], h[3])?));
        }
        let record = RecordView {
            offset,
            timestamp,
            key_size: f[4],
            value_size: f[6],
            key,
            value,
            sequence: sequence(base.base_sequence, f[0]),
            headers: &record_headers,
        };
        match style {
            Style::Text { print_data, skip_metadata, keyless_pipe } => {
                let label = if base.log_append_time.is_some() { LOG_APPEND_TIME } else { CREATE_TIME };
                text_line(&record, label, print_data, skip_metadata, keyless_pipe, out)?;
            }
            Style::Json(payload) => {
                if index > 0 {
                    out.push(b',');
                }
                json_record(&record, payload, out)?;
            }
        }
    }
    Some((offsets.finish(), scan.end))
}

/// One record's values, as the renderers use them.
struct RecordView<'a> {
    offset: i64,
    timestamp: i64,
    key_size: i64,
    value_size: i64,
    key: Option<&'a [u8]>,
    value: Option<&'a [u8]>,
    sequence: i64,
    headers: &'a [(&'a [u8], Option<&'a [u8]>)],
}

/// Collects offsets only once they stop being a run.
struct OffsetTracker {
    first: i64,
    count: usize,
    each: Option<Vec<i64>>,
}

impl OffsetTracker {
    fn new(_capacity: usize) -> Self {
        OffsetTracker { first: 0, count: 0, each: None }
    }

    fn push(&mut self, offset: i64) {
        if let Some(each) = &mut self.each {
            each.push(offset);
        } else if self.count == 0 {
            self.first = offset;
        } else if (self.count as i64).checked_add(self.first) != Some(offset) {
            let mut each: Vec<i64> = (0..self.count as i64).map(|i| self.first + i).collect();
            each.push(offset);
            self.each = Some(each);
        }
        self.count += 1;
    }

    fn finish(self) -> Offsets {
        match self.each {
            Some(each) => Offsets::Each(each),
            None => Offsets::Run { first: self.first, count: self.count },
        }
    }
}

/// `buf[start..start + length]`, `Some(None)` for a null (negative length), `None` out of bounds.
fn span(buf: &[u8], start: i64, length: i64) -> Option<Option<&[u8]>> {
    if length < 0 {
        return Some(None);
    }
    let s = usize::try_from(start).ok()?;
    let e = s.checked_add(usize::try_from(length).ok()?)?;
    buf.get(s..e).map(Some)
}

/// `DefaultRecordBatch.incrementSequence` in Java int arithmetic; -1 without a base sequence
/// (`RecordScan.sequences` in kseg/format/records.py, `increment_sequence` in model.py).
fn sequence(base_sequence: i32, offset_delta: i64) -> i64 {
    if base_sequence < 0 {
        return -1;
    }
    let increment = offset_delta as i32; // a varint: always within int32
    let result = if base_sequence > i32::MAX.wrapping_sub(increment) {
        increment.wrapping_sub(i32::MAX.wrapping_sub(base_sequence)).wrapping_sub(1)
    } else {
        base_sequence.wrapping_add(increment)
    };
    i64::from(result)
}

/// U+FFFD, which Java's decoder puts for each malformed sequence.
const REPLACEMENT: &[u8] = "\u{FFFD}".as_bytes();

/// `new String(bytes, StandardCharsets.UTF_8)` written back as UTF-8, as kseg's
/// `jvm_text.java_utf8` reproduces it from `java.lang.String.decodeUTF8_UTF16` (JDK 17, same in
/// 11-21): valid input as it is; one U+FFFD per malformed sequence, where an encoded surrogate
/// (`ED A0..BF xx`) is one sequence and `ED A0..BF` cut off by the end is one U+FFFD.
/// Every character Java decodes from a well-formed sequence is that sequence's bytes again.
pub fn java_utf8(src: &[u8], out: &mut Vec<u8>) {
    let valid = match std::str::from_utf8(src) {
        Ok(_) => src.len(),
        Err(e) => e.valid_up_to(), // a prefix of whole characters decodes alike
    };
    out.extend_from_slice(&src[..valid]);
    let (mut sp, sl) = (valid, src.len());
    let cont = |b: u8| b & 0xC0 == 0x80;
    while sp < sl {
        let b1 = src[sp];
        sp += 1;
        match b1 {
            0..=0x7F => out.push(b1),
            0xC2..=0xDF => {
                if sp >= sl {
                    out.extend_from_slice(REPLACEMENT);
                    break;
                }
                if cont(src[sp]) {
                    out.extend_from_slice(&[b1, src[sp]]);
                    sp += 1;
                } else {
                    out.extend_from_slice(REPLACEMENT); // the next byte starts over
                }
            }
            0xE0..=0xEF => {
                // isMalformed3_2 (ED A0..BF, a surrogate, is not caught here)
                let bad_second = |b2: u8| (b1 == 0xE0 && b2 & 0xE0 == 0x80) || !cont(b2);
                if sp + 1 < sl {
                    let (b2, b3) = (src[sp], src[sp + 1]);
                    if bad_second(b2) {
                        out.extend_from_slice(REPLACEMENT); // malformed, length 1
                    } else if !cont(b3) {
                        out.extend_from_slice(REPLACEMENT); // malformed, length 2
                        sp += 1;
                    } else {
                        if b1 == 0xED && b2 >= 0xA0 {
                            out.extend_from_slice(REPLACEMENT); // a surrogate: one for all three bytes
                        } else {
                            out.extend_from_slice(&[b1, b2, b3]);
                        }
                        sp += 2;
                    }
                } else {
                    out.extend_from_slice(REPLACEMENT);
                    if !(sp < sl && bad_second(src[sp])) {
                        break; // cut off by the end: one replacement, stop
                    }
                }
            }
            0xF0..=0xF7 => {
                // isMalformed4_2
                let bad_second = |b2: u8| {
                    (b1 == 0xF0 && !(0x90..=0xBF).contains(&b2)) || (b1 == 0xF4 && b2 & 0xF0 != 0x80) || !cont(b2)
                };
                if sp + 2 < sl {
                    let (b2, b3, b4) = (src[sp], src[sp + 1], src[sp + 2]);
                    if b1 > 0xF4 || bad_second(b2) {
                        out.extend_from_slice(REPLACEMENT); // length 1
                    } else if !cont(b3) {
                        out.extend_from_slice(REPLACEMENT); // length 2
                        sp += 1;
                    } else if !cont(b4) {
                        out.extend_from_slice(REPLACEMENT); // length 3
                        sp += 2;
                    } else {
                        out.extend_from_slice(&[b1, b2, b3, b4]);
                        sp += 3;
                    }
                } else {
                    out.extend_from_slice(REPLACEMENT);
                    if !(b1 > 0xF4 || (sp < sl && bad_second(src[sp]))) {
                        sp += 1; // the (valid) second byte, if any, goes with the replacement
                        if sp >= sl || cont(src[sp]) {
                            break; // cut off by the end: stop
                        }
                    }
                }
            }
            _ => out.extend_from_slice(REPLACEMENT), // 80..BF, C0, C1, F8..FF
        }
    }
}

/// [`java_utf8`] into `scratch`, returned as text (for JSON escaping).
fn java_str<'s>(src: &[u8], scratch: &'s mut Vec<u8>) -> &'s str {
    scratch.clear();
    java_utf8(src, scratch);
    // java_utf8 writes only whole characters: valid input's bytes, well-formed sequences, U+FFFD
    std::str::from_utf8(scratch).unwrap_or("\u{FFFD}")
}

/// `TextRenderer.record_line`: metadata (unless skipped), then key and payload with data.
fn text_line(
    r: &RecordView<'_>,
    label: &[u8],
    print_data: bool,
    skip_metadata: bool,
    keyless_pipe: bool,
    out: &mut Vec<u8>,
) -> Option<()> {
    if !skip_metadata {
        out.extend_from_slice(b"| offset: ");
        push_int(out, r.offset);
        out.push(b' ');
        out.extend_from_slice(label);
        out.extend_from_slice(b": ");
        push_int(out, r.timestamp);
        // DefaultRecord.keySize()/valueSize(): -1 for a null key or value, whatever negative length was stored
        out.extend_from_slice(b" keySize: ");
        push_int(out, r.key_size.max(-1));
        out.extend_from_slice(b" valueSize: ");
        push_int(out, r.value_size.max(-1));
        out.extend_from_slice(b" sequence: ");
        push_int(out, r.sequence);
        out.extend_from_slice(b" headerKeys: [");
        for (i, (key, _)) in r.headers.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            java_utf8(key, out);
        }
        out.push(b']');
    }
    if print_data {
        let prefix: &[u8] = if skip_metadata { b"| " } else { b" " };
        match (r.key, r.value) {
            (Some(key), value) => {
                out.extend_from_slice(prefix);
                out.extend_from_slice(b"key: ");
                java_utf8(key, out);
                if let Some(value) = value {
                    out.extend_from_slice(b" payload: ");
                    java_utf8(value, out);
                }
            }
            (None, Some(value)) => {
                out.extend_from_slice(if keyless_pipe { b"| " } else { b" " });
                out.extend_from_slice(b"payload: ");
                java_utf8(value, out);
            }
            (None, None) => {}
        }
    }
    out.push(b'\n');
    Some(())
}

/// `JsonRenderer.record_json`: `{"offset","timestamp","key","value","headers"}`.
fn json_record(r: &RecordView<'_>, payload: Payload, out: &mut Vec<u8>) -> Option<()> {
    out.extend_from_slice(b"{\"offset\":");
    push_int(out, r.offset);
    out.extend_from_slice(b",\"timestamp\":");
    push_int(out, r.timestamp);
    out.extend_from_slice(b",\"key\":");
    json_payload(r.key, payload, out);
    out.extend_from_slice(b",\"value\":");
    json_payload(r.value, payload, out);
    out.extend_from_slice(b",\"headers\":[");
    let mut scratch = Vec::new();
    for (i, (key, value)) in r.headers.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        out.push(b'[');
        json_string(java_str(key, &mut scratch), out); // header keys as Java decodes them
        out.push(b',');
        json_payload(*value, payload, out);
        out.push(b']');
    }
    out.extend_from_slice(b"]}");
    Some(())
}

/// One payload per `--payload` (`PAYLOAD_ENCODERS` in jsonl.py); null stays null.
fn json_payload(data: Option<&[u8]>, payload: Payload, out: &mut Vec<u8>) {
    let Some(data) = data else {
        out.extend_from_slice(b"null");
        return;
    };
    match payload {
        Payload::Utf8 => match std::str::from_utf8(data) {
            Ok(text) => json_string(text, out),
            Err(_) => {
                out.extend_from_slice(b"{\"base64\":\"");
                push_base64(data, out);
                out.extend_from_slice(b"\"}");
            }
        },
        Payload::Hex => {
            out.push(b'"');
            for &b in data {
                out.push(HEX[usize::from(b >> 4)]);
                out.push(HEX[usize::from(b & 15)]);
            }
            out.push(b'"');
        }
        Payload::Base64 => {
            out.push(b'"');
            push_base64(data, out);
            out.push(b'"');
        }
    }
}

const HEX: &[u8; 16] = b"0123456789abcdef";

/// A JSON string as CPython's `json.encoder.c_encode_basestring` writes it (no ASCII escaping):
/// `"` and `\`, the short escapes `\b \f \n \r \t`, other controls below 0x20 as `\u00xx`.
pub fn json_string(text: &str, out: &mut Vec<u8>) {
    out.push(b'"');
    let bytes = text.as_bytes();
    // nearly every key and value needs no escape: one vectorisable test, one copy
    if !bytes.iter().fold(false, |any, &b| any | (b < 0x20) | (b == b'"') | (b == b'\\')) {
        out.extend_from_slice(bytes);
        out.push(b'"');
        return;
    }
    let mut plain = 0;
    for (i, &b) in bytes.iter().enumerate() {
        let escape: &[u8] = match b {
            b'"' => b"\\\"",
            b'\\' => b"\\\\",
            b'\n' => b"\\n",
            b'\r' => b"\\r",
            b'\t' => b"\\t",
            0x08 => b"\\b",
            0x0c => b"\\f",
            0..=0x1f => b"",
            _ => continue,
        };
        out.extend_from_slice(&bytes[plain..i]);
        if escape.is_empty() {
            out.extend_from_slice(b"\\u00");
            out.push(HEX[usize::from(b >> 4)]);
            out.push(HEX[usize::from(b & 15)]);
        } else {
            out.extend_from_slice(escape);
        }
        plain = i + 1;
    }
    out.extend_from_slice(&bytes[plain..]);
    out.push(b'"');
}

const BASE64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// Standard base64 with padding (RFC 4648 section 4, Python's `base64.b64encode`).
pub fn push_base64(data: &[u8], out: &mut Vec<u8>) {
    let mut chunks = data.chunks_exact(3);
    for c in &mut chunks {
        let n = (u32::from(c[0]) << 16) | (u32::from(c[1]) << 8) | u32::from(c[2]);
        for shift in [18, 12, 6, 0] {
            out.push(BASE64[((n >> shift) & 63) as usize]);
        }
    }
    match *chunks.remainder() {
        [a] => {
            let n = u32::from(a) << 16;
            out.extend_from_slice(&[BASE64[(n >> 18) as usize], BASE64[((n >> 12) & 63) as usize], b'=', b'=']);
        }
        [a, b] => {
            let n = (u32::from(a) << 16) | (u32::from(b) << 8);
            out.extend_from_slice(&[
                BASE64[(n >> 18) as usize],
                BASE64[((n >> 12) & 63) as usize],
                BASE64[((n >> 6) & 63) as usize],
                b'=',
            ]);
        }
        _ => {}
    }
}

/// A decimal integer, as Python's `str(int)` writes it.
pub fn push_int(out: &mut Vec<u8>, value: i64) {
    let mut digits = [0u8; 20];
    let mut at = digits.len();
    let mut n = value.unsigned_abs();
    loop {
        at -= 1;
        digits[at] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    if value < 0 {
        out.push(b'-');
    }
    out.extend_from_slice(&digits[at..]);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integers() {
        for v in [0i64, 1, -1, 9, 10, 1234567890123, i64::MIN, i64::MAX] {
            let mut out = Vec::new();
            push_int(&mut out, v);
            assert_eq!(out, v.to_string().into_bytes());
        }
    }

    #[test]
    fn base64() {
        for (data, text) in [(&b""[..], ""), (b"f", "Zg=="), (b"fo", "Zm8="), (b"foo", "Zm9v"), (b"\xff\xfe\xfd\xfc", "//79/A==")] {
            let mut out = Vec::new();
            push_base64(data, &mut out);
            assert_eq!(out, text.as_bytes());
        }
    }

    #[test]
    fn strings() {
        let mut out = Vec::new();
        json_string("a\"b\\c\n\u{1}\u{7f}é\u{1f}\u{8}\u{c}", &mut out);
        assert_eq!(out, "\"a\\\"b\\\\c\\n\\u0001\u{7f}é\\u001f\\b\\f\"".as_bytes());
    }

    #[test]
    fn java_replacements() {
        let cases: [(&[u8], &str); 10] = [
            (b"ok\xc3\xa9", "oké"),
            (b"\xff", "\u{FFFD}"),
            (b"\xed\xa0\x80x", "\u{FFFD}x"),      // an encoded surrogate: one
            (b"\xed\xa0", "\u{FFFD}"),             // cut off by the end: one
            (b"\xe2\x82", "\u{FFFD}"),
            (b"\xe0\x80\x80", "\u{FFFD}\u{FFFD}\u{FFFD}"), // overlong: the second byte starts over
            (b"\xc3x", "\u{FFFD}x"),
            (b"\xf0\x9f\x98", "\u{FFFD}"),
            (b"\xf4\x90\x80\x80", "\u{FFFD}\u{FFFD}\u{FFFD}\u{FFFD}"),
            (b"\xf0\x9f\x98\x80", "\u{1F600}"),
        ];
        for (bytes, text) in cases {
            let mut out = Vec::new();
            java_utf8(bytes, &mut out);
            assert_eq!(String::from_utf8(out).unwrap(), text, "{bytes:?}");
        }
    }

    #[test]
    fn sequences_wrap_as_java() {
        assert_eq!(sequence(-1, 5), -1);
        assert_eq!(sequence(i32::MAX, 1), 0);
        assert_eq!(sequence(i32::MAX - 1, 3), 1);
        assert_eq!(sequence(5, 3), 8);
    }
}
