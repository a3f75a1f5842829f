//! Records ([`RecordArray`]) ↔ Arrow struct arrays and record batches.

use super::{from_arrow, into_arrow, unsupported};
use crate::error::{Error, Result};
use arrow_array::{Array, ArrayRef, RecordBatch, StructArray};
use arrow_buffer::NullBuffer;
use arrow_schema::Field;
use ndnpy::{AnyArray, Header, RecordArray};

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
/// let records = ndnpy::RecordArray::from_array(&points);
/// let s = ndnpy_parquet::arrow::records_to_struct(&records)?;
/// let y = s.column_by_name("y").unwrap().as_any().downcast_ref::<Float32Array>().unwrap();
/// assert_eq!((s.len(), y.value(1)), (2, 4.0));
/// # Ok::<(), ndnpy_parquet::Error>(())
/// ```
pub fn records_to_struct(records: &RecordArray) -> Result<StructArray> {
    struct_with_nulls(records, None)
}

pub(super) fn struct_with_nulls(
    records: &RecordArray,
    nulls: Option<NullBuffer>,
) -> Result<StructArray> {
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
