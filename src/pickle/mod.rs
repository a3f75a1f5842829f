// Layer 4 (see ARCHITECTURE.md): the `|O` codec. May use `crate::error`,
// `crate::options`, `crate::io`, `crate::format`, `crate::plan` and
// `crate::array` (where `PyValue` lives); never `crate::npy` or `crate::npz`.
//! Object arrays (`|O`): a safe, bounded pickle reader of our own, and a
//! writer.
//!
//! NumPy stores an object array by pickling it after a `|O` header, and
//! refuses to load one unless `allow_pickle=True`, because unpickling can
//! run arbitrary code. The reader here cannot: it is a small stack machine
//! ([`loads`]) that knows the opcodes of pickle protocols 0 to 5 that carry
//! data and a closed list of globals (NumPy's array, dtype and scalar
//! reconstructors, `set`, `frozenset`, `bytearray`, `complex`,
//! `_codecs.encode`, `datetime.date`/`datetime`/`timedelta`,
//! `decimal.Decimal`, NumPy 2's `StringDType`, pandas' `Timestamp`,
//! `Timedelta`, `NaT` and `NA` and the time zones they carry); each is
//! implemented by the reader as a constructor of plain data ([`PyValue`]).
//! Any other global is a name and nothing more: stored as a value it is
//! [`PyValue::Global`]; called, it is [`crate::error::PickleError::UnsupportedPickle`] naming
//! it, or under [`ReadOptions::opaque_objects`] an inert
//! [`PyValue::Opaque`] recording the call. It is never imported, called or
//! emulated.
//!
//! Python 2 pickles are read as Python 3 reads them: module names mapped
//! (`__builtin__`, `copy_reg`, `xrange` ...), and Python 2 `str` values
//! decoded as [`ReadOptions::pickle_encoding`] says (NumPy's `encoding`).
//!
//! Limits, all checked before allocating:
//! - every length field is compared with the bytes left in the input, so a
//!   short pickle claiming a 4 GiB string fails at once;
//! - the stack, marks, memo and intermediate objects grow by at most one
//!   entry per opcode, so they are bounded by the input size;
//! - the values built may take at most 64 bytes per input byte plus 1 MiB
//!   (memo sharing is the only way past that; it gives
//!   [`crate::error::LimitError::PickleLimit`]);
//! - values nest at most 256 deep; a structure that contains itself is
//!   [`crate::error::PickleError::MalformedPickle`].
//!
//! Reading goes through the ordinary entry points: [`crate::AnyArray`]
//! returns [`crate::AnyArray::Object`] for `|O` files (in `.npy` files and
//! `.npz` members alike), and [`crate::ReadNpy`] / [`crate::NpzReader::read`]
//! read object files into arrays of [`PyValue`] (any object), `String`
//! (every element a `str`) and `Option<String>` (`str` or `None`); the
//! error for another element names its index and Python type.
//! A record with object fields loads as [`crate::AnyArray::Record`], whose
//! object fields are [`crate::AnyArray::Object`] columns
//! ([`crate::types::RecordArray::field`]); [`crate::types::RecordArray::to_npy_bytes`]
//! and [`crate::NpzWriter::add_any`] write them back pickled. [`crate::ReadOptions::allow_objects`] refuses object arrays
//! outright.
//!
//! Writing: arrays of [`PyValue`] and of `Option<String>` are written as
//! object arrays by [`crate::WriteNpy`] (`write_npy`, `write_npy_to`,
//! `to_npy_bytes`) and [`crate::NpzWriter::add`]; `String` arrays stay
//! `<U`, as `np.save` of a list of `str` writes them.
//!
//! ```
//! use ndarray::array;
//! use ndnpy::pickle::{self, PyValue};
//! use ndnpy::{AnyArray, Error, WriteNpy};
//!
//! let a = array![PyValue::Str("x".into()), PyValue::List(vec![PyValue::Int(1)])];
//! let bytes = a.to_npy_bytes()?; // WriteNpy
//! let AnyArray::Object(back) = AnyArray::from_npy_bytes(&bytes)? else { panic!() };
//! assert_eq!(back[1].to_string(), "[1]");
//!
//! // A pickle that would call os.system is refused, not run.
//! let evil = b"\x80\x02cos\nsystem\nX\x02\x00\x00\x00ls\x85R.";
//! assert!(matches!(pickle::loads(evil), Err(Error::Pickle(ndnpy::error::PickleError::UnsupportedPickle { .. }))));
//! # Ok::<(), ndnpy::Error>(())
//! ```

mod arrays;
mod bigint;
mod classes;
mod element;
mod globals;
mod machine;
mod numpy;
mod pandas;
mod records;
mod stringdtype;
mod write;

