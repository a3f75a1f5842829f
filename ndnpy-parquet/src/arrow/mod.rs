//! Arrow arrays and record batches ↔ ndnpy arrays, for Polars and
//! DataFusion users: 1-D [`AnyArray`]s ↔ [`ArrayRef`] (with a validity
//! mask beside the values, since NumPy arrays have none), records
//! ([`RecordArray`]) ↔ [`StructArray`]/[`RecordBatch`], and an `.npz` of
//! 1-D members ↔ a [`RecordBatch`].
//!
//! | NumPy | Arrow |
//! |---|---|
//! | `bool`, `int8`…`uint64`, `float16/32/64` | the same primitive type; numbers move without a copy where the buffers allow ([`into_arrow`], [`from_arrow_owned`]) |
//! | `<U`, `\|S` | `Utf8` (`LargeUtf8` over 2 GiB), `Binary`; `Utf8View`, `LargeUtf8`, `LargeBinary`, `BinaryView`, `FixedSizeBinary` read too |
//! | `datetime64[s/ms/us/ns]`, `timedelta64[…]` | `Timestamp` (no time zone; a zone read is dropped: the values are UTC instants), `Duration`; `NaT` is null |
//! | `datetime64[D]` | `Date32` (and `Date64` reads as `datetime64[ms]`) |
//! | records | `Struct` (fields by name), or a `RecordBatch` of 1-D records |
//!
//! Nulls read into a mask (`Vec<bool>`, `true` = valid) beside values that
//! hold zeros (or `NaT`, or `""`) there. Other types (complex, objects,
//! long double, other datetime units, lists, dictionaries) are an
//! [`Error::Unsupported`].

use crate::error::{Error, Result};
use arrow_array::cast::AsArray;
use arrow_array::types::*;
use arrow_array::{
    Array, ArrayRef, BinaryArray, BooleanArray, LargeStringArray, PrimitiveArray, RecordBatch,
    StringArray, StructArray,
};
use arrow_buffer::{NullBuffer, ScalarBuffer};
use arrow_schema::{DataType, Field, Schema, TimeUnit as ArrowUnit};
use ndarray::{ArrayD, IxDyn};
use ndnpy::{AnyArray, Header, RecordArray};
use std::path::Path;
use std::sync::Arc;

fn unsupported(what: impl Into<String>) -> Error {
    Error::Unsupported {
        column: String::new(),
        reason: what.into(),
    }
}

/// A 1-D array's values, moved out when it is in standard layout (no copy)
/// and copied otherwise.
fn one_dim<T: Clone>(a: ArrayD<T>) -> Result<Vec<T>> {
    if a.ndim() != 1 {
        return Err(unsupported(format!(
            "an array of shape {:?}: Arrow arrays are one-dimensional",
            a.shape()
        )));
    }
    if a.is_standard_layout() {
        let len = a.len();
        // The whole allocation, of which the array may be a part (after a
        // slice): kept without a copy only when it is exactly the array.
        let (mut v, offset) = a.into_raw_vec_and_offset();
        let start = offset.unwrap_or(0);
        if start != 0 || v.len() != len {
            v.drain(..start.min(v.len()));
            v.truncate(len);
        }
        return Ok(v);
    }
    Ok(a.iter().cloned().collect())
}

fn unit_of(unit: &Option<String>) -> Option<ArrowUnit> {
    Some(match unit.as_deref()? {
        "s" => ArrowUnit::Second,
        "ms" => ArrowUnit::Millisecond,
        "us" => ArrowUnit::Microsecond,
        "ns" => ArrowUnit::Nanosecond,
        _ => return None,
    })
}

/// `validity`, with `NaT` (`i64::MIN`) entries made null.
fn with_nat(values: &[i64], validity: Option<&[bool]>) -> Option<NullBuffer> {
    let nat = values.contains(&i64::MIN);
    match (validity, nat) {
        (None, false) => None,
        _ => {
            Some(NullBuffer::from_iter(values.iter().enumerate().map(
                |(i, &v)| v != i64::MIN && validity.is_none_or(|m| m[i]),
            )))
        }
    }
}

