//! NumPy 2's variable-width strings (`np.dtypes.StringDType()`, NumPy's
//! new default string type). `np.save` writes them as an object array: a
//! `|O` header, then the array pickled with the dtype
//! `numpy._core._internal._convert_to_stringdtype_kwargs(coerce[,
//! na_object])` and the elements as a list of `str` (and the NA object
//! where an element is missing).

use super::machine::{Machine, Node};
use crate::array::any::AnyArray;
use crate::array::pyvalue::PyValue;
use crate::array::stringdtype::StringDTypeArray;
use crate::error::Result;

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
                    crate::array::pyvalue::convert::value_type_name(&other)
                )))
            }
        }
    }
    let values = super::arrays::object_array(m, shape, fortran, values)?;
    Ok(AnyArray::StringDType(StringDTypeArray {
        values,
        na_object,
        coerce,
    }))
}
