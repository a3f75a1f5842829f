//! What the classes of the closed list share about the arrays they build
//! (`numpy.rs`, `records.rs`, `stringdtype.rs`): what raw data costs, and
//! listed values as an array of a shape. Here, below all three, so that none
//! of them imports another for it.

use super::machine::Machine;
use crate::error::Result;
use crate::format::dtype::DType;
use ndarray::{ArrayD, IxDyn, ShapeBuilder};

/// Values listed in C order as an array of `shape`, in Fortran layout when
/// `fortran` (NumPy pickles object data in C order whatever the layout).
///
/// The caller checked the count against the shape's product, but ndarray
/// also refuses a shape whose non-zero dimensions multiply past
/// `isize::MAX` although it has no elements (`(2**62, 2, 0)`): that is an
/// error of the pickle, never a panic.
pub(crate) fn object_array<T: Default>(
    m: &Machine<'_>,
    shape: &[usize],
    fortran: bool,
    values: Vec<T>,
) -> Result<ArrayD<T>> {
    let refused = |e: ndarray::ShapeError| {
        m.malformed(format!(
            "the ndarray shape {shape:?} does not fit its items: {e}"
        ))
    };
    let mut c = ArrayD::from_shape_vec(IxDyn(shape), values).map_err(refused)?;
    if !fortran || shape.len() < 2 {
        return Ok(c);
    }
    let f_order: Vec<T> = c
        .view_mut()
        .reversed_axes()
        .iter_mut()
        .map(std::mem::take)
        .collect();
    ArrayD::from_shape_vec(IxDyn(shape).f(), f_order).map_err(refused)
}

/// What an array read from raw data costs: its bytes, plus a `String` or
/// `Vec` for every value that has no bytes (`|S0`, `<U0`: a few bytes of
/// pickle may declare 2^61 of them).
pub(crate) fn data_cost(dtype: &DType, shape: &[usize], bytes: &[u8]) -> u64 {
    let empty = crate::format::header::zero_size_elements(dtype, shape);
    (bytes.len() as u64).saturating_add(empty.saturating_mul(std::mem::size_of::<String>() as u64))
}
