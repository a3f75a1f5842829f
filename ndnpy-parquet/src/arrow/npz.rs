//! An `.npz` ↔ a record batch: 1-D members as plain columns, `(n, …)`
//! members as fixed-shape tensor columns (`tensor.rs`).

use super::{from_arrow, from_tensor, into_arrow, into_tensor, is_tensor, unsupported};
use crate::error::{Error, Result};
use arrow_array::{Array, ArrayRef, RecordBatch};
use arrow_schema::{Field, Schema};
use ndnpy::AnyArray;
use std::path::Path;
use std::sync::Arc;

/// The members of the `.npz` at `path` as a record batch, one column
/// each, in archive order (all of one length along their first axis): 1-D
/// members as plain columns, `(n, d1, …, dk)` members as
/// `arrow.fixed_shape_tensor` columns ([`into_tensor`]), one row per item
/// along the first axis. Every field is nullable, as
/// pyarrow makes them (`pa.table`, `pa.Table.from_pandas`): `NaT` in a
/// datetime64 or timedelta64 member is a null, as in
/// `pa.array(np.array(['NaT'], 'M8[ns]'))`.
///
/// Every member is held until the batch is built, so the values that
/// occupy no bytes of the data (`<U0`, `|S0` ...) are limited across the
/// archive, not only per member: more than
/// [`ndnpy::ReadOptions::max_zero_size_elements`]' default (2²⁰) in all
/// is [`ndnpy::error::LimitError::ZeroSizeLimit`], found from the members' headers
/// before any member is read.
///
/// ```
/// use arrow_array::Array;
///
/// # let dir = tempfile::tempdir().unwrap();
/// # let path = dir.path().join("t.npz");
/// let t = ndnpy::AnyArray::Datetime64 {
///     array: ndarray::arr1(&[0, i64::MIN]).into_dyn(),
///     unit: Some("ns".into()),
/// };
/// let mut w = ndnpy::NpzWriter::create(&path)?;
/// w.add_any("t", &t)?;
/// w.finish()?;
/// let batch = ndnpy_parquet::arrow::npz_to_batch(&path)?;
/// assert!(batch.schema().field(0).is_nullable());
/// assert!(batch.column(0).is_null(1));
///
/// // An (n, 2, 3) member becomes a tensor column of n rows.
/// let path = dir.path().join("x.npz");
/// let mut w = ndnpy::NpzWriter::create(&path)?;
/// w.add("images", &ndarray::Array3::<u8>::zeros((4, 2, 3)))?;
/// w.finish()?;
/// let batch = ndnpy_parquet::arrow::npz_to_batch(&path)?;
/// assert_eq!(batch.num_rows(), 4);
/// assert!(ndnpy_parquet::arrow::is_tensor(batch.schema().field(0)));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn npz_to_batch<P: AsRef<Path>>(path: P) -> Result<RecordBatch> {
    let options = ndnpy::ReadOptions::default();
    let mut z = ndnpy::NpzReader::open_with(path, &options)?;
    let names = z.names();
    crate::convert::check_zero_size_total(&mut z, &names, options.get_max_zero_size_elements())?;
    let mut fields: Vec<Field> = Vec::new();
    let mut columns: Vec<ArrayRef> = Vec::new();
    for name in names {
        let values = z.read_any(&name)?;
        let (field, column) = if values.shape().len() >= 2 {
            into_tensor(&name, values)?
        } else {
            let column = into_arrow(values, None).map_err(|e| in_column(&name, e))?;
            (Field::new(&name, column.data_type().clone(), true), column)
        };
        if let (Some(first), Some(field)) = (columns.first(), fields.first()) {
            if column.len() != first.len() {
                return Err(Error::Invalid(format!(
                    "member `{name}` has {} rows and `{}` {}: the columns of a record batch \
                     are all of one length",
                    column.len(),
                    field.name(),
                    first.len()
                )));
            }
        }
        fields.push(field);
        columns.push(column);
    }
    RecordBatch::try_new(Arc::new(Schema::new(fields)), columns)
        .map_err(|e| Error::Invalid(format!("the members do not make a record batch: {e}")))
}

/// Names the member in an error about its values.
fn in_column(name: &str, e: Error) -> Error {
    match e {
        Error::Unsupported { column, reason } if column.is_empty() => Error::Unsupported {
            column: name.to_owned(),
            reason,
        },
        other => other,
    }
}

/// Writes a record batch as an `.npz`, one member per column, as
/// `np.savez` would (nulls: `NaN` in float columns, `NaT` in datetimes;
/// other columns with nulls are refused, since NumPy arrays have no mask).
/// An `arrow.fixed_shape_tensor` column becomes an `(n, d1, …, dk)` member
/// ([`from_tensor`]; its nulls follow the same rule, element by element).
///
/// ```
/// use arrow_array::{ArrayRef, Float64Array, RecordBatch};
/// use std::sync::Arc;
///
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("b.npz");
/// let v: ArrayRef = Arc::new(Float64Array::from(vec![Some(1.0), None]));
/// ndnpy_parquet::arrow::batch_to_npz(&RecordBatch::try_from_iter([("v", v)])?, &path)?;
/// // The null became NaN, as pandas' `to_numpy` gives it.
/// let v = ndnpy::NpzReader::open(&path)?.read::<f64, ndarray::Ix1>("v")?;
/// assert!(v[0] == 1.0 && v[1].is_nan());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn batch_to_npz<P: AsRef<Path>>(batch: &RecordBatch, path: P) -> Result<()> {
    let mut w = ndnpy::NpzWriter::create(path)?;
    for (field, column) in batch.schema().fields().iter().zip(batch.columns()) {
        let (mut values, validity) = if is_tensor(field) {
            from_tensor(field, column.clone())?
        } else {
            from_arrow(column.as_ref())?
        };
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
