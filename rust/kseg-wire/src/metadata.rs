//! KRaft metadata record values, decoded by a schema *program*: the compiled reader of
//! `kseg/format/messages/compiled.py`, in Rust.
//!
//! The program of one message version is built in Python from the same message schema the
//! generic reader walks (`kseg/format/messages/core_program.py`) and handed to the core once; this
//! module interprets it over a record value. Like the compiled reader it is only a fast path: it
//! answers for the common shapes and returns `None` at anything unusual (a length or count out of
//! range, a null the field does not allow, an unknown tag, a varint over four bytes, bytes running
//! out, a NaN, a string that is not valid UTF-8). The Python reader then decides, with Kafka's
//! words. tests/metadata/test_core_decoder.py holds both to the same output.

/// What one field holds on the wire.
#[derive(Clone, Debug, PartialEq)]
pub enum Kind {
    Bool,
    Int8,
    Int16,
    Uint16,
    Int32,
    Uint32,
    Int64,
    Float64,
    Uuid,
    String,
    Bytes,
    Struct(Box<StructProgram>),
    /// An array; its elements are never null.
    Array(Box<Kind>),
}

/// One field read: its slot in the struct's output order, its kind, and whether null is allowed.
#[derive(Clone, Debug, PartialEq)]
pub struct FieldOp {
    pub slot: usize,
    pub kind: Kind,
    pub nullable: bool,
}

/// One struct at one version: the fields read in order, the tags its tagged section may hold,
/// how many output slots it has, and whether the version is flexible.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct StructProgram {
    /// The caller's name for this struct (where its field names and defaults are kept).
    pub id: usize,
    pub fields: Vec<FieldOp>,
    pub tagged: Vec<(u32, FieldOp)>,
    pub slots: usize,
    pub flexible: bool,
}

/// A decoded value; strings and bytes are spans of the value.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    Uuid([u8; 16]),
    Str(usize, usize),
    Bytes(usize, usize),
    List(Vec<Value>),
    /// A struct: its program's id, whether a tagged section was read (the caller then leaves out
    /// tagged values at their default, as `_finish` does), and a value per output slot.
    Struct(usize, bool, Vec<Option<Value>>),
}

/// `java.lang.Short.MAX_VALUE`: the longest string Kafka writes.
const SHORT_MAX: usize = 0x7FFF;

/// An unsigned varint of at most four bytes (`_uv`).
fn uv(buf: &[u8], pos: usize) -> Option<(u32, usize)> {
    let mut value = 0u32;
    for i in 0..4 {
        let byte = *buf.get(pos + i)?;
        value |= u32::from(byte & 0x7F) << (7 * i);
        if byte < 0x80 {
            return Some((value, pos + i + 1));
        }
    }
    None
}

fn fixed<const N: usize>(buf: &[u8], pos: usize) -> Option<([u8; N], usize)> {
    let end = pos.checked_add(N)?;
    let bytes: [u8; N] = buf.get(pos..end)?.try_into().ok()?;
    Some((bytes, end))
}

/// A length or count: compact (varint minus one) when flexible, else a big-endian int16/int32.
fn length(buf: &[u8], pos: usize, flexible: bool, short: bool) -> Option<(i64, usize)> {
    if flexible {
        let (n, p) = uv(buf, pos)?;
        Some((i64::from(n) - 1, p))
    } else if short {
        let (b, p) = fixed::<2>(buf, pos)?;
        Some((i64::from(i16::from_be_bytes(b)), p))
    } else {
        let (b, p) = fixed::<4>(buf, pos)?;
        Some((i64::from(i32::from_be_bytes(b)), p))
    }
}

