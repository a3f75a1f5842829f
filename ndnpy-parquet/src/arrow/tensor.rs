//! N-dimensional arrays ↔ Arrow's canonical extension type
//! `arrow.fixed_shape_tensor`: a `FixedSizeList<value, d1·…·dk>` column,
//! one row per item along the first axis, the inner shape (row-major) in
//! the field's `ARROW:extension:metadata`.
//!
//! The metadata is written and read here with `serde_json` (already a
//! dependency) rather than through `arrow_schema::extension::FixedShapeTensor`:
//! that type sits behind arrow-schema's `canonical_extension_types` feature,
//! which this workspace does not enable, and checking the JSON here lets
//! every refusal name the column and the offending entry.

use super::{from_arrow_owned, into_arrow};
use crate::error::{Error, Result};
use arrow_array::{Array, ArrayRef, FixedSizeListArray};
use arrow_schema::{DataType, Field};
use ndarray::{ArrayD, IxDyn};
use ndnpy::AnyArray;
use serde_json::{json, Value};
use std::collections::HashMap;
use std::sync::Arc;

/// The extension name Arrow gives fixed-shape tensor columns.
///
/// ```
/// assert_eq!(ndnpy_parquet::arrow::FIXED_SHAPE_TENSOR, "arrow.fixed_shape_tensor");
/// ```
pub const FIXED_SHAPE_TENSOR: &str = "arrow.fixed_shape_tensor";

const NAME_KEY: &str = "ARROW:extension:name";
const METADATA_KEY: &str = "ARROW:extension:metadata";

/// Applies `$body` to the `ArrayD` inside the variants a tensor can hold,
/// rebuilding the same variant (units kept); others are `$other`.
macro_rules! each_tensor_variant {
    ($value:expr, $a:ident => $body:expr, $other:ident => $refuse:expr) => {
        match $value {
            AnyArray::Bool($a) => AnyArray::Bool($body),
            AnyArray::I8($a) => AnyArray::I8($body),
            AnyArray::I16($a) => AnyArray::I16($body),
            AnyArray::I32($a) => AnyArray::I32($body),
            AnyArray::I64($a) => AnyArray::I64($body),
            AnyArray::U8($a) => AnyArray::U8($body),
            AnyArray::U16($a) => AnyArray::U16($body),
            AnyArray::U32($a) => AnyArray::U32($body),
            AnyArray::U64($a) => AnyArray::U64($body),
            AnyArray::F16($a) => AnyArray::F16($body),
            AnyArray::F32($a) => AnyArray::F32($body),
            AnyArray::F64($a) => AnyArray::F64($body),
            AnyArray::Str($a) => AnyArray::Str($body),
            AnyArray::Bytes($a) => AnyArray::Bytes($body),
            AnyArray::Datetime64 { array: $a, unit } => AnyArray::Datetime64 { array: $body, unit },
            AnyArray::Timedelta64 { array: $a, unit } => {
                AnyArray::Timedelta64 { array: $body, unit }
            }
            $other => $refuse,
        }
    };
}

/// The values of `a` in C order as a 1-D array: moved (no copy) when `a`
/// is in standard layout, copied in C order otherwise (a Fortran-order
/// array's rows are not contiguous, which no `permutation` can describe:
/// pyarrow refuses such arrays for the same reason).
fn flatten<T: Clone>(a: ArrayD<T>) -> ArrayD<T> {
    let len = a.len();
    if a.is_standard_layout() {
        if let Ok(flat) = a.into_shape_with_order(IxDyn(&[len])) {
            return flat;
        }
        unreachable!("a standard-layout array reshapes in C order")
    }
    ArrayD::from_shape_vec(IxDyn(&[len]), a.iter().cloned().collect()).expect("len values")
}

