//! `MetadataDecoder`: KRaft metadata records of a batch decoded by schema programs
//! (`kseg_wire::metadata`), as the dicts `kseg.format.internal.kraft.read_metadata_record` returns.
//!
//! The programs come from Python (`kseg/format/messages/core_program.py`), once per process: per
//! message version a tree of structs, and per struct the JSON names of its fields and, for tagged
//! fields, the rule that leaves a value at its default out (`differs_from_default`).

use std::collections::HashMap;

use kseg_wire::metadata::{read_record, FieldOp, Kind, StructProgram, Value};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PyString, PyTuple};

use crate::borrowed::Borrowed;
use crate::guarded;

/// How a tagged field's value is kept (`differs_from_default`).
#[derive(Clone, Copy)]
enum Keep {
    Always,
    NotNull,
    NotEmpty,
    NotDefault,
}

/// The Python side of one struct: field names, keep rules and defaults, by output slot.
struct Names {
    names: Vec<Py<PyString>>,
    keep: Vec<Keep>,
    defaults: Vec<PyObject>,
}

/// The programs of every metadata message version the core reads.
#[pyclass(module = "kseg._core", name = "MetadataDecoder", frozen)]
pub struct MetadataDecoder {
    programs: HashMap<(u8, u8), (Py<PyString>, StructProgram)>,
    structs: Vec<Names>,
}

