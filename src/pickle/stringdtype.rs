//! NumPy 2's variable-width strings (`np.dtypes.StringDType()`, NumPy's
//! new default string type). `np.save` writes them as an object array: a
//! `|O` header, then the array pickled with the dtype
//! `numpy._core._internal._convert_to_stringdtype_kwargs(coerce[,
//! na_object])` and the elements as a list of `str` (and the NA object
//! where an element is missing).

use super::machine::{Machine, Node};
use super::value::PyValue;
use crate::any::AnyArray;
use crate::error::Result;
use ndarray::ArrayD;

/// A NumPy 2 `StringDType` array, as [`AnyArray::StringDType`] holds it:
/// each element a string, or `None` where it is the dtype's missing-value
/// object.
///
/// Writing it back ([`AnyArray::to_npy_bytes`],
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

/// `_convert_to_stringdtype_kwargs(coerce, na_object=<no value>)`.
pub(crate) fn dtype_new(m: &mut Machine<'_>, args: &[usize]) -> Result<Node> {
    let (coerce, na) = match args {
        [c] => (*c, None),
        [c, na] => (*c, Some(*na)),
        _ => return Err(m.malformed("StringDType takes coerce and na_object")),
    };
    let coerce = match &m.arena[coerce] {
        Node::Bool(b) => *b,
        Node::Int(n) => *n != 0,
        _ => return Err(m.malformed("StringDType's coerce is not a bool")),
    };
    Ok(Node::StringDType { coerce, na })
}

/// The array of a `StringDType` state: `items` in C order.
pub(crate) fn array(
    m: &mut Machine<'_>,
    coerce: bool,
    na: Option<usize>,
    shape: &[usize],
    fortran: bool,
    items: Vec<usize>,
) -> Result<AnyArray> {
    let na_object = match na {
        Some(id) => Some(m.materialize(id)?),
        None => None,
    };
    let mut values = Vec::with_capacity(items.len());
    for (i, id) in items.into_iter().enumerate() {
        match m.materialize(id)? {
            PyValue::Str(s) => values.push(Some(s)),
            other if na_object.is_some() => {
                // The NA object (NumPy writes the dtype's own, which may
                // not compare equal to itself, as NaN).
                drop(other);
                values.push(None);
            }
            other => {
                return Err(m.malformed(format!(
                    "element {i} of a StringDType array without na_object is a {}",
                    super::machine::value_type_name(&other)
                )))
            }
        }
    }
    let values = super::numpy::object_array(shape, fortran, values);
    Ok(AnyArray::StringDType(StringDTypeArray {
        values,
        na_object,
        coerce,
    }))
}

/// The strings as objects, `None` where an element is missing (whatever
/// the dtype's `na_object`): how the typed reads (`String`,
/// `Option<String>`) see a `StringDType` array.
pub(crate) fn as_objects(a: StringDTypeArray) -> ArrayD<PyValue> {
    a.values.mapv(|v| v.map_or(PyValue::None, PyValue::Str))
}
