//! Records with object fields. NumPy pickles such an array as a list (C
//! order) of one tuple per record, holding each named field's `.item()`:
//! Python ints, floats, `str`, `bytes`, `datetime` values, tuples for
//! nested records, ndarrays for sub-array fields, and the objects
//! themselves. This turns that list back into a [`RecordArray`]: the plain
//! fields as native-order bytes (the values converted exactly as NumPy
//! stores them, out-of-range values refused), each field that holds objects
//! as an [`AnyArray::Object`] column: the objects of an `O` field, the
//! tuples of a nested record with object fields, the object arrays of a
//! sub-array field (written back as NumPy pickled them).

use super::machine::Machine;
use crate::array::any::AnyArray;
use crate::array::pyvalue::{Date, PyValue};
use crate::array::record::{to_native, RecordArray};
use crate::error::{Error, Result};
use crate::format::dtype::{DType, Field, Kind, Scalar};
use ndarray::{ArrayD, IxDyn};

/// The records of `dtype` and `shape` from the pickled list `items` (whose
/// length the caller checked against the shape).
pub(crate) fn record_array(
    m: &mut Machine<'_>,
    dtype: &DType,
    shape: &[usize],
    items: &[usize],
) -> Result<AnyArray> {
    let native = to_native(dtype);
    let DType::Record(fields) = &native else {
        return Err(unsupported(dtype, "an object inside a sub-array dtype"));
    };
    crate::plan::support::check_supported(&plain_part(&native))
        .map_err(|_| unsupported(dtype, "a field of the record has an unsupported type"))?;
    let itemsize = native
        .itemsize()
        .ok_or_else(|| m.malformed("the record size overflows"))?;
    let total = items
        .len()
        .checked_mul(itemsize)
        .ok_or_else(|| m.malformed("the record data size overflows"))?;
    // Charged before it is allocated: a few bytes of pickle must not
    // claim gigabytes through a wide record type (nor billions of values
    // through zero-size fields, which hold no bytes).
    m.charge(super::arrays::data_cost(dtype, shape, &[]).saturating_add(total as u64))?;
    let mut data = vec![0u8; total];
    let layout = offsets(fields);
    let n_objects = layout.iter().filter(|(_, f)| f.dtype.has_object()).count();
    // Not reserved: the values are charged as they are materialized, and
    // fields × records could exceed what the input can pay for.
    let mut columns: Vec<Vec<PyValue>> = (0..n_objects).map(|_| Vec::new()).collect();
    for (k, &id) in items.iter().enumerate() {
        let record = m.materialize(id)?;
        let PyValue::Tuple(values) = record else {
            return Err(m.malformed(format!(
                "record {k} of the pickled array is a {}, not a tuple",
                crate::array::pyvalue::convert::value_type_name(&record)
            )));
        };
        if values.len() != layout.len() {
            return Err(m.malformed(format!(
                "record {k} has {} values, its dtype {} fields",
                values.len(),
                layout.len()
            )));
        }
        let base = k * itemsize;
        let mut column = 0;
        for ((offset, field), value) in layout.iter().zip(values) {
            if field.dtype.has_object() {
                columns[column].push(value);
                column += 1;
                continue;
            }
            let size = field.dtype.itemsize().unwrap_or(0);
            let out = &mut data[base + offset..base + offset + size];
            store(&value, &field.dtype, out)
                .map_err(|why| m.malformed(format!("record {k}, field {:?}: {why}", field.name)))?;
        }
    }
    let objects = layout
        .iter()
        .filter(|(_, f)| f.dtype.has_object())
        .zip(columns)
        .map(|((_, f), values)| {
            // One value per record (the caller checked the count), but
            // ndarray may still refuse the shape itself: an error, not a
            // panic, should a shape it cannot hold get here.
            let column = ArrayD::from_shape_vec(IxDyn(shape), values).map_err(|e| {
                m.malformed(format!("the record shape {shape:?} does not fit: {e}"))
            })?;
            Ok((f.name.clone(), column))
        })
        .collect::<Result<_>>()?;
    Ok(AnyArray::Record(RecordArray::with_objects(
        native,
        shape.to_vec(),
        data,
        objects,
    )))
}