/// The Arrow array of a 1-D `values` (copied; [`into_arrow`] moves numbers
/// instead), `validity` (`true` = valid) as its null buffer.
///
/// ```
/// use arrow_array::{Array, Float64Array};
///
/// let values = ndnpy::AnyArray::F64(ndarray::arr1(&[1.5, 0.0, -2.0]).into_dyn());
/// let arrow = ndnpy_parquet::arrow::to_arrow(&values, Some(&[true, false, true]))?;
/// let floats = arrow.as_any().downcast_ref::<Float64Array>().unwrap();
/// assert_eq!((floats.value(2), floats.is_null(1)), (-2.0, true));
/// let (back, validity) = ndnpy_parquet::arrow::from_arrow(arrow.as_ref())?;
/// assert_eq!((back, validity), (values, Some(vec![true, false, true])));
/// # Ok::<(), ndnpy_parquet::Error>(())
/// ```
pub fn to_arrow(values: &AnyArray, validity: Option<&[bool]>) -> Result<ArrayRef> {
    into_arrow(values.clone(), validity)
}

/// [`to_arrow`], moving a numeric array's buffer into Arrow's without a
/// copy when it is in standard layout.
pub fn into_arrow(values: AnyArray, validity: Option<&[bool]>) -> Result<ArrayRef> {
    let len = values.shape().iter().product::<usize>();
    if let Some(m) = validity {
        if m.len() != len {
            return Err(unsupported(format!(
                "a validity mask of {} entries for {len} values",
                m.len()
            )));
        }
    }
    let nulls = validity.map(|m| NullBuffer::from(m.to_vec()));
    macro_rules! prim {
        ($t:ty, $a:expr) => {
            Arc::new(PrimitiveArray::<$t>::new(
                ScalarBuffer::from(one_dim($a)?),
                nulls,
            )) as ArrayRef
        };
    }
    Ok(match values {
        AnyArray::Bool(a) => Arc::new(BooleanArray::new(one_dim(a)?.into_iter().collect(), nulls)),
        AnyArray::I8(a) => prim!(Int8Type, a),
        AnyArray::I16(a) => prim!(Int16Type, a),
        AnyArray::I32(a) => prim!(Int32Type, a),
        AnyArray::I64(a) => prim!(Int64Type, a),
        AnyArray::U8(a) => prim!(UInt8Type, a),
        AnyArray::U16(a) => prim!(UInt16Type, a),
        AnyArray::U32(a) => prim!(UInt32Type, a),
        AnyArray::U64(a) => prim!(UInt64Type, a),
        AnyArray::F16(a) => prim!(Float16Type, a),
        AnyArray::F32(a) => prim!(Float32Type, a),
        AnyArray::F64(a) => prim!(Float64Type, a),
        AnyArray::Str(a) => {
            let v = one_dim(a)?;
            let valid = |i: usize| validity.is_none_or(|m| m[i]);
            let items = v
                .iter()
                .enumerate()
                .map(|(i, s)| valid(i).then_some(s.as_str()));
            if v.iter().map(String::len).sum::<usize>() > i32::MAX as usize {
                Arc::new(items.collect::<LargeStringArray>())
            } else {
                Arc::new(items.collect::<StringArray>())
            }
        }
        AnyArray::Bytes(a) => {
            let v = one_dim(a)?;
            let valid = |i: usize| validity.is_none_or(|m| m[i]);
            let items = v
                .iter()
                .enumerate()
                .map(|(i, s)| valid(i).then_some(s.as_slice()));
            // 32-bit offsets hold 2 GiB.
            if v.iter().map(Vec::len).sum::<usize>() > i32::MAX as usize {
                Arc::new(items.collect::<arrow_array::LargeBinaryArray>())
            } else {
                Arc::new(items.collect::<BinaryArray>())
            }
        }
        AnyArray::Datetime64 { array, unit } => {
            let v = one_dim(array)?;
            let nulls = with_nat(&v, validity);
            if unit.as_deref() == Some("D") {
                let days = v
                    .iter()
                    .map(|&d| i32::try_from(if d == i64::MIN { 0 } else { d }))
                    .collect::<std::result::Result<Vec<i32>, _>>()
                    .map_err(|_| unsupported("a datetime64[D] outside Date32's range"))?;
                return Ok(Arc::new(PrimitiveArray::<Date32Type>::new(
                    days.into(),
                    nulls,
                )));
            }
            let u = unit_of(&unit).ok_or_else(|| {
                unsupported(format!(
                    "datetime64[{}]: Arrow timestamps are in s, ms, us or ns (or days)",
                    unit.as_deref().unwrap_or("generic")
                ))
            })?;
            let b = ScalarBuffer::from(v);
            match u {
                ArrowUnit::Second => Arc::new(PrimitiveArray::<TimestampSecondType>::new(b, nulls)),
                ArrowUnit::Millisecond => {
                    Arc::new(PrimitiveArray::<TimestampMillisecondType>::new(b, nulls))
                }
                ArrowUnit::Microsecond => {
                    Arc::new(PrimitiveArray::<TimestampMicrosecondType>::new(b, nulls))
                }
                ArrowUnit::Nanosecond => {
                    Arc::new(PrimitiveArray::<TimestampNanosecondType>::new(b, nulls))
                }
            }
        }
        AnyArray::Timedelta64 { array, unit } => {
            let u = unit_of(&unit).ok_or_else(|| {
                unsupported(format!(
                    "timedelta64[{}]: Arrow durations are in s, ms, us or ns",
                    unit.as_deref().unwrap_or("generic")
                ))
            })?;
            let v = one_dim(array)?;
            let nulls = with_nat(&v, validity);
            let b = ScalarBuffer::from(v);
            match u {
                ArrowUnit::Second => Arc::new(PrimitiveArray::<DurationSecondType>::new(b, nulls)),
                ArrowUnit::Millisecond => {
                    Arc::new(PrimitiveArray::<DurationMillisecondType>::new(b, nulls))
                }
                ArrowUnit::Microsecond => {
                    Arc::new(PrimitiveArray::<DurationMicrosecondType>::new(b, nulls))
                }
                ArrowUnit::Nanosecond => {
                    Arc::new(PrimitiveArray::<DurationNanosecondType>::new(b, nulls))
                }
            }
        }
        AnyArray::Record(r) => Arc::new(struct_with_nulls(&r, nulls)?),
        other => {
            return Err(unsupported(format!(
                "{} has no Arrow type here",
                other.dtype()
            )))
        }
    })
}

