//! NumPy's `.npy` and `.npz` files in object storage (S3 and its
//! compatibles, Google Cloud Storage, Azure Blob Storage, plain HTTP, local
//! files and memory), through the Apache Arrow project's `object_store`.
//!
//! - [`RemoteNpy`]: the header from one ranged GET; the whole array by
//!   parallel ranged GETs; any run of rows by one GET of exactly their
//!   bytes; any dtype, object arrays included.
//! - [`RemoteNpz`]: the archive's directory in a handful of requests
//!   whatever its member count, read by the `ndnpy` library's own zip
//!   reader (NumPy's lookup rules, CRC checks); each member in one
//!   streaming GET; stored members' rows by ranged GET.
//! - [`RemoteNpyStack`]: a folder of `.npy` shards (dask's
//!   `to_npy_stack`, or plain numbered shards) as one array: `info` or
//!   one listing, a small GET per shard's header, and of a row range only
//!   the shards and byte ranges it needs (the library's `ndnpy::stack`
//!   plan, so it reads and refuses as `NpyStack` does on a path).
//! - [`write_npy`], [`NpyWriter`] and [`NpzWriter`]: multipart uploads
//!   in bounded memory; the object appears only when the upload completes.
//! - [`blocking`]: the same for callers without an async runtime.
//!
//! Every request after the first carries the object's ETag (or version),
//! and every answer's size must be the first's (and, from a store that
//! gives neither ETag nor version, its modification time too): an object
//! replaced while it is read gives [`StoreError::Changed`], never
//! an array stitched from two versions; a body that is short, long or of
//! another range gives [`StoreError::BadAnswer`]. Transient errors are
//! retried by `object_store` ([`UrlOptions::retry`], or the store the
//! caller built).
//!
//! ```
//! use ndnpy_store::blocking;
//!
//! let at = ndnpy_store::Location::parse("memory:///a.npy")?;
//! blocking::write_npy(&at, &ndarray::array![[1.0f64, 2.0], [3.0, 4.0]])?;
//! let npy = blocking::RemoteNpy::open(&at)?;
//! assert_eq!(npy.header().shape, [2, 2]);
//! let row = npy.read_range::<f64, ndarray::Ix2>(1..2)?;
//! assert_eq!(row, ndarray::array![[3.0, 4.0]]);
//! # Ok::<(), ndnpy_store::StoreError>(())
//! ```
#![deny(missing_docs)]

pub mod blocking;
mod config;
mod copy;
mod error;
mod list;
mod location;
mod npy;
mod npz;
mod object;
mod parallel;
mod reader;
mod runtime;
mod stack;
mod upload;
mod write;

#[doc(hidden)]
pub use config::Held;
pub use config::{Config, Progress};
pub use copy::{download, upload};
pub use error::{Result, StoreError};
pub use list::list;
pub use location::{is_url, Location, UrlOptions};
pub use npy::RemoteNpy;
pub use npz::RemoteNpz;
pub use object_store;
pub use stack::{RemoteNpyStack, RemoteShard};
pub use write::{write_npy, write_npy_with, NpyWriter, NpzWriter};
