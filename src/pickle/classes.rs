//! The classes of the closed list that live above the machine, wired for
//! it: the one place that names both the machine and the files that build
//! NumPy's, pandas' and `StringDType`'s values, so that the machine never
//! imports the files that import it.

use super::globals::Global;
use super::machine::{Classes, Machine, Node};
use super::{numpy, pandas, stringdtype};
use crate::error::Result;

/// What every machine of the crate is made with.
pub(crate) static CLASSES: Classes = Classes {
    call,
    dtype_setstate: numpy::dtype_setstate,
    array_setstate: numpy::array_setstate,
    dtype_without_state: numpy::dtype_without_state,
};

/// Calls global `g`, one of the classes above the machine, with `args`.
fn call(m: &mut Machine<'_>, g: Global, args: &[usize]) -> Result<Node> {
    match g {
        Global::Reconstruct => numpy::reconstruct(m, args),
        Global::FromBuffer => numpy::frombuffer(m, args),
        Global::Scalar => numpy::scalar(m, args),
        Global::DType => numpy::dtype_new(m, args),
        Global::Pandas(p) => pandas::call(m, p, args),
        Global::StringDType => stringdtype::dtype_new(m, args),
        // The machine builds the others itself and never hands them here.
        other => Err(m.malformed(format!(
            "{} is not a class of numpy or pandas",
            other.name()
        ))),
    }
}