/// An `(n, d1, …, dk)` array (k ≥ 1) as a fixed-shape tensor column named
/// `name`: its field (nullable, as pyarrow makes them, with the extension
/// name and `{"shape": [d1, …, dk]}` in its metadata) and its
/// `FixedSizeList` storage. Any element type [`into_arrow`] takes for 1-D
/// arrays is taken; numbers in standard layout move into Arrow without a
/// copy, other layouts (Fortran order, views) are copied in C order.
/// pyarrow reads every such column as `pa.fixed_shape_tensor`, but its
/// `to_numpy_ndarray()` takes numbers only (not bool, strings or
/// datetimes: their values are in the column's storage).
///
/// ```
/// use arrow_array::{cast::AsArray, types::Float32Type, Array};
///
/// let x = ndarray::Array::from_shape_fn((2, 3, 4), |(i, j, k)| (i * 12 + j * 4 + k) as f32);
/// let (field, column) = ndnpy_parquet::arrow::into_tensor("x", ndnpy::AnyArray::F32(x.into_dyn()))?;
/// assert_eq!(field.metadata()["ARROW:extension:name"], "arrow.fixed_shape_tensor");
/// assert_eq!(field.metadata()["ARROW:extension:metadata"], r#"{"shape":[3,4]}"#);
/// let list = column.as_fixed_size_list();
/// assert_eq!((list.len(), list.value_length()), (2, 12));
/// assert_eq!(list.value(1).as_primitive::<Float32Type>().value(0), 12.0);
/// # Ok::<(), ndnpy_parquet::Error>(())
/// ```
pub fn into_tensor(name: &str, values: AnyArray) -> Result<(Field, ArrayRef)> {
    let shape = values.shape().to_vec();
    let refuse = |reason: String| Error::Unsupported {
        column: name.to_owned(),
        reason,
    };
    if shape.len() < 2 {
        return Err(refuse(format!(
            "an array of shape {shape:?}: a fixed-shape tensor column holds arrays of two \
             or more dimensions (into_arrow takes 1-D arrays)"
        )));
    }
    let inner = &shape[1..];
    let size = inner
        .iter()
        .try_fold(1usize, |p, &d| p.checked_mul(d))
        .and_then(|s| i32::try_from(s).ok())
        .ok_or_else(|| {
            refuse(format!(
                "an inner shape of {inner:?}: more than 2³¹ − 1 values per row, the most a \
                 FixedSizeList holds"
            ))
        })?;
    let dtype = values.dtype();
    let flat = each_tensor_variant!(values, a => flatten(a), other => {
        return Err(refuse(format!(
            "{dtype} has no fixed-shape tensor type here (records and {} are refused)",
            other.dtype()
        )))
    });
    let child = into_arrow(flat, None).map_err(|e| match e {
        Error::Unsupported { reason, .. } => refuse(reason),
        other => other,
    })?;
    let item = Arc::new(Field::new("item", child.data_type().clone(), true));
    let list = FixedSizeListArray::try_new_with_length(item, size, child, None, shape[0])
        .map_err(|e| Error::Invalid(format!("column `{name}`: {e}")))?;
    let metadata = HashMap::from([
        (NAME_KEY.to_owned(), FIXED_SHAPE_TENSOR.to_owned()),
        (
            METADATA_KEY.to_owned(),
            json!({ "shape": inner }).to_string(),
        ),
    ]);
    let field = Field::new(name, list.data_type().clone(), true).with_metadata(metadata);
    Ok((field, Arc::new(list)))
}

/// Whether `field` carries the `arrow.fixed_shape_tensor` extension name.
///
/// ```
/// use arrow_schema::{DataType, Field};
///
/// let (field, _) = ndnpy_parquet::arrow::into_tensor(
///     "m",
///     ndnpy::AnyArray::I64(ndarray::Array2::<i64>::zeros((4, 2)).into_dyn()),
/// )?;
/// assert!(ndnpy_parquet::arrow::is_tensor(&field));
/// assert!(!ndnpy_parquet::arrow::is_tensor(&Field::new("v", DataType::Int64, true)));
/// # Ok::<(), ndnpy_parquet::Error>(())
/// ```
pub fn is_tensor(field: &Field) -> bool {
    field.metadata().get(NAME_KEY).map(String::as_str) == Some(FIXED_SHAPE_TENSOR)
}

/// What a tensor field's metadata says: the physical inner shape and the
/// permutation (identity when absent).
struct Meta {
    shape: Vec<usize>,
    permutation: Vec<usize>,
}