fn unsupported(dtype: &DType, reason: &str) -> Error {
    Error::UnsupportedDType {
        dtype: dtype.to_string(),
        reason: reason.to_owned(),
    }
}

/// The record with its object fields replaced by padding, to check that
/// every other field has an element type.
fn plain_part(dtype: &DType) -> DType {
    match dtype {
        DType::Record(fields) => DType::Record(
            fields
                .iter()
                .map(|f| {
                    if f.dtype.has_object() {
                        // Built directly: a field's size may exceed what
                        // a `|Vn` type string may say.
                        Field {
                            name: String::new(),
                            title: None,
                            dtype: DType::Scalar(Scalar {
                                order: crate::format::dtype::ByteOrder::NotApplicable,
                                kind: Kind::Void,
                                size: f.dtype.itemsize().unwrap_or(0),
                                unit: None,
                            }),
                        }
                    } else {
                        f.clone()
                    }
                })
                .collect(),
        ),
        other => other.clone(),
    }
}

/// The named fields with their byte offsets.
fn offsets(fields: &[Field]) -> Vec<(usize, &Field)> {
    let mut at = 0;
    let mut out = Vec::with_capacity(fields.len());
    for f in fields {
        if !f.name.is_empty() {
            out.push((at, f));
        }
        at += f.dtype.itemsize().unwrap_or(0);
    }
    out
}

/// Writes `v`, the `.item()` of a value of `dtype`, as native-order bytes
/// into `out` (exactly the item's size). The error says what is wrong.
fn store(v: &PyValue, dtype: &DType, out: &mut [u8]) -> std::result::Result<(), String> {
    let wrong = || {
        format!(
            "a {} cannot be a `{dtype}` value",
            crate::array::pyvalue::convert::value_type_name(v)
        )
    };
    match dtype {
        DType::Scalar(s) => store_scalar(v, s, out).map_err(|e| e.unwrap_or_else(wrong)),
        DType::Record(fields) => {
            let PyValue::Tuple(values) = v else {
                return Err(wrong());
            };
            let layout = offsets(fields);
            if values.len() != layout.len() {
                return Err(format!(
                    "a nested record of {} values for {} fields",
                    values.len(),
                    layout.len()
                ));
            }
            for ((offset, f), x) in layout.iter().zip(values) {
                let size = f.dtype.itemsize().unwrap_or(0);
                store(x, &f.dtype, &mut out[*offset..*offset + size])?;
            }
            Ok(())
        }
        DType::SubArray(inner, sub) => {
            let PyValue::Array(a) = v else {
                return Err(wrong());
            };
            let npy = crate::array::encode::plain_npy_bytes(a).map_err(|e| e.to_string())?;
            let (header, at) =
                crate::format::header::parse_slice(&npy, &crate::options::ReadOptions::default())
                    .map_err(|e| e.to_string())?;
            let data = &npy[at..];
            let c_order =
                !header.fortran_order || header.shape.iter().filter(|&&d| d > 1).count() <= 1;
            if to_native(&header.dtype) != **inner
                || header.shape != *sub
                || !c_order
                || data.len() != out.len()
            {
                return Err(format!(
                    "an array of {} and shape {:?} for a sub-array field of {inner} and shape {sub:?}",
                    header.dtype, header.shape
                ));
            }
            out.copy_from_slice(data);
            Ok(())
        }
    }
}