/// The values of an Arrow array (copied) and its validity (`None` when it
/// has no nulls); nulls hold zeros, `""` or `NaT`.
pub fn from_arrow(array: &dyn Array) -> Result<(AnyArray, Option<Vec<bool>>)> {
    let validity = array
        .logical_nulls()
        .filter(|n| n.null_count() > 0)
        .map(|n| n.iter().collect::<Vec<bool>>());
    let valid = |i: usize| validity.as_ref().is_none_or(|m| m[i]);
    let any = array.as_any();
    macro_rules! prim {
        ($t:ty, $variant:ident) => {{
            let a = any
                .downcast_ref::<PrimitiveArray<$t>>()
                .expect("the data type's array");
            let v: Vec<_> = (0..a.len())
                .map(|i| {
                    if valid(i) {
                        a.value(i)
                    } else {
                        Default::default()
                    }
                })
                .collect();
            AnyArray::$variant(ArrayD::from_shape_vec(IxDyn(&[v.len()]), v).expect("1-D"))
        }};
    }
    macro_rules! times {
        ($t:ty, $variant:ident, $unit:expr) => {{
            let a = any
                .downcast_ref::<PrimitiveArray<$t>>()
                .expect("the data type's array");
            let v: Vec<i64> = (0..a.len())
                .map(|i| {
                    if valid(i) {
                        a.value(i) as i64
                    } else {
                        i64::MIN
                    }
                })
                .collect();
            AnyArray::$variant {
                array: ArrayD::from_shape_vec(IxDyn(&[v.len()]), v).expect("1-D"),
                unit: Some($unit.to_owned()),
            }
        }};
    }
    let one = |n: usize| IxDyn(&[n]);
    let values = match array.data_type() {
        DataType::Boolean => {
            let a = any.downcast_ref::<BooleanArray>().expect("a boolean array");
            let v: Vec<bool> = (0..a.len()).map(|i| valid(i) && a.value(i)).collect();
            AnyArray::Bool(ArrayD::from_shape_vec(one(v.len()), v).expect("1-D"))
        }
        DataType::Int8 => prim!(Int8Type, I8),
        DataType::Int16 => prim!(Int16Type, I16),
        DataType::Int32 => prim!(Int32Type, I32),
        DataType::Int64 => prim!(Int64Type, I64),
        DataType::UInt8 => prim!(UInt8Type, U8),
        DataType::UInt16 => prim!(UInt16Type, U16),
        DataType::UInt32 => prim!(UInt32Type, U32),
        DataType::UInt64 => prim!(UInt64Type, U64),
        DataType::Float16 => prim!(Float16Type, F16),
        DataType::Float32 => prim!(Float32Type, F32),
        DataType::Float64 => prim!(Float64Type, F64),
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => {
            let v: Vec<String> = string_values(array)
                .into_iter()
                .enumerate()
                .map(|(i, s)| {
                    if valid(i) {
                        s.to_owned()
                    } else {
                        String::new()
                    }
                })
                .collect();
            AnyArray::Str(ArrayD::from_shape_vec(one(v.len()), v).expect("1-D"))
        }
        DataType::Binary
        | DataType::LargeBinary
        | DataType::BinaryView
        | DataType::FixedSizeBinary(_) => {
            let v: Vec<Vec<u8>> = binary_values(array)
                .into_iter()
                .enumerate()
                .map(|(i, b)| if valid(i) { b.to_vec() } else { Vec::new() })
                .collect();
            AnyArray::Bytes(ArrayD::from_shape_vec(one(v.len()), v).expect("1-D"))
        }
        DataType::Timestamp(u, _) => match u {
            ArrowUnit::Second => times!(TimestampSecondType, Datetime64, "s"),
            ArrowUnit::Millisecond => times!(TimestampMillisecondType, Datetime64, "ms"),
            ArrowUnit::Microsecond => times!(TimestampMicrosecondType, Datetime64, "us"),
            ArrowUnit::Nanosecond => times!(TimestampNanosecondType, Datetime64, "ns"),
        },
        DataType::Duration(u) => match u {
            ArrowUnit::Second => times!(DurationSecondType, Timedelta64, "s"),
            ArrowUnit::Millisecond => times!(DurationMillisecondType, Timedelta64, "ms"),
            ArrowUnit::Microsecond => times!(DurationMicrosecondType, Timedelta64, "us"),
            ArrowUnit::Nanosecond => times!(DurationNanosecondType, Timedelta64, "ns"),
        },
        DataType::Date32 => times!(Date32Type, Datetime64, "D"),
        DataType::Date64 => times!(Date64Type, Datetime64, "ms"),
        DataType::Struct(_) => {
            let s = any.downcast_ref::<StructArray>().expect("a struct array");
            AnyArray::Record(struct_to_records(s)?)
        }
        other => {
            return Err(unsupported(format!(
                "Arrow type {other} has no NumPy dtype here"
            )))
        }
    };
    Ok((values, validity))
}