/// One fixed-width value.
fn read_fixed(buf: &[u8], pos: usize, kind: &Kind) -> Option<(Value, usize)> {
    Some(match kind {
        Kind::Bool => {
            let (b, p) = fixed::<1>(buf, pos)?;
            (Value::Bool(b[0] != 0), p)
        }
        Kind::Int8 => {
            let (b, p) = fixed::<1>(buf, pos)?;
            (Value::Int(i64::from(b[0] as i8)), p)
        }
        Kind::Int16 => {
            let (b, p) = fixed::<2>(buf, pos)?;
            (Value::Int(i64::from(i16::from_be_bytes(b))), p)
        }
        Kind::Uint16 => {
            let (b, p) = fixed::<2>(buf, pos)?;
            (Value::Int(i64::from(u16::from_be_bytes(b))), p)
        }
        Kind::Int32 => {
            let (b, p) = fixed::<4>(buf, pos)?;
            (Value::Int(i64::from(i32::from_be_bytes(b))), p)
        }
        Kind::Uint32 => {
            let (b, p) = fixed::<4>(buf, pos)?;
            (Value::Int(i64::from(u32::from_be_bytes(b))), p)
        }
        Kind::Int64 => {
            let (b, p) = fixed::<8>(buf, pos)?;
            (Value::Int(i64::from_be_bytes(b)), p)
        }
        Kind::Float64 => {
            let (b, p) = fixed::<8>(buf, pos)?;
            let f = f64::from_be_bytes(b);
            if !f.is_finite() {
                return None; // the Python reader spells NaN and infinities
            }
            (Value::Float(f), p)
        }
        Kind::Uuid => {
            let (b, p) = fixed::<16>(buf, pos)?;
            (Value::Uuid(b), p)
        }
        _ => return None,
    })
}

/// One field's value (`element`: an array element, never null).
fn read_value(buf: &[u8], pos: usize, kind: &Kind, nullable: bool, flexible: bool) -> Option<(Value, usize)> {
    match kind {
        Kind::String | Kind::Bytes => {
            let is_string = matches!(kind, Kind::String);
            let (n, p) = length(buf, pos, flexible, is_string)?;
            if n < 0 {
                return nullable.then_some((Value::Null, p));
            }
            let n = n as usize;
            let end = p.checked_add(n)?;
            if (is_string && n > SHORT_MAX) || end > buf.len() {
                return None;
            }
            if is_string {
                std::str::from_utf8(&buf[p..end]).ok()?; // not UTF-8: Java's replacement rules, in Python
                Some((Value::Str(p, end), end))
            } else {
                Some((Value::Bytes(p, end), end))
            }
        }
        Kind::Struct(program) => {
            if nullable {
                let marker = *buf.get(pos)?;
                if marker >= 0x80 {
                    return Some((Value::Null, pos + 1));
                }
                return read_struct(buf, pos + 1, program);
            }
            read_struct(buf, pos, program)
        }
        Kind::Array(element) => {
            let (c, p) = length(buf, pos, flexible, false)?;
            if c < 0 {
                return nullable.then_some((Value::Null, p));
            }
            let c = c as usize;
            if c > buf.len() - p.min(buf.len()) {
                return None;
            }
            let mut items = Vec::with_capacity(c);
            let mut at = p;
            for _ in 0..c {
                let (item, next) = read_value(buf, at, element, false, flexible)?;
                items.push(item);
                at = next;
            }
            Some((Value::List(items), at))
        }
        _ => read_fixed(buf, pos, kind),
    }
}

/// One struct: its fields in order, then (flexible) its tagged section.
pub fn read_struct(buf: &[u8], pos: usize, program: &StructProgram) -> Option<(Value, usize)> {
    let mut slots: Vec<Option<Value>> = vec![None; program.slots];
    let mut at = pos;
    for op in &program.fields {
        let (value, next) = read_value(buf, at, &op.kind, op.nullable, program.flexible)?;
        *slots.get_mut(op.slot)? = Some(value);
        at = next;
    }
    if !program.flexible {
        return Some((Value::Struct(program.id, false, slots), at));
    }
    if *buf.get(at)? == 0 {
        return Some((Value::Struct(program.id, false, slots), at + 1));
    }
    let (count, mut at) = uv(buf, at)?;
    for _ in 0..count {
        let (tag, p) = uv(buf, at)?;
        let (_size, p) = uv(buf, p)?; // not trusted: the value is read in place, as Python does
        let (_, op) = program.tagged.iter().find(|(t, _)| *t == tag)?;
        let (value, next) = read_value(buf, p, &op.kind, op.nullable, program.flexible)?;
        *slots.get_mut(op.slot)? = Some(value);
        at = next;
    }
    Some((Value::Struct(program.id, true, slots), at))
}