/// `Err(None)` means "wrong type" (the caller names it).
fn store_scalar(
    v: &PyValue,
    s: &Scalar,
    out: &mut [u8],
) -> std::result::Result<(), Option<String>> {
    let range =
        |n: &dyn std::fmt::Display| Some(format!("{n} is out of range for `{}`", s.type_str()));
    match s.kind {
        Kind::Bool => match v {
            PyValue::Bool(b) => out[0] = *b as u8,
            _ => return Err(None),
        },
        Kind::Int => {
            let n = match v {
                PyValue::Int(n) => *n,
                PyValue::Bool(b) => *b as i64,
                PyValue::BigInt(t) => return Err(range(t)),
                _ => return Err(None),
            };
            let bits = 8 * s.size as u32;
            if bits < 64 && (n < -(1i64 << (bits - 1)) || n >= 1i64 << (bits - 1)) {
                return Err(range(&n));
            }
            put_int(n as u64, out);
        }
        Kind::UInt => {
            let n: u64 = match v {
                PyValue::Int(n) => u64::try_from(*n).map_err(|_| range(n))?,
                PyValue::Bool(b) => *b as u64,
                PyValue::BigInt(t) => t.parse().map_err(|_| range(t))?,
                _ => return Err(None),
            };
            let bits = 8 * s.size as u32;
            if bits < 64 && n >= 1u64 << bits {
                return Err(range(&n));
            }
            put_int(n, out);
        }
        Kind::Float => {
            let x = match v {
                PyValue::Float(x) => *x,
                _ => return Err(None),
            };
            match s.size {
                4 => out.copy_from_slice(&(x as f32).to_ne_bytes()),
                8 => out.copy_from_slice(&x.to_ne_bytes()),
                #[cfg(feature = "half")]
                2 => out.copy_from_slice(&half::f16::from_f64(x).to_ne_bytes()),
                _ => return Err(Some(format!("no Rust type holds `{}`", s.type_str()))),
            }
        }
        Kind::Complex => {
            let (re, im) = match v {
                PyValue::Complex(re, im) => (*re, *im),
                _ => return Err(None),
            };
            match s.size {
                8 => {
                    out[..4].copy_from_slice(&(re as f32).to_ne_bytes());
                    out[4..].copy_from_slice(&(im as f32).to_ne_bytes());
                }
                16 => {
                    out[..8].copy_from_slice(&re.to_ne_bytes());
                    out[8..].copy_from_slice(&im.to_ne_bytes());
                }
                _ => return Err(Some(format!("no Rust type holds `{}`", s.type_str()))),
            }
        }
        Kind::Unicode => {
            let PyValue::Str(text) = v else {
                return Err(None);
            };
            let mut units = out.chunks_exact_mut(4);
            for c in text.chars() {
                let unit = units
                    .next()
                    .ok_or_else(|| Some(format!("{text:?} is longer than `{}`", s.type_str())))?;
                unit.copy_from_slice(&(c as u32).to_ne_bytes());
            }
        }
        Kind::Bytes | Kind::Void => {
            let PyValue::Bytes(b) = v else {
                return Err(None);
            };
            let fits = if s.kind == Kind::Void {
                b.len() == out.len()
            } else {
                b.len() <= out.len()
            };
            if !fits {
                return Err(Some(format!("{} bytes for `{}`", b.len(), s.type_str())));
            }
            out[..b.len()].copy_from_slice(b);
        }
        Kind::Datetime | Kind::Timedelta => {
            let count = time_count(v, s)?;
            out.copy_from_slice(&count.to_ne_bytes());
        }
        Kind::Object => unreachable!("object fields are columns"),
    }
    Ok(())
}

fn put_int(n: u64, out: &mut [u8]) {
    let bytes = n.to_ne_bytes();
    if cfg!(target_endian = "little") {
        out.copy_from_slice(&bytes[..out.len()]);
    } else {
        out.copy_from_slice(&bytes[8 - out.len()..]);
    }
}

