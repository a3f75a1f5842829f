//! `.npy` items a user reaches for beyond the root's: the streaming
//! reader [`NpyReader`] (a block of rows at a time from any `io::Read`),
//! [`ReadNpyInto`], the methods that read into an array the caller
//! already has (and [`from_data_into`], for data whose header was parsed
//! apart), and the default limits of
//! [`ReadOptions`](crate::ReadOptions). [`NpyFile`](crate::NpyFile),
//! [`NpyWriter`](crate::NpyWriter) and [`NpyMmap`](crate::NpyMmap) are
//! at the root.
//!
//! You need this module when you stream a file of unknown size, reuse an
//! allocation across reads, or compare against the default limits.
//!
//! ```
//! use ndnpy::{npy::NpyReader, WriteNpy};
//! let bytes = ndarray::array![1u8, 2, 3].to_npy_bytes()?;
//! let mut r = NpyReader::new(&bytes[..])?;
//! assert_eq!(r.read_rows::<u8, ndarray::Ix1>(2)?.unwrap(), ndarray::array![1u8, 2]);
//! # Ok::<(), ndnpy::Error>(())
//! ```

// Layer 5, `.npy` operations: reading (`read`), writing (`write`),
// zero-copy views (`view`), memory maps (`mmap`), `file::NpyFile`, the
// streaming `reader::NpyReader` and `stream::NpyWriter`, growth of files in
// place (`growth`) and `inspect`. May use every layer below: error,
// options, io, format, plan, array and pickle. Archives (`crate::npz`)
// build on this layer.

pub(crate) mod compact;
pub(crate) mod file;
pub(crate) mod growth;
pub(crate) mod inspect;
pub(crate) mod mmap;
pub(crate) mod read;
pub(crate) mod read_into;
pub(crate) mod reader;
pub(crate) mod stream;
pub(crate) mod view;
pub(crate) mod write;
pub(crate) mod write_any;

pub use crate::options::{
    DEFAULT_MAX_HEADER_LEN, DEFAULT_MAX_STREAM_LEN, DEFAULT_MAX_ZERO_SIZE_ELEMENTS,
};
pub use read::from_data_into;
pub use read_into::ReadNpyInto;
pub use reader::NpyReader;