/// A whole record value: frame version 1, api key and version of one byte each, the message, and
/// nothing after it. `program(api_key, version)` finds the program; `None`: not the core's to say.
pub fn read_record<'p>(
    value: &[u8],
    program: impl Fn(u8, u8) -> Option<&'p StructProgram>,
) -> Option<(u8, u8, Value)> {
    if value.len() < 3 || value[0] != 1 || value[1] >= 0x80 || value[2] >= 0x80 {
        return None;
    }
    let found = program(value[1], value[2])?;
    let (data, end) = read_struct(value, 3, found)?;
    (end == value.len()).then_some((value[1], value[2], data))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn op(slot: usize, kind: Kind, nullable: bool) -> FieldOp {
        FieldOp { slot, kind, nullable }
    }

    #[test]
    fn reads_fixed_then_tagged_fields() {
        // a flexible struct: int32, compact string, tagged int32 array under tag 0
        let program = StructProgram {
            id: 0,
            fields: vec![op(0, Kind::Int32, false), op(1, Kind::String, true)],
            tagged: vec![(0, op(2, Kind::Array(Box::new(Kind::Int32)), false))],
            slots: 3,
            flexible: true,
        };
        let buf = [0, 0, 0, 7, 3, b'a', b'b', 1, 0, 9, 3, 0, 0, 0, 1, 0, 0, 0, 2];
        let (value, end) = read_struct(&buf, 0, &program).unwrap();
        assert_eq!(end, buf.len());
        assert_eq!(
            value,
            Value::Struct(
                0,
                true,
                vec![
                Some(Value::Int(7)),
                Some(Value::Str(5, 7)),
                    Some(Value::List(vec![Value::Int(1), Value::Int(2)]))
                ]
            )
        );
    }

    #[test]
    fn gives_up_on_the_unusual() {
        let program = StructProgram {
            id: 0,
            fields: vec![op(0, Kind::String, false)],
            tagged: vec![],
            slots: 1,
            flexible: true,
        };
        assert_eq!(read_struct(&[0, 0], 0, &program), None); // null, not allowed
        assert_eq!(read_struct(&[3, 0xff, 0xfe, 0], 0, &program), None); // not UTF-8
        assert_eq!(read_struct(&[9, b'a'], 0, &program), None); // runs out
        assert_eq!(read_struct(&[1, 1, 5, 0], 0, &program), None); // unknown tag 5
        assert_eq!(read_struct(&[0x81, 0x81, 0x81, 0x81, 0x01], 0, &program), None); // varint > 4 bytes
        let float = StructProgram { fields: vec![op(0, Kind::Float64, false)], slots: 1, ..Default::default() };
        assert_eq!(read_struct(&f64::NAN.to_be_bytes(), 0, &float), None);
    }

    #[test]
    fn a_record_must_end_where_its_message_ends() {
        let program = StructProgram { fields: vec![op(0, Kind::Int8, false)], slots: 1, ..Default::default() };
        let find = |k: u8, v: u8| (k == 20 && v == 0).then_some(&program);
        assert!(read_record(&[1, 20, 0, 5], find).is_some());
        assert!(read_record(&[1, 20, 0, 5, 0], find).is_none());
        assert!(read_record(&[1, 21, 0, 5], find).is_none());
        assert!(read_record(&[0, 20, 0, 5], find).is_none());
    }
}