fn kind(spec: &Bound<'_, PyAny>, structs: &mut Vec<Names>) -> PyResult<Kind> {
    if let Ok(name) = spec.extract::<String>() {
        return Ok(match name.as_str() {
            "bool" => Kind::Bool,
            "int8" => Kind::Int8,
            "int16" => Kind::Int16,
            "uint16" => Kind::Uint16,
            "int32" => Kind::Int32,
            "uint32" => Kind::Uint32,
            "int64" => Kind::Int64,
            "float64" => Kind::Float64,
            "uuid" => Kind::Uuid,
            "string" => Kind::String,
            "bytes" => Kind::Bytes,
            other => return Err(PyValueError::new_err(format!("unknown kind {other}"))),
        });
    }
    let (tag, inner): (String, Bound<'_, PyAny>) = spec.extract()?;
    match tag.as_str() {
        "struct" => Ok(Kind::Struct(Box::new(structure(&inner, structs)?))),
        "array" => Ok(Kind::Array(Box::new(kind(&inner, structs)?))),
        other => Err(PyValueError::new_err(format!("unknown kind {other}"))),
    }
}

/// `(flexible, [(slot, kind, nullable)], [(tag, slot, kind, nullable)], [(name, keep, default)])`.
fn structure(spec: &Bound<'_, PyAny>, structs: &mut Vec<Names>) -> PyResult<StructProgram> {
    #[allow(clippy::type_complexity)]
    let (flexible, fields, tagged, order): (
        bool,
        Vec<(usize, Bound<'_, PyAny>, bool)>,
        Vec<(u32, usize, Bound<'_, PyAny>, bool)>,
        Vec<(Bound<'_, PyString>, u8, PyObject)>,
    ) = spec.extract()?;
    let id = structs.len();
    structs.push(Names { names: Vec::new(), keep: Vec::new(), defaults: Vec::new() });
    let mut program = StructProgram { id, slots: order.len(), flexible, ..Default::default() };
    for (slot, spec, nullable) in fields {
        program.fields.push(FieldOp { slot, kind: kind(&spec, structs)?, nullable });
    }
    for (tag, slot, spec, nullable) in tagged {
        program.tagged.push((tag, FieldOp { slot, kind: kind(&spec, structs)?, nullable }));
    }
    let mut names = Names { names: Vec::new(), keep: Vec::new(), defaults: Vec::new() };
    for (name, keep, default) in order {
        names.names.push(name.clone().unbind());
        names.keep.push(match keep {
            0 => Keep::Always,
            1 => Keep::NotNull,
            2 => Keep::NotEmpty,
            _ => Keep::NotDefault,
        });
        names.defaults.push(default);
    }
    let slot_ok = program.fields.iter().chain(program.tagged.iter().map(|(_, f)| f)).all(|f| f.slot < program.slots);
    if !slot_ok {
        return Err(PyValueError::new_err("a field's slot is outside its struct"));
    }
    structs[id] = names;
    Ok(program)
}

const URL: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
const STD: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// Base64 of `raw` with `alphabet`, padded or not.
fn base64(raw: &[u8], alphabet: &[u8; 64], pad: bool) -> String {
    let mut out = String::with_capacity(raw.len().div_ceil(3) * 4);
    for chunk in raw.chunks(3) {
        let b = [chunk[0], *chunk.get(1).unwrap_or(&0), *chunk.get(2).unwrap_or(&0)];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        let chars = chunk.len() + 1;
        for i in 0..4 {
            if i < chars {
                out.push(alphabet[((n >> (18 - 6 * i)) & 63) as usize] as char);
            } else if pad {
                out.push('=');
            }
        }
    }
    out
}

impl MetadataDecoder {
    fn to_py<'py>(&self, py: Python<'py>, value: &Value, buf: &[u8]) -> PyResult<Bound<'py, PyAny>> {
        Ok(match value {
            Value::Null => py.None().into_bound(py),
            Value::Bool(b) => b.into_pyobject(py)?.to_owned().into_any(),
            Value::Int(i) => i.into_pyobject(py)?.into_any(),
            Value::Float(f) => f.into_pyobject(py)?.into_any(),
            Value::Uuid(raw) => PyString::new(py, &base64(raw, URL, false)).into_any(),
            Value::Str(a, b) => PyString::new(py, std::str::from_utf8(&buf[*a..*b]).unwrap_or_default()).into_any(),
            Value::Bytes(a, b) => PyString::new(py, &base64(&buf[*a..*b], STD, true)).into_any(),
            Value::List(items) => {
                let list = PyList::empty(py);
                for item in items {
                    list.append(self.to_py(py, item, buf)?)?;
                }
                list.into_any()
            }
            Value::Struct(id, tagged, slots) => self.dict(py, *id, *tagged, slots, buf)?.into_any(),
        })
    }

    fn dict<'py>(
        &self,
        py: Python<'py>,
        id: usize,
        tagged: bool,
        slots: &[Option<Value>],
        buf: &[u8],
    ) -> PyResult<Bound<'py, PyDict>> {
        let names = &self.structs[id];
        let dict = PyDict::new(py);
        for (slot, value) in slots.iter().enumerate() {
            let Some(value) = value else { continue };
            let keep = if tagged { names.keep[slot] } else { Keep::Always };
            let keep_it = match (keep, value) {
                (Keep::Always, _) => true,
                (Keep::NotNull, v) => !matches!(v, Value::Null),
                (_, Value::Null) => true,
                (Keep::NotEmpty, Value::List(items)) => !items.is_empty(),
                (Keep::NotEmpty, Value::Bytes(a, b)) => a != b,
                (Keep::NotEmpty, _) => true,
                (Keep::NotDefault, _) => false, // decided below, on the Python value
            };
            if matches!(keep, Keep::NotDefault) && !matches!(value, Value::Null) {
                let object = self.to_py(py, value, buf)?;
                if object.ne(names.defaults[slot].bind(py))? {
                    dict.set_item(names.names[slot].bind(py), object)?;
                }
                continue;
            }
            if keep_it {
                dict.set_item(names.names[slot].bind(py), self.to_py(py, value, buf)?)?;
            }
        }
        Ok(dict)
    }
}

/// Base offsets from here on are left to Python (Java long arithmetic could wrap past them).
const FAST_OFFSETS: i64 = 1 << 62;
/// Attributes the run leaves to Python: a codec (bits 0-2) or a control batch (bit 5).
const NOT_PLAIN: i16 = 0x27;
/// The LZ4 codec id.
const LZ4: i16 = 3;
/// Bytes of a V2 batch header (`RECORD_BATCH_OVERHEAD`).
const V2_HEADER: usize = 61;
/// Frames walked at a time within a run.
const RUN_STEP: usize = 8;

