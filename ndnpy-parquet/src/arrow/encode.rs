//! ndnpy arrays → Arrow: 1-D arrays as Arrow arrays ([`into_arrow`]), records
//! as struct arrays and record batches (the records' fields go through
//! [`into_arrow`] in turn).

use super::unsupported;
use crate::error::{Error, Result};
use arrow_array::types::*;
use arrow_array::{
    Array, ArrayRef, BinaryArray, BooleanArray, LargeStringArray, PrimitiveArray, RecordBatch,
    StringArray, StructArray,
};
use arrow_buffer::{NullBuffer, ScalarBuffer};
use arrow_schema::{Field, TimeUnit as ArrowUnit};
use ndarray::ArrayD;
use ndnpy::{types::RecordArray, AnyArray};
use std::sync::Arc;

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

/// Records as a struct array, one child per named field (padding dropped).
///
/// ```
/// use arrow_array::{Array, Float32Array};
///
/// ndnpy::record! {
///     #[derive(Clone, Copy)]
///     struct Point { x: f32, y: f32 }
/// }
/// let points = ndarray::arr1(&[Point { x: 1.0, y: 2.0 }, Point { x: 3.0, y: 4.0 }]);
/// let records = ndnpy::types::RecordArray::from_array(&points);
/// let s = ndnpy_parquet::arrow::records_to_struct(&records)?;
/// let y = s.column_by_name("y").unwrap().as_any().downcast_ref::<Float32Array>().unwrap();
/// assert_eq!((s.len(), y.value(1)), (2, 4.0));
/// # Ok::<(), ndnpy_parquet::Error>(())
/// ```
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
    StructArray::try_new(fields.into(), children, nulls)
        .map_err(|e| Error::Invalid(format!("the fields do not make a struct array: {e}")))
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
