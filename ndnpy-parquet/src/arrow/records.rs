//! Records ([`RecordArray`]) ↔ Arrow struct arrays and record batches.

use super::{from_arrow, into_arrow, unsupported};
use crate::error::{Error, Result};
use arrow_array::{Array, ArrayRef, RecordBatch, StructArray};
use arrow_buffer::NullBuffer;
use arrow_schema::Field;
use ndnpy::{AnyArray, Header, RecordArray};

/// Records as a struct array, one child per named field (padding dropped).
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