#[pymethods]
impl MetadataDecoder {
    /// A run of a metadata file from `start`: every record at or after `from_offset` of the plain
    /// data batches, as `new(cls, (file, position, offset, max timestamp, type, version, fields,
    /// last offset, False))` (`tuple.__new__` of `MetaRecord`), until a batch Python must read.
    /// Returns (records, that batch's frame tuple or None, where to go on, (end position,
    /// remaining bytes) when the walk ended). A batch is Python's when it is damaged, compressed,
    /// a control batch, empty, has a record the core does not decode, or its records do not scan.
    #[allow(clippy::too_many_arguments, clippy::type_complexity)]
    fn run<'py>(
        &self,
        py: Python<'py>,
        buf: &Bound<'py, PyAny>,
        start: usize,
        from_offset: i64,
        file: &Bound<'py, PyAny>,
        cls: &Bound<'py, PyAny>,
        new: &Bound<'py, PyAny>,
        max_frames: usize,
        lz4: Option<&Bound<'py, PyAny>>,
        cap: usize,
    ) -> PyResult<(Bound<'py, PyList>, Option<Bound<'py, PyAny>>, usize, Option<(usize, usize)>)> {
        guarded(|| {
            let borrowed = Borrowed::new(buf)?;
            let data = borrowed.as_slice();
            let mut frames = Vec::new();
            let out = PyList::empty(py);
            let mut decoded: Vec<(i64, &(Py<PyString>, StructProgram), Value, usize, usize)> = Vec::new();
            let mut pos = start;
            let mut walked = 0usize;
            // a few frames per walk: the run stops at the first batch Python must read, and the
            // frames walked (and CRC-checked) past it would be walked again by the next call
            let step = loop {
                frames.clear();
                let step = kseg_wire::walk(data, pos, data.len(), true, RUN_STEP, 1 << 24, &mut frames);
                for frame in &frames {
                    let plain = match (&frame.header, frame.magic == 2 && frame.crc_ok) {
                        (Some(h), true) => {
                            let codec = h.attributes & NOT_PLAIN;
                            (codec == 0 || (codec == LZ4 && lz4.is_some()))
                                && h.records_count > 0
                                && (0..FAST_OFFSETS).contains(&h.base_offset)
                        }
                        _ => false,
                    };
                    let header = match (&frame.header, plain) {
                        (Some(h), true) => h,
                        _ => return Ok((out, Some(crate::frame_tuple(py, frame)?), frame.next, None)),
                    };
                    let last = header.base_offset + i64::from(header.last_offset_delta);
                    if last < from_offset {
                        continue;
                    }
                    let region = frame.position + V2_HEADER..frame.next;
                    let inflated = match (header.attributes & NOT_PLAIN, lz4) {
                        (LZ4, Some(decompress)) => match data.get(region.clone()).and_then(|r| inflate(r, decompress, cap)) {
                            Some(bytes) => Some(bytes),
                            None => return Ok((out, Some(crate::frame_tuple(py, frame)?), frame.next, None)),
                        },
                        _ => None,
                    };
                    let (source, start, end) = match &inflated {
                        Some(bytes) => (bytes.as_slice(), 0, bytes.len()),
                        None => (data, region.start, region.end),
                    };
                    if !self.decode_batch(source, start, end, header, &mut decoded) {
                        return Ok((out, Some(crate::frame_tuple(py, frame)?), frame.next, None));
                    }
                    let position = frame.position.into_pyobject(py)?.into_any();
                    let timestamp = header.max_timestamp.into_pyobject(py)?.into_any();
                    let last = last.into_pyobject(py)?.into_any();
                    for (offset, (type_name, _), value, a, b) in decoded.drain(..) {
                        if offset < from_offset {
                            continue;
                        }
                        let Value::Struct(id, tagged, slots) = &value else { continue };
                        let fields = self.dict(py, *id, *tagged, slots, &source[a..b])?;
                        let row = PyTuple::new(
                            py,
                            [
                                file.clone(),
                                position.clone(),
                                offset.into_pyobject(py)?.into_any(),
                                timestamp.clone(),
                                type_name.bind(py).clone().into_any(),
                                i64::from(version_of(&source[a..b])).into_pyobject(py)?.into_any(),
                                fields.into_any(),
                                last.clone(),
                                false.into_pyobject(py)?.to_owned().into_any(),
                            ],
                        )?;
                        out.append(new.call1((cls, row))?)?;
                    }
                }
                walked += frames.len();
                match step {
                    kseg_wire::Step::More(next) if walked < max_frames.max(1) => pos = next,
                    other => break other,
                }
            };
            Ok(match step {
                kseg_wire::Step::More(next) => (out, None, next, None),
                kseg_wire::Step::Ended(end) => (out, None, end.position, Some((end.position, end.remaining))),
            })
        })
    }

    /// `programs`: `[(api_key, version, type_name, struct)]`, each struct as `structure` reads it.
    #[new]
    fn new(programs: &Bound<'_, PyAny>) -> PyResult<Self> {
        let mut structs = Vec::new();
        let mut table = HashMap::new();
        for item in programs.try_iter()? {
            let (api_key, version, type_name, spec): (u8, u8, Bound<'_, PyString>, Bound<'_, PyAny>) =
                item?.extract()?;
            let program = structure(&spec, &mut structs)?;
            table.insert((api_key, version), (type_name.unbind(), program));
        }
        Ok(Self { programs: table, structs })
    }

    /// One record value: `(type_name, version, fields)`, or None where the Python reader decides.
    fn read<'py>(&self, py: Python<'py>, value: &Bound<'py, PyAny>) -> PyResult<Option<Bound<'py, PyTuple>>> {
        guarded(|| {
            let borrowed = Borrowed::new(value)?;
            let buf = borrowed.as_slice();
            self.record(py, buf)
        })
    }

    /// The records of an uncompressed batch's region `buf[start..end]` (`count` of them, as the
    /// record scanner reads them, filling the region exactly): per record `(offset_delta,
    /// type_name, version, fields)`, or `(offset_delta, None, 0, value)` (value as bytes, or None)
    /// for one the Python reader decides. None: the scanner does not take the region.
    fn batch<'py>(
        &self,
        py: Python<'py>,
        buf: &Bound<'py, PyAny>,
        start: usize,
        end: usize,
        count: usize,
    ) -> PyResult<Option<Bound<'py, PyList>>> {
        guarded(|| {
            let borrowed = Borrowed::new(buf)?;
            let data = borrowed.as_slice();
            let Some(scan) = kseg_wire::records::scan_records(data, start, end, count) else {
                return Ok(None);
            };
            if scan.end != end {
                return Ok(None);
            }
            let out = PyList::empty(py);
            for fields in scan.fields.chunks_exact(kseg_wire::records::RECORD_STRIDE) {
                let (offset_delta, value_start, value_length) = (fields[0], fields[5] as usize, fields[6]);
                let value = if value_length < 0 { None } else { data.get(value_start..value_start + value_length as usize) };
                let decoded = match value {
                    Some(v) => self.record(py, v)?,
                    None => None,
                };
                let item = match decoded {
                    Some(tuple) => {
                        let (t, v, d): (Bound<'_, PyAny>, Bound<'_, PyAny>, Bound<'_, PyAny>) = tuple.extract()?;
                        PyTuple::new(py, [offset_delta.into_pyobject(py)?.into_any(), t, v, d])?
                    }
                    None => {
                        let raw = match value {
                            Some(v) => PyBytes::new(py, v).into_any(),
                            None => py.None().into_bound(py),
                        };
                        PyTuple::new(
                            py,
                            [offset_delta.into_pyobject(py)?.into_any(), py.None().into_bound(py), 0i64.into_pyobject(py)?.into_any(), raw],
                        )?
                    }
                };
                out.append(item)?;
            }
            Ok(Some(out))
        })
    }
}

