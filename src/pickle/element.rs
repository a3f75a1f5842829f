//! The element types NumPy stores as object arrays: [`PyValue`] (any
//! object) and `Option<String>` (`str` or `None`). Both read through the
//! pickle reader and write through the pickle writer, whole arrays at a
//! time, so they join [`Element`] through its object hooks rather than
//! through byte conversion.

use crate::array::any::AnyArray;
use crate::array::element::{sealed, type_name, Element};
use crate::array::pyvalue::PyValue;
use crate::error::{Error, Result};
use crate::format::dtype::{DType, Kind};
use crate::io::source::Source;
use ndarray::{ArrayBase, ArrayD, Data, Dimension};
use std::io::Write;

fn object_dtype() -> DType {
    DType::parse("|O").expect("a valid type string")
}

/// The error for data these types cannot be read from without the pickle
/// reader (any non-object dtype for `PyValue`, or object data reached
/// outside a whole-file read, such as a row range of a growing file).
fn not_objects<T>(found: &DType) -> Error {
    if let Err(e) = crate::plan::support::check_supported(found) {
        if !found.has_object() {
            return e;
        }
    }
    Error::DTypeMismatch {
        expected: format!(
            "{} (`|O`, read whole by read_npy, from_npy_bytes, read_npy_from or NpzReader::read)",
            type_name::<T>()
        ),
        found: found.to_string(),
    }
}

impl sealed::Sealed for PyValue {}

/// Python objects: an array of `PyValue` reads any object (`|O`) file and
/// writes one, pickled as `np.save` does (NumPy loads it with
/// `allow_pickle=True`).
///
/// ```
/// use ndarray::{array, Array1};
/// use ndnpy::pickle::PyValue;
/// use ndnpy::{ReadNpy, WriteNpy};
///
/// let a = array![PyValue::Str("a".into()), PyValue::None, PyValue::Int(3)];
/// let bytes = a.to_npy_bytes()?;
/// assert_eq!(Array1::<PyValue>::from_npy_bytes(&bytes)?, a);
/// // A numeric file holds no Python objects.
/// let numbers = array![1.0f64].to_npy_bytes()?;
/// assert!(matches!(
///     Array1::<PyValue>::from_npy_bytes(&numbers),
///     Err(ndnpy::Error::DTypeMismatch { .. })
/// ));
/// # Ok::<(), ndnpy::Error>(())
/// ```
impl Element for PyValue {
    fn dtype() -> DType {
        object_dtype()
    }

    fn check_dtype(dtype: &DType) -> Result<()> {
        Err(not_objects::<Self>(dtype))
    }

    #[allow(private_interfaces)]
    fn read_vec(dtype: &DType, _n: usize, _source: &mut Source<'_>) -> Result<Vec<Self>> {
        Err(not_objects::<Self>(dtype))
    }

    fn write_slice<W: Write + ?Sized>(
        _elements: &[Self],
        _dtype: &DType,
        _out: &mut W,
    ) -> Result<()> {
        crate::array::element::check_blockwise::<Self>()
    }

    fn into_any(array: ArrayD<Self>) -> AnyArray {
        AnyArray::Object(array)
    }

    fn from_any(array: AnyArray) -> std::result::Result<ArrayD<Self>, AnyArray> {
        match array {
            AnyArray::Object(a) => Ok(a),
            other => Err(other),
        }
    }

    fn ref_any(array: &AnyArray) -> Option<&ArrayD<Self>> {
        match array {
            AnyArray::Object(a) => Some(a),
            _ => None,
        }
    }

    fn from_objects() -> Option<fn(ArrayD<PyValue>) -> Result<ArrayD<Self>>> {
        Some(Ok)
    }

    fn object_npy<S: Data<Elem = Self>, D: Dimension>(
        array: &ArrayBase<S, D>,
    ) -> Option<Result<Vec<u8>>> {
        Some(super::object_npy_bytes(array))
    }
}

impl sealed::Sealed for Option<String> {}

/// Strings with missing values: reads object arrays whose elements are all
/// `str` or `None` (the error for any other element names its index and
/// Python type), and `<U` files (every element `Some`). Written as NumPy
/// writes `np.array(["a", None])`: an object array of `str` and `None`,
/// pickled (NumPy loads it with `allow_pickle=True`), even when no element
/// is `None`, so that the type survives a round trip.
///
/// ```
/// use ndarray::{array, Array1};
/// use ndnpy::{ReadNpy, WriteNpy};
///
/// let a = array![Some("cat".to_string()), None];
/// let bytes = a.to_npy_bytes()?;
/// assert_eq!(ndnpy::dtype::Header::read_from(&bytes[..])?.dtype.to_string(), "|O");
/// assert_eq!(Array1::<Option<String>>::from_npy_bytes(&bytes)?, a);
/// // `<U` data reads as all `Some`.
/// let plain = array!["x".to_string()].to_npy_bytes()?;
/// assert_eq!(Array1::<Option<String>>::from_npy_bytes(&plain)?, array![Some("x".to_string())]);
/// # Ok::<(), ndnpy::Error>(())
/// ```
impl Element for Option<String> {
    fn dtype() -> DType {
        object_dtype()
    }

    fn check_dtype(dtype: &DType) -> Result<()> {
        match dtype {
            DType::Scalar(s) if s.kind == Kind::Unicode => Ok(()),
            other => Err(not_objects::<Self>(other)),
        }
    }

    #[allow(private_interfaces)]
    fn read_vec(dtype: &DType, n: usize, source: &mut Source<'_>) -> Result<Vec<Self>> {
        Self::check_dtype(dtype)?;
        Ok(String::read_vec(dtype, n, source)?
            .into_iter()
            .map(Some)
            .collect())
    }

    fn write_slice<W: Write + ?Sized>(
        _elements: &[Self],
        _dtype: &DType,
        _out: &mut W,
    ) -> Result<()> {
        crate::array::element::check_blockwise::<Self>()
    }

    fn into_any(array: ArrayD<Self>) -> AnyArray {
        AnyArray::Object(array.mapv(|s| s.map_or(PyValue::None, PyValue::Str)))
    }

    fn from_any(array: AnyArray) -> std::result::Result<ArrayD<Self>, AnyArray> {
        match array {
            AnyArray::Str(a) => Ok(a.mapv(Some)),
            AnyArray::Object(a)
                if a.iter()
                    .all(|v| matches!(v, PyValue::Str(_) | PyValue::None)) =>
            {
                Ok(
                    crate::array::pyvalue::convert::optional_strings_from_objects(a)
                        .expect("checked: str or None"),
                )
            }
            other => Err(other),
        }
    }

    fn from_objects() -> Option<fn(ArrayD<PyValue>) -> Result<ArrayD<Self>>> {
        Some(crate::array::pyvalue::convert::optional_strings_from_objects)
    }

    fn object_npy<S: Data<Elem = Self>, D: Dimension>(
        array: &ArrayBase<S, D>,
    ) -> Option<Result<Vec<u8>>> {
        Some(super::write::optional_strings_npy_bytes(array))
    }
}