/// Parses and checks `ARROW:extension:metadata` against a list of `size`
/// values a row.
fn parse_meta(name: &str, text: &str, size: usize) -> Result<Meta> {
    let bad =
        |what: String| Error::Metadata(format!("column `{name}` ({FIXED_SHAPE_TENSOR}): {what}"));
    let value: Value = serde_json::from_str(text)
        .map_err(|e| bad(format!("the extension metadata is not JSON ({e})")))?;
    let Value::Object(map) = value else {
        return Err(bad(format!(
            "the extension metadata is {text:?}, not a JSON object"
        )));
    };
    let list = |key: &str| -> Result<Option<&Vec<Value>>> {
        match map.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::Array(v)) => Ok(Some(v)),
            Some(other) => Err(bad(format!("`{key}` is {other}, not a list"))),
        }
    };
    let indices = |key: &str, v: &[Value]| -> Result<Vec<usize>> {
        v.iter()
            .map(|d| {
                d.as_u64()
                    .and_then(|d| usize::try_from(d).ok())
                    .ok_or_else(|| bad(format!("`{key}` holds {d}, not a non-negative integer")))
            })
            .collect()
    };
    let shape = indices(
        "shape",
        list("shape")?.ok_or_else(|| bad("the extension metadata has no `shape`".into()))?,
    )?;
    let product = shape.iter().try_fold(1usize, |p, &d| p.checked_mul(d));
    if product != Some(size) {
        return Err(bad(format!(
            "`shape` {shape:?} holds {} values a row, but the column's FixedSizeList holds {size}",
            product.map_or("more than usize::MAX".to_owned(), |p| p.to_string())
        )));
    }
    if let Some(names) = list("dim_names")? {
        if names.len() != shape.len() || names.iter().any(|n| !n.is_string()) {
            return Err(bad(format!(
                "`dim_names` {} is not {} strings, one per dimension of `shape`",
                Value::Array(names.clone()),
                shape.len()
            )));
        }
    }
    let permutation = match list("permutation")? {
        None => (0..shape.len()).collect(),
        Some(p) => {
            let p = indices("permutation", p)?;
            let mut seen = vec![false; shape.len()];
            let is_one = p.len() == shape.len()
                && p.iter()
                    .all(|&i| i < seen.len() && !std::mem::replace(&mut seen[i], true));
            if !is_one {
                return Err(bad(format!(
                    "`permutation` {p:?} is not a permutation of 0..{}",
                    shape.len()
                )));
            }
            p
        }
    };
    Ok(Meta { shape, permutation })
}