/// Kafka's LZ4 frame as its `Lz4BlockOutputStream` writes it (version 1, independent blocks, no
/// checksums, 64 KiB blocks; the header checksum byte of magic 2), block by block through
/// `decompress` (the lz4 package's `lz4.block.decompress`, as `kseg/format/compression/lz4.py` calls
/// it). None for any other frame, a failing block, or more than `cap` bytes: Python reads the batch
/// and says what is wrong.
fn inflate(region: &[u8], decompress: &Bound<'_, PyAny>, cap: usize) -> Option<Vec<u8>> {
    const HEADER: [u8; 7] = [0x04, 0x22, 0x4D, 0x18, 0x60, 0x40, 0x82];
    const MAX_BLOCK: usize = 64 * 1024;
    if region.get(..7)? != HEADER {
        return None;
    }
    let py = decompress.py();
    let mut out = Vec::new();
    let mut pos = 7;
    loop {
        let word = u32::from_le_bytes(region.get(pos..pos + 4)?.try_into().ok()?);
        pos += 4;
        let size = (word & 0x7FFF_FFFF) as usize;
        if size == 0 {
            return Some(out); // EndMark: what follows it is ignored, as Python ignores it
        }
        if size > MAX_BLOCK {
            return None;
        }
        let block = region.get(pos..pos + size)?;
        pos += size;
        if word & 0x8000_0000 != 0 {
            out.extend_from_slice(block);
        } else {
            let kwargs = pyo3::types::PyDict::new(py);
            kwargs.set_item("uncompressed_size", MAX_BLOCK).ok()?;
            let inflated = decompress.call((PyBytes::new(py, block),), Some(&kwargs)).ok()?;
            out.extend_from_slice(inflated.downcast::<PyBytes>().ok()?.as_bytes());
        }
        if out.len() > cap {
            return None;
        }
    }
}

