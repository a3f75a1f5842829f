//! NumPy 2's variable-width strings (`np.dtypes.StringDType()`) as values:
//! the array type [`StringDTypeArray`]. Files hold them pickled; the codec
//! is in `crate::pickle`.

use crate::array::pyvalue::PyValue;
use ndarray::ArrayD;

/// A NumPy 2 `StringDType` array, as [`AnyArray::StringDType`](crate::AnyArray::StringDType) holds it:
/// each element a string, or `None` where it is the dtype's missing-value
/// object.
///
/// Writing it back ([`AnyArray::to_npy_bytes`](crate::AnyArray::to_npy_bytes),
/// [`crate::NpzWriter::add_any`]) gives a file that NumPy loads as an equal
/// `StringDType` array, with the same `na_object` and `coerce`.
///
/// ```
/// use ndnpy::pickle::{PyValue, StringDTypeArray};
/// use ndnpy::AnyArray;
///
/// let a = StringDTypeArray {
///     values: ndarray::arr1(&[Some("a".to_owned()), None]).into_dyn(),
///     na_object: Some(PyValue::None),
///     coerce: true,
/// };
/// let bytes = AnyArray::StringDType(a.clone()).to_npy_bytes()?;
/// assert_eq!(AnyArray::from_npy_bytes(&bytes)?, AnyArray::StringDType(a));
/// # Ok::<(), ndnpy::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct StringDTypeArray {
    /// The strings; `None` marks a missing element (only when `na_object`
    /// is set).
    pub values: ArrayD<Option<String>>,
    /// The dtype's `na_object` (`None`, `float('nan')`, `pandas.NA` ...),
    /// or `None` for a dtype without one.
    pub na_object: Option<PyValue>,
    /// The dtype's `coerce` flag (NumPy's default `True`: non-strings
    /// assigned to the array are converted to strings).
    pub coerce: bool,
}

/// The strings as objects, `None` where an element is missing (whatever
/// the dtype's `na_object`): how the typed reads (`String`,
/// `Option<String>`) see a `StringDType` array.
pub(crate) fn as_objects(a: StringDTypeArray) -> ArrayD<PyValue> {
    a.values.mapv(|v| v.map_or(PyValue::None, PyValue::Str))
}