/// [`from_arrow`] taking the array: a numeric array without nulls whose
/// buffer nobody else holds becomes the `ndarray` without a copy.
pub fn from_arrow_owned(array: ArrayRef) -> Result<(AnyArray, Option<Vec<bool>>)> {
    macro_rules! owned {
        ($t:ty, $variant:ident) => {
            if let Some(a) = array.as_any().downcast_ref::<PrimitiveArray<$t>>() {
                if a.null_count() == 0 {
                    let a = a.clone();
                    drop(array);
                    let (_, buffer, _) = a.into_parts();
                    let v: Vec<_> = buffer
                        .into_inner()
                        .into_vec()
                        .unwrap_or_else(|b: arrow_buffer::Buffer| b.typed_data().to_vec());
                    let n = v.len();
                    return Ok((
                        AnyArray::$variant(ArrayD::from_shape_vec(IxDyn(&[n]), v).expect("1-D")),
                        None,
                    ));
                }
            }
        };
    }
    match array.data_type() {
        DataType::Int8 => owned!(Int8Type, I8),
        DataType::Int16 => owned!(Int16Type, I16),
        DataType::Int32 => owned!(Int32Type, I32),
        DataType::Int64 => owned!(Int64Type, I64),
        DataType::UInt8 => owned!(UInt8Type, U8),
        DataType::UInt16 => owned!(UInt16Type, U16),
        DataType::UInt32 => owned!(UInt32Type, U32),
        DataType::UInt64 => owned!(UInt64Type, U64),
        DataType::Float16 => owned!(Float16Type, F16),
        DataType::Float32 => owned!(Float32Type, F32),
        DataType::Float64 => owned!(Float64Type, F64),
        _ => {}
    }
    from_arrow(array.as_ref())
}