pub use crate::array::pyvalue::convert::{optional_strings_from_objects, strings_from_objects};
pub use crate::array::pyvalue::foreign::{Opaque, TimeZone, Timedelta, Timestamp};
pub use crate::array::pyvalue::{Date, DateTime, NumpyScalar, PyValue, TimeDelta};
pub use crate::array::stringdtype::StringDTypeArray;
pub use crate::options::PickleEncoding;
// Internal limits, public for the crate's own tests and fuzz targets only.
#[doc(hidden)]
pub use machine::{BUDGET_BASE, BUDGET_PER_BYTE, MAX_DEPTH};
pub use write::dumps;
pub(crate) use write::{object_npy_bytes, record_npy_bytes, stringdtype_npy_bytes};

use crate::array::any::AnyArray;
use crate::error::{Error, Result};
use crate::format::header::Header;
use crate::io::source::Source;
use crate::options::ReadOptions;
use machine::{Machine, Node};

/// Unpickles `bytes` (protocols 0 to 5, in-band data only) into a value,
/// accepting only the globals listed in the [module docs](self).
///
/// Bytes after the `STOP` opcode are ignored, as Python does.
///
/// ```
/// use ndnpy::pickle::{loads, PyValue};
///
/// // pickle.dumps([1, 'a', None], protocol=2)
/// let v = loads(b"\x80\x02]q\x00(K\x01X\x01\x00\x00\x00aq\x01Ne.")?;
/// assert_eq!(v.to_string(), "[1, 'a', None]");
/// # Ok::<(), ndnpy::Error>(())
/// ```
pub fn loads(bytes: &[u8]) -> Result<PyValue> {
    loads_with(bytes, &ReadOptions::default())
}

/// [`loads`] with the pickle settings of `options`: how Python 2 strings
/// are read ([`ReadOptions::pickle_encoding`]) and whether objects of other
/// classes are kept as inert data ([`ReadOptions::opaque_objects`]).
///
/// ```
/// use ndnpy::pickle::{loads_with, PyValue};
/// use ndnpy::ReadOptions;
///
/// // A bare reference to a class, never called, is data: pickle.dumps(range, 2).
/// let v = loads_with(b"\x80\x02c__builtin__\nxrange\nq\x00.", &ReadOptions::default())?;
/// assert_eq!(v, PyValue::Global { module: "builtins".into(), name: "range".into() });
/// assert_eq!(v.to_string(), "<class 'range'>");
/// # Ok::<(), ndnpy::Error>(())
/// ```
pub fn loads_with(bytes: &[u8], options: &ReadOptions) -> Result<PyValue> {
    run_machine(Machine::with_options(bytes, options, &classes::CLASSES))
}

/// [`loads`] with `factor` times the usual budget for the values built
/// (see `Machine::with_budget_factor`: dask's `info`).
pub(crate) fn loads_with_budget_factor(bytes: &[u8], factor: u64) -> Result<PyValue> {
    run_machine(
        Machine::with_options(bytes, &ReadOptions::default(), &classes::CLASSES)
            .with_budget_factor(factor),
    )
}

/// Runs a machine to its value.
fn run_machine(mut m: Machine<'_>) -> Result<PyValue> {
    let root = m.run()?;
    match std::mem::replace(&mut m.arena[root], Node::None) {
        // The result of a call was charged when it was made.
        Node::Value(v, ..) => Ok(v),
        other => {
            m.arena[root] = other;
            m.materialize(root)
        }
    }
}

/// Reads the pickle that follows an object array's header: the whole rest
/// of `source`.
pub(crate) fn read_object_data(
    header: &Header,
    source: &mut Source<'_>,
    options: &ReadOptions,
) -> Result<AnyArray> {
    if !options.get_allow_objects() {
        return Err(Error::Limit(crate::error::LimitError::ObjectsRefused));
    }
    let bytes = source.read_rest()?;
    let value = loads_with(&bytes, options)?;
    let array = match value {
        PyValue::Array(a) => std::sync::Arc::unwrap_or_clone(a),
        other => {
            return Err(Error::Pickle(crate::error::PickleError::MalformedPickle {
                pos: 0,
                reason: format!(
                    "the pickle holds a {}, not an ndarray",
                    crate::array::pyvalue::convert::value_type_name(&other)
                ),
            }))
        }
    };
    if array.shape() != header.shape.as_slice() {
        return Err(Error::Pickle(crate::error::PickleError::MalformedPickle {
            pos: 0,
            reason: format!(
                "the pickled array has shape {:?}, the header says {:?}",
                array.shape(),
                header.shape
            ),
        }));
    }
    if crate::array::record::to_native(&array.dtype())
        != crate::array::record::to_native(&header.dtype)
    {
        return Err(Error::Pickle(crate::error::PickleError::MalformedPickle {
            pos: 0,
            reason: format!(
                "the pickled array has dtype {}, the header says {}",
                array.dtype(),
                header.dtype
            ),
        }));
    }
    Ok(array)
}

/// Reads the data that follows `header` from `source`, whatever its element
/// type, object arrays included unless `options` refuse them.
pub(crate) fn read_any(
    header: &Header,
    source: &mut Source<'_>,
    options: &ReadOptions,
) -> Result<AnyArray> {
    if header.dtype.has_object() {
        return read_object_data(header, source, options);
    }
    AnyArray::read_data(header, source)
}