/// A fixed-shape tensor column as an `(n, d1, …, dk)` array, and the
/// validity of its elements (`true` = valid, in the array's logical C
/// order; `None` when nothing is null), as [`from_arrow`](super::from_arrow)
/// gives it for 1-D columns: a null row makes all its elements null, and
/// null slots hold zeros (or `""`, `NaT`), whatever the producer left
/// under a null row.
///
/// With a `permutation` in the metadata, the array is the physical tensor
/// with its axes permuted as pyarrow's `to_numpy_ndarray()` permutes them
/// (a view without a copy: not in standard layout). `dim_names` are
/// checked, not kept. Numbers move out of Arrow without a copy where the
/// buffer is held by this array only.
///
/// Refused with an error naming the column: a field without the extension
/// name, storage other than a `FixedSizeList`, metadata that is not JSON,
/// a `shape` that is not non-negative integers or whose product is not the
/// list size, `dim_names` of the wrong length, a `permutation` that is not
/// one.
///
/// ```
/// use arrow_array::Array;
/// use ndnpy::AnyArray;
///
/// let x = ndarray::Array::from_shape_fn((5, 2, 3), |(i, j, k)| (i * 6 + j * 3 + k) as i32);
/// let (field, column) = ndnpy_parquet::arrow::into_tensor("x", AnyArray::I32(x.clone().into_dyn()))?;
/// let (back, validity) = ndnpy_parquet::arrow::from_tensor(&field, column)?;
/// assert_eq!((back, validity), (AnyArray::I32(x.into_dyn()), None));
///
/// // A shape that does not match the list size is refused.
/// let mut metadata = field.metadata().clone();
/// metadata.insert("ARROW:extension:metadata".to_string(), r#"{"shape": [7]}"#.to_string());
/// let (field, column) = ndnpy_parquet::arrow::into_tensor(
///     "x", AnyArray::I32(ndarray::Array3::<i32>::zeros((5, 2, 3)).into_dyn()))?;
/// let err = ndnpy_parquet::arrow::from_tensor(&field.with_metadata(metadata), column).unwrap_err();
/// assert!(err.to_string().contains("column `x`"), "{err}");
/// # Ok::<(), ndnpy_parquet::Error>(())
/// ```
pub fn from_tensor(field: &Field, array: ArrayRef) -> Result<(AnyArray, Option<Vec<bool>>)> {
    let name = field.name();
    let refuse = |reason: String| Error::Unsupported {
        column: name.to_owned(),
        reason,
    };
    if !is_tensor(field) {
        return Err(refuse(format!(
            "the field has no `{NAME_KEY}` of {FIXED_SHAPE_TENSOR:?}"
        )));
    }
    let DataType::FixedSizeList(_, size) = array.data_type() else {
        return Err(refuse(format!(
            "a {FIXED_SHAPE_TENSOR} column stored as {}, not a FixedSizeList",
            array.data_type()
        )));
    };
    let size =
        usize::try_from(*size).map_err(|_| refuse(format!("a FixedSizeList of size {size}")))?;
    let text = field
        .metadata()
        .get(METADATA_KEY)
        .ok_or_else(|| Error::Metadata(format!("column `{name}`: no `{METADATA_KEY}`")))?;
    let meta = parse_meta(name, text, size)?;
    let rows = array.len();
    let (row_nulls, child) = {
        let list = array
            .as_any()
            .downcast_ref::<FixedSizeListArray>()
            .ok_or_else(|| refuse("a FixedSizeList type on another array".into()))?;
        // A sliced list keeps its child sliced to its rows (arrow-rs 60).
        let child = list.values().slice(0, rows * size);
        (list.nulls().filter(|n| n.null_count() > 0).cloned(), child)
    };
    drop(array);
    let (flat, child_validity) = from_arrow_owned(child).map_err(|e| match e {
        Error::Unsupported { column, reason } if column.is_empty() => refuse(reason),
        other => other,
    })?;
    let mut physical = vec![rows];
    physical.extend(&meta.shape);
    // ndarray takes no shape whose non-zero lengths multiply past
    // isize::MAX, even for an array without elements (size-0 rows).
    let fits = physical
        .iter()
        .filter(|&&d| d != 0)
        .try_fold(1usize, |p, &d| p.checked_mul(d))
        .is_some_and(|p| p <= isize::MAX as usize);
    if !fits {
        return Err(Error::Metadata(format!(
            "column `{name}` ({FIXED_SHAPE_TENSOR}): `shape` {:?} over {rows} rows is larger \
             than any array",
            meta.shape
        )));
    }
    let axes: Vec<usize> = std::iter::once(0)
        .chain(meta.permutation.iter().map(|p| p + 1))
        .collect();
    let shape_err = |e: ndarray::ShapeError| refuse(format!("values of shape {physical:?}: {e}"));
    // The values under a null row are whatever the producer left there:
    // they are made what a null slot holds in a 1-D column (zero, `""`,
    // `NaT`), rows being the first axis before the permutation.
    let null_rows: Vec<usize> = row_nulls
        .iter()
        .flat_map(|n| (0..rows).filter(|&r| n.is_null(r)))
        .collect();
    fn blank<T: Clone>(mut a: ArrayD<T>, rows: &[usize], v: T) -> ArrayD<T> {
        for &r in rows {
            a.index_axis_mut(ndarray::Axis(0), r).fill(v.clone());
        }
        a
    }
    let values = each_tensor_variant!(flat, a => {
        let a = a.into_shape_with_order(IxDyn(&physical)).map_err(shape_err)?;
        blank(a, &null_rows, Default::default()).permuted_axes(IxDyn(&axes))
    }, other => {
        return Err(refuse(format!("{} elements in a tensor", other.dtype())))
    });
    // Times: NaT, not zero (the permutation keeps rows first).
    let values = match values {
        AnyArray::Datetime64 { array, unit } => AnyArray::Datetime64 {
            array: blank(array, &null_rows, i64::MIN),
            unit,
        },
        AnyArray::Timedelta64 { array, unit } => AnyArray::Timedelta64 {
            array: blank(array, &null_rows, i64::MIN),
            unit,
        },
        other => other,
    };
    let validity = match (row_nulls, child_validity) {
        (None, None) => None,
        (rows_valid, elements) => {
            let mask: Vec<bool> = (0..rows * size)
                .map(|i| {
                    rows_valid
                        .as_ref()
                        .is_none_or(|n| n.is_valid(i / size.max(1)))
                        && elements.as_ref().is_none_or(|m| m[i])
                })
                .collect();
            let mask = ArrayD::from_shape_vec(IxDyn(&physical), mask)
                .map_err(shape_err)?
                .permuted_axes(IxDyn(&axes));
            Some(mask.iter().copied().collect())
        }
    };
    Ok((values, validity))
}