/// The strings of any Arrow string layout.
fn string_values(array: &dyn Array) -> Vec<&str> {
    match array.data_type() {
        DataType::Utf8 => array
            .as_string::<i32>()
            .iter()
            .map(|s| s.unwrap_or(""))
            .collect(),
        DataType::LargeUtf8 => array
            .as_string::<i64>()
            .iter()
            .map(|s| s.unwrap_or(""))
            .collect(),
        _ => array
            .as_string_view()
            .iter()
            .map(|s| s.unwrap_or(""))
            .collect(),
    }
}

/// The byte strings of any Arrow binary layout.
fn binary_values(array: &dyn Array) -> Vec<&[u8]> {
    fn or_empty(b: Option<&[u8]>) -> &[u8] {
        b.unwrap_or(&[])
    }
    match array.data_type() {
        DataType::Binary => array.as_binary::<i32>().iter().map(or_empty).collect(),
        DataType::LargeBinary => array.as_binary::<i64>().iter().map(or_empty).collect(),
        DataType::FixedSizeBinary(_) => array.as_fixed_size_binary().iter().map(or_empty).collect(),
        _ => array.as_binary_view().iter().map(or_empty).collect(),
    }
}

/// Records as a struct array, one child per named field (padding dropped).
pub fn records_to_struct(records: &RecordArray) -> Result<StructArray> {
    struct_with_nulls(records, None)
}

fn struct_with_nulls(records: &RecordArray, nulls: Option<NullBuffer>) -> Result<StructArray> {
    if records.shape().len() != 1 {
        return Err(unsupported(format!(
            "records of shape {:?}: Arrow arrays are one-dimensional",
            records.shape()
        )));
    }
    let mut fields = Vec::new();
    let mut children = Vec::new();
    for name in records.names() {
        let child = into_arrow(records.field(name)?, None)?;
        fields.push(Field::new(name, child.data_type().clone(), true));
        children.push(child);
    }
    StructArray::try_new(fields.into(), children, nulls).map_err(Error::from)
}

/// Records as a record batch: one column per named field.
///
/// ```
/// use ndnpy::{AnyArray, WriteNpy};
///
/// ndnpy::record! {
///     #[derive(Clone, Copy)]
///     struct P { x: f64, id: i32 }
/// }
/// let bytes = ndarray::arr1(&[P { x: 0.5, id: 1 }, P { x: 1.5, id: 2 }]).to_npy_bytes()?;
/// let AnyArray::Record(records) = AnyArray::from_npy_bytes(&bytes)? else { unreachable!() };
/// let batch = ndnpy_parquet::arrow::records_to_batch(&records)?;
/// assert_eq!((batch.num_rows(), batch.schema().field(1).name().as_str()), (2, "id"));
/// let back = ndnpy_parquet::arrow::batch_to_records(&batch)?; // packed, no padding
/// assert_eq!(back.field("id")?, records.field("id")?);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn records_to_batch(records: &RecordArray) -> Result<RecordBatch> {
    Ok(RecordBatch::from(records_to_struct(records)?))
}

/// A struct array as records (its fields packed, in order, as
/// `np.rec.fromarrays` packs them); a null anywhere is refused, since
/// records have no mask.
pub fn struct_to_records(array: &StructArray) -> Result<RecordArray> {
    let columns = array
        .column_names()
        .into_iter()
        .zip(array.columns())
        .map(|(name, c)| Ok((name.to_owned(), c.clone())))
        .collect::<Result<Vec<_>>>()?;
    if array.null_count() > 0 {
        return Err(unsupported("a struct array with null records"));
    }
    pack(columns, array.len())
}

/// A record batch as records ([`struct_to_records`]).
pub fn batch_to_records(batch: &RecordBatch) -> Result<RecordArray> {
    struct_to_records(&StructArray::from(batch.clone()))
}