/// The count of `s`'s unit that a datetime or timedelta `.item()` stands
/// for: an int (units `.item()` cannot express as `datetime`), `None`
/// (NaT), or a `date` / `datetime` / `timedelta`.
fn time_count(v: &PyValue, s: &Scalar) -> std::result::Result<i64, Option<String>> {
    let (multiplier, base) = split_unit(s.unit.as_deref());
    let overflow = || Some(format!("{v} is out of range for `{}`", s.type_str()));
    let micros = match (v, s.kind) {
        (PyValue::Int(n), _) => return Ok(*n),
        (PyValue::None, _) => return Ok(i64::MIN),
        (PyValue::Date(d), Kind::Datetime) => match base {
            "Y" => return Ok((d.year as i64 - 1970).div_euclid(multiplier)),
            "M" => {
                return Ok(((d.year as i64 - 1970) * 12 + d.month as i64 - 1).div_euclid(multiplier))
            }
            _ => days_from_civil(d) * 86_400_000_000,
        },
        (PyValue::DateTime(t), Kind::Datetime) => {
            let d = &t.date;
            match base {
                "Y" => return Ok((d.year as i64 - 1970).div_euclid(multiplier)),
                "M" => {
                    return Ok(
                        ((d.year as i64 - 1970) * 12 + d.month as i64 - 1).div_euclid(multiplier)
                    )
                }
                _ => {
                    days_from_civil(d) * 86_400_000_000
                        + (t.hour as i64 * 3600 + t.minute as i64 * 60 + t.second as i64)
                            * 1_000_000
                        + t.microsecond as i64
                }
            }
        }
        (PyValue::TimeDelta(t), Kind::Timedelta) => {
            (t.days as i64 * 86_400 + t.seconds as i64) * 1_000_000 + t.microseconds as i64
        }
        _ => return Err(None),
    };
    // In attoseconds, so that every unit divides exactly.
    let per: i128 = match base {
        "W" => 7 * 86_400 * 10i128.pow(18),
        "D" => 86_400 * 10i128.pow(18),
        "h" => 3_600 * 10i128.pow(18),
        "m" => 60 * 10i128.pow(18),
        "s" => 10i128.pow(18),
        "ms" => 10i128.pow(15),
        "us" => 10i128.pow(12),
        "ns" => 10i128.pow(9),
        "ps" => 10i128.pow(6),
        "fs" => 10i128.pow(3),
        "as" => 1,
        _ => {
            return Err(Some(format!(
                "a {} value for `{}`",
                crate::array::pyvalue::convert::value_type_name(v),
                s.type_str()
            )))
        }
    };
    let count = (micros as i128 * 10i128.pow(12)).div_euclid(per * multiplier as i128);
    i64::try_from(count).map_err(|_| overflow())
}

