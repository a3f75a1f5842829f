//! Arrow → ndnpy arrays: Arrow arrays as 1-D arrays ([`from_arrow`]), struct
//! arrays and record batches as records (their fields go through
//! [`from_arrow`] in turn).

use super::unsupported;
use crate::error::Result;
use arrow_array::cast::AsArray;
use arrow_array::types::*;
use arrow_array::{Array, ArrayRef, BooleanArray, PrimitiveArray, RecordBatch, StructArray};
use arrow_schema::{DataType, TimeUnit as ArrowUnit};
use ndarray::{ArrayD, IxDyn};
use ndnpy::{dtype::Header, types::RecordArray, AnyArray};

/// The values of an Arrow array (copied) and its validity (`None` when it
/// has no nulls); nulls hold zeros, `""` or `NaT`.
///
/// Memory follows the array's buffers: an array whose values hold no bytes
/// (`FixedSizeBinary(0)`, a struct without fields), whose length nothing
/// but a claim backs, is refused beyond
/// [`ndnpy::npy::DEFAULT_MAX_ZERO_SIZE_ELEMENTS`] values, as `.npy` headers
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
/// hold no bytes, beyond [`ndnpy::npy::DEFAULT_MAX_ZERO_SIZE_ELEMENTS`]. Arrow
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
    let max = ndnpy::npy::DEFAULT_MAX_ZERO_SIZE_ELEMENTS;
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

/// A struct array as records (its fields packed, in order, as
/// `np.rec.fromarrays` packs them); a null anywhere is refused, since
/// records have no mask.
///
/// ```
/// use arrow_array::{ArrayRef, Int32Array, StructArray};
/// use arrow_schema::{DataType, Field};
/// use ndnpy::AnyArray;
/// use std::sync::Arc;
///
/// let id: ArrayRef = Arc::new(Int32Array::from(vec![7, 8]));
/// let s = StructArray::from(vec![(Arc::new(Field::new("id", DataType::Int32, false)), id)]);
/// let records = ndnpy_parquet::arrow::struct_to_records(&s)?;
/// assert_eq!(records.names(), ["id"]);
/// assert_eq!(records.field("id")?, AnyArray::I32(ndarray::arr1(&[7, 8]).into_dyn()));
///
/// // A null has nowhere to go in a record.
/// let with_null: ArrayRef = Arc::new(Int32Array::from(vec![Some(1), None]));
/// let field = Arc::new(Field::new("id", DataType::Int32, true));
/// let s = StructArray::from(vec![(field, with_null)]);
/// assert!(ndnpy_parquet::arrow::struct_to_records(&s).is_err());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
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
///
/// ```
/// use arrow_array::{ArrayRef, Float64Array, Int64Array, RecordBatch};
/// use std::sync::Arc;
///
/// let batch = RecordBatch::try_from_iter([
///     ("t", Arc::new(Int64Array::from(vec![0, 1, 2])) as ArrayRef),
///     ("v", Arc::new(Float64Array::from(vec![0.5, 0.25, 0.125])) as ArrayRef),
/// ])?;
/// // One record per row, as `np.rec.fromarrays` would pack the columns.
/// let records = ndnpy_parquet::arrow::batch_to_records(&batch)?;
/// assert_eq!((records.len(), records.dtype().to_string()), (3, "[('t', '<i8'), ('v', '<f8')]".to_string()));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
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
