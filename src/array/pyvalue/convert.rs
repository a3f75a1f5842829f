//! Object arrays as arrays of Rust values: `str` elements as `String`s,
//! `str`-or-`None` as `Option<String>`, with Python's type names for the
//! elements that are not.

use super::PyValue;
use crate::error::{Error, Result};
use ndarray::{Array, ArrayD, Dimension};

/// Python's name for the type of a value, for error messages.
pub(crate) fn value_type_name(v: &PyValue) -> &'static str {
    match v {
        PyValue::None => "NoneType",
        PyValue::Bool(_) => "bool",
        PyValue::Int(_) | PyValue::BigInt(_) => "int",
        PyValue::Float(_) => "float",
        PyValue::Complex(..) => "complex",
        PyValue::Str(_) => "str",
        PyValue::Bytes(_) => "bytes",
        PyValue::ByteArray(_) => "bytearray",
        PyValue::List(_) => "list",
        PyValue::Tuple(_) => "tuple",
        PyValue::Dict(_) => "dict",
        PyValue::Set(_) => "set",
        PyValue::FrozenSet(_) => "frozenset",
        PyValue::Date(_) => "datetime.date",
        PyValue::DateTime(_) => "datetime.datetime",
        PyValue::TimeDelta(_) => "datetime.timedelta",
        PyValue::Decimal(_) => "decimal.Decimal",
        PyValue::Array(_) => "numpy.ndarray",
        PyValue::Scalar(_) => "numpy scalar",
        PyValue::DType(_) => "numpy.dtype",
        PyValue::Global { .. } => "type",
        PyValue::Opaque(_) => "object",
        PyValue::Timestamp(_) => "pandas.Timestamp",
        PyValue::Timedelta(_) => "pandas.Timedelta",
        PyValue::NaT => "pandas.NaT",
        PyValue::NA => "pandas.NA",
        PyValue::TimeZone(_) => "tzinfo",
    }
}

/// An object array whose elements are all `str`, as a `String` array.
///
/// The error for any other element names its index and Python type.
///
/// ```
/// use ndarray::{array, Ix1};
/// use ndnpy::pickle::{strings_from_objects, PyValue};
///
/// let a = array![PyValue::Str("a".into()), PyValue::Str("b".into())].into_dyn();
/// assert_eq!(strings_from_objects::<Ix1>(a)?, array!["a".to_string(), "b".to_string()]);
/// let bad = array![PyValue::Str("a".into()), PyValue::Int(1)].into_dyn();
/// assert!(strings_from_objects::<Ix1>(bad).unwrap_err().to_string().contains("[1] is int"));
/// # Ok::<(), ndnpy::Error>(())
/// ```
pub fn strings_from_objects<D: Dimension>(array: ArrayD<PyValue>) -> Result<Array<String, D>> {
    convert(array, "String", "str", |v| match v {
        PyValue::Str(s) => Ok(s),
        other => Err(other),
    })
}

/// An object array whose elements are all `str` or `None`, as an
/// `Option<String>` array.
pub fn optional_strings_from_objects<D: Dimension>(
    array: ArrayD<PyValue>,
) -> Result<Array<Option<String>, D>> {
    convert(array, "Option<String>", "str or None", |v| match v {
        PyValue::Str(s) => Ok(Some(s)),
        PyValue::None => Ok(None),
        other => Err(other),
    })
}

fn convert<T, D: Dimension>(
    array: ArrayD<PyValue>,
    name: &str,
    holds: &str,
    f: impl Fn(PyValue) -> std::result::Result<T, PyValue>,
) -> Result<Array<T, D>> {
    let shape = array.shape().to_vec();
    let ndim = shape.len();
    if let Some(n) = D::NDIM.filter(|&n| n != ndim) {
        return Err(Error::NdimMismatch {
            expected: n,
            found: ndim,
            shape,
        });
    }
    let mut array = array;
    let mut out = Vec::with_capacity(array.len());
    // Logical (C) order, so that the index in an error is NumPy's.
    for (index, v) in array.indexed_iter_mut() {
        match f(std::mem::take(v)) {
            Ok(x) => out.push(x),
            Err(other) => {
                return Err(Error::DTypeMismatch {
                    expected: format!("{name} (an object array of {holds})"),
                    found: format!(
                        "an object array whose element {:?} is {}",
                        index.slice(),
                        python_type_name(&other)
                    ),
                })
            }
        }
    }
    let c = ArrayD::from_shape_vec(shape.clone(), out).expect("same count as the array");
    c.into_dimensionality::<D>()
        .map_err(|_| Error::NdimMismatch {
            expected: D::NDIM.unwrap_or(ndim),
            found: ndim,
            shape,
        })
}

/// Python's name for the type of `v` (`numpy.float64` for a NumPy
/// scalar, as `type(x)` prints it), for error messages.
fn python_type_name(v: &PyValue) -> String {
    let PyValue::Scalar(s) = v else {
        return value_type_name(v).to_owned();
    };
    let (kind, size) = match &s.dtype {
        crate::format::dtype::DType::Scalar(x) => (x.kind, x.size),
        _ => return "numpy.void".to_owned(),
    };
    use crate::format::dtype::Kind;
    let name = match kind {
        Kind::Bool => "bool".to_owned(),
        Kind::Int => format!("int{}", 8 * size),
        Kind::UInt => format!("uint{}", 8 * size),
        Kind::Float => format!("float{}", 8 * size),
        Kind::Complex => format!("complex{}", 8 * size),
        Kind::Datetime => "datetime64".to_owned(),
        Kind::Timedelta => "timedelta64".to_owned(),
        Kind::Bytes => "bytes_".to_owned(),
        Kind::Unicode => "str_".to_owned(),
        Kind::Void => "void".to_owned(),
        Kind::Object => "object_".to_owned(),
    };
    format!("numpy.{name}")
}
