//! Read and write NumPy's `.npy` and `.npz` files as [`ndarray`] arrays.
//!
//! - [`ReadNpy`]: `Array::<T, D>::read_npy(path)`, `read_npy_from(reader)`,
//!   `from_npy_bytes(&bytes)`, for every header version, both byte orders and
//!   C or Fortran order.
//! - [`WriteNpy`]: `array.write_npy(path)` for any array of any memory layout,
//!   byte-identical to `np.save`; writing to a path replaces the file
//!   atomically.
//! - [`ViewNpy`] / [`ViewMutNpy`]: zero-copy views of `.npy` bytes, and
//!   [`MmapNpy`] to map files of any size in constant time.
//! - [`Header`], [`inspect`] and [`AnyArray`] for files whose type is known
//!   only at run time.
//! - Every NumPy dtype: numeric scalars (x86-64's long double as
//!   [`LongDouble`] / [`ComplexLongDouble`]), strings (`String`,
//!   `Vec<u8>`, [`FixedUnicode`], [`FixedBytes`]), [`Datetime64`] /
//!   [`Timedelta64`] with [`unit`](mod@unit) markers, sub-arrays `[T; N]`, and records
//!   declared with [`record!`] ([`RecordArray`] at run time). See
//!   [`Element`] and [`LayoutElement`].
//! - [`NpzReader`] / [`NpzWriter`] for `.npz` archives (stored or deflated,
//!   zip64, written atomically), and [`NpzMmap`] for zero-copy views of
//!   stored members.
//! - [`NpyFile`] to read row ranges and append rows in place, [`NpyWriter`]
//!   to write arrays of unknown length block by block, and [`NpyReader`] to
//!   read any stream a block of rows at a time.
//!
//! - [`pickle`]: object arrays (`|O`) read by a pickle reader that cannot run
//!   code, and written so that NumPy loads them with `allow_pickle=True`:
//!   Python 2 pickles ([`ReadOptions::pickle_encoding`]), NumPy 2's
//!   `StringDType`, pandas' timestamps, and (opt-in,
//!   [`ReadOptions::opaque_objects`]) any other class as inert data.
//!
//! Hostile input gives an [`Error`], never a panic or an allocation of the
//! size a header merely claims.
//!
//! ```
//! use ndarray::{array, Array2};
//! use ndnpy::{ReadNpy, WriteNpy};
//!
//! # let dir = tempfile::tempdir().unwrap();
//! # let path = dir.path().join("a.npy");
//! let a = array![[1.0, 2.0], [3.0, 4.0]];
//! a.write_npy(&path)?;
//! let b = Array2::<f64>::read_npy(&path)?;
//! assert_eq!(a, b);
//! # Ok::<(), ndnpy::Error>(())
//! ```
#![deny(missing_docs)]

mod array;
mod error;
mod format;
mod io;
mod npy;
mod npz;
mod options;
pub mod pickle;
mod plan;
pub mod sparse;

pub use array::any::AnyArray;
pub use array::compact::{BytesArray, StringArray};
pub use array::datetime::{unit, Datetime64, Timedelta64};
pub use array::element::{Element, LayoutElement};
pub use array::longdouble::{ComplexLongDouble, LongDouble};
pub use array::ml::{Float8E4M3Fn, Float8E5M2, MlFloat};
#[doc(hidden)]
pub use array::record::__record_dtype;
pub use array::record::RecordArray;
pub use array::strings::{FixedBytes, FixedUnicode};
pub use error::{Error, Result};
pub use format::dtype::{ByteOrder, DType, Field, Kind, Scalar};
pub use format::header::{Header, Version, NUMPY_MAX_DIMS};
pub use npy::file::NpyFile;
pub use npy::inspect::{inspect, inspect_with};
pub use npy::mmap::MmapNpy;
pub use npy::read::{
    from_data_into, from_npy_bytes_into, read_npy_into, read_npy_into_from, ReadNpy,
};
pub use npy::stream::{NpyReader, NpyWriter};
pub use npy::view::{ViewMutNpy, ViewNpy};
pub use npy::write::WriteNpy;
pub use npz::{
    Compression, MemberInfo, NpzArrays, NpzMemberReader, NpzMemberWriter, NpzMmap, NpzReader,
    NpzWriter,
};
pub use options::{
    Order, PickleEncoding, ReadOptions, WriteOptions, DEFAULT_MAX_HEADER_LEN,
    DEFAULT_MAX_STREAM_LEN,
};
pub use pickle::PyValue;

#[cfg(feature = "half")]
pub use half;
#[cfg(feature = "complex")]
pub use num_complex;

/// The README's examples, compiled as doctests so they stay correct.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
