//! Arrow arrays and record batches ↔ ndnpy arrays, for Polars and
//! DataFusion users: 1-D [`AnyArray`]s ↔ [`ArrayRef`] (with a validity
//! mask beside the values, since NumPy arrays have none), records
//! ([`ndnpy::RecordArray`]) ↔ [`StructArray`]/[`arrow_array::RecordBatch`]
//! (`records.rs`), and an `.npz` of 1-D members ↔ a record batch
//! (`npz.rs`).
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
    Array, ArrayRef, BinaryArray, BooleanArray, LargeStringArray, PrimitiveArray, StringArray,
    StructArray,
};
use arrow_buffer::{NullBuffer, ScalarBuffer};
use arrow_schema::{DataType, TimeUnit as ArrowUnit};
use ndarray::{ArrayD, IxDyn};
use ndnpy::AnyArray;
use std::sync::Arc;

mod npz;
mod records;

pub use npz::{batch_to_npz, npz_to_batch};
use records::struct_with_nulls;
pub use records::{batch_to_records, records_to_batch, records_to_struct, struct_to_records};

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
///
/// ```
/// use arrow_array::{Array, Int64Array};
///
/// // The array is given up: its buffer becomes the Arrow array's.
/// let values = ndnpy::AnyArray::I64(ndarray::Array1::from_iter(0..1000i64).into_dyn());
/// let arrow = ndnpy_parquet::arrow::into_arrow(values, None)?;
/// let ints = arrow.as_any().downcast_ref::<Int64Array>().unwrap();
/// assert_eq!((ints.len(), ints.value(999), ints.null_count()), (1000, 999, 0));
/// # Ok::<(), ndnpy_parquet::Error>(())
/// ```
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
///
/// Memory follows the array's buffers: an array whose values hold no bytes
/// (`FixedSizeBinary(0)`, a struct without fields), whose length nothing
/// but a claim backs, is refused beyond
/// [`ndnpy::DEFAULT_MAX_ZERO_SIZE_ELEMENTS`] values, as `.npy` headers
/// are.
///
/// ```
/// use arrow_array::Int32Array;
/// use ndnpy::AnyArray;
///
/// let arrow = Int32Array::from(vec![Some(7), None, Some(9)]);
/// let (values, validity) = ndnpy_parquet::arrow::from_arrow(&arrow)?;
/// // The null's slot holds 0; the mask says it is missing.
/// assert_eq!(values, AnyArray::I32(ndarray::arr1(&[7, 0, 9]).into_dyn()));
/// assert_eq!(validity, Some(vec![true, false, true]));
/// # Ok::<(), ndnpy_parquet::Error>(())
/// ```
pub fn from_arrow(array: &dyn Array) -> Result<(AnyArray, Option<Vec<bool>>)> {
    check_length(array)?;
    // The nulls the buffers hold (`logical_nulls` would build a bitmap of
    // the claimed length for a `Null` array, which is refused below).
    let validity = array
        .nulls()
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

/// Refuses an array of more values than its buffers back: values that
/// hold no bytes, beyond [`ndnpy::DEFAULT_MAX_ZERO_SIZE_ELEMENTS`]. Arrow
/// validates such arrays whatever their length, and each value becomes a
/// `Vec` (or a record) here.
fn check_length(array: &dyn Array) -> Result<()> {
    fn no_bytes(data_type: &DataType) -> bool {
        match data_type {
            DataType::FixedSizeBinary(0) => true,
            DataType::Struct(fields) => fields.iter().all(|f| no_bytes(f.data_type())),
            _ => false,
        }
    }
    let max = ndnpy::DEFAULT_MAX_ZERO_SIZE_ELEMENTS;
    if no_bytes(array.data_type()) && array.len() as u64 > max {
        return Err(unsupported(format!(
            "{} values of {} hold no bytes: more than {max}, the most ndnpy reads \
             (ReadOptions::max_zero_size_elements)",
            array.len(),
            array.data_type()
        )));
    }
    Ok(())
}

/// [`from_arrow`] taking the array: a numeric array without nulls whose
/// buffer nobody else holds becomes the `ndarray` without a copy.
///
/// ```
/// use arrow_array::{ArrayRef, Float64Array};
/// use ndnpy::AnyArray;
/// use std::sync::Arc;
///
/// let arrow: ArrayRef = Arc::new(Float64Array::from(vec![0.5, 1.5]));
/// let (values, validity) = ndnpy_parquet::arrow::from_arrow_owned(arrow)?;
/// assert_eq!(values, AnyArray::F64(ndarray::arr1(&[0.5, 1.5]).into_dyn()));
/// assert_eq!(validity, None); // no nulls, no mask
/// # Ok::<(), ndnpy_parquet::Error>(())
/// ```
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