/// The version byte of a record value the core decoded (its third byte).
fn version_of(value: &[u8]) -> u8 {
    value.get(2).copied().unwrap_or(0)
}

impl MetadataDecoder {
    /// Every record of a plain batch decoded into `out` as (offset, program, value, value span);
    /// false (and `out` cleared) when any record is not the core's to decode.
    #[allow(clippy::type_complexity)]
    fn decode_batch<'a>(
        &'a self,
        data: &[u8],
        start: usize,
        end: usize,
        header: &kseg_wire::V2Header,
        out: &mut Vec<(i64, &'a (Py<PyString>, StructProgram), Value, usize, usize)>,
    ) -> bool {
        out.clear();
        let count = header.records_count as usize;
        let Some(scan) = kseg_wire::records::scan_records(data, start, end, count) else { return false };
        if scan.end != end {
            return false;
        }
        for fields in scan.fields.chunks_exact(kseg_wire::records::RECORD_STRIDE) {
            let (delta, value_start, value_length) = (fields[0], fields[5] as usize, fields[6]);
            let Ok(length) = usize::try_from(value_length) else {
                out.clear();
                return false;
            };
            let Some(value) = data.get(value_start..value_start + length) else {
                out.clear();
                return false;
            };
            let decoded = read_record(value, |k, v| self.programs.get(&(k, v)).map(|(_, program)| program));
            let Some((api_key, version, tree)) = decoded else {
                out.clear();
                return false;
            };
            let entry = &self.programs[&(api_key, version)];
            out.push((header.base_offset + delta, entry, tree, value_start, value_start + length));
        }
        true
    }

    fn record<'py>(&self, py: Python<'py>, buf: &[u8]) -> PyResult<Option<Bound<'py, PyTuple>>> {
        let Some((api_key, version, value)) =
            read_record(buf, |k, v| self.programs.get(&(k, v)).map(|(_, program)| program))
        else {
            return Ok(None);
        };
        let Value::Struct(id, tagged, slots) = &value else { return Ok(None) };
        let dict = self.dict(py, *id, *tagged, slots, buf)?;
        let (type_name, _) = &self.programs[&(api_key, version)];
        Ok(Some(PyTuple::new(
            py,
            [type_name.bind(py).clone().into_any(), i64::from(version).into_pyobject(py)?.into_any(), dict.into_any()],
        )?))
    }
}