/// Packs named Arrow columns into records through each column's `.npy`
/// bytes (which fixes string widths as `np.save` does).
fn pack(columns: Vec<(String, ArrayRef)>, rows: usize) -> Result<RecordArray> {
    let mut parts = Vec::new();
    for (name, column) in columns {
        let (values, validity) = from_arrow(column.as_ref())?;
        if validity.is_some() {
            return Err(unsupported(format!(
                "field `{name}` has nulls, which records cannot hold"
            )));
        }
        let npy = values.to_npy_bytes()?;
        let mut reader = &npy[..];
        let header = Header::read_from(&mut reader)?;
        let size = header.dtype.itemsize().unwrap_or(0);
        parts.push((name, header.dtype, size, reader.to_vec()));
    }
    let itemsize: usize = parts.iter().map(|p| p.2).sum();
    let mut data = vec![0u8; itemsize * rows];
    let mut offset = 0;
    for (_, _, size, bytes) in &parts {
        for (row, item) in bytes.chunks_exact((*size).max(1)).enumerate().take(rows) {
            data[row * itemsize + offset..][..*size].copy_from_slice(&item[..*size]);
        }
        offset += size;
    }
    let descr: Vec<String> = parts
        .iter()
        .map(|(name, dtype, ..)| Ok(format!("({}, {})", py_str(name)?, dtype.descr())))
        .collect::<Result<_>>()?;
    let text = format!(
        "{{'descr': [{}], 'fortran_order': False, 'shape': ({rows},), }}",
        descr.join(", ")
    );
    let mut npy = b"\x93NUMPY\x01\x00".to_vec();
    // A version 1 header is Latin-1, one byte a character (`py_str`
    // admitted only such names), not UTF-8.
    let mut header: Vec<u8> = text.chars().map(|c| c as u8).collect();
    let pad = (64 - (10 + header.len() + 1) % 64) % 64;
    header.extend(std::iter::repeat_n(b' ', pad));
    header.push(b'\n');
    let Ok(len) = u16::try_from(header.len()) else {
        return Err(unsupported("too many fields for one header"));
    };
    npy.extend_from_slice(&len.to_le_bytes());
    npy.extend_from_slice(&header);
    npy.extend_from_slice(&data);
    match AnyArray::from_npy_bytes(&npy)? {
        AnyArray::Record(r) => Ok(r),
        other => Err(unsupported(format!("records became {}", other.dtype()))),
    }
}

/// A field name as a Python string literal: printable Latin-1 only (what
/// a `.npy` header of version 1 holds); others are refused, as is an empty
/// name (which a record dtype takes for padding).
fn py_str(name: &str) -> Result<String> {
    if name.is_empty() || name.chars().any(|c| c.is_control() || c as u32 > 0xFF) {
        return Err(unsupported(format!(
            "field name {name:?}: records take non-empty printable Latin-1 names"
        )));
    }
    let escaped = name.replace('\\', "\\\\").replace('\'', "\\'");
    Ok(format!("'{escaped}'"))
}

/// The 1-D members of the `.npz` at `path` as a record batch, one column
/// each, in archive order (all of one length).
pub fn npz_to_batch<P: AsRef<Path>>(path: P) -> Result<RecordBatch> {
    let mut z = ndnpy::NpzReader::open(path)?;
    let mut fields = Vec::new();
    let mut columns = Vec::new();
    for name in z.names() {
        let column = into_arrow(z.read_any(&name)?, None)?;
        fields.push(Field::new(name, column.data_type().clone(), false));
        columns.push(column);
    }
    RecordBatch::try_new(Arc::new(Schema::new(fields)), columns).map_err(Error::from)
}

/// Writes a record batch as an `.npz`, one member per column, as
/// `np.savez` would (nulls: `NaN` in float columns, `NaT` in datetimes;
/// other columns with nulls are refused, since NumPy arrays have no mask).
pub fn batch_to_npz<P: AsRef<Path>>(batch: &RecordBatch, path: P) -> Result<()> {
    let mut w = ndnpy::NpzWriter::create(path)?;
    for (field, column) in batch.schema().fields().iter().zip(batch.columns()) {
        let (mut values, validity) = from_arrow(column.as_ref())?;
        if let Some(mask) = validity {
            match &mut values {
                AnyArray::F32(a) => a
                    .iter_mut()
                    .zip(&mask)
                    .filter(|(_, v)| !**v)
                    .for_each(|(x, _)| *x = f32::NAN),
                AnyArray::F64(a) => a
                    .iter_mut()
                    .zip(&mask)
                    .filter(|(_, v)| !**v)
                    .for_each(|(x, _)| *x = f64::NAN),
                AnyArray::Datetime64 { .. } | AnyArray::Timedelta64 { .. } => {}
                other => {
                    return Err(unsupported(format!(
                        "column `{}` ({}) has nulls, which an .npz member cannot hold",
                        field.name(),
                        other.dtype()
                    )))
                }
            }
        }
        w.add_any(field.name(), &values)?;
    }
    Ok(w.finish()?)
}