/// `"10ms"` → `(10, "ms")`; the generic unit is `(1, "")`.
fn split_unit(unit: Option<&str>) -> (i64, &str) {
    let unit = unit.unwrap_or("");
    let split = unit
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(unit.len());
    let (num, base) = unit.split_at(split);
    (num.parse().unwrap_or(1).max(1), base)
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's
/// `days_from_civil`).
fn days_from_civil(d: &Date) -> i64 {
    let (m, day) = (d.month as i64, d.day as i64);
    let y = d.year as i64 - (m <= 2) as i64;
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * (m + if m > 2 { -3 } else { 9 }) + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The values NumPy pickles for `r`: one row per record (C order), each
/// named field's `.item()` (ints, floats, `str`, `bytes`, counts for
/// datetimes, tuples for nested records, ndarrays for sub-arrays) and the
/// object fields' values.
pub(crate) fn record_rows(r: &RecordArray) -> Result<Vec<Vec<PyValue>>> {
    let DType::Record(fields) = r.dtype() else {
        return Err(unsupported(r.dtype(), "not a record dtype"));
    };
    let itemsize = r.dtype().itemsize().unwrap_or(0);
    let layout = offsets(fields);
    let n = r.len();
    let mut rows: Vec<Vec<PyValue>> = (0..n).map(|_| Vec::with_capacity(layout.len())).collect();
    for (offset, f) in layout {
        if f.dtype.has_object() {
            // Titles never repeat names (the dtype parsers refuse it), so
            // the lookup finds this field; an error, not a panic, if not.
            let AnyArray::Object(column) = r.field(&f.name)? else {
                return Err(unsupported(
                    r.dtype(),
                    "a title repeats an object field's name",
                ));
            };
            for (row, v) in rows.iter_mut().zip(column.iter()) {
                row.push(v.clone());
            }
            continue;
        }
        let size = f.dtype.itemsize().unwrap_or(0);
        for (k, row) in rows.iter_mut().enumerate() {
            let at = k * itemsize + offset;
            row.push(load(&r.as_bytes()[at..at + size], &f.dtype)?);
        }
    }
    Ok(rows)
}

/// The `.item()` of native-order bytes of `dtype`, as NumPy pickles it (a
/// datetime as its count, which NumPy's `setitem` takes back).
fn load(bytes: &[u8], dtype: &DType) -> Result<PyValue> {
    let s = match dtype {
        DType::Scalar(s) => s,
        DType::Record(fields) => {
            return offsets(fields)
                .into_iter()
                .map(|(offset, f)| {
                    let size = f.dtype.itemsize().unwrap_or(0);
                    load(&bytes[offset..offset + size], &f.dtype)
                })
                .collect::<Result<Vec<_>>>()
                .map(PyValue::Tuple);
        }
        DType::SubArray(inner, shape) => {
            let header = crate::format::header::Header {
                dtype: (**inner).clone(),
                shape: shape.clone(),
                fortran_order: false,
                version: crate::format::header::Version::V1,
            };
            let a = AnyArray::read_data(&header, &mut crate::io::source::Source::slice(bytes))?;
            return Ok(PyValue::Array(std::sync::Arc::new(a)));
        }
    };
    let int = |b: &[u8]| -> i64 {
        match b.len() {
            1 => b[0] as i8 as i64,
            2 => i16::from_ne_bytes([b[0], b[1]]) as i64,
            4 => i32::from_ne_bytes(b.try_into().expect("4 bytes")) as i64,
            _ => i64::from_ne_bytes(b.try_into().expect("8 bytes")),
        }
    };
    let uint = |b: &[u8]| -> u64 {
        match b.len() {
            1 => b[0] as u64,
            2 => u16::from_ne_bytes([b[0], b[1]]) as u64,
            4 => u32::from_ne_bytes(b.try_into().expect("4 bytes")) as u64,
            _ => u64::from_ne_bytes(b.try_into().expect("8 bytes")),
        }
    };
    let float = |b: &[u8]| -> Result<f64> {
        Ok(match b.len() {
            4 => f32::from_ne_bytes(b.try_into().expect("4 bytes")) as f64,
            8 => f64::from_ne_bytes(b.try_into().expect("8 bytes")),
            #[cfg(feature = "half")]
            2 => half::f16::from_ne_bytes([b[0], b[1]]).to_f64(),
            _ => return Err(unsupported(dtype, "no Rust type holds this float")),
        })
    };
    Ok(match s.kind {
        Kind::Bool => PyValue::Bool(bytes[0] != 0),
        Kind::Int => PyValue::Int(int(bytes)),
        Kind::UInt => {
            let n = uint(bytes);
            match i64::try_from(n) {
                Ok(n) => PyValue::Int(n),
                Err(_) => PyValue::BigInt(n.to_string()),
            }
        }
        Kind::Float => PyValue::Float(float(bytes)?),
        Kind::Complex => {
            let half = bytes.len() / 2;
            PyValue::Complex(float(&bytes[..half])?, float(&bytes[half..])?)
        }
        Kind::Unicode => PyValue::Str(crate::array::strings::decode_ucs4(bytes, false, 0)?),
        Kind::Bytes => PyValue::Bytes(crate::array::strings::strip_nuls(bytes).to_vec()),
        Kind::Void => PyValue::Bytes(bytes.to_vec()),
        Kind::Datetime | Kind::Timedelta => match int(bytes) {
            i64::MIN => PyValue::None,
            n => PyValue::Int(n),
        },
        Kind::Object => return Err(unsupported(dtype, "objects inside a nested field")),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_part_of_a_field_larger_than_a_type_string_may_say() {
        // A nested record holding objects whose size passes i32::MAX (a
        // `|V2147483655` type string would not parse): padding all the same.
        let object = DType::parse("|O").unwrap();
        let huge = DType::Scalar(Scalar {
            order: crate::format::dtype::ByteOrder::NotApplicable,
            kind: Kind::Void,
            size: i32::MAX as usize,
            unit: None,
        });
        let field = |name: &str, dtype: DType| Field {
            name: name.into(),
            title: None,
            dtype,
        };
        let inner = DType::Record(vec![field("x", object), field("y", huge)]);
        let outer = DType::Record(vec![field("a", inner)]);
        let DType::Record(fields) = plain_part(&outer) else {
            panic!()
        };
        assert_eq!(fields[0].name, "");
        assert_eq!(fields[0].dtype.itemsize(), Some(i32::MAX as usize + 8));
    }
}
