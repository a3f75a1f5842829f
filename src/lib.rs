//! Read and write NumPy's `.npy` and `.npz` files as [`ndarray`] arrays.
//!
//! - [`ReadNpy`]: `Array::<T, D>::read_npy(path)`, `read_npy_from(reader)`,
//!   `from_npy_bytes(&bytes)`, for every header version, both byte orders and
//!   C or Fortran order.
//! - [`WriteNpy`]: `array.write_npy(path)` for any array of any memory layout,
//!   byte-identical to `np.save`; writing to a path replaces the file
//!   atomically.
//! - [`ViewNpy`] / [`ViewMutNpy`]: zero-copy views of `.npy` bytes, and
//!   [`NpyMmap`] to map files of any size in constant time.
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
//! - [`stack`]: a folder of `.npy` shards (dask's `to_npy_stack`, or
//!   numbered shards) read as one array, by row ranges across shards, and
//!   written so that `da.from_npy_stack` loads it.
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
//! Coming from `ndarray-npy`, `npyz` or NumPy? [`migrating`] maps their
//! functions and keywords to ndnpy's, with the differences.
//!
//! # Files on disk
//!
//! A write to a path leaves exactly its target: no temporary file after it
//! ends or fails, no hidden copy of an earlier version (the spare that
//! makes overwrites cheaper is opt-in, [`WriteOptions::spare`]), and it
//! never replaces a file an appender holds. [`files_on_disk`] goes through
//! every file ndnpy creates or replaces: its mode and owner, what a kill at
//! each step leaves, and what a link in its place does.
//!
//! # Writers
//!
//! [`NpzWriter`], [`NpyWriter`] and [`NpzMemberWriter`] write only part of
//! their output before `finish`, and they are `#[must_use]`. One rule says
//! what a writer dropped without `finish` leaves behind:
//!
//! - **A path** (`NpzWriter::create*`, `NpyWriter::create*`,
//!   `NpyWriter::append`) is left as it was: the old file, or no file. The
//!   output goes to a temporary file, removed on drop, that replaces the
//!   target atomically only when `finish` succeeds, so a write interrupted
//!   by an error, a `?` or a panic never replaces a good file with part of
//!   a new one. (Devices, FIFOs and hard-linked files are written in place,
//!   as [`WriteNpy::write_npy`] explains, and are left partly written.)
//! - **Rows streamed to the caller's writer** (`NpyWriter::new`,
//!   [`NpzMemberWriter`]) never make a readable array: only the caller
//!   knows how many rows there should be, and a loop such as
//!   `for b in src { w.write(&b?)? }` that stops on the *source's* error
//!   drops the writer with rows missing. `NpyWriter::new` leaves its
//!   header without the magic string, and a dropped `NpzMemberWriter`
//!   poisons its archive ([`Error::IncompleteArchive`]), which then gets no
//!   central directory.
//! - **Whole arrays to the caller's writer** (`NpzWriter::new*` with
//!   `add`, `NpyWriter::new_sized`) are finished best-effort, as the
//!   writers of the `zip` crate and of `ndarray-npy` do: an archive of
//!   whole members gets its central directory and reads back as what was
//!   added; a sized `.npy` is flushed, whole only if every declared row
//!   came (short data is refused as truncated). Errors are ignored: call
//!   `finish` to see them. Except while the thread panics or after a call
//!   of the writer failed: then the output is left so that no reader takes
//!   it for complete (an archive without its directory, or data shorter
//!   than its header declares).
//!
//! ```
//! use ndnpy::{NpzReader, NpzWriter};
//! use std::io::Cursor;
//!
//! let mut out = Cursor::new(Vec::new());
//! {
//!     let mut npz = NpzWriter::new(&mut out);
//!     npz.add("x", &ndarray::array![1.0, 2.0])?;
//! } // dropped unfinished: finished best-effort (its members are whole)
//! assert_eq!(NpzReader::new(out)?.names(), ["x"]);
//! # Ok::<(), ndnpy::Error>(())
//! ```
//!
//! A writer that is made and never used is a warning:
//!
//! ```compile_fail
//! #![deny(unused_must_use)]
//! ndnpy::NpzWriter::new(std::io::Cursor::new(Vec::new()));
//! ```
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

/// The migration guide (`MIGRATING.md`): `ndarray-npy` 0.10, `npyz` 0.9
/// and NumPy mapped to ndnpy. Documentation only; its examples are tested.
pub mod migrating {
    #![doc = include_str!("../MIGRATING.md")]
}
/// Every file ndnpy creates or replaces (targets, temporary files, the
/// spare, appends, the seek-index sidecar): mode, owner, what a kill at
/// each step leaves, what a link in its place does. Documentation only.
pub mod files_on_disk {
    #![doc = include_str!("files_on_disk.md")]
}
mod plan;
#[cfg(feature = "safetensors")]
pub mod safetensors;
pub mod sparse;
pub mod stack;

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
pub use error::{Error, ErrorKind, Result};
pub use format::dtype::{ByteOrder, DType, Field, Kind, Scalar};
pub use format::header::{Header, Version, NUMPY_MAX_DIMS};
pub use npy::file::NpyFile;
pub use npy::inspect::{inspect, inspect_with};
pub use npy::mmap::NpyMmap;
pub use npy::read::{
    from_data_into, from_npy_bytes_into, from_npy_bytes_into_with, read_npy_into,
    read_npy_into_from, read_npy_into_from_with, read_npy_into_with, ReadNpy,
};
pub use npy::reader::NpyReader;
pub use npy::stream::NpyWriter;
pub use npy::view::{ViewMutNpy, ViewNpy};
pub use npy::write::WriteNpy;
/// The parallel inflater of one deflate stream, for the fuzz target and
/// the benchmark only: not a public API.
#[doc(hidden)]
pub use npz::pinflate::__inflate_parallel;
pub use npz::{
    Codec, Compression, MemberInfo, NpzArrays, NpzMemberReader, NpzMemberWriter, NpzMmap,
    NpzReader, NpzWriter,
};
pub use options::{
    Order, PickleEncoding, ReadOptions, WriteOptions, DEFAULT_MAX_HEADER_LEN,
    DEFAULT_MAX_STREAM_LEN, DEFAULT_MAX_ZERO_SIZE_ELEMENTS,
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

/// The crates.io page's example, compiled as a doctest.
#[doc = include_str!("../crates-io.md")]
#[cfg(doctest)]
pub struct CratesIoDoctests;
