//! NumPy arrays → Arrow columns, and a member's Arrow fields from its header
//! alone. Every conversion goes through `ndnpy_parquet::arrow` (the one
//! Arrow bridge of the workspace): the fields of a header are those of a
//! zero-row array of its dtype, converted the same way, so a scan's batches
//! always match the schema its headers gave.

use crate::error::in_file;
use datafusion::arrow::array::ArrayRef;
use datafusion::arrow::datatypes::Field;
use datafusion::error::{DataFusionError, Result};
use ndnpy::{dtype::Header, AnyArray, ReadOptions};
use ndnpy_parquet::arrow::{into_arrow, into_tensor};

/// The columns `values` (rows along the first axis) makes, named after
/// `name`: one column for plain dtypes (a fixed-shape tensor column for
/// rows of N-d arrays), one per field for records (named after the fields).
pub(crate) fn to_columns(name: &str, values: AnyArray) -> Result<Vec<(Field, ArrayRef)>> {
    match values {
        AnyArray::Record(r) | AnyArray::Void(r) => {
            let mut out = Vec::new();
            for field in r.names() {
                let part = r.field(field).map_err(|e| column_error(field, e))?;
                out.extend(to_columns(field, part)?);
            }
            Ok(out)
        }
        AnyArray::Object(_) => Err(object_error(name)),
        values if values.shape().is_empty() => Err(DataFusionError::Plan(format!(
            "column `{name}`: a 0-d array has no rows (a table's rows are its first axis)"
        ))),
        values if values.shape().len() >= 2 => {
            let (field, column) = into_tensor(name, values).map_err(|e| column_error(name, e))?;
            Ok(vec![(field, column)])
        }
        values => {
            let column = into_arrow(values, None).map_err(|e| column_error(name, e))?;
            let field = Field::new(name, column.data_type().clone(), true);
            Ok(vec![(field, column)])
        }
    }
}

/// The Arrow fields of a member with this header: those of a zero-row
/// array of its dtype and trailing shape, converted as [`to_columns`] does.
pub(crate) fn fields_of(name: &str, header: &Header, path: &str) -> Result<Vec<Field>> {
    if header.dtype.has_object() {
        return Err(in_file(path, object_error(name)));
    }
    if header.shape.is_empty() {
        return Err(in_file(
            path,
            DataFusionError::Plan(format!(
                "column `{name}`: a 0-d array has no rows (a table's rows are its first axis)"
            )),
        ));
    }
    let empty = empty_of(header).map_err(|e| in_file(path, e))?;
    Ok(to_columns(name, empty)
        .map_err(|e| in_file(path, e))?
        .into_iter()
        .map(|(f, _)| f)
        .collect())
}

/// A zero-row array with `header`'s dtype and trailing shape.
fn empty_of(header: &Header) -> Result<AnyArray> {
    let mut h = header.clone();
    h.shape[0] = 0;
    h.fortran_order = false;
    let bytes = h
        .to_bytes()
        .map_err(|e| DataFusionError::External(Box::new(e)))?;
    AnyArray::from_npy_bytes_with(&bytes, &ReadOptions::default())
        .map_err(|e| DataFusionError::External(Box::new(e)))
}

fn object_error(name: &str) -> DataFusionError {
    DataFusionError::NotImplemented(format!(
        "column `{name}` holds Python objects (dtype `|O`): an object array is not a table \
         column; convert it to fixed-size strings or numbers in NumPy first"
    ))
}

fn column_error(name: &str, e: impl std::fmt::Display) -> DataFusionError {
    DataFusionError::NotImplemented(format!("column `{name}`: {e}"))
}
