//! Read and write NumPy's `.npy` and `.npz` files as [`ndarray`] arrays.
//!
//! ```
//! use ndarray::{array, Array2, ArrayView2};
//! use ndnpy::{ReadNpy, ViewNpy, WriteNpy};
//!
//! # let dir = tempfile::tempdir().unwrap();
//! # let path = dir.path().join("a.npy");
//! let a = array![[1.0, 2.0], [3.0, 4.0]];
//! a.write_npy(&path)?;                        // what np.save writes
//! let b = Array2::<f64>::read_npy(&path)?;    // what np.load reads
//! assert_eq!(a, b);
//!
//! let bytes = std::fs::read(&path)?;
//! let v = ArrayView2::<f64>::view_npy(&bytes)?; // no copy
//! assert_eq!(v, a);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! At the root, what most programs need:
//!
//! - [`ReadNpy`]: `Array::<T, D>::read_npy(path)`, `read_npy_from(reader)`,
//!   `from_npy_bytes(&bytes)`, for every header version, both byte orders and
//!   C or Fortran order ([`npy::ReadNpyInto`] reads into an array you
//!   already have).
//! - [`WriteNpy`]: `array.write_npy(path)` for any array of any memory layout,
//!   byte-identical to `np.save`; writing to a path replaces the file
//!   atomically.
//! - [`ViewNpy`] / [`ViewMutNpy`]: zero-copy views of `.npy` bytes, and
//!   [`NpyMmap`] to map files of any size in constant time.
//! - [`NpzReader`] / [`NpzWriter`] for `.npz` archives (stored or
//!   compressed, zip64, written atomically), and [`NpzMmap`] for zero-copy
//!   views of stored members.
//! - [`NpyFile`] to read row ranges and append rows in place, [`NpyWriter`]
//!   to write arrays of unknown length block by block.
//! - [`AnyArray`] for files whose type is known only at run time, and
//!   [`Element`], the types an array can hold (records declared with
//!   [`record!`]).
//! - [`ReadOptions`] / [`WriteOptions`] (with [`Order`]) for every `*_with`
//!   entry point; [`Error`], whose [`ErrorKind`] is what to match on.
//!
//! Everything else lives in a module named by what it holds:
//!
//! - [`dtype`]: the header ([`dtype::Header`], [`dtype::DType`]) and
//!   [`dtype::Header::open`], when the type is known only at run time.
//! - [`types`]: element and string types beyond Rust's own (fixed-width
//!   strings, datetimes, long double, 8-bit floats, records at run time),
//!   and the re-exported `half` and `num_complex`.
//! - [`npy`]: the streaming [`npy::NpyReader`], reading into existing
//!   arrays, the default limits.
//! - [`npz`]: the archive types that come back from methods (member readers
//!   and writers, [`npz::MemberInfo`]) and the zip methods ([`npz::Codec`]).
//! - [`stack`]: a folder of `.npy` shards (dask's `to_npy_stack`, or
//!   numbered shards) read as one array, by row ranges across shards, and
//!   written so that `da.from_npy_stack` loads it.
//! - [`pickle`]: object arrays (`|O`) read by a pickle reader that cannot run
//!   code, and written so that NumPy loads them with `allow_pickle=True`:
//!   Python 2 pickles ([`ReadOptions::pickle_encoding`]), NumPy 2's
//!   `StringDType`, pandas' timestamps, and (opt-in,
//!   [`ReadOptions::opaque_objects`]) any other class as inert data.
//! - [`sparse`]: `scipy.sparse` archives; `safetensors` (feature
//!   `safetensors`): Hugging Face checkpoints to and from `.npz`.
//!
//! Hostile input gives an [`Error`], never a panic or an allocation of the
//! size a header merely claims.
//!
//! Coming from `ndarray-npy`, `npyz` or NumPy? [`migrating`] maps their
//! functions and keywords to ndnpy's, with the differences.
//!
//! # Writers
//!
//! [`NpzWriter`], [`NpyWriter`] and [`NpzMemberWriter`](npz::NpzMemberWriter) write only part of
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
//!   [`NpzMemberWriter`](npz::NpzMemberWriter)) never make a readable array: only the caller
//!   knows how many rows there should be, and a loop such as
//!   `for b in src { w.write(&b?)? }` that stops on the *source's* error
//!   drops the writer with rows missing. `NpyWriter::new` leaves its
//!   header without the magic string, and a dropped `NpzMemberWriter`
//!   poisons its archive ([`crate::error::WriteError::IncompleteArchive`]), which then gets no
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
//! # Files written
//!
//! A write to a path leaves exactly its target: no temporary file after it
//! ends or fails, no hidden copy of an earlier version (the spare that
//! makes overwrites cheaper is opt-in, [`WriteOptions::spare`]), and it
//! never replaces a file an appender holds. The section
//! [Files on disk](#files-on-disk) below goes through every file ndnpy
//! creates or replaces: its mode and owner, what a kill at each step
//! leaves, and what a link in its place does.
//!
// Every file ndnpy creates or replaces (targets, temporary files, the
// spare, appends, the seek-index sidecar): mode, owner, what a kill at each
// step leaves, what a link in its place does. Its heading is `# Files on
// disk`, at the end of the crate docs.
#![doc = include_str!("files_on_disk.md")]
#![deny(missing_docs)]

mod array;
pub mod dtype;
pub mod error;
mod exec;
mod format;
mod io;
pub mod npy;
pub mod npz;
mod options;
pub mod pickle;
pub mod types;

/// The migration guide (`MIGRATING.md`): `ndarray-npy` 0.10, `npyz` 0.9
/// and NumPy mapped to ndnpy. Documentation only; its examples are tested.
pub mod migrating {
    #![doc = include_str!("../MIGRATING.md")]
}
mod plan;
#[cfg(feature = "safetensors")]
pub mod safetensors;
pub mod sparse;
pub mod stack;

pub use array::any::AnyArray;
pub use array::element::Element;
pub use error::{Error, ErrorKind, Result};
pub use npy::file::NpyFile;
pub use npy::mmap::NpyMmap;
pub use npy::read::ReadNpy;
pub use npy::stream::NpyWriter;
pub use npy::view::{ViewMutNpy, ViewNpy};
pub use npy::write::WriteNpy;
pub use npz::{NpzMmap, NpzReader, NpzWriter};
pub use options::{Order, ReadOptions, WriteOptions};

/// What `record!` expands to names, public for the macro only.
#[doc(hidden)]
pub mod __macro {
    pub use crate::array::element::LayoutElement;
    pub use crate::array::record::__record_dtype;
    pub use crate::format::dtype::DType;
}

/// The README's examples, compiled as doctests so they stay correct.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;

/// The crates.io page's example, compiled as a doctest.
#[doc = include_str!("../crates-io.md")]
#[cfg(doctest)]
pub struct CratesIoDoctests;
